//! Tasks: the committed TaskSpec, and (later) the arbiter-owned task state machine.

pub mod glob;
pub mod spec;

pub use spec::{Requirement, Scope, TaskSpec, TaskSpecError};
