//! A run driven from its request to its end, for every caller: the command line's `run`
//! and `resume`, and a session's `run_pipeline` and `resume_run` through them.
//!
//! The caller says what it wants (a [`RunRequest`] planned with [`Driver::plan`], or a run
//! id) and renders the [`RunState`] that comes back; everything between is here, once:
//! the limits of models registered without them, the local servers the run calls first,
//! the run's lock, the configuration it really used, what its task record lets a stopped
//! run take up, and the run itself under the caller's eyes ([`Host`]).

use std::path::PathBuf;

use git2::Repository;

use super::lock::{LockError, RunLock};
use super::observer::Observer;
use super::plan::{Planned, RunRequest, StartError};
use super::record::{Recorder, RunState, RunStatus};
use super::resume::{ResumeError, Rewind};
use super::run::step::BlockOn;
use super::run::{Run, RunEnv, RunError};
use super::verify::VerifyPlan;
use super::waiting::StillWaiting;
use crate::arbiter::Verdict;
use crate::config::LoadedConfig;
use crate::model::budget::Ledger;
use crate::model::discover::{discover, fill as fill_model, Limits};
use crate::model::local::LocalError;
use crate::model::{EnvLookup, ModelClient};
use crate::task::{TaskError, TaskSpec};

/// What the caller of a run provides: where its notes go and the eyes the run runs under.
pub trait Host {
    /// A note for the user while a run is prepared or taken up (a local server started, a
    /// model's limits read, the run's branch), without the `triad: ` a terminal shows.
    fn note(&self, line: &str);

    /// A line of progress said as it is (a chamber session's phases), with no `triad: `
    /// before it; by default, a note.
    fn say(&self, line: &str) {
        self.note(line)
    }

    /// Runs `go` with the observer the run reports its progress to: a live view, plain
    /// lines, a session's screen.
    fn watch(&self, client: &ModelClient, start: &RunState, go: Go<'_>) -> Driven;
}

/// The run itself, handed to [`Host::watch`].
pub type Go<'a> = Box<dyn FnOnce(&dyn Observer) -> Driven + 'a>;

/// How a driven run ended: its state, or why it could not be driven.
pub type Driven = Result<RunState, DriveError>;

/// Why a run could not start, go on, or end in its own protocol. Facts only: each caller
/// says what to do about them its own way.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The request cannot be planned.
    #[error(transparent)]
    Start(#[from] StartError),
    /// No run of that id is recorded.
    #[error("there is no run `{0}`")]
    NoSuchRun(String),
    /// The run's record does not read.
    #[error("{0}")]
    Record(String),
    /// Another process holds the run.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The run cannot be taken up.
    #[error("{error}")]
    Resume {
        /// Why.
        error: ResumeError,
        /// The run as recorded.
        state: Box<RunState>,
    },
    /// `--rewind --model` names a model that is not registered.
    #[error("--model {model}: no such model")]
    NoSuchModel {
        /// The name given.
        model: String,
        /// The run.
        run_id: String,
        /// A rewind of the run that can run, when there is one.
        instead: Option<super::resume::Rescue>,
    },
    /// The run still waits on its task (answers, dependencies, a reassignment).
    #[error("{}", .0.why)]
    Waiting(StillWaiting),
    /// The task record could not be read or written.
    #[error(transparent)]
    Task(#[from] TaskError),
    /// The TaskSpec the run started with is not in the repository any more.
    #[error("the run's TaskSpec blob is missing: {0}")]
    SpecMissing(String),
    /// A local model server the run needs cannot be started.
    #[error("{error}: the built-in local model{} {} cannot be served", if .needed_by.len() == 1 { "" } else { "s" }, .needed_by.join(", "))]
    Local {
        /// Why.
        error: LocalError,
        /// Where the local models are cached.
        cache: PathBuf,
        /// The models of the run that need it, each with the roles that use it
        /// (`local-qwen-coder (arbiter)`).
        needed_by: Vec<String>,
    },
    /// `reconcile` was asked of a run that has not finished all its stages.
    #[error("run {run_id} has not finished all its stages ({})", status.as_str())]
    Unfinished {
        /// The run.
        run_id: String,
        /// Where it stands.
        status: RunStatus,
    },
    /// The run stopped before any model answered anything (every model of its first call
    /// failed: nothing listening, a refused key): nothing was built, so its record, branch
    /// and task history were taken back, as if it had never started.
    #[error("the run could not start: {}", .state.stop_reason().map(|r| r.describe()).unwrap_or_default())]
    NotStarted {
        /// The run as it stood when it stopped (no longer recorded anywhere).
        state: Box<RunState>,
    },
    /// The run stopped outside its protocol (git failing under it).
    #[error("{error}")]
    Run {
        /// Why.
        error: RunError,
        /// The run as it stood.
        state: Box<RunState>,
    },
}

/// Drives runs in one repository with one configuration, for one caller.
pub struct Driver<'a> {
    /// The repository.
    pub repo: &'a Repository,
    /// The configuration; models registered without limits get them from their servers.
    pub loaded: LoadedConfig,
    /// The environment (the profile `auto` picks, the data and cache directories).
    pub env: &'a [(String, String)],
    /// Reads an API key's variable.
    pub keys: EnvLookup,
    /// Whether this clone is trusted to run its own verify command.
    pub trusted: bool,
    /// The caller.
    pub host: &'a dyn Host,
}

impl Driver<'_> {
    /// Plans a run of `req` (see [`super::plan::plan`]); nothing is written or called.
    pub fn plan(&self, req: &RunRequest) -> Result<Planned, StartError> {
        super::plan::plan(self.repo, &self.loaded, self.env, req)
    }

    /// Starts the planned run and drives it to its end.
    pub fn start(&mut self, planned: Planned) -> Driven {
        let Planned {
            mut state, spec, ..
        } = planned;
        // Models registered without their limits get them from their servers; the run
        // records the configuration it really used.
        fill_limits(&mut self.loaded, &self.keys, &state.models(true), self.host)?;
        state.record_config(serde_json::to_value(&self.loaded.config).unwrap_or_default());
        let _lock = RunLock::acquire(self.repo, state.run_id())?;
        if let Ok(Some(task)) = crate::task::lifecycle::refresh(self.repo, state.task()) {
            // A due deferral was reopened before; one still deferred is reopened by this run.
            if task.state == crate::task::TaskState::Deferred {
                let when = task.revisit_at.as_deref().unwrap_or("no date");
                self.host.note(&format!(
                    "note: task `{}` was deferred (revisit at {when}); this run reopens it before its revisit date",
                    task.slug
                ));
            }
        }
        // The servers of the models the run calls first. A fallback's is not started: a
        // role's list may end in the built-in local models, which need not be installed; a
        // fallback whose server is down fails over like any unreachable model.
        ensure_local_servers(&self.loaded, self.env, &state.models(false), self.host)?;
        if dirty(self.repo) {
            self.host.note(&format!(
                "note: your uncommitted changes are not part of this run; it starts from HEAD ({})",
                state.base().short()
            ));
        }
        for line in state.routing().map(|r| r.said()).unwrap_or_default() {
            self.host.note(&line);
        }
        self.host.note(&format!(
            "run {} of task `{}` on branch {} (arbiter: {})",
            state.run_id(),
            state.task(),
            state.branch(),
            state.mode().as_str()
        ));
        let task_ref = crate::task::store::refname(state.task());
        let task_before = crate::git::ref_target(self.repo, &task_ref);
        let state = self
            .drive(state, spec, |run| {
                run.start()?;
                run.execute()
            })
            .map(|((), state)| state)?;
        if state.status() == RunStatus::Failed && built_nothing(&state) {
            take_back(self.repo, &state, &task_ref, task_before);
            return Err(DriveError::NotStarted {
                state: Box::new(state),
            });
        }
        Ok(state)
    }

    /// Takes up run `run_id` (a crash, a kill, a provider failure, the budget, the user's
    /// answers, a dependency done) and drives it to its end: under its cap, raised by
    /// `budget` when given, redoing stages with `rewind`, with what its task record lets it
    /// take up.
    pub fn resume(
        &mut self,
        run_id: &str,
        budget: Option<f64>,
        rewind: Option<Rewind<'_>>,
    ) -> Driven {
        let (_lock, mut state) = self.take(run_id)?;
        if let Some(r) = rewind {
            if let Some(m) = r
                .model
                .filter(|m| !self.loaded.config.models.contains_key(*m))
            {
                return Err(DriveError::NoSuchModel {
                    model: m.to_string(),
                    instead: super::resume::rescue(&self.loaded, self.env, &state, r.stages),
                    run_id: run_id.to_string(),
                });
            }
            // A rewind that cannot run is refused before anything is asked or paid for.
            if let Err(error) = super::resume::check_rewind(&self.loaded, self.env, &state, r) {
                return Err(DriveError::Resume {
                    error,
                    state: Box::new(state),
                });
            }
        }
        fill_limits(&mut self.loaded, &self.keys, &state.models(true), self.host)?;
        if let Err(mut error) = super::resume::prepare(self.repo, &mut state, budget, rewind) {
            if let ResumeError::Ended { instead, .. } = &mut error {
                *instead = super::resume::rescue(&self.loaded, self.env, &state, 1);
            }
            return Err(DriveError::Resume {
                error,
                state: Box::new(state),
            });
        }
        // Answers, dependencies done, a reassignment: what the task record says it may do.
        let take_up = super::waiting::take_up(self.repo, &state)?.map_err(DriveError::Waiting)?;
        let spec = recorded_spec(self.repo, &state).map_err(DriveError::SpecMissing)?;
        self.host.note(&format!(
            "resuming run {} at the {} stage ({} so far)",
            state.run_id(),
            state.current_stage().map_or("final", |s| s.as_str()),
            state.status().as_str()
        ));
        let host = self.host;
        self.drive(state, spec, move |run| {
            // Before any model call: a branch that cannot follow the record stops here.
            if let Some(repaired) = run.sync_branch()? {
                host.note(&repaired);
            }
            run.take_up(take_up)?;
            run.execute()
        })
        .map(|((), state)| state)
    }

    /// `git triad reconcile`: reconciles a finished run against its TaskSpec again (with
    /// `model` as the reconciliation arbiter when given), without rewinding; returns the
    /// reconciliation's verdict, if it reached one, and the run's state.
    pub fn reconcile(
        &mut self,
        run_id: &str,
        model: Option<&str>,
    ) -> Result<(Option<Verdict>, RunState), DriveError> {
        let (_lock, mut state) = self.take(run_id)?;
        let finished = matches!(
            state.status(),
            RunStatus::Approved | RunStatus::Flagged | RunStatus::Halted
        ) && state.stages().iter().all(|s| s.commit.is_some());
        if !finished {
            return Err(DriveError::Unfinished {
                run_id: run_id.to_string(),
                status: state.status(),
            });
        }
        if let Some(m) = model {
            state.reconcile_mut().model = Some(m.to_string());
        }
        let spec = recorded_spec(self.repo, &state).map_err(DriveError::SpecMissing)?;
        self.drive(state, spec, |run| run.reconcile_again())
    }

    /// Takes run `run_id` for this process and loads its record under the lock (what
    /// another process recorded before letting go), clearing what killed runs left behind.
    fn take(&self, run_id: &str) -> Result<(RunLock, RunState), DriveError> {
        self.load(run_id)?;
        let lock = RunLock::acquire(self.repo, run_id)?;
        for done in crate::git::leftover::clean(self.repo.commondir()) {
            self.host.note(&done);
        }
        Ok((lock, self.load(run_id)?))
    }

    /// A run's record, or [`DriveError::NoSuchRun`].
    fn load(&self, run_id: &str) -> Result<RunState, DriveError> {
        Recorder::open(self.repo, run_id)
            .load()
            .map_err(|e| DriveError::Record(e.to_string()))?
            .ok_or_else(|| DriveError::NoSuchRun(run_id.to_string()))
    }

    /// Runs `body` on the run `state` is (a fresh run's start and loop, a resumed run's
    /// take-up and loop, a finished run's reconciliation again) under the host's eyes;
    /// returns what `body` returned and the state it left.
    fn drive<T>(
        &self,
        state: RunState,
        spec: TaskSpec,
        body: impl FnOnce(&mut Run<'_>) -> Result<T, RunError>,
    ) -> Result<(T, RunState), DriveError> {
        let client = ModelClient::new(&self.loaded.config, self.keys.clone()).with_ledger(
            Ledger::new(crate::git::paths::ledger(self.repo)),
            &self.loaded.config,
        );
        let verify = VerifyPlan::decide(&spec, &self.loaded.config, self.trusted);
        // The profile the run was planned with; records from before it was kept work it
        // out again.
        let profile = state
            .profile()
            .map(|p| p.map(str::to_string))
            .unwrap_or_else(|| self.loaded.active_profile(self.env));
        let start = state.clone();
        let mut out = None;
        let go: Go<'_> = Box::new(|observer| {
            let env = RunEnv {
                repo: self.repo,
                config: &self.loaded,
                client: &client,
                profile,
                verify,
                observer,
                workflows: &crate::pipeline::workflow::Registry,
            };
            let mut run = Run::new(&env, state, spec);
            match body(&mut run) {
                Ok(v) => {
                    out = Some(v);
                    Ok(run.into_state())
                }
                Err(error) => Err(DriveError::Run {
                    error,
                    state: Box::new(run.into_state()),
                }),
            }
        });
        let state = self.host.watch(&client, &start, go)?;
        match out {
            Some(v) => Ok((v, state)),
            // A host that never ran the run: nothing happened, and the record says so.
            None => Err(DriveError::Record(format!(
                "run {} was not driven",
                start.run_id()
            ))),
        }
    }
}

/// Whether a run never got an answer from any model: no token in or out, so no stage, no
/// candidate and no review has anything of it to keep.
fn built_nothing(state: &RunState) -> bool {
    let spend = state.spend();
    spend.input_tokens == 0 && spend.output_tokens == 0 && state.tip() == state.base()
}

/// Takes back what a run that built nothing wrote: its record, its branch (still at the
/// base) and its task history since `task_before` (the task's record is put back, or
/// removed when the run created it). Each only where it still stands as the run left it; a
/// ref that cannot be taken back stays, and a later `git triad log` shows it.
fn take_back(repo: &Repository, state: &RunState, task_ref: &str, task_before: Option<git2::Oid>) {
    let run_ref = format!("{}{}", super::record::RUNS_PREFIX, state.run_id());
    let branch = format!("refs/heads/{}", state.branch());
    let base = state.base().oid().ok();
    let delete = |name: &str, only_at: Option<git2::Oid>| {
        if let Ok(mut r) = repo.find_reference(name) {
            if only_at.is_none() || r.target() == only_at {
                if let Err(e) = r.delete() {
                    tracing::warn!("could not remove {name}: {e}");
                }
            }
        }
    };
    delete(&branch, base);
    delete(&run_ref, None);
    let now = crate::git::ref_target(repo, task_ref);
    match (task_before, now) {
        (Some(before), Some(now)) if before != now => {
            let _ = crate::git::cas_ref(repo, task_ref, before, Some(now), "run took back");
        }
        (None, Some(now)) => delete(task_ref, Some(now)),
        _ => {}
    }
}

/// Whether the working tree or index has changes to tracked files (a run starts from HEAD
/// and never sees them).
fn dirty(repo: &Repository) -> bool {
    repo.statuses(None).is_ok_and(|statuses| {
        statuses.iter().any(|s| {
            !s.status().is_empty()
                && !s.status().contains(git2::Status::IGNORED)
                && !s.status().contains(git2::Status::WT_NEW)
        })
    })
}

/// The TaskSpec a run started with: the blob recorded at its start.
pub fn recorded_spec(repo: &Repository, state: &RunState) -> Result<TaskSpec, String> {
    let blob = state
        .task_blob()
        .oid()
        .map_err(|e| e.to_string())
        .and_then(|o| repo.find_blob(o).map_err(|e| e.message().to_string()))?;
    let text = String::from_utf8_lossy(blob.content()).into_owned();
    TaskSpec::parse(
        &text,
        &crate::task::spec::spec_path(state.task()),
        state.task(),
    )
    .map_err(|e| e.to_string())
}

/// Starts the local llama.cpp servers that `models` need, if they are not running, and
/// notes each one started.
pub fn ensure_local_servers(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    models: &[String],
    host: &dyn Host,
) -> Result<(), DriveError> {
    let providers = crate::model::local::providers_of(&loaded.config, models);
    if providers.is_empty() {
        return Ok(());
    }
    let cache = crate::model::local::cache_dir(env);
    let started =
        crate::model::local::start(&loaded.config, &cache, &providers).map_err(|error| {
            let profile = loaded.active_profile(env);
            let needed_by = models
                .iter()
                .filter(|m| {
                    loaded
                        .config
                        .models
                        .get(*m)
                        .is_some_and(|c| providers.contains(&c.provider))
                })
                .map(|m| {
                    let roles: Vec<&str> = crate::config::Role::PIPELINE
                        .iter()
                        .filter(|r| loaded.role_models(**r, profile.as_deref()).contains(m))
                        .map(|r| r.as_str())
                        .collect();
                    match roles.is_empty() {
                        true => m.clone(),
                        false => format!("{m} ({})", roles.join(", ")),
                    }
                })
                .collect();
            DriveError::Local {
                error,
                cache: cache.clone(),
                needed_by,
            }
        })?;
    for s in started {
        host.note(&format!("started local model server {s}"));
    }
    Ok(())
}

/// Asks the server of model `name` for its limits (`Limits::default()` for a model that is
/// not registered).
pub fn ask_limits(loaded: &LoadedConfig, keys: &EnvLookup, name: &str) -> Limits {
    let c = &loaded.config;
    let Some((m, p)) = c
        .models
        .get(name)
        .and_then(|m| Some((m, c.providers.get(&m.provider)?)))
    else {
        return Limits::default();
    };
    let key = p.api_key_env.as_deref().and_then(|v| keys(v));
    discover(p, m.wire_id(name), key.as_deref()).await_blocking()
}

/// For each of `models` that sets no context window or no output cap, asks its server and
/// puts what it says into `loaded`, noting what was read and what was assumed. Models that
/// set both are not asked.
pub fn fill_limits(
    loaded: &mut LoadedConfig,
    keys: &EnvLookup,
    models: &[String],
    host: &dyn Host,
) -> Result<(), DriveError> {
    let mut done: Vec<&String> = Vec::new();
    for name in models {
        let open = loaded
            .config
            .models
            .get(name)
            .is_some_and(|m| m.context_window.is_none() || m.max_output_tokens.is_none());
        if !open || done.contains(&name) {
            continue;
        }
        done.push(name);
        let found = ask_limits(loaded, keys, name);
        if let Some(m) = loaded.config.models.get_mut(name) {
            let said = fill_model(name, m, &found);
            host.note(&format!("{name}: {}", said.join("; ")));
        }
    }
    Ok(())
}
