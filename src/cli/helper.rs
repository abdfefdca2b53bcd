//! The command helper: the plumbing the subcommands share, so that no subcommand imports
//! another. The repository and its config, the model client with its ledger and local
//! servers, a run's record and how it is driven and reported, the user's fitness
//! measurements and the routes they give, the limits of models registered without them.

use std::path::PathBuf;

use super::{out, say, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, Role, RoutingMode};
use crate::exit::ExitCode;
use crate::model::budget::Ledger;
use crate::model::discover::{discover, fill as fill_model, Limits};
use crate::model::ModelClient;
use crate::pipeline::{
    self, Recorder, ResumeError, Run, RunEnv, RunLock, RunState, RunStatus, VerifyPlan,
};
use crate::routing::route::{route, RouteInput, Routing};
use crate::routing::FitnessStore;
use crate::task::TaskSpec;

/// A budget is a finite, positive amount of USD: `0`, a negative number, `NaN` or `inf`
/// would otherwise mean "no cap".
pub(crate) fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!(
            "`{s}` is not a budget: give a positive amount of USD, e.g. 2 or 0.5"
        )),
        Err(_) => Err(format!("`{s}` is not a number of USD")),
    }
}

/// The repository, or an error that says how to get one.
pub fn need_repo(ctx: &Context) -> CommandResult<&git2::Repository> {
    ctx.repo.as_ref().ok_or_else(|| {
        ctx.unopenable_repo().unwrap_or_else(|| {
            CommandError::usage("not inside a git repository")
                .hint("run git triad inside a repository, or pass -C <path>")
        })
    })
}

/// The exit code of a run status.
pub fn status_exit(status: RunStatus) -> ExitCode {
    match status {
        RunStatus::Approved | RunStatus::Flagged => ExitCode::Ok,
        RunStatus::Halted => ExitCode::Halt,
        RunStatus::RetriesExhausted => ExitCode::RetriesExhausted,
        RunStatus::BudgetExceeded => ExitCode::BudgetExceeded,
        RunStatus::WaitingOnUser => ExitCode::WaitingOnUser,
        RunStatus::Failed | RunStatus::Running => ExitCode::Error,
    }
}

/// Starts the local llama.cpp servers that `models` need, if they are not running.
pub fn ensure_local_servers(
    ctx: &Context,
    loaded: &LoadedConfig,
    models: &[String],
) -> CommandResult<()> {
    let providers = crate::model::local::providers_of(&loaded.config, models);
    if providers.is_empty() {
        return Ok(());
    }
    let cache = crate::model::local::cache_dir(&ctx.env);
    let started = crate::model::local::start(&loaded.config, &cache, &providers)
        .map_err(|e| super::error::local_error(e, &cache))?;
    for s in started {
        if !ctx.quiet {
            say(&format!("triad: started local model server {s}"));
        }
    }
    Ok(())
}

/// Says `line` on stderr unless it was the last line said under `name` in this
/// repository: a marker, `$GIT_DIR/triad/notices/<name>`, keeps it, so a notice comes once
/// and again only when what it says changes.
pub fn say_once(ctx: &Context, repo: &git2::Repository, name: &str, line: &str) {
    if ctx.quiet {
        return;
    }
    let marker = crate::git::paths::notice(repo, name);
    if std::fs::read_to_string(&marker).is_ok_and(|said| said.trim_end() == line) {
        return;
    }
    say(line);
    let _ = std::fs::create_dir_all(marker.parent().unwrap_or(repo.path()));
    let _ = std::fs::write(&marker, format!("{line}\n"));
}

/// The one line that says which of `roles` run on other models than their defaults or
/// profile name because this user cannot call those, and which; `None` when none does.
pub fn roles_notice(
    loaded: &LoadedConfig,
    profile: Option<&str>,
    roles: &[Role],
) -> Option<String> {
    let adapted: Vec<crate::config::RoleInEffect> = roles
        .iter()
        .map(|r| loaded.role_in_effect(*r, profile))
        .filter(|r| !r.substitutes.is_empty())
        .collect();
    if adapted.is_empty() {
        return None;
    }
    let mut missing: Vec<String> = Vec::new();
    for r in &adapted {
        for (_, why) in &r.uncallable {
            if let crate::config::Uncallable::KeyNotSet(var) = why {
                if !missing.contains(var) {
                    missing.push(var.clone());
                }
            }
        }
    }
    let roles: Vec<String> = adapted
        .iter()
        .map(|r| format!("{} {}", r.role, r.models.listed().join(", ")))
        .collect();
    let keys = match missing.len() {
        0 => "some of their models cannot be called".to_string(),
        1 => format!("{} is not set", missing[0]),
        _ => format!("{} are not set", crate::bounded::and_list(&missing)),
    };
    Some(format!(
        "triad: {keys}, so these roles use models you can call: {} (`git triad config show --origin roles` shows every role and why)",
        roles.join("; ")
    ))
}

/// Reopens the deferrals whose revisit date has come (seed 004's revisit trigger, see
/// [`crate::task::workflow::reopen_due`]) and says each once, on stderr: the commands that
/// read the task list call it first.
pub fn reopen_due(ctx: &Context, repo: &git2::Repository) -> CommandResult<()> {
    for t in crate::task::workflow::reopen_due(repo).map_err(CommandError::from)? {
        if !ctx.quiet {
            say(&format!(
                "triad: task `{}` was deferred and its revisit date has come: it is {} again; next: {}",
                t.slug, t.state, t.next_action
            ));
        }
    }
    Ok(())
}

/// A model client whose calls are also appended to the repository's cost ledger (the
/// daily and monthly caps read it).
pub fn client_for(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig) -> ModelClient {
    let ledger = Ledger::new(crate::git::paths::ledger(repo));
    ModelClient::new(&loaded.config, ctx.env_lookup()).with_ledger(ledger, &loaded.config)
}

/// Takes run `id` for this process after checking it exists; the caller loads its state
/// only then, so it reads what another process may have recorded before letting go.
pub fn lock_run(repo: &git2::Repository, id: &str) -> CommandResult<RunLock> {
    load_run(repo, id)?;
    Ok(RunLock::acquire(repo, id)?)
}

/// Loads a run's record, or says there is no such run.
pub fn load_run(repo: &git2::Repository, id: &str) -> CommandResult<RunState> {
    Recorder::open(repo, id)
        .load()
        .map_err(CommandError::failure)?
        .ok_or_else(|| {
            CommandError::usage(format!("there is no run `{id}`"))
                .hint("`git triad log` lists the runs of this repository")
        })
}

/// The TaskSpec a run started with: the blob recorded at its start.
pub fn recorded_spec(repo: &git2::Repository, state: &RunState) -> CommandResult<TaskSpec> {
    let blob = state
        .task_blob()
        .oid()
        .and_then(|o| {
            repo.find_blob(o)
                .map_err(|source| crate::git::GitError::Git {
                    what: "reading the run's TaskSpec".into(),
                    source,
                })
        })
        .map_err(|e| CommandError::failure(format!("the run's TaskSpec blob is missing: {e}")))?;
    let text = String::from_utf8_lossy(blob.content()).into_owned();
    TaskSpec::parse(
        &text,
        &crate::task::spec::spec_path(state.task()),
        state.task(),
    )
    .map_err(CommandError::failure)
}

/// Everything a run needs from the command line: the model client with its ledger, the
/// verify plan decided by trust, the progress renderer.
pub fn with_run<T>(
    ctx: &Context,
    repo: &git2::Repository,
    loaded: &LoadedConfig,
    state: RunState,
    spec: TaskSpec,
    body: impl FnOnce(&mut Run<'_>) -> Result<T, pipeline::RunError>,
) -> CommandResult<(T, RunState)> {
    let client = client_for(ctx, repo, loaded);
    let verify = VerifyPlan::decide(&spec, &loaded.config, ctx.trusted());
    let live = ctx.tui(&[2]).then(|| state.clone());
    // The profile the run was planned with; records from before it was kept work it out again.
    let profile = state
        .profile()
        .map(|p| p.map(str::to_string))
        .unwrap_or_else(|| loaded.active_profile(&ctx.env));
    let go = |observer: &dyn pipeline::Observer| {
        let env = RunEnv {
            repo,
            config: loaded,
            client: &client,
            profile: profile.clone(),
            verify,
            observer,
        };
        let mut run = Run::new(&env, state, spec);
        match body(&mut run) {
            Ok(v) => Ok((v, run.into_state())),
            Err(e) => Err(super::error::run_error(e, run.state())),
        }
    };
    // On a terminal the run is shown live on stderr; elsewhere (and with --no-tui) as lines.
    if let Some(start) = live {
        crate::tui::run::watch(&client, &start, go)
    } else {
        go(&super::progress::Lines {
            enabled: !ctx.quiet,
        })
    }
}

/// Runs `state` through `before` (what a fresh or resumed run does first) and on to its
/// end, then reports it (see [`report`]).
pub fn drive(
    ctx: &Context,
    repo: &git2::Repository,
    loaded: &LoadedConfig,
    state: RunState,
    spec: TaskSpec,
    json: bool,
    before: impl FnOnce(&mut Run<'_>) -> Result<(), pipeline::RunError>,
) -> CommandResult {
    let ((), state) = with_run(ctx, repo, loaded, state, spec, |run| {
        before(run)?;
        run.execute()
    })?;
    report(&state, json)
}

/// Prints a run's outcome (text or `--json`) and returns the exit code of its status.
pub fn report(state: &RunState, json: bool) -> CommandResult {
    let hints = super::explain::run_hints(state);
    if json {
        let report = crate::report::run::RunReport::of(state).with_hints(hints);
        out(&format!("{}\n", report.to_json()))?;
    } else {
        let mut s = crate::report::run::summary(state);
        for h in hints {
            s.push_str(&format!("next: {h}\n"));
        }
        s.push_str(&format!(
            "see: git log --notes=triad {}   |   git triad log {}\n",
            state.branch(),
            state.run_id()
        ));
        out(&s)?;
    }
    Ok(status_exit(state.status()))
}

/// Where the fitness file is, or an error saying how to give one.
pub fn store_path(ctx: &Context) -> CommandResult<PathBuf> {
    FitnessStore::path(&ctx.env).ok_or_else(|| {
        CommandError::failure("there is no data directory for the fitness measurements").hint(
            "set HOME, or XDG_DATA_HOME to the directory that should hold git-triad/fitness.json",
        )
    })
}

/// Reads the fitness file.
pub fn load_store(ctx: &Context) -> CommandResult<FitnessStore> {
    let path = store_path(ctx)?;
    FitnessStore::load(&path).map_err(|e| {
        CommandError::failure(e).hint(format!(
            "move {} aside; `git triad bench` measures again",
            path.display()
        ))
    })
}

/// The commit a revision names, with a usage error that says how to name one.
pub(crate) fn resolve_commit<'r>(
    repo: &'r git2::Repository,
    rev: &str,
) -> CommandResult<git2::Commit<'r>> {
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| {
            CommandError::usage(format!("`{rev}` does not name a commit: {}", e.message()))
                .hint("use a commit id, a branch, a tag or an expression like HEAD~2")
        })
}

/// The remotes whose fetched verdict notes the user trusts (`notes.trusted_remotes`), for
/// commands that read notes. A configuration that does not load trusts no remote: reading
/// then counts fewer overrides, never more (the pre-push gate fails closed instead).
pub(crate) fn note_trust(ctx: &Context) -> crate::notes::Trust {
    match ctx.load_config() {
        Ok(loaded) => crate::notes::Trust::new(&loaded.config.notes.trusted_remotes),
        Err(e) => {
            tracing::warn!(
                "no remote's notes are trusted: the configuration does not load ({})",
                e.error
            );
            crate::notes::Trust::default()
        }
    }
}

/// The abbreviated id and subject of a commit, for messages.
pub(crate) fn short_and_subject(commit: &git2::Commit<'_>) -> (String, String) {
    let short = commit
        .as_object()
        .short_id()
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_string))
        .unwrap_or_else(|| commit.id().to_string()[..12].to_string());
    (
        short,
        commit.summary().ok().flatten().unwrap_or("").to_string(),
    )
}

// Routing by measured fitness on the command line: which roles are routed, from the
// user's measurements, and saying how each was chosen.

/// The routes of the roles to route: every role with `forced` (`--routing`), else the
/// roles whose list starts with `auto`; `None` when there are none. Reads the user's
/// measurements only when something is routed.
pub fn routes(
    ctx: &Context,
    loaded: &LoadedConfig,
    profile: Option<&str>,
    forced: Option<RoutingMode>,
) -> CommandResult<Option<Routing>> {
    let any_auto = Role::ALL.iter().any(|r| loaded.role_is_auto(*r, profile));
    if forced.is_none() && !any_auto {
        return Ok(None);
    }
    let store = load_store(ctx)?;
    let usable = |m: &str| loaded.callable(m);
    Ok(route(&RouteInput {
        loaded,
        profile,
        store: &store,
        mode: forced.unwrap_or(loaded.config.routing),
        every_role: forced.is_some(),
        usable: &usable,
        now: crate::clock::now_unix(),
    }))
}

/// Says on stderr which model each routed role got and why.
pub fn say_routes(routing: &Routing) {
    for r in &routing.roles {
        say(&format!(
            "triad: {} -> {}: {}",
            r.role,
            r.models.first().map_or("(none)", String::as_str),
            r.reason
        ));
    }
}

/// Under tournament routing, the workflow is a tournament (unless another one was asked
/// for) and its candidates, unless named, are the best [`crate::config::TOURNAMENT_K`]
/// routed implementers; otherwise `workflow` and `candidates` as given.
pub fn tournament(
    routes: Option<&Routing>,
    workflow: crate::pipeline::Workflow,
    candidates: &[String],
) -> (crate::pipeline::Workflow, Vec<String>) {
    use crate::pipeline::Workflow;
    let Some(r) = routes.filter(|r| r.mode == crate::config::RoutingMode::Tournament) else {
        return (workflow, candidates.to_vec());
    };
    let workflow = match workflow {
        Workflow::Sequential => Workflow::Tournament,
        w => w,
    };
    if !candidates.is_empty() {
        return (workflow, candidates.to_vec());
    }
    let best = r
        .models(crate::config::Role::Implementer)
        .unwrap_or_default()
        .iter()
        .take(crate::config::TOURNAMENT_K)
        .cloned()
        .collect();
    (workflow, best)
}

// The limits of models registered without them, asked of their own servers before a
// command uses them.

/// Asks the server of `name` for its limits (`Limits::default()` for an unknown model).
pub fn ask_limits(ctx: &Context, loaded: &LoadedConfig, name: &str) -> CommandResult<Limits> {
    let c = &loaded.config;
    let Some((m, p)) = c
        .models
        .get(name)
        .and_then(|m| Some((m, c.providers.get(&m.provider)?)))
    else {
        return Ok(Limits::default());
    };
    let key = p.api_key_env.as_deref().and_then(|v| ctx.env_var(v));
    let rt = super::runtime()?;
    Ok(rt.block_on(discover(p, m.wire_id(name), key.as_deref())))
}

/// For each of `models` that sets no context window or no output cap, asks its server and
/// puts what it says into the configuration this command uses, saying on stderr what was
/// read and what was assumed. Models that set both are not asked.
pub fn fill_limits(
    ctx: &Context,
    loaded: &mut LoadedConfig,
    models: &[String],
) -> CommandResult<()> {
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
        let found = ask_limits(ctx, loaded, name)?;
        if let Some(m) = loaded.config.models.get_mut(name) {
            let said = fill_model(name, m, &found);
            if !ctx.quiet {
                say(&format!("triad: {name}: {}", said.join("; ")));
            }
        }
    }
    Ok(())
}

/// Every model a run may call: each stage's candidates (with `fallbacks`; else only the
/// first, the one a stage calls unless it fails) and arbiter, the models of its workflow
/// and its chamber.
pub fn run_models(state: &RunState, fallbacks: bool) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for s in state.stages() {
        let take = if fallbacks { s.models.len() } else { 1 };
        models.extend(s.models.iter().take(take).cloned());
        models.extend(s.arbiter_model.iter().cloned());
    }
    models.extend(state.workflow().models());
    if let Some(c) = state.chamber() {
        models.extend(c.panel.iter().cloned());
        models.push(c.arbiter.clone());
    }
    models
}

/// Resumes run `run_id` (`git triad resume`, and a run whose last dependency closed): under
/// its cap, raised by `budget` when given, with what its task record lets it take up.
pub fn resume_run(
    ctx: &Context,
    run_id: &str,
    budget: Option<f64>,
    rewind: Option<crate::pipeline::resume::Rewind<'_>>,
    json: bool,
) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut loaded = ctx.load_config()?;
    let _lock = lock_run(repo, run_id)?;
    super::say_each(&crate::git::leftover::clean(repo.commondir()), ctx.quiet);
    let mut state = load_run(repo, run_id)?;
    fill_limits(ctx, &mut loaded, &run_models(&state, true))?;
    if let Some(m) = rewind.and_then(|r| r.model) {
        if !loaded.config.models.contains_key(m) {
            return Err(CommandError::usage(format!("--model {m}: no such model"))
                .hint("`git triad models list` lists the registered models"));
        }
    }
    crate::pipeline::resume::prepare(repo, &mut state, budget, rewind)
        .map_err(|e| resume_error(e, &state))?;
    // Answers, dependencies done, a reassignment: what the task record says the run may do.
    let take_up =
        match crate::pipeline::waiting::take_up(repo, &state).map_err(CommandError::failure)? {
            Ok(t) => t,
            Err(w) => return Err(CommandError::new(ExitCode::WaitingOnUser, w.why).hint(w.hint)),
        };
    let spec = recorded_spec(repo, &state)?;
    if !ctx.quiet {
        say(&format!(
            "triad: resuming run {} at the {} stage ({} so far)",
            state.run_id(),
            state.current_stage().map_or("final", |s| s.as_str()),
            state.status().as_str()
        ));
    }
    let quiet = ctx.quiet;
    drive(ctx, repo, &loaded, state, spec, json, |run| {
        // Before any model call: a branch that cannot follow the record stops here.
        if let Some(repaired) = run.sync_branch()? {
            if !quiet {
                eprintln!("triad: {repaired}");
            }
        }
        run.take_up(take_up)
    })
}

/// Continues, in this process, the run that waited on the dependencies `slug` completed, if
/// there is one (a `task close` or a `run` that finished the last dependency); else `done`.
pub fn continue_unblocked(
    ctx: &Context,
    slug: &str,
    done: CommandResult,
    json: bool,
) -> CommandResult {
    let repo = need_repo(ctx)?;
    let Some(run_id) =
        crate::pipeline::waiting::unblocked_run(repo, slug).map_err(CommandError::failure)?
    else {
        return done;
    };
    let first = done?;
    if !ctx.quiet {
        say(&format!(
            "triad: the last dependency `{slug}` is done: run {run_id} continues"
        ));
    }
    let continued = resume_run(ctx, &run_id, None, None, json)?;
    // A failure of the first command stands; else the continued run's outcome is the answer.
    Ok(if first == ExitCode::Ok {
        continued
    } else {
        first
    })
}

/// What the user is told when a run cannot go on, and what to do about it.
fn resume_error(e: ResumeError, state: &RunState) -> CommandError {
    let what = e.to_string();
    match e {
        ResumeError::Ended { status, .. } => {
            let err = CommandError::usage(format!(
                "{what}: {}",
                crate::report::run::message(state)
            ));
            let err = if matches!(status, RunStatus::Halted | RunStatus::RetriesExhausted) {
                err.hint(format!(
                    "to redo the stage it stopped at (and N-1 before it), another model if you like: git triad resume {} --rewind N [--model M]",
                    state.run_id()
                ))
            } else {
                err
            };
            err.hint(format!(
                "or start a new run with `git triad run --task {}`",
                state.task()
            ))
        }
        ResumeError::CannotRewind { .. } => CommandError::usage(what),
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
