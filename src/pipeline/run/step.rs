//! What every step of a run works with: the run's surroundings and TaskSpec, which a step
//! reads and never changes ([`Cx`]); the run's state with the record it is written to, which
//! a step changes and records ([`Journal`]); and what a step answers ([`Flow`], [`RunError`]).
//!
//! Steps are free functions over these two, so what a step may change is in its signature:
//! a step given `&Cx` and `&Journal` only reads, one given `&mut Journal` records.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;

use git2::{Oid, Repository, Tree};

use crate::config::LoadedConfig;
use crate::git::{Context as _, GitError, ObjectId};
use crate::model::ModelClient;
use crate::pipeline::context::OutlineCache;
use crate::pipeline::observer::{Observer, Progress};
use crate::pipeline::record::{Recorder, RunState, Transcript};
use crate::pipeline::verify::VerifyPlan;
use crate::privacy::Privacy;
use crate::probe::{ProbePolicy, ProbeSettings};
use crate::sandbox::CommandOutcome;
use crate::task::TaskSpec;

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
    /// The workflows a run may follow, asked by the loop and the stage prompts.
    pub(in crate::pipeline) workflows: &'a dyn Workflows,
}

/// What the run loop and the stage prompts ask of the workflow a run follows. The workflow
/// registry above the run implements it (`pipeline::workflow::Registry`) and whoever
/// starts a run hands it in with the run's environment: the workflows use the run's
/// machinery, so the run never names a workflow.
pub(in crate::pipeline) trait Workflows {
    /// Whether the run's workflow still has a step to take before the stages take over.
    fn due(&self, j: &Journal<'_>) -> bool;
    /// The workflow's next step: one phase, recorded before the next begins.
    fn step(&self, cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError>;
    /// What the architect stage is shown of what the workflow decided (a debate's winning
    /// position; empty otherwise).
    fn architect_input(&self, state: &RunState) -> String;
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

/// What the steps of one run read: its surroundings, its TaskSpec, which files are private,
/// and the commit it started from, with what was read of them so far. Lent to steps shared:
/// only its caches fill as steps read.
pub(in crate::pipeline) struct Cx<'a> {
    /// The repository, configuration, client, verify plan and observer.
    pub(in crate::pipeline) env: &'a RunEnv<'a>,
    /// The TaskSpec as the run started with it.
    pub(in crate::pipeline) spec: TaskSpec,
    /// Which files are private: withheld from every prompt, refused to every edit.
    pub(in crate::pipeline) privacy: Privacy,
    /// Outlines of files already read (a cache: it fills as steps read files).
    pub(in crate::pipeline) outlines: OutlineCache,
    /// The verify command's outcome at each commit it ran to its end at in this process (a
    /// cache, not recorded: a resumed run asks again). A commit never changes, so the run's
    /// base, a building stage's check and the Verify stage at one commit run it once.
    pub(in crate::pipeline) verified: RefCell<HashMap<ObjectId, CommandOutcome>>,
    /// The behaviour diffs taken in this process, by tree pair (a cache, not recorded): a
    /// building stage's check of an attempt and the arbiter's review of it run the code once.
    pub(in crate::pipeline) behaviours: crate::arbiter::evidence::Behaviours,
    /// The run's base (HEAD when it started): what its change is against.
    base: ObjectId,
}

impl<'a> Cx<'a> {
    /// The context of a run over `spec` from `base`.
    pub(in crate::pipeline) fn new(env: &'a RunEnv<'a>, spec: TaskSpec, base: ObjectId) -> Self {
        Cx {
            env,
            spec,
            privacy: Privacy::from_config(&env.config.config),
            outlines: OutlineCache::default(),
            verified: RefCell::default(),
            behaviours: Default::default(),
            base,
        }
    }

    /// The repository.
    pub(in crate::pipeline) fn repo(&self) -> &'a Repository {
        self.env.repo
    }

    /// Says `progress` to whoever listens.
    pub(in crate::pipeline) fn progress(&self, progress: &Progress<'_>) {
        self.env.observer.progress(progress);
    }

    /// The tree of commit `id`; `what` says what was being read when it fails.
    pub(in crate::pipeline) fn tree(
        &self,
        id: &ObjectId,
        what: &str,
    ) -> Result<Tree<'a>, RunError> {
        self.tree_of(id.oid()?, what)
    }

    /// The tree of commit `oid`; `what` says what was being read when it fails.
    pub(in crate::pipeline) fn tree_of(&self, oid: Oid, what: &str) -> Result<Tree<'a>, RunError> {
        Ok(self
            .env
            .repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .ctx(what)?)
    }

    /// The tree of the run's base: what the run's change is against.
    pub(in crate::pipeline) fn base_tree(&self) -> Result<Tree<'a>, RunError> {
        self.tree(&self.base, "reading the base tree")
    }

    /// Whether probes run in this run: only in a trusted clone, with the run's verify
    /// command deciding whether Rust probes run.
    pub(in crate::pipeline) fn probe_policy(&self) -> ProbePolicy {
        let (verify, timeout) = match &self.env.verify {
            VerifyPlan::Run { command, timeout } => (Some(command.clone()), Some(*timeout)),
            VerifyPlan::Skip(_) => (None, None),
        };
        let settings = ProbeSettings::for_repo(
            self.env.repo,
            verify,
            self.env.config.config.sandbox.clone(),
        );
        ProbePolicy::for_clone(
            self.env.config.trusted,
            match timeout {
                Some(t) => settings.with_test_timeout(t),
                None => settings,
            },
        )
    }

    /// Characters of file contents that fit the window of every one of `models` (so each is
    /// given the identical message).
    pub(in crate::pipeline) fn char_budget(&self, models: &[String]) -> usize {
        let config = &self.env.config.config;
        models
            .iter()
            .map(|m| crate::pipeline::context::file_char_budget(config, m) * 2)
            .min()
            .unwrap_or(60_000)
            / 2
    }
}

/// The run's state and the record it is written to (`refs/triad/runs/<id>`): every change a
/// step makes is recorded as an event before the next step begins, so a killed run resumes
/// from its record.
pub(in crate::pipeline) struct Journal<'a> {
    /// The state as it stands.
    pub(in crate::pipeline) state: RunState,
    rec: Recorder<'a>,
}

impl<'a> Journal<'a> {
    /// The journal of `state`, in its record in `repo`.
    pub(in crate::pipeline) fn open(repo: &'a Repository, state: RunState) -> Self {
        let rec = Recorder::open(repo, state.run_id());
        Journal { state, rec }
    }

    /// Records the state as it stands, as one event saying `what`, with the transcripts
    /// queued since the last one and the commits to keep.
    pub(in crate::pipeline) fn event(&mut self, what: &str) -> Result<(), GitError> {
        self.rec.event(&self.state, what)
    }

    /// Queues a model call's transcript for the next event.
    pub(in crate::pipeline) fn transcript(&mut self, t: &Transcript) {
        self.rec.transcript(&mut self.state, t);
    }

    /// Keeps `commit` reachable from the record (a rejected attempt, an abandoned stage).
    pub(in crate::pipeline) fn keep(&mut self, commit: Oid) {
        self.rec.keep(commit);
    }

    /// The record's ref.
    pub(in crate::pipeline) fn refname(&self) -> &str {
        self.rec.refname()
    }

    /// The state, for a caller done with the run.
    pub(in crate::pipeline) fn into_state(self) -> RunState {
        self.state
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
