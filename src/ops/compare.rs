//! `bench --compare`'s pipeline arm as an operation: the pipeline on a task under one
//! arbiter mode, planned and driven in this process as `git triad run` would, and told as
//! an [`Arm`] from the run's typed outcome (its status, branch, builder, spend) and the
//! ledger's record of its calls. The comparison never starts its own program and never
//! reads a status back from text.

use std::time::Instant;

pub use crate::routing::compare::Arm;

use super::Ops;
use crate::config::LoadedConfig;
use crate::model::budget::Ledger;
use crate::pipeline::{DriveError, RunRequest, RunStatus, Stage, StartError};
use crate::routing::compare::{ArmStatus, Calls};

/// Why an arm could not be run or counted.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The run could not be planned.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The run could not start, go on or end in its protocol.
    #[error(transparent)]
    Run(Box<DriveError>),
    /// The ledger that counts the run's calls could not be read.
    #[error("cannot read {path} to count the run's model calls: {error}")]
    Ledger {
        /// The ledger file.
        path: String,
        /// Why.
        error: String,
    },
}

impl Ops<'_> {
    /// Runs the pipeline arm `req` (its task and arbiter mode, every other choice at the
    /// command's default) as repetition `n` of configuration `config`, and counts its model
    /// calls in the ledger under the run's id.
    pub fn compare_arm(
        &self,
        loaded: LoadedConfig,
        req: &RunRequest,
        config: &str,
        n: u32,
    ) -> Result<Arm, CompareError> {
        let started = Instant::now();
        let planned = self.plan(&loaded, req)?;
        let ran = self
            .run(loaded, planned)
            .map_err(|e| CompareError::Run(Box::new(e)))?;
        let seconds = started.elapsed().as_secs_f64();
        let state = &ran.state;
        let ledger = crate::git::paths::ledger(self.repo);
        let records = Ledger::new(ledger.clone())
            .read()
            .map_err(|e| CompareError::Ledger {
                path: ledger.display().to_string(),
                error: e.to_string(),
            })?;
        let builder = state
            .stages()
            .iter()
            .find(|s| s.stage == Stage::Implement)
            .map(|s| s.last_model().to_string())
            .unwrap_or_default();
        Ok(Arm {
            task: req.task.clone(),
            run: n,
            config: config.to_string(),
            status: ArmStatus::Run(state.status()),
            claimed: matches!(state.status(), RunStatus::Approved | RunStatus::Flagged),
            branch: Some(state.branch().to_string()),
            builder,
            calls: Calls::of_run(&records, state.run_id()),
            call_budget: None,
            cost_usd: state.spend().cost_usd,
            seconds,
        })
    }
}
