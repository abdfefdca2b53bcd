//! Runs as operations: one started from a request, one taken up (a resume, a rewind), one
//! reconciled again, and the run a finished task unblocks. Each answers a [`Ran`]: the run's
//! state and what it means as an exit code, for the caller to render.

use super::exit::{reconcile_exit, run_exit};
use super::Ops;
use crate::config::LoadedConfig;
use crate::exit::ExitCode;
use crate::pipeline::resume::Rewind;
use crate::pipeline::{DriveError, Planned, RunRequest, RunState, StartError};
use crate::verdict::Verdict;

/// How a run the operation drove ended.
#[derive(Debug)]
pub struct Ran {
    /// The run as it ended (its status, stages, spend, stop reason).
    pub state: RunState,
    /// What its end means as an exit code ([`super::exit`]).
    pub exit: ExitCode,
}

impl Ran {
    /// The outcome of a run that ended as `state`.
    pub fn of(state: RunState) -> Ran {
        let exit = run_exit(state.status());
        Ran { state, exit }
    }
}

/// How a reconciliation run again ended: the run, and the reconciliation's verdict when it
/// reached one (the exit code says what both mean).
#[derive(Debug)]
pub struct Reconciled {
    /// The run, reconciled.
    pub ran: Ran,
    /// The reconciliation's verdict, when it reached one.
    pub verdict: Option<Verdict>,
}

impl Ops<'_> {
    /// Plans a run of `req` under `loaded` (see [`crate::pipeline::plan()`]): nothing is
    /// written or called, so a caller may show what it would cost instead of starting it.
    pub fn plan(&self, loaded: &LoadedConfig, req: &RunRequest) -> Result<Planned, StartError> {
        crate::pipeline::plan(self.repo, loaded, self.env, req)
    }

    /// Starts the run `planned` (from [`crate::pipeline::Driver::plan`]) under `loaded` and
    /// drives it to its end.
    pub fn run(&self, loaded: LoadedConfig, planned: Planned) -> Result<Ran, DriveError> {
        self.driver(loaded).start(planned).map(Ran::of)
    }

    /// Takes up run `run_id` and drives it to its end: its cap raised by `budget` when
    /// given, stages redone with `rewind`.
    pub fn resume(
        &self,
        loaded: LoadedConfig,
        run_id: &str,
        budget: Option<f64>,
        rewind: Option<Rewind<'_>>,
    ) -> Result<Ran, DriveError> {
        self.driver(loaded)
            .resume(run_id, budget, rewind)
            .map(Ran::of)
    }

    /// Reconciles finished run `run_id` against its TaskSpec again, with `model` as the
    /// reconciliation arbiter when given.
    pub fn reconcile(
        &self,
        loaded: LoadedConfig,
        run_id: &str,
        model: Option<&str>,
    ) -> Result<Reconciled, DriveError> {
        let (verdict, state) = self.driver(loaded).reconcile(run_id, model)?;
        let exit = reconcile_exit(verdict, state.status());
        Ok(Reconciled {
            ran: Ran { state, exit },
            verdict,
        })
    }

    /// What runs next once task `slug` is done: the run that waited on it as its last
    /// dependency, if there is one (a `task close`, or a run that finished it).
    pub fn unblocked(&self, slug: &str) -> Result<Option<String>, DriveError> {
        Ok(crate::pipeline::waiting::unblocked_run(self.repo, slug)?)
    }

    /// Continues run `run_id`, which task `slug` unblocked, in this process: says so through
    /// the host and takes it up with its recorded cap.
    pub fn continue_unblocked(
        &self,
        loaded: LoadedConfig,
        slug: &str,
        run_id: &str,
    ) -> Result<Ran, DriveError> {
        self.host.note(&format!(
            "the last dependency `{slug}` is done: run {run_id} continues"
        ));
        self.resume(loaded, run_id, None, None)
    }
}
