//! The pipeline: Architect → Implement → Refactor → Verify, each stage a commit on a
//! scratch branch, gated by a cross-model arbiter.

pub mod context;
pub mod plan;
pub mod reconcile;
pub mod reconcile_step;
pub mod record;
pub mod run;
pub mod stage;

pub use plan::{plan, RunRequest, StartError};
pub use record::{list_runs, Recorder, RunState, RunStatus};
pub use run::Runner;
pub use stage::Stage;
