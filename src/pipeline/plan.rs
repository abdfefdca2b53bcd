//! Starting a run: the committed TaskSpec, the base, the models of every stage and the
//! cross-model rule, all checked before any model is called.

use std::collections::BTreeMap;

use git2::{Repository, Status};

use super::record::{
    ChamberRun, ConsensusState, DebateState, ParallelState, ReconcileState, RunState, StageRecord,
    Start,
};
use super::stage::Stage;
use super::workflow::WorkflowState;
use crate::config::{ArbiterMode, LoadedConfig, Role, RoutingMode};
use crate::routing::route::{route, RouteInput, Routing};
use crate::routing::FitnessStore;
use crate::task::{spec, TaskSpec};
use crate::workflow::Workflow;

/// What a caller asks a run to be: the command line's `run` flags, a session's
/// `run_pipeline`. Only the asks: [`plan`] resolves the rest (the profile, the routes,
/// whether routing makes it a tournament) and refuses what it cannot honour.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Task slug.
    pub task: String,
    /// `--arbiter`.
    pub mode: Option<ArbiterMode>,
    /// `--architect`, `--implementer`, ... (role → model).
    pub stage_models: BTreeMap<Role, String>,
    /// `--arbiter-model`.
    pub arbiter_model: Option<String>,
    /// `--arbiter-<stage>`.
    pub arbiter_stage: BTreeMap<Stage, String>,
    /// `--max-retries`.
    pub max_retries: Option<u32>,
    /// `--budget`.
    pub budget: Option<f64>,
    /// `--reconcile`.
    pub reconcile: bool,
    /// `--reconcile-model`.
    pub reconcile_model: Option<String>,
    /// `--consensus`: hold the consensus stage even when the configuration does not.
    pub consensus: bool,
    /// `--workflow`: how the solution is produced before Verify.
    pub workflow: Workflow,
    /// `--candidates`: the models of a parallel exploration or a debate (empty: the
    /// implementer role's distinct models).
    pub candidates: Vec<String>,
    /// `--chamber`: `Some(true)` auto, `Some(false)` off, `None` auto when a panel is
    /// configured (`[chamber]` or the profile's).
    pub chamber: Option<bool>,
    /// `--routing`: route every role by measured fitness in this mode (`None`: only the
    /// roles whose models start with `auto`, by the `routing` setting).
    pub routing: Option<RoutingMode>,
}

impl RunRequest {
    /// The models the request names itself: the user's own choice, which the `auto`
    /// profile never replaces.
    pub fn named_models(&self) -> Vec<String> {
        self.stage_models
            .values()
            .chain(&self.arbiter_model)
            .chain(self.arbiter_stage.values())
            .chain(&self.reconcile_model)
            .chain(&self.candidates)
            .cloned()
            .collect()
    }
}

/// What a request resolves to before any state is made: the profile, the routes of the
/// roles chosen by measured fitness, and the workflow with its candidates (tournament
/// routing makes a sequential request a tournament of the best routed implementers).
#[derive(Debug, Clone, Default)]
pub struct Choice {
    /// The profile applied to the roles the user left unset, if any.
    pub profile: Option<String>,
    /// The routes of the routed roles, computed from the user's measurements; recorded in
    /// the run.
    pub routes: Option<Routing>,
    /// The workflow the run follows.
    pub workflow: Workflow,
    /// The models of its parallel exploration, debate or tournament (empty: the profile's).
    pub candidates: Vec<String>,
}

/// A run planned: its first state, the committed TaskSpec, and what the request resolved to.
#[derive(Debug)]
pub struct Planned {
    /// The state the run starts with (nothing is written yet).
    pub state: RunState,
    /// The TaskSpec as committed at the base.
    pub spec: TaskSpec,
    /// The profile, routes and workflow chosen.
    pub choice: Choice,
}

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
    #[error("no arbiter model differs from the {stage} stage's model `{model}` (arbiter models: {})", arbiters.join(", "))]
    NoOtherArbiter {
        /// The stage.
        stage: Stage,
        /// Its model.
        model: String,
        /// The arbiter role's models.
        arbiters: Vec<String>,
    },
    /// A parallel exploration or a debate needs at least two different models.
    #[error("{} needs at least two different candidate models; it has {}", match .0 { Workflow::Debate => "a debate", Workflow::Tournament => "a tournament", _ => "parallel exploration" }, if .1.is_empty() { "none".to_string() } else { .1.join(", ") })]
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
    #[error("--candidates names the models of a parallel exploration or a debate")]
    CandidatesWithoutPanel(Workflow),
    /// A consensus stage was asked of a workflow whose solution is chosen by its own vote or
    /// reviews: it has no refactor stage to send back.
    #[error("--consensus cannot be used with --workflow parallel or tournament: the candidates' vote or the arbiter's reviews choose the solution")]
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

/// Loads the TaskSpec as committed at HEAD, refusing an untracked or modified one; returns
/// the spec, its blob id and HEAD (the run's base).
pub fn committed_task(
    repo: &Repository,
    slug: &str,
) -> Result<(TaskSpec, git2::Oid, git2::Oid), StartError> {
    if !spec::valid_slug(slug) {
        return Err(StartError::BadSlug(slug.to_string()));
    }
    let path = spec::spec_path(slug);
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .ok_or(StartError::NoCommits)?;
    let status = repo.status_file(std::path::Path::new(&path)).ok();
    let tree = head.tree()?;
    let entry = tree.get_path(std::path::Path::new(&path));
    match (entry, status) {
        (Err(_), Some(s)) if s.contains(Status::WT_NEW) || s.contains(Status::INDEX_NEW) => {
            Err(StartError::SpecNotCommitted { path })
        }
        (Err(_), _) => Err(StartError::NoSuchTask {
            slug: slug.to_string(),
            path,
        }),
        (Ok(_), Some(s)) if !s.is_empty() && s != Status::CURRENT => {
            Err(StartError::SpecModified { path })
        }
        (Ok(entry), _) => {
            let blob = repo.find_blob(entry.id())?;
            let text = std::str::from_utf8(blob.content())
                .map_err(|_| StartError::SpecNotText { path: path.clone() })?;
            let spec = TaskSpec::parse(text, &path, slug)?;
            let fields = spec.unfilled();
            if !fields.is_empty() {
                return Err(StartError::SpecUnfilled { path, fields });
            }
            Ok((spec, entry.id(), head.id()))
        }
    }
}

/// Whether registry names `a` and `b` send the same model id to the same provider.
pub fn same_wire_model(loaded: &LoadedConfig, a: &str, b: &str) -> bool {
    let models = &loaded.config.models;
    match (models.get(a), models.get(b)) {
        (Some(x), Some(y)) => x.provider == y.provider && x.wire_id(a) == y.wire_id(b),
        _ => false,
    }
}

/// Chooses the models of every stage and every reviewed stage's arbiter, enforcing
/// arbiter ≠ stage model before any call.
pub fn assign_models(
    loaded: &LoadedConfig,
    req: &RunRequest,
    choice: &Choice,
    mode: ArbiterMode,
) -> Result<Vec<StageRecord>, StartError> {
    let profile = choice.profile.as_deref();
    let c = &loaded.config;
    let known = |m: &str| -> Result<(), StartError> {
        if c.models.contains_key(m) {
            Ok(())
        } else {
            Err(StartError::UnknownModel(m.to_string()))
        }
    };
    // A model named on the command line must be one this user can call.
    let named = |m: &str, role: Role| -> Result<(), StartError> {
        known(m)?;
        callable_of(loaded, role, &[m.to_string()]).map(drop)
    };
    // A routed role's ranked models stand in for its list.
    let list_of = |role: Role| -> Vec<String> {
        choice
            .routes
            .as_ref()
            .and_then(|r| r.models(role))
            .map_or_else(|| loaded.role_models(role, profile), <[String]>::to_vec)
    };
    let arbiter_list = list_of(Role::Arbiter);
    // Two registry names can be one model on the wire (same provider, same id): the rule is
    // about models, not names.
    let same = |a: &str, b: &str| a == b || same_wire_model(loaded, a, b);
    let mut stages: Vec<StageRecord> = Vec::new();
    for stage in Stage::ALL {
        let role = stage.role();
        let models = match req.stage_models.get(&role) {
            Some(m) => {
                named(m, role)?;
                vec![m.clone()]
            }
            None => {
                let listed = list_of(role);
                if listed.is_empty() {
                    return Err(StartError::NoModel(role));
                }
                let callable = callable_of(loaded, role, &listed)?;
                spread(callable, &stages, c.max_stages_per_model, &same)
            }
        };
        let primary = models.first().cloned().ok_or(StartError::NoModel(role))?;
        let reviewed = stage.reviewed(mode);
        let explicit = req
            .arbiter_stage
            .get(&stage)
            .cloned()
            .or_else(|| req.arbiter_model.clone())
            .or_else(|| match stage {
                Stage::Architect => c.arbiter.architect.clone(),
                Stage::Implement => c.arbiter.implement.clone(),
                Stage::Refactor => c.arbiter.refactor.clone(),
                Stage::Verify => c.arbiter.verify.clone(),
            });
        let arbiter_model = if !reviewed {
            None
        } else if let Some(a) = explicit {
            named(&a, Role::Arbiter)?;
            if same(&a, &primary) {
                return Err(StartError::SelfReview {
                    stage,
                    model: primary,
                });
            }
            Some(a)
        } else {
            let others: Vec<String> = arbiter_list
                .iter()
                .filter(|a| !same(a, &primary))
                .cloned()
                .collect();
            if others.is_empty() {
                return Err(StartError::NoOtherArbiter {
                    stage,
                    model: primary.clone(),
                    arbiters: arbiter_list.clone(),
                });
            }
            callable_of(loaded, Role::Arbiter, &others)?
                .into_iter()
                .next()
        };
        stages.push(StageRecord {
            stage,
            commit: None,
            verdict: None,
            models,
            model_index: 0,
            arbiter_model,
            attempts: Vec::new(),
            reviewed,
            epoch_start: 0,
            draft: None,
            dropped: None,
        });
    }
    Ok(stages)
}

/// The models of `models` this user can call, in order; an error naming each model and why
/// when there is none.
fn callable_of(
    loaded: &LoadedConfig,
    role: Role,
    models: &[String],
) -> Result<Vec<String>, StartError> {
    let callable: Vec<String> = models
        .iter()
        .filter(|m| loaded.callable(m))
        .cloned()
        .collect();
    if callable.is_empty() {
        return Err(StartError::Uncallable {
            role,
            models: models
                .iter()
                .filter_map(|m| Some((m.clone(), loaded.uncallable_reason(m)?)))
                .collect(),
        });
    }
    Ok(callable)
}

/// `models` with its first model that holds fewer than `max` of the stages planned so far
/// moved to the front (`max_stages_per_model`); unchanged with no limit, or when every model
/// of the list is at it. A model named for a stage on the command line is never moved.
fn spread(
    mut models: Vec<String>,
    planned: &[StageRecord],
    max: u32,
    same: &dyn Fn(&str, &str) -> bool,
) -> Vec<String> {
    if max == 0 {
        return models;
    }
    let held = |m: &str| {
        planned
            .iter()
            .filter(|s| s.models.first().is_some_and(|p| same(p, m)))
            .count() as u32
    };
    if let Some(i) = models.iter().position(|m| held(m) < max) {
        let free = models.remove(i);
        models.insert(0, free);
    }
    models
}

/// What `req` resolves to: the profile (`auto` picks one unless the request names its own
/// models), the routes of the routed roles (from the user's measurements, read from the
/// data directory `env` names), and the workflow with its candidates; refuses a request
/// whose parts cannot go together rather than dropping one.
pub fn choose(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    req: &RunRequest,
) -> Result<Choice, StartError> {
    let profile = loaded.profile_choice(env, &req.named_models()).name;
    let routes = routes(loaded, env, profile.as_deref(), req.routing)?;
    let (workflow, candidates) = tournament(routes.as_ref(), req.workflow, &req.candidates);
    if !candidates.is_empty() && workflow == Workflow::Sequential {
        return Err(StartError::CandidatesWithoutPanel(workflow));
    }
    if req.consensus && matches!(workflow, Workflow::Parallel | Workflow::Tournament) {
        return Err(StartError::ConsensusWithoutRefactor(workflow));
    }
    Ok(Choice {
        profile,
        routes,
        workflow,
        candidates,
    })
}

/// The routes of the roles to route: every role with `forced` (`--routing`), else the
/// roles whose list starts with `auto`; `None` when there are none. Reads the user's
/// measurements only when something is routed.
pub fn routes(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    profile: Option<&str>,
    forced: Option<RoutingMode>,
) -> Result<Option<Routing>, StartError> {
    let any_auto = Role::ALL.iter().any(|r| loaded.role_is_auto(*r, profile));
    if forced.is_none() && !any_auto {
        return Ok(None);
    }
    let path = FitnessStore::path(env).ok_or(StartError::NoDataDir)?;
    let store = FitnessStore::load(&path).map_err(|e| StartError::Fitness {
        error: e.to_string(),
        path,
    })?;
    let usable = |m: &str| loaded.callable(m);
    Ok(route(&RouteInput {
        loaded,
        profile,
        store: &store,
        mode: forced.unwrap_or(loaded.config.routing),
        every_role: forced.is_some(),
        usable: &usable,
        now: crate::clock::now_unix(),
    }))
}

/// Under tournament routing, the workflow is a tournament (unless another one was asked
/// for) and its candidates, unless named, are the best [`crate::config::TOURNAMENT_K`]
/// routed implementers; otherwise `workflow` and `candidates` as given.
fn tournament(
    routes: Option<&Routing>,
    workflow: Workflow,
    candidates: &[String],
) -> (Workflow, Vec<String>) {
    let Some(r) = routes.filter(|r| r.mode == RoutingMode::Tournament) else {
        return (workflow, candidates.to_vec());
    };
    let workflow = match workflow {
        Workflow::Sequential => Workflow::Tournament,
        w => w,
    };
    if !candidates.is_empty() {
        return (workflow, candidates.to_vec());
    }
    let best = r
        .models(Role::Implementer)
        .unwrap_or_default()
        .iter()
        .take(crate::config::TOURNAMENT_K)
        .cloned()
        .collect();
    (workflow, best)
}

/// Plans a run: resolves the request ([`choose`]), reads the committed TaskSpec, and
/// checks every model and rule before any call; returns the run's first state (nothing is
/// written yet).
pub fn plan(
    repo: &Repository,
    loaded: &LoadedConfig,
    env: &[(String, String)],
    req: &RunRequest,
) -> Result<Planned, StartError> {
    let choice = choose(loaded, env, req)?;
    let profile = choice.profile.as_deref();
    let (spec, blob, head) = committed_task(repo, &req.task)?;
    let c = &loaded.config;
    let mode = req.mode.unwrap_or(c.arbiter.mode);
    let stages = assign_models(loaded, req, &choice, mode)?;
    if let Some(m) = &req.reconcile_model {
        if !c.models.contains_key(m) {
            return Err(StartError::UnknownModel(m.clone()));
        }
        callable_of(loaded, Role::Arbiter, std::slice::from_ref(m))?;
        let verifier = stages[Stage::Verify.index()].models.first();
        if verifier.is_some_and(|v| v == m || same_wire_model(loaded, v, m)) {
            return Err(StartError::ReconcilerIsVerifier(m.clone()));
        }
    }

    let workflow = match choice.workflow {
        Workflow::Sequential => WorkflowState::Sequential,
        Workflow::Parallel => {
            let (models, tiebreaker) = panel_plan(loaded, &choice)?;
            WorkflowState::Parallel(ParallelState {
                models,
                tiebreaker,
                ..Default::default()
            })
        }
        Workflow::Debate => {
            let (models, tiebreaker) = panel_plan(loaded, &choice)?;
            WorkflowState::Debate(DebateState::new(models, tiebreaker))
        }
        Workflow::Tournament => {
            let (models, _) = panel_plan(loaded, &choice)?;
            // The judges: the arbiter role's models that are none of the candidates.
            let judges: Vec<String> = loaded
                .role_models(Role::Arbiter, profile)
                .into_iter()
                .filter(|m| {
                    !models
                        .iter()
                        .any(|k| k == m || same_wire_model(loaded, k, m))
                })
                .collect();
            if judges.is_empty() {
                return Err(StartError::NoTournamentJudge(models));
            }
            WorkflowState::Tournament(ParallelState {
                models,
                judges,
                ..Default::default()
            })
        }
    };

    let chamber = chamber_plan(loaded, profile, req.chamber)?;
    let run_id = crate::clock::new_run_id();
    let budget = req.budget.or(c.budget.run_usd).filter(|b| *b > 0.0);
    let state = RunState::new(Start {
        run_id,
        task: req.task.clone(),
        task_blob: blob.into(),
        base: head.into(),
        mode,
        max_retries: req.max_retries.unwrap_or(c.arbiter.max_retries),
        on_exhausted: c.arbiter.on_exhausted,
        stages,
        budget_usd: budget,
        config: serde_json::to_value(c).unwrap_or_default(),
        reconcile: req.reconcile.then(|| ReconcileState {
            model: req.reconcile_model.clone(),
            ..Default::default()
        }),
        // A parallel run's solution is chosen by its own vote; the consensus stage, which
        // sends the refactor stage back, has nothing to send back to.
        consensus: (!workflow.chooses_solution() && (req.consensus || c.consensus.enabled))
            .then(ConsensusState::default),
        workflow,
        chamber,
        routing: choice.routes.clone(),
        profile: profile.map(str::to_string),
    });
    Ok(Planned {
        state,
        spec,
        choice,
    })
}

/// The chamber a run may ask: on when asked for, or when a panel is configured.
fn chamber_plan(
    loaded: &LoadedConfig,
    profile: Option<&str>,
    wanted: Option<bool>,
) -> Result<Option<ChamberRun>, StartError> {
    let configured = loaded.chamber_defaults(profile);
    let on = wanted.unwrap_or(!configured.0.is_empty());
    if !on {
        return Ok(None);
    }
    let roles = |r| loaded.role_models(r, profile);
    let (panel, arbiter) =
        crate::chamber::founder::panel(&loaded.config, &roles, &configured, &[], None)
            .map_err(StartError::Chamber)?;
    Ok(Some(ChamberRun {
        panel,
        arbiter,
        sessions: Vec::new(),
    }))
}

/// The candidates of a parallel exploration or the debaters of a debate (distinct models,
/// on the wire too, in the order given) and the model that breaks a tied vote or judges the
/// debate: the tiebreaker role's, else the arbiter role's first model that is not one of
/// them.
fn panel_plan(
    loaded: &LoadedConfig,
    choice: &Choice,
) -> Result<(Vec<String>, Option<String>), StartError> {
    let profile = choice.profile.as_deref();
    let asked = if choice.candidates.is_empty() {
        // The implementer role's models; where it lists only one (a profile of small local
        // models), the other models the profile's roles name join it, so `--workflow
        // parallel` or `debate` needs no `--candidates` to have two.
        let mut listed: Vec<String> = Vec::new();
        for role in [
            Role::Implementer,
            Role::Arbiter,
            Role::Refactorer,
            Role::Architect,
            Role::Verifier,
        ] {
            for m in loaded.role_models(role, profile) {
                let distinct = !listed
                    .iter()
                    .any(|k| *k == m || same_wire_model(loaded, k, &m));
                if distinct && loaded.callable(&m) {
                    listed.push(m);
                }
            }
            if listed.len() >= 2 {
                break;
            }
        }
        listed
    } else {
        choice.candidates.clone()
    };
    let mut models: Vec<String> = Vec::new();
    for m in asked {
        if !loaded.config.models.contains_key(&m) {
            return Err(StartError::UnknownModel(m));
        }
        callable_of(loaded, Role::Implementer, std::slice::from_ref(&m))?;
        if !models
            .iter()
            .any(|k| *k == m || same_wire_model(loaded, k, &m))
        {
            models.push(m);
        }
    }
    if models.len() < 2 {
        return Err(StartError::TooFewCandidates(choice.workflow, models));
    }
    let candidate = |m: &str| {
        models
            .iter()
            .any(|k| k == m || same_wire_model(loaded, k, m))
    };
    let tiebreaker = loaded
        .role_models(Role::Tiebreaker, profile)
        .into_iter()
        .chain(loaded.role_models(Role::Arbiter, profile))
        .find(|m| !candidate(m) && loaded.callable(m));
    Ok((models, tiebreaker))
}
