//! The workflows a run can follow before Verify, each in a folder of its own that holds
//! its steps, its prompts' text and its report section; the sequential workflow has none,
//! being the stages themselves. What a workflow records is part of the run's record
//! (`pipeline/record/<folder>.rs`, below the workflows, which read and write it).
//!
//! A run holds one [`WorkflowState`]. The registry (`pipeline::record::registry`) is the one
//! list of the workflows that record something of their own: from it come the state's
//! variants and how it is written in `run.json`, how a run of each is planned ([`plan`]),
//! which steps the run loop takes while one is under way ([`Registry`], as the run asks
//! it through `run::step::Workflows`) and what the reports show of it ([`report`]). A tournament shares the
//! parallel folder: it builds the same way and differs in who chooses (judges outside the
//! candidates, see `parallel::judge`).

pub mod debate;
mod panel;
pub mod parallel;
mod report;

pub use crate::pipeline::record::{Followed, WorkflowState};
pub use report::{render, report, summary, WorkflowReport};

use crate::pipeline::record::registry;

use super::record::RunState;
use super::run::step::{Cx, Flow, Journal, RunError, Workflows};
use super::start::{panel, Choice, StartError};
use crate::config::LoadedConfig;

/// Generates [`plan`] and [`step`] from [`registry`].
macro_rules! dispatch {
    ($( $variant:ident => $folder:ident :: $record:ident, $plan:ident; )+) => {
        /// The workflow's part of a new run's state, as the request chose it: its panel
        /// (see [`panel`]), then what each folder's plan adds (its judges).
        pub(super) fn plan(
            loaded: &LoadedConfig,
            choice: &Choice,
        ) -> Result<WorkflowState, StartError> {
            match choice.workflow {
                crate::workflow_name::Workflow::Sequential => Ok(WorkflowState::Sequential),
                $( crate::workflow_name::Workflow::$variant => {
                    let (models, tiebreaker) = panel(loaded, choice)?;
                    $folder::$plan(loaded, choice, models, tiebreaker).map(WorkflowState::$variant)
                } )+
            }
        }

        /// The workflow's next step: one phase, recorded before the next begins.
        fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
            match j.state.workflow() {
                WorkflowState::Sequential => Ok(Flow::Continue),
                $( WorkflowState::$variant(_) => $folder::step(cx, j), )+
            }
        }
    };
}

registry!(dispatch);

/// The registry as the run asks it (see [`Workflows`]): whoever starts a run hands it in.
pub(in crate::pipeline) struct Registry;

impl Workflows for Registry {
    fn due(&self, j: &Journal<'_>) -> bool {
        j.state.workflow().under_way()
    }

    fn step(&self, cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
        step(cx, j)
    }

    fn architect_input(&self, state: &RunState) -> String {
        debate::shown(state)
    }
}
