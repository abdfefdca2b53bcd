//! What every workflow's record answers, so the run, its record and its reports ask a
//! workflow without naming it. Each folder implements it for its record; the run's
//! [`super::WorkflowState`] is built from the registry over them.

use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::workflow_name::Workflow;

/// What every workflow's record answers.
pub trait Followed: Serialize + DeserializeOwned {
    /// The record's key in `run.json`.
    const KEY: &'static str;
    /// The workflow this record is a run of (one record type may serve two workflows: a
    /// parallel record with judges is a tournament's).
    fn workflow(&self) -> Workflow;
    /// Whether it still has steps before the stages take over.
    fn under_way(&self) -> bool;
    /// Every model it calls itself.
    fn models(&self) -> Vec<String>;
    /// Whether it chooses the solution itself (by vote or by review), so no consensus stage
    /// has a refactor stage to send back.
    fn chooses_solution(&self) -> bool {
        false
    }
}
