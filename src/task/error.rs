//! Why a task operation failed.

use super::state::TaskState;
use crate::git::GitError;

/// Failures of the task state machine, its storage and the workflow hooks.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// The transition table has no edge from `from` to `to`.
    #[error("task `{slug}` cannot go from {from} to {to}")]
    IllegalTransition {
        /// The task.
        slug: String,
        /// Its current state.
        from: TaskState,
        /// The state that was asked for.
        to: TaskState,
    },
    /// Someone other than the arbiter tried to set a terminal state.
    #[error("only the arbiter may set task `{slug}` to {to} (a terminal state)")]
    NotArbiter {
        /// The task.
        slug: String,
        /// The terminal state that was refused.
        to: TaskState,
    },
    /// No record and no TaskSpec carry this slug.
    #[error("there is no task `{0}`")]
    Unknown(String),
    /// Answers were given to a task that asked no questions.
    #[error("task `{slug}` is {state}, not WAITING_ON_USER: it asked no questions")]
    NotWaiting {
        /// The task.
        slug: String,
        /// Its current state.
        state: TaskState,
    },
    /// A slug that cannot be a file or ref name.
    #[error("`{0}` is not a valid task slug (use lowercase letters, digits and dashes, e.g. `add-login`)")]
    BadSlug(String),
    /// A decision that lacks what its target state needs.
    #[error("decision {decision} on task `{slug}` is incomplete: {why}")]
    InvalidDecision {
        /// The task.
        slug: String,
        /// The decision's wire name.
        decision: String,
        /// What is missing.
        why: String,
    },
    /// A run's end was recorded while the run is still `running`.
    #[error("run {0} is still running: only a run that ended moves its task on")]
    NotEnded(String),
    /// APPROVE is not routed per stage: the run's end decides approval.
    #[error("the {stage} stage answered APPROVE: stage approvals are not routed; on_run_end records the run's result")]
    ApproveNotRouted {
        /// The stage.
        stage: String,
    },
    /// An answers file that cannot be read as answers.
    #[error("the answers are not usable: {0}")]
    BadAnswers(String),
    /// A stored record that cannot be read.
    #[error("the record of task `{slug}` is unreadable: {message}")]
    Corrupt {
        /// The task.
        slug: String,
        /// What is wrong.
        message: String,
    },
    /// Other writers kept moving the ref.
    #[error("task `{0}` was changed by other writers on every try; nothing was overwritten")]
    Contended(String),
    /// A state that breaks the owner / next action / unblock condition invariant (a bug).
    #[error("task `{slug}` would lose its {field}: every task needs an owner, a next action and an unblock condition")]
    Invariant {
        /// The task.
        slug: String,
        /// The empty field.
        field: &'static str,
    },
    /// A git failure.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A file in the work tree could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}
