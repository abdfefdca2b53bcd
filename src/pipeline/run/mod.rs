//! One run, owned: its state, its record and its TaskSpec travel together in [`Run`], and
//! every step is a method that answers one [`Flow`].
//!
//! The loop is here; one attempt at a stage is in [`attempt`] (its prompt in [`prompt`], its
//! review in [`review`]), what happens after an attempt in [`act`] (as
//! [`super::transition`] decides it), the verify command in [`verify`], the reconciliation
//! in [`reconcile`]. Every step is recorded before the next
//! begins, so a killed run resumes from its record; the scratch branch follows the record
//! ([`branch`]).

mod act;
mod attempt;
mod branch;
mod building;
mod chamber;
mod checks;
mod consensus;
mod debate;
mod economy;
mod examples;
mod format;
mod observe;
mod parallel;
mod prompt;
mod reassign;
mod reconcile;
mod requirements;
mod review;
mod suggest;
mod verify;
mod whole;

use std::path::PathBuf;

use git2::Repository;

pub use verify::{VerifyPlan, VerifySkip};

use super::context::OutlineCache;
use super::observer::{Observer, Progress};
use super::record::{Recorder, RunState, RunStatus, StopReason};
use super::stage::Stage;
use super::transition::{self, Due, Policy};
use crate::config::LoadedConfig;
use crate::git::{Context as _, GitError, ObjectId};
use crate::model::ModelClient;
use crate::privacy::Privacy;
use crate::task::{Actor, TaskSpec};

/// What a run works with and does not own: the repository, the configuration, the model
/// client, how the verify command is handled, and who hears of progress.
pub struct RunEnv<'a> {
    /// The repository.
    pub repo: &'a Repository,
    /// Effective configuration.
    pub config: &'a LoadedConfig,
    /// The model client (with the cost ledger).
    pub client: &'a ModelClient,
    /// The active profile (`local`, ...), for the arbiter's fallback models.
    pub profile: Option<String>,
    /// Whether and how the verify command runs (decided from trust, see [`VerifyPlan`]).
    pub verify: VerifyPlan,
    /// Receives progress events.
    pub observer: &'a dyn Observer,
}

impl RunEnv<'_> {
    /// The work tree root (prompt overrides, worktrees).
    pub fn repo_root(&self) -> PathBuf {
        self.repo
            .workdir()
            .unwrap_or(self.repo.path())
            .to_path_buf()
    }
}

/// Whether the run goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Keep going: the state says what comes next.
    Continue,
    /// The run stopped; the state says why.
    Stop,
}

/// Failures that stop a run outside its protocol (git itself failing). The run is recorded
/// as failed when the record can still be written.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A git operation failed (or a ref moved under the run: [`GitError::Raced`]).
    #[error(transparent)]
    Git(#[from] GitError),
    /// The run's branch points at a commit the run did not make.
    #[error("the branch {branch} points at {}, which is not a commit of this run (its record says {}): someone committed on it or moved it, and git triad does not overwrite it", found.short(), recorded.short())]
    BranchMoved {
        /// The scratch branch.
        branch: String,
        /// Where it points.
        found: ObjectId,
        /// Where the record says the run stands.
        recorded: ObjectId,
    },
}

/// One run: its state, its record and its TaskSpec.
pub struct Run<'a> {
    env: &'a RunEnv<'a>,
    state: RunState,
    spec: TaskSpec,
    rec: Recorder<'a>,
    outlines: OutlineCache,
    /// Which files are private: withheld from every prompt, refused to every edit.
    privacy: Privacy,
    /// Which deliberation the consensus steps work on (not recorded: each step sets it).
    target: consensus::Target,
    /// The verify command's outcome at the run's base, once asked (not recorded: a resumed
    /// run asks again).
    at_base: std::cell::OnceCell<Option<crate::git::worktree::CommandOutcome>>,
}

impl<'a> Run<'a> {
    /// A run over `state` (new or loaded from its record).
    pub fn new(env: &'a RunEnv<'a>, state: RunState, spec: TaskSpec) -> Self {
        let rec = Recorder::open(env.repo, &state.run_id);
        // The ledger says which run each call served.
        env.client.set_run(Some(&state.run_id));
        Run {
            env,
            state,
            spec,
            rec,
            outlines: OutlineCache::default(),
            target: consensus::Target::default(),
            at_base: std::cell::OnceCell::new(),
            privacy: Privacy::from_config(&env.config.config),
        }
    }

    /// The state as it stands.
    pub fn state(&self) -> &RunState {
        &self.state
    }

    /// The state, for a caller that is done with the run.
    pub fn into_state(self) -> RunState {
        self.state
    }

    /// The tree of the run's base (HEAD when it started): what the run's change is against.
    pub(super) fn base_tree(&self) -> Result<git2::Tree<'a>, RunError> {
        let oid = self.state.base.oid()?;
        let repo = self.env.repo;
        Ok(repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .ctx("reading the base tree")?)
    }

    /// Writes the first event and creates the scratch branch at the base.
    pub fn start(&mut self) -> Result<(), RunError> {
        self.rec.event(&self.state, "start")?;
        let base = self.state.base.oid()?;
        self.move_branch(base, None, "start run")?;
        Ok(())
    }

    /// Runs stages until the run finishes or stops; the state says how. A git failure is
    /// recorded as a failed run (so the task is not left in review) and returned.
    pub fn execute(&mut self) -> Result<(), RunError> {
        let stage = self.state.current_stage().unwrap_or(Stage::Verify);
        if let Err(e) = crate::task::workflow::on_run_start(
            self.env.repo,
            &self.state.task,
            &self.state.run_id,
            stage.as_str(),
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        let result = self.run_loop();
        if let Err(e) = &result {
            self.state.stop(
                RunStatus::Failed,
                StopReason::GitFailed {
                    error: e.to_string(),
                },
            );
            // The record may be what failed; the error below says so either way.
            let _ = self.rec.event(&self.state, "stopped by a repository error");
        }
        // Who decided the task's fate: the arbiter when a model reviewed anything, else the
        // policy (an unreviewed run ends by rule, not by judgement).
        let reviewed = self.state.stages.iter().any(|s| s.verdict.is_some())
            || self
                .state
                .reconcile
                .as_ref()
                .is_some_and(|r| r.verdict.is_some())
            || matches!(self.state.stop, Some(StopReason::ArbiterHalt { .. }));
        let decided_by = if reviewed {
            Actor::Arbiter
        } else {
            Actor::Policy
        };
        if let Err(e) = crate::task::workflow::on_run_end(
            self.env.repo,
            &self.state.task,
            &self.state.run_id,
            self.state.status.as_str(),
            self.state.final_verdict().map(|v| v.as_str()),
            decided_by,
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        self.env
            .observer
            .progress(&Progress::Ended { state: &self.state });
        result
    }

    fn run_loop(&mut self) -> Result<(), RunError> {
        self.env
            .client
            .set_budget_after(self.state.budget_usd, self.state.spend.cost_usd);
        self.state.status = RunStatus::Running;
        self.state.stop = None;
        loop {
            let flow = if self.parallel_due() {
                self.parallel_step()?
            } else if self.debate_due() {
                self.debate_step()?
            } else if let Some(i) = self.suggestion_due() {
                self.suggestion_step(i)?
            } else if self.consensus_due() {
                self.consensus_step()?
            } else if self.format_due() {
                self.format_step()?
            } else if let Some(stage) = self.state.current_stage() {
                self.step(stage)?
            } else if self.state.reconcile.as_ref().is_some_and(|r| !r.done) {
                self.reconcile_step(true)?
            } else {
                return self.finish();
            };
            if flow == Flow::Stop {
                return Ok(());
            }
        }
    }

    /// One step at `stage`: the review of an attempt a killed run left committed, else
    /// escalate when its retries are used up (see [`transition::due`]), else run the verify command first (verify
    /// stage, unless it ran at the tip already), then one attempt.
    fn step(&mut self, stage: Stage) -> Result<Flow, RunError> {
        if self.state.under_review.is_some() {
            return self.resume_review();
        }
        let tries = self.state.stages[self.state.current].attempts_in_epoch();
        let earlier = transition::earlier(&self.state.stages, self.state.current);
        match transition::due(Policy::of(&self.state), tries, earlier) {
            Due::Attempt => {}
            Due::Rewind(to) => return self.rewind(to),
            Due::Stop(stop) => return self.exhausted(stop),
        }
        if stage == Stage::Verify {
            // At the tip: not again if it ran there, again if a rejected fix moved it.
            let tip = self.state.tip().clone();
            if self.state.verify.is_none() || self.state.verify_at.as_ref() != Some(&tip) {
                self.run_verify(tip)?;
            }
        }
        self.attempt()
    }
}

/// Runs a future to completion from synchronous code on a small runtime.
pub(crate) trait BlockOn: std::future::Future + Sized {
    /// Blocks the calling thread until the future is done.
    fn await_blocking(self) -> Self::Output {
        RUNTIME.with(|rt| rt.block_on(self))
    }
}

impl<F: std::future::Future> BlockOn for F {}

thread_local! {
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread tokio runtime can always be built");
}
