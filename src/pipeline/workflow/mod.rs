//! The workflows a run can follow before Verify, each in a folder of its own that holds
//! its steps, its record ([`parallel::record`], [`debate::record`]), its prompts' text and
//! its report section; the sequential workflow has none, being the stages themselves.
//!
//! A run holds one [`WorkflowState`] (see [`state`]), and the run loop asks only this
//! module: whether the workflow is under way ([`due`]) and its next step ([`step`]). A
//! tournament shares the parallel folder: it builds the same way and differs in who
//! chooses (judges outside the candidates, see `parallel::judge`).

pub mod debate;
pub mod parallel;
mod state;

pub use state::{WorkflowReport, WorkflowState};

use super::run::step::{Cx, Flow, Journal, RunError};

/// Whether the run's workflow still has a step to take before the stages take over.
pub(super) fn due(j: &Journal<'_>) -> bool {
    j.state.workflow().under_way()
}

/// The workflow's next step: one phase, recorded before the next begins.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    match j.state.workflow() {
        WorkflowState::Sequential => Ok(Flow::Continue),
        WorkflowState::Parallel(_) | WorkflowState::Tournament(_) => parallel::step(cx, j),
        WorkflowState::Debate(_) => debate::step(cx, j),
    }
}
