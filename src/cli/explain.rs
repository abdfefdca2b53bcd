//! What to do next: the hints of a stopped run and of a run that cannot start, in one place.
//! The library records and returns facts; only this module turns them into advice with
//! command lines.

use super::CommandError;
use crate::pipeline::record::{ModelFailure, NoRewind};
use crate::pipeline::{RunError, RunState, StartError, StopReason};
use crate::task::outcome::Outcome;

/// The next steps for a run in `state`, one command or option per line.
pub fn run_hints(state: &RunState) -> Vec<String> {
    let run = &state.run_id;
    let task = &state.task;
    let Some(reason) = &state.stop else {
        return vec![format!(
            "`git triad resume {run}` continues it from its last recorded event"
        )];
    };
    match reason {
        StopReason::Finished { .. } => vec![],
        StopReason::NothingChanged => vec![format!(
            "the models answered without changing the code; `git triad log {run}` shows each attempt; run the task again with stronger models (--implementer <model>)"
        )],
        StopReason::ArbiterHalt { stage, .. } => {
            let halted = state
                .stages
                .iter()
                .find(|s| s.stage == *stage)
                .and_then(|s| s.attempts.last())
                .and_then(|a| a.commit.as_ref())
                .map_or("<commit>", |c| c.short());
            vec![
                "options: re-run the task with other models (--architect/--implementer ...), change the model assignment, or abort (delete the branch)".into(),
                format!("a human can clear the verdict with `git triad override {halted} --verdict FLAG --reason \"...\"`"),
            ]
        }
        StopReason::RetriesHalt { stage, .. } => vec![
            format!(
                "run the task again with other models (--{} <model>, or -c roles.{}.models=...), or abort",
                stage.role(),
                stage.role()
            ),
            "to go back one stage with the next model instead of halting: -c arbiter.on_exhausted=rewind".into(),
        ],
        StopReason::RetriesExhausted { why, .. } => match why {
            NoRewind::NoOtherModel { role } => vec![format!(
                "give the {role} role more models (-c roles.{role}.models='[\"a\", \"b\"]') and run the task again"
            )],
            NoRewind::NoEarlierStage => {
                vec!["run the task again with other models, or raise --max-retries".into()]
            }
        },
        StopReason::Outcome { meta, .. } if meta.outcome == Outcome::NeedsInfo => vec![format!(
            "answer with `git triad task answer {task}`, then `git triad resume {run}`"
        )],
        StopReason::Outcome { .. } => vec![format!(
            "`git triad task show {task}` shows the task's state and next action"
        )],
        StopReason::ModelFailed { failure, .. } => match failure {
            ModelFailure::Schema => vec![
                "choose a stronger model for that role (--arbiter-model, -c roles.arbiter.models=...) and run the task again".into(),
            ],
            ModelFailure::Budget => vec![format!(
                "continue with a higher cap: git triad resume {run} --budget <USD>"
            )],
            ModelFailure::Provider => vec![
                format!("when the provider is back: git triad resume {run}"),
                "`git triad models list` shows which models are reachable".into(),
            ],
        },
        StopReason::Reconciliation { .. } => vec![
            "options: fix by hand on the branch, re-run the task, or override with `git triad override`".into(),
        ],
        StopReason::NoteNotWritten { .. } => vec![
            "check that refs/notes/triad can be updated (`git notes --ref triad list`; is another git process holding a lock?)".into(),
            format!("then `git triad resume {run}`"),
        ],
        StopReason::GitFailed { .. } => vec![format!(
            "`git triad resume {run}` continues from the last recorded event"
        )],
        StopReason::Legacy { .. } => vec![],
    }
}

/// A run that cannot start, with what to do about it.
pub fn start_error(e: StartError) -> CommandError {
    let hint: String = match &e {
        StartError::BadSlug(_) => {
            "slugs use lowercase letters, digits and dashes; `git triad task list` shows the tasks"
                .into()
        }
        StartError::NoCommits => "commit your project first: a run starts from HEAD".into(),
        StartError::SpecNotCommitted { path } => format!(
            "commit it first (`git add {path} && git commit`): the run is reconciled against what is in the repository"
        ),
        StartError::NoSuchTask { slug, .. } => format!(
            "create it with `git triad task new {slug} --title \"...\"`, edit it, and commit it"
        ),
        StartError::SpecModified { path } => format!(
            "commit it first (`git commit {path}`): the run is reconciled against what is in the repository"
        ),
        StartError::SpecNotText { .. } => "save it as UTF-8".into(),
        StartError::SpecInvalid(_) => "fix the TaskSpec, commit it, and run again".into(),
        StartError::Repo(_) => String::new(),
        StartError::UnknownModel(_) => "`git triad models list` shows the registered models".into(),
        StartError::NoModel(role) => format!(
            "set one with --{role} <model> or `-c roles.{role}.models='[\"<model>\"]'`"
        ),
        StartError::SelfReview { stage, .. } => format!(
            "the arbiter must be a different model; choose another with --arbiter-{stage} <model> or --{} <model>",
            stage.role()
        ),
        StartError::NoOtherArbiter { .. } => {
            "add another model to roles.arbiter.models or pass --arbiter-model <model>".into()
        }
        StartError::ReconcilerIsVerifier(_) => {
            "the reconciliation arbiter must differ from the verifier: choose another --reconcile-model"
                .into()
        }
    };
    let err = if e.is_usage() {
        CommandError::usage(e)
    } else {
        CommandError::failure(e)
    };
    if hint.is_empty() {
        err
    } else {
        err.hint(hint)
    }
}

/// A run that ended outside its protocol (git failing under it).
pub fn run_error(e: RunError, state: &RunState) -> CommandError {
    let raced = matches!(&e, RunError::Git(crate::git::GitError::Raced(_)));
    let mut err = CommandError::failure(e);
    if raced {
        err = err.hint(format!(
            "another git triad process (or a person) moved the run's branch or record; `git triad log {}` shows where it stands",
            state.run_id
        ));
    }
    err.hint(format!(
        "the run is recorded as failed where the record could be written; `git triad resume {}` continues it",
        state.run_id
    ))
}
