//! The pipeline: Architect → Implement → Refactor → Verify, each stage a commit on a
//! scratch branch, gated by a cross-model arbiter.
//!
//! [`answer`] reads a stage model's answer and applies it (the one stage service);
//! [`baseline`] is the plain test loop a run must beat. [`plan`] checks a run can start and assigns models; [`run::Run`] owns one run and drives
//! it; [`lock`] keeps it to one process at a time; [`record`] is what it writes to `refs/triad/runs/<id>`; [`observer`] is how progress
//! reaches a renderer; [`waiting`] says whether a run that stopped for you may go on; [`context`], [`reconcile`] and [`transition`] are the pure parts (what a stage model
//! is shown, the facts of a reconciliation, and what a run does after each verdict).

pub mod answer;
pub mod baseline;
pub mod context;
pub mod drive;
pub mod estimate;
pub mod fit;
pub mod lock;
pub mod observer;
pub mod plan;
pub mod reconcile;
pub mod record;
pub mod resume;
pub mod run;
pub mod stage;
pub mod start;
pub mod transition;
pub mod verify;
pub mod waiting;
pub mod workflow;

/// The workflows are named below the pipeline, for every layer to read (see
/// [`crate::workflow_name`]).
pub use crate::workflow_name::Workflow;
pub use drive::{DriveError, Driver, Host};
pub use lock::{run_alive, LockError, RunLock};
pub use observer::{Observer, Progress, Silent};
pub use plan::{plan, Choice, Planned, RunRequest, StartError};
pub use record::{list_runs, scan_runs, CorruptRun, Recorder, RunState, RunStatus, StopReason};
pub use resume::ResumeError;
pub use run::{Flow, Run, RunEnv, RunError};
pub use stage::Stage;
pub use verify::{VerifyPlan, VerifySkip};
