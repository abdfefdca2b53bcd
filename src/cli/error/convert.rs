//! Every conversion of a library error into a [`CommandError`]: the exit code it maps to and
//! what to do next. The library's errors carry facts only; the hints live here, in one place.

use super::CommandError;
use crate::config::ConfigError;
use crate::exit::ExitCode;
use crate::model::local;
use crate::model::ModelError;
use crate::notes::NotesError;
use crate::pipeline::{
    DriveError, LockError, ResumeError, RunError, RunState, RunStatus, StartError,
};
use crate::task::TaskError;

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> Self {
        let broken = e.kind() == std::io::ErrorKind::BrokenPipe;
        let mut err = CommandError::failure(e);
        err.broken_pipe = broken;
        err
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        let hints: Vec<String> = match &e {
            ConfigError::Untrusted { path, .. } => vec![
                format!(
                    "read {} first: a committed config could send your code and keys elsewhere or run commands",
                    path.display()
                ),
                "if you trust this clone, run `git config triad.trusted true` (stored in .git/config, never cloned)".into(),
                "or put those settings in ~/.config/git-triad/config.toml instead".into(),
            ],
            ConfigError::Parse { path, .. } => vec![format!("fix the TOML syntax in {path}")],
            ConfigError::Invalid { .. } => {
                vec!["`git triad config show --origin` shows every value and where it came from".into()]
            }
            ConfigError::BadKey(_) | ConfigError::BadOverride(_) => {
                vec!["example: git triad -c arbiter.mode=full run --task my-task".into()]
            }
            ConfigError::Read { .. } => vec![],
        };
        let mut err = CommandError::usage(e);
        err.hints = hints;
        err
    }
}

impl From<ModelError> for CommandError {
    fn from(e: ModelError) -> Self {
        match &e {
            ModelError::Budget(b) => {
                let scope = b.scope;
                CommandError::new(ExitCode::BudgetExceeded, e).hint(match scope {
                    "run" => "raise the cap with `--budget <USD>` or `-c budget.run_usd=<USD>`"
                        .to_string(),
                    other => {
                        format!("the {other}ly cap is `budget.{other}ly_usd`; raise it, or wait")
                    }
                })
            }
            ModelError::AllFailed { role, purpose, .. } => {
                let choose = choose_models_hint(*role, purpose.as_deref());
                let mut err = CommandError::failure(e.to_string());
                err.hints = crate::cli::explain::cause_hints(e.causes());
                match choose {
                    Some(c) => err.hint(c),
                    None => err,
                }
            }
            ModelError::TooLarge { role, purpose, .. } => {
                let choose = choose_models_hint(*role, purpose.as_deref());
                let mut err = CommandError::failure(e)
                    .hint("nothing was sent: make the input smaller (a TaskSpec's requirements and scope, the range reviewed), or use a model with a larger window");
                if let Some(c) = choose {
                    err = err.hint(c);
                }
                err.hint("if the server runs the model with a larger window than configured, set `models.<model>.context_window`; `git triad models check <model>` shows what it reports")
            }
            ModelError::UnknownModel(_) => {
                CommandError::usage(e).hint("`git triad models list` shows the registered models")
            }
            ModelError::SchemaViolation { .. } => CommandError::failure(e).hint(
                "a stronger model for this role usually fixes this; see `git triad models list`",
            ),
        }
    }
}

/// What `models check`'s call is for, as its errors and the ledger name it: the model was
/// named by the user, so its errors get no hint to choose the role's models.
pub const CHECK_PURPOSE: &str = "models-check";

/// Where the models of a call are chosen: the chamber's panel for its calls, else the role;
/// `None` for `models check`, whose model the user named.
fn choose_models_hint(role: crate::config::Role, purpose: Option<&str>) -> Option<String> {
    match purpose {
        Some(p) if p.starts_with("chamber") => {
            Some("choose other chamber models with `--panel M1,M2` or `chamber.panel`, and its arbiter with `roles.arbiter.models`".to_string())
        }
        Some(CHECK_PURPOSE) => None,
        _ => Some(format!("choose other models with `-c roles.{role}.models='[\"<model>\", ...]'`")),
    }
}

impl From<git2::Error> for CommandError {
    fn from(e: git2::Error) -> Self {
        CommandError::failure(e)
    }
}

impl From<NotesError> for CommandError {
    fn from(e: NotesError) -> Self {
        let hint = match &e {
            NotesError::Contended { .. } => {
                Some("other processes are writing verdicts right now; run the command again")
            }
            NotesError::Git { .. } | NotesError::Repo(_) => Some(
                "`git notes --ref=triad list` and `git fsck` show whether refs/notes/triad is intact",
            ),
            NotesError::BadPushLine(_) | NotesError::BadRewriteLine(_) => {
                Some("this command is run by git hooks, which pass its input on stdin")
            }
            NotesError::GitCli { .. } => None,
            NotesError::Unwritable(_) => {
                Some("this is a bug in git triad: report it with the command you ran")
            }
        };
        let err = CommandError::failure(e);
        match hint {
            Some(h) => err.hint(h),
            None => err,
        }
    }
}

impl From<TaskError> for CommandError {
    fn from(e: TaskError) -> Self {
        match &e {
        TaskError::Unknown(_) => CommandError::usage(e)
            .hint("`git triad task list` shows the known tasks; `git triad task new <slug>` writes a TaskSpec"),
        TaskError::BadSlug(_) => CommandError::usage(e)
            .hint("`git triad task list` shows the known tasks"),
        TaskError::NotWaiting { slug, .. } => {
            let hint = format!("only a WAITING_ON_USER task has questions to answer; `git triad task show {slug}` says what it waits for");
            CommandError::usage(e).hint(hint)
        }
        TaskError::IllegalTransition { slug, .. } => {
            let hint = format!("`git triad task show {slug}` shows its state and who acts next");
            CommandError::usage(e).hint(hint)
        }
        TaskError::BadAnswers(_) => CommandError::usage(e)
            .hint("write each question as `Q: ...` followed by `A: <your answer>` (one question: the answer alone will do, e.g. `git triad task answer <task> \"your answer\"`); `git triad task answer -h` shows the format"),
        TaskError::InvalidDecision { .. } => CommandError::usage(e),
        TaskError::Contended(_) => {
            CommandError::failure(e).hint("another git triad process is updating it; try again")
        }
        _ => CommandError::failure(e),
    }
    }
}

impl From<StartError> for CommandError {
    fn from(e: StartError) -> Self {
        let hint: String = match &e {
        StartError::BadSlug(_) => {
            "slugs use lowercase letters, digits and dashes; `git triad task list` shows the tasks"
                .into()
        }
        StartError::NoCommits => "commit your project first: a run starts from HEAD".into(),
        StartError::SpecNotCommitted { path } => format!(
            "commit it first (`git add {path} && git commit`): the run is reconciled against what is in the repository"
        ),
        StartError::NoSuchTask { slug, .. } => format!(
            "create it with `git triad task new {slug} --title \"...\"`, edit it, and commit it"
        ),
        StartError::SpecModified { path } => format!(
            "commit it first (`git commit {path}`): the run is reconciled against what is in the repository"
        ),
        StartError::SpecNotText { .. } => "save it as UTF-8".into(),
        StartError::SpecInvalid(_) => "fix the TaskSpec, commit it, and run again".into(),
        StartError::SpecUnfilled { path, .. } => format!(
            "say what to build in {path} (the description, each requirement's text), commit it (`git commit {path}`), and run again; no model was called"
        ),
        StartError::Repo(_) => String::new(),
        StartError::UnknownModel(_) => "`git triad models list` shows the registered models".into(),
        StartError::NoModel(role) => format!(
            "set one with --{role} <model> or `-c roles.{role}.models='[\"<model>\"]'`"
        ),
        StartError::Uncallable { role, .. } => format!(
            "set the key it names in your shell, or choose models you can call: `-c roles.{role}.models='[\"<model>\"]'` (`git triad models list --available` lists them; `git triad config show --origin roles` shows every role and where it came from)"
        ),
        StartError::SelfReview { stage, .. } => format!(
            "the arbiter must be a different model; choose another with --arbiter-{stage} <model> or --{} <model>",
            stage.role()
        ),
        StartError::NoOtherArbiter {
            own_provider: Some(provider),
            ..
        } => format!(
            "declare a second model for the arbiter next to yours, in ~/.config/git-triad/config.toml: `models.my-judge = {{ provider = \"{provider}\", id = \"<another model the server serves>\" }}` and `roles.arbiter.models = [\"my-judge\"]` (or pass --arbiter-model <model> with a registered one); no model was called"
        ),
        StartError::NoOtherArbiter { .. } => {
            "add another model to roles.arbiter.models or pass --arbiter-model <model>; no model was called".into()
        }
        StartError::TooFewCandidates(..) => {
            "name them with --candidates <M1,M2,...> or `-c roles.implementer.models='[\"<m1>\", \"<m2>\"]'` (`git triad models list` shows the registered models)".into()
        }
        StartError::NoTournamentJudge(_) => {
            "a tournament's arbiter judges every candidate, so it must be none of them: add another model to roles.arbiter.models, or fewer --candidates".into()
        }
        StartError::Chamber(_) => {
            "set a panel of two or three registered models (-c chamber.panel=m1,m2 -c chamber.arbiter=m3), or run with --chamber off".into()
        }
        StartError::CandidatesWithoutPanel(_) => {
            format!(
                "add --workflow {}",
                crate::pipeline::start::panel_workflows()
            )
        }
        StartError::ConsensusWithoutRefactor(_) => {
            "drop --consensus, or use --workflow debate or sequential".into()
        }
        StartError::NoDataDir => {
            "set HOME, or XDG_DATA_HOME to the directory that should hold git-triad/fitness.json".into()
        }
        StartError::Fitness { path, .. } => format!(
            "move {} aside; `git triad bench` measures again",
            path.display()
        ),
        StartError::ReconcilerIsVerifier(_) => {
            "the reconciliation arbiter must differ from the verifier: choose another --reconcile-model"
                .into()
        }
    };
        let err = if e.is_usage() {
            CommandError::usage(e)
        } else {
            CommandError::failure(e)
        };
        if hint.is_empty() {
            err
        } else {
            err.hint(hint)
        }
    }
}

/// A run that ended outside its protocol (git failing under it).
pub fn run_error(e: RunError, state: &RunState) -> CommandError {
    if let RunError::BranchMoved {
        branch,
        found,
        recorded,
    } = &e
    {
        let (found, recorded, id) = (found.short(), recorded.short(), state.run_id());
        let keep = format!(
            "to keep that work, put it on a branch of its own (`git branch <name> {found}`), then put the run's branch back (`git branch -f {branch} {recorded}`) and `git triad resume {id}`"
        );
        let again = format!(
            "or leave it as it is and start a new run: `git triad run --task {}`",
            state.task()
        );
        return CommandError::failure(e).hint(keep).hint(again);
    }
    let raced = matches!(&e, RunError::Git(crate::git::GitError::Raced(_)));
    let mut err = CommandError::failure(e);
    if raced {
        err = err.hint(format!(
            "another git triad process (or a person) moved the run's branch or record; `git triad log {}` shows where it stands",
            state.run_id()
        ));
    }
    err.hint(format!(
        "the run is recorded as failed where the record could be written; `git triad resume {}` continues it",
        state.run_id()
    ))
}

/// A local-server error with what to do about it.
pub fn local_error(e: local::LocalError, cache: &std::path::Path) -> CommandError {
    let hint = match &e {
        local::LocalError::Missing(_) => format!(
            "prepare the offline default's models with `scripts/local-models` from git triad's own source tree (it caches into {})",
            cache.display()
        ),
        local::LocalError::NotAnswering { log, .. } => format!("read the server log: {log}"),
        local::LocalError::Exited { log, .. } => format!(
            "read the server log: {log}; `scripts/local-models` checks its build with one real answer, and `GIT_TRIAD_LLAMA_CMAKE_FLAGS=-DGGML_NATIVE=OFF scripts/local-models` builds it for any x86-64 CPU"
        ),
        _ => "`git triad local status` shows the servers".to_string(),
    };
    CommandError::failure(e).hint(hint)
}

impl From<crate::fsguard::FsGuardError> for CommandError {
    fn from(e: crate::fsguard::FsGuardError) -> Self {
        let link = match &e {
            crate::fsguard::FsGuardError::Symlink { link, .. } => Some(link.clone()),
            _ => None,
        };
        let mut err =
            CommandError::failure(format!("git triad writes only inside the repository: {e}"));
        if let Some(link) = link {
            err.hints.push(format!(
                "a clone can commit such a link to make tools write elsewhere; see where it came from (`git log -- {link}`) and replace it with a real directory"
            ));
        }
        err
    }
}

impl From<LockError> for CommandError {
    fn from(e: LockError) -> Self {
        match &e {
            LockError::Held { run_id, pid } => {
                let (id, stop) = (
                    run_id.clone(),
                    pid.map_or("stop that process".to_string(), |p| {
                        format!("stop it (`kill {p}`)")
                    }),
                );
                CommandError::new(ExitCode::Busy, e)
                    .hint(format!(
                        "wait for it to end; `git triad log {id}` shows where the run stands"
                    ))
                    .hint(format!(
                        "if it hangs, {stop}: a killed run loses nothing recorded, and `git triad resume {id}` continues it"
                    ))
            }
            LockError::BadId(_) => {
                CommandError::usage(e).hint("`git triad log` lists the runs of this repository")
            }
            LockError::Io { .. } => CommandError::failure(e),
        }
    }
}

impl From<crate::git::GitError> for CommandError {
    fn from(e: crate::git::GitError) -> Self {
        match e {
            crate::git::GitError::Raced(what) => CommandError::new(
                ExitCode::Busy,
                format!("another git triad process moved {what} meanwhile; nothing of this one was lost"),
            )
            .hint("let the other process finish, then try again"),
            other => CommandError::failure(format!("cannot record: {other}")),
        }
    }
}

impl From<crate::session::engine::EngineError> for CommandError {
    fn from(e: crate::session::engine::EngineError) -> Self {
        match e {
            crate::session::engine::EngineError::Git(g) => g.into(),
        }
    }
}

impl From<DriveError> for CommandError {
    fn from(e: DriveError) -> Self {
        match e {
            DriveError::Start(e) => e.into(),
            DriveError::Lock(e) => e.into(),
            DriveError::NoSuchRun(id) => CommandError::usage(format!("there is no run `{id}`"))
                .hint("`git triad log` lists the runs of this repository"),
            DriveError::NoSuchModel {
                ref run_id,
                ref instead,
                ..
            } => {
                let err = CommandError::usage(e.to_string());
                let err = match instead {
                    Some(r) => err.hint(crate::cli::explain::rescue_line(run_id, r)),
                    None => err,
                };
                err.hint("`git triad models list` lists the registered models; nothing was called")
            }
            DriveError::Waiting(w) => {
                CommandError::new(ExitCode::WaitingOnUser, w.why).hint(w.hint)
            }
            DriveError::Resume { error, state } => resume_error(error, &state),
            DriveError::Local {
                error,
                cache,
                needed_by,
            } => {
                let mut err = local_error(error, &cache);
                err.error = format!(
                    "{}: the built-in local model{} {} cannot be served",
                    err.error,
                    if needed_by.len() == 1 { "" } else { "s" },
                    needed_by.join(", ")
                )
                .into();
                err.hint("or give those roles models you can call: a provider's key (e.g. OPENAI_API_KEY), or your own server's models (README, \"With your own server\"); `git triad config show --origin roles` shows what each role runs on")
            }
            DriveError::Run { error, state } => run_error(error, &state),
            DriveError::NotStarted { ref state } => {
                // What to do about the cause; the run is gone, so not how to resume it.
                let resume = format!("git triad resume {}", state.run_id());
                let mut err = CommandError::failure(e.to_string());
                err.hints = crate::cli::explain::run_hints(state, None)
                    .into_iter()
                    .filter(|h| !h.contains(&resume))
                    .collect();
                err.hint(format!(
                    "no model answered, so nothing was kept (no run, no branch); then: git triad run --task {}",
                    state.task()
                ))
            }
            DriveError::Unfinished { ref run_id, .. } => {
                let hint = format!("finish it first: `git triad resume {run_id}`");
                CommandError::usage(e).hint(hint)
            }
            e @ (DriveError::Record(_) | DriveError::Task(_) | DriveError::SpecMissing(_)) => {
                CommandError::failure(e)
            }
        }
    }
}

/// What the user is told when a run cannot go on, and what to do about it.
fn resume_error(e: ResumeError, state: &RunState) -> CommandError {
    let what = e.to_string();
    match e {
        ResumeError::Ended {
            status, instead, ..
        } => {
            let err = CommandError::usage(format!(
                "{what}: {}",
                crate::report::run::message(state)
            ));
            let err = if matches!(status, RunStatus::Halted | RunStatus::RetriesExhausted) {
                let run = state.run_id();
                let err = match &instead {
                    Some(r) => err.hint(crate::cli::explain::rescue_line(run, r)),
                    None => err,
                };
                err.hint(format!(
                    "to redo the stage it stopped at and the N-1 before it, on another model: git triad resume {run} --rewind N [--model M]"
                ))
            } else {
                err
            };
            err.hint(format!(
                "or start a new run with `git triad run --task {}`",
                state.task()
            ))
        }
        ResumeError::CannotRewind { instead, .. } => {
            let err = CommandError::usage(what);
            match instead {
                Some(r) => err.hint(crate::cli::explain::rescue_line(state.run_id(), &r)),
                None => err.hint(format!(
                    "no registered model you can call has an arbiter that differs from it: declare another model (`git triad config show --origin roles`), or start again with `git triad run --task {}`",
                    state.task()
                )),
            }
        }
        ResumeError::ChamberUndecided { session, .. } => {
            CommandError::new(ExitCode::WaitingOnUser, what)
                .hint(format!("read it: git triad chamber show {session}"))
                .hint(format!(
                    "act on it: git triad chamber act {session} accepted|revised|rejected [--note ...], then resume"
                ))
        }
        ResumeError::ChamberUnreadable { .. } => {
            CommandError::failure(what)
        }
    }
}
