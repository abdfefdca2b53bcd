//! Tasks: the committed TaskSpec, and the arbiter-owned task state machine (seed 004) with
//! its record in git (`refs/triad/tasks/<slug>`).

pub mod answers;
pub mod error;
pub mod example;
pub mod lifecycle;
pub mod machine;
pub mod outcome;
pub mod response;
pub mod route;
pub mod run_status;
pub mod spec;
pub mod state;
pub mod store;

pub use error::TaskError;
pub use example::Example;
pub use machine::Machine;
pub use outcome::{Dependency, Outcome, StageMeta};
pub use response::{ArbiterDecision, Decision, SpecialistResponse};
pub use route::route;
pub use run_status::RunStatus;
pub use spec::{Requirement, Scope, TaskSpec, TaskSpecError, TestsPolicy};
pub use state::{Actor, Answer, EventKind, HistoryEntry, Task, TaskState};
