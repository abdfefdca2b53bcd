//! Why a run cannot start: facts only, the command line says what to do about each.

use crate::config::Role;
use crate::pipeline::stage::Stage;
use crate::workflow_name::Workflow;

/// Why a run cannot start. Facts only: the command line says what to do about each.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The slug has characters a task slug may not have.
    #[error("`{0}` is not a valid task slug")]
    BadSlug(String),
    /// HEAD has no commit to start from.
    #[error("this repository has no commits yet")]
    NoCommits,
    /// The TaskSpec exists but is not committed.
    #[error("{path} is not committed")]
    SpecNotCommitted {
        /// Its path.
        path: String,
    },
    /// No TaskSpec of that name at HEAD.
    #[error("there is no task `{slug}` ({path} does not exist at HEAD)")]
    NoSuchTask {
        /// The slug asked for.
        slug: String,
        /// Where it would be.
        path: String,
    },
    /// The committed TaskSpec has uncommitted changes.
    #[error("{path} has uncommitted changes")]
    SpecModified {
        /// Its path.
        path: String,
    },
    /// The TaskSpec is not UTF-8.
    #[error("{path} is not UTF-8 text")]
    SpecNotText {
        /// Its path.
        path: String,
    },
    /// The TaskSpec does not parse or validate.
    #[error(transparent)]
    SpecInvalid(#[from] crate::task::TaskSpecError),
    /// The TaskSpec leaves empty what a run needs (`task new`'s template, unfilled): no
    /// model is asked to build from nothing.
    #[error("{path} is not filled in: {} {} empty", crate::bounded::and_list(&fields.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>()), if fields.len() == 1 { "is" } else { "are" })]
    SpecUnfilled {
        /// Its path.
        path: String,
        /// The empty fields (`description`, `R1 text`).
        fields: Vec<String>,
    },
    /// The repository could not be read.
    #[error("{0}")]
    Repo(#[from] git2::Error),
    /// A model named on the command line or in the configuration is not registered.
    #[error("model `{0}` is not registered")]
    UnknownModel(String),
    /// A stage role has no model.
    #[error("no model is configured for the {0} role")]
    NoModel(Role),
    /// Every model a role could use needs a key that is not set (or is not registered):
    /// the run would fail at its first call, so it does not start.
    #[error("no model of the {role} role can be called: {}", models.iter().map(|(m, why)| format!("{m} ({why})")).collect::<Vec<_>>().join(", "))]
    Uncallable {
        /// The role.
        role: Role,
        /// Its models, each with why it cannot be called.
        models: Vec<(String, crate::config::Uncallable)>,
    },
    /// A stage would be reviewed by its own model.
    #[error("the {stage} stage would be reviewed by its own model: stage model `{model}`, arbiter model `{model}`")]
    SelfReview {
        /// The stage.
        stage: Stage,
        /// The model.
        model: String,
    },
    /// No arbiter model differs from a stage's model.
    #[error("no arbiter model differs from the {stage} stage's model `{model}` (arbiter models: {}): an arbiter is always a different model from the one it reviews", arbiters.join(", "))]
    NoOtherArbiter {
        /// The stage.
        stage: Stage,
        /// Its model.
        model: String,
        /// The arbiter role's models.
        arbiters: Vec<String>,
        /// The provider of the stage's model, when the user declared it: a second model is
        /// declared next to it.
        own_provider: Option<String>,
    },
    /// A workflow with a panel needs at least two different models.
    #[error("--workflow {0} needs at least two different candidate models; it has {has}", has = if .1.is_empty() { "none".to_string() } else { .1.join(", ") })]
    TooFewCandidates(Workflow, Vec<String>),
    /// Every arbiter model is one of the tournament's candidates.
    #[error("no arbiter model is outside the tournament's candidates ({})", .0.join(", "))]
    NoTournamentJudge(Vec<String>),
    /// The reconciliation model is the verifier's.
    #[error("the reconciliation would be judged by the verifier's own model `{0}`")]
    ReconcilerIsVerifier(String),
    /// `--chamber auto` has no usable panel.
    #[error("--chamber auto: {0}")]
    Chamber(String),
    /// Candidates were named for a workflow that has none.
    #[error("--candidates names the models of a panel (--workflow {panel}); --workflow {0} has none", panel = panel_workflows())]
    CandidatesWithoutPanel(Workflow),
    /// A consensus stage was asked of a workflow whose solution is chosen by its own vote or
    /// reviews: it has no refactor stage to send back.
    #[error("--consensus cannot be used with --workflow {0}: the candidates' vote or the arbiter's reviews choose the solution")]
    ConsensusWithoutRefactor(Workflow),
    /// Routing needs the user's fitness measurements and there is nowhere to keep them.
    #[error("there is no data directory for the fitness measurements")]
    NoDataDir,
    /// The fitness measurements do not read.
    #[error("{error}")]
    Fitness {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        error: String,
    },
}

impl StartError {
    /// Whether the command line or configuration is at fault (exit 2) rather than the
    /// repository's state (exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            StartError::NoCommits
                | StartError::NoDataDir
                | StartError::Fitness { .. }
                | StartError::SpecNotCommitted { .. }
                | StartError::SpecModified { .. }
                | StartError::Repo(_)
        )
    }
}

/// The workflows that run a panel of models, every one but the sequential default, as a
/// sentence names them (`parallel, debate or tournament`).
pub fn panel_workflows() -> String {
    let names: Vec<&str> = Workflow::ALL
        .into_iter()
        .filter(|w| *w != Workflow::Sequential)
        .map(Workflow::as_str)
        .collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}
