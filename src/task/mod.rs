//! Tasks: the committed TaskSpec, and the arbiter-owned task state machine (seed 004) with
//! its record in git (`refs/triad/tasks/<slug>`).

pub mod answers;
pub mod error;
pub mod glob;
pub mod machine;
pub mod response;
pub mod spec;
pub mod state;
pub mod store;
pub mod workflow;

pub use error::TaskError;
pub use machine::Machine;
pub use response::{route, ArbiterDecision, Decision, SpecialistResponse};
pub use spec::{Requirement, Scope, TaskSpec, TaskSpecError};
pub use state::{Actor, Answer, EventKind, HistoryEntry, Task, TaskState};
