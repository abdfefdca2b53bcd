//! `git triad run` and `git triad resume`: the pipeline on a committed TaskSpec.

use std::collections::BTreeMap;

use clap::Args;

use super::{out, CommandError, CommandResult, Context};
use crate::config::{ArbiterMode, LoadedConfig, Role, RoutingMode};
use crate::exit::ExitCode;
use crate::model::budget::Ledger;
use crate::model::ModelClient;
use crate::pipeline::{
    self, Recorder, Run, RunEnv, RunLock, RunRequest, RunState, RunStatus, Stage, StopReason,
    VerifyPlan, Workflow,
};
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

fn parse_workflow(s: &str) -> Result<Workflow, String> {
    match s {
        "sequential" => Ok(Workflow::Sequential),
        "parallel" => Ok(Workflow::Parallel),
        "debate" => Ok(Workflow::Debate),
        "tournament" => Ok(Workflow::Tournament),
        _ => Err(format!(
            "`{s}` is not a workflow (sequential, parallel, debate, tournament)"
        )),
    }
}

fn parse_chamber(s: &str) -> Result<bool, String> {
    match s {
        "auto" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}` is not a chamber mode (off, auto)")),
    }
}

fn parse_mode(s: &str) -> Result<ArbiterMode, String> {
    match s {
        "off" => Ok(ArbiterMode::Off),
        "final" => Ok(ArbiterMode::Final),
        "bookend" => Ok(ArbiterMode::Bookend),
        "full" => Ok(ArbiterMode::Full),
        _ => Err(format!("`{s}` is not a mode (off, final, bookend, full)")),
    }
}

/// Run Architect → Implement → Refactor → Verify on a committed TaskSpec.
///
/// Each accepted stage becomes a commit on the branch `triad/<task>/<run-id>`, built in
/// memory from HEAD: your working tree, index, HEAD and stash are never touched. A different
/// model (the arbiter) reviews the stages the mode selects; its verdicts are git notes
/// (`git log --notes=triad`). Exit codes: 0 APPROVE/FLAG, 3 HALT, 4 retries exhausted,
/// 5 budget, 6 waiting on you, 7 the run is busy in another process.
///
/// Example: git triad run --task add-login --arbiter full --budget 2
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task: `.triad/tasks/<TASK>.toml`, committed.
    #[arg(long, short = 't', value_name = "TASK")]
    pub task: String,
    /// Which stages the arbiter reviews: off, final (verify), bookend (architect + verify), full.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub arbiter: Option<ArbiterMode>,
    /// Model for the architect stage (see `git triad models list`).
    #[arg(long, value_name = "MODEL")]
    pub architect: Option<String>,
    /// Model for the implement stage.
    #[arg(long, value_name = "MODEL")]
    pub implementer: Option<String>,
    /// Model for the refactor stage.
    #[arg(long, value_name = "MODEL")]
    pub refactorer: Option<String>,
    /// Model for the verify stage.
    #[arg(long, value_name = "MODEL")]
    pub verifier: Option<String>,
    /// Arbiter model for every reviewed stage (must differ from each stage's model).
    #[arg(long, value_name = "MODEL")]
    pub arbiter_model: Option<String>,
    /// Arbiter model for the architect stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_architect: Option<String>,
    /// Arbiter model for the implement stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_implement: Option<String>,
    /// Arbiter model for the refactor stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_refactor: Option<String>,
    /// Arbiter model for the verify stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_verify: Option<String>,
    /// REJECTs a stage may get before escalation (default 2).
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Spending cap for this run in USD (checked before every call).
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// Pick every role's models by measured fitness: quality, cost, speed, hybrid, or
    /// tournament (as quality, and the three best implementers build against each other,
    /// judged by the arbiter; see `git triad bench`). Without it, only roles whose models start with "auto" are, by the
    /// `routing` setting.
    #[arg(long, value_name = "MODE")]
    pub routing: Option<RoutingMode>,
    /// After Verify, reconcile the result against the committed TaskSpec (seed 000 §B11).
    #[arg(long)]
    pub reconcile: bool,
    /// The reconciliation arbiter (must differ from the verifier's model).
    #[arg(long, value_name = "MODEL", requires = "reconcile")]
    pub reconcile_model: Option<String>,
    /// Between Refactor and Verify, the stage models vote on the refactored result; the
    /// tiebreaker settles disagreement and the arbiter watches for groupthink
    /// (config: consensus.enabled).
    #[arg(long)]
    pub consensus: bool,
    /// How the solution is made before Verify: sequential (architect, implement, refactor),
    /// parallel (every candidate model builds one alone, at the same time; they rate and
    /// vote on each other's, never for their own; the winner merges in the best of the rest;
    /// not with --consensus), or debate (the candidate models write position papers with
    /// trade-offs, rebut each other and give final arguments; the tiebreaker judges, and the
    /// winning position is the architect's input to the sequential stages), or tournament
    /// (every candidate builds one alone, at the same time; an arbiter that is none of them
    /// reviews each with the usual evidence, and the best review goes on to Verify).
    #[arg(long, value_name = "WORKFLOW", value_parser = parse_workflow, default_value = "sequential")]
    pub workflow: Workflow,
    /// The models of a parallel exploration, a debate or a tournament, comma-separated (default: the
    /// implementer role's models); at least two different ones.
    #[arg(long, value_name = "M1,M2,...", value_delimiter = ',')]
    pub candidates: Vec<String>,
    /// Send hard decisions to the deliberation chamber: a stage answering LOW_CONFIDENCE,
    /// TOO_COSTLY or POLICY_VIOLATION, or an arbiter REJECT or HALT at confidence 0.5-0.8,
    /// opens a Level 2 session whose answer the stage's retry gets; a session not confident
    /// enough to decide alone stops the run for you (exit 6). Default: auto when a panel is
    /// configured (chamber.panel, or the profile's), else off.
    #[arg(long, value_name = "off|auto", value_parser = parse_chamber)]
    pub chamber: Option<bool>,
    /// Print the run's expected tokens and cost in every arbiter mode and stop: figures
    /// come from this repository's ledger, else from `git triad bench`; no model is called.
    #[arg(long)]
    pub estimate: bool,
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
}

impl RunArgs {
    /// The models this command line names itself: the user's own choice, which the `auto`
    /// profile never replaces.
    pub fn named_models(&self) -> Vec<String> {
        [
            &self.architect,
            &self.implementer,
            &self.refactorer,
            &self.verifier,
            &self.arbiter_model,
            &self.arbiter_architect,
            &self.arbiter_implement,
            &self.arbiter_refactor,
            &self.arbiter_verify,
            &self.reconcile_model,
        ]
        .into_iter()
        .flatten()
        .chain(&self.candidates)
        .cloned()
        .collect()
    }
}

/// Continue a run after a crash, a kill, a provider failure, the budget, or your answers.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run id (`git triad log` lists them).
    pub run_id: String,
    /// New spending cap for the rest of the run in USD.
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
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

/// Every model a run may call: each stage's candidates and arbiter.
fn run_models(state: &RunState) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for s in &state.stages {
        models.extend(s.models.iter().cloned());
        models.extend(s.arbiter_model.iter().cloned());
    }
    if let Some(p) = &state.parallel {
        models.extend(p.models.iter().cloned());
        models.extend(p.tiebreaker.iter().cloned());
    }
    if let Some(d) = &state.debate {
        models.extend(d.models.iter().cloned());
        models.extend(d.tiebreaker.iter().cloned());
    }
    if let Some(c) = &state.chamber {
        models.extend(c.panel.iter().cloned());
        models.push(c.arbiter.clone());
    }
    models
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
            super::say(&format!("triad: started local model server {s}"));
        }
    }
    Ok(())
}

/// A model client whose calls are also appended to the repository's cost ledger (the
/// daily and monthly caps read it).
pub fn client_for(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig) -> ModelClient {
    let ledger = Ledger::new(repo.path().join("triad").join("ledger.jsonl"));
    ModelClient::new(&loaded.config, ctx.env_lookup()).with_ledger(ledger, &loaded.config)
}

/// Runs `git triad run`.
pub fn run(ctx: &Context, args: &RunArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut loaded = ctx.load_config()?;
    let profile = loaded.profile_choice(&ctx.env, &args.named_models()).name;
    if profile.as_deref() == Some("local") && loaded.config.profile == "auto" && !ctx.quiet {
        // Said once per repository: a marker in $GIT_DIR/triad remembers it was said.
        let marker = repo.path().join("triad").join("local-profile-notice");
        if !marker.exists() {
            super::say("triad: no API key is set, so the built-in `local` profile is used: three small real models served by llama.cpp on 127.0.0.1 (see `git triad models list`; set a provider's key, e.g. ANTHROPIC_API_KEY, to use hosted models)");
            let _ = std::fs::create_dir_all(marker.parent().unwrap_or(repo.path()));
            let _ = std::fs::write(&marker, "shown\n");
        }
    }
    let mut stage_models = BTreeMap::new();
    for (role, m) in [
        (Role::Architect, &args.architect),
        (Role::Implementer, &args.implementer),
        (Role::Refactorer, &args.refactorer),
        (Role::Verifier, &args.verifier),
    ] {
        if let Some(m) = m {
            stage_models.insert(role, m.clone());
        }
    }
    let mut arbiter_stage = BTreeMap::new();
    for (stage, m) in [
        (Stage::Architect, &args.arbiter_architect),
        (Stage::Implement, &args.arbiter_implement),
        (Stage::Refactor, &args.arbiter_refactor),
        (Stage::Verify, &args.arbiter_verify),
    ] {
        if let Some(m) = m {
            arbiter_stage.insert(stage, m.clone());
        }
    }
    let routes = super::routing::routes(ctx, &loaded, profile.as_deref(), args.routing)?;
    let (workflow, candidates) =
        super::routing::tournament(routes.as_ref(), args.workflow, &args.candidates);
    let req = RunRequest {
        task: args.task.clone(),
        mode: args.arbiter,
        stage_models,
        arbiter_model: args.arbiter_model.clone(),
        arbiter_stage,
        max_retries: args.max_retries,
        budget: args.budget,
        reconcile: args.reconcile,
        reconcile_model: args.reconcile_model.clone(),
        consensus: args.consensus,
        workflow,
        candidates,
        chamber: args.chamber,
        routes,
    };
    if !req.candidates.is_empty() && req.workflow == Workflow::Sequential {
        return Err(CommandError::usage(
            "--candidates names the models of a parallel exploration or a debate",
        )
        .hint("add --workflow parallel or --workflow debate"));
    }
    if req.consensus && matches!(req.workflow, Workflow::Parallel | Workflow::Tournament) {
        // The consensus sends the refactor stage back; a parallel run has none to send back.
        return Err(CommandError::usage(
            "--consensus cannot be used with --workflow parallel or tournament: the candidates' vote or the arbiter's reviews choose the solution",
        )
        .hint("drop --consensus, or use --workflow debate or sequential"));
    }
    let (mut state, spec) = pipeline::plan(repo, &loaded, profile.as_deref(), &req)?;
    if args.estimate {
        return estimate(
            ctx,
            repo,
            &loaded,
            profile.as_deref(),
            &req,
            &state,
            args.json,
        );
    }
    // Models registered without their limits get them from their servers; the run records
    // the configuration it really used.
    super::limits::fill(ctx, &mut loaded, &run_models(&state))?;
    state.config = serde_json::to_value(&loaded.config).unwrap_or_default();
    let _lock = RunLock::acquire(repo, &state.run_id)?;
    if let Ok(Some(task)) = crate::task::workflow::refresh(repo, &state.task) {
        if task.state == crate::task::TaskState::Deferred && !ctx.quiet {
            let when = task.revisit_at.as_deref().unwrap_or("no date");
            let due = if task.revisit_due(&crate::notes::now_ts()).is_some() {
                "its revisit date has come"
            } else {
                "before its revisit date"
            };
            super::say(&format!(
                "triad: note: task `{}` was deferred (revisit at {when}); {due}, and this run reopens it",
                task.slug
            ));
        }
    }
    ensure_local_servers(ctx, &loaded, &run_models(&state))?;
    if let Ok(statuses) = repo.statuses(None) {
        let dirty = statuses.iter().any(|s| {
            !s.status().is_empty()
                && !s.status().contains(git2::Status::IGNORED)
                && !s.status().contains(git2::Status::WT_NEW)
        });
        if dirty && !ctx.quiet {
            super::say(&format!(
                "triad: note: your uncommitted changes are not part of this run; it starts from HEAD ({})",
                state.base.short()
            ));
        }
    }
    if let (Some(routing), false) = (&state.routing, ctx.quiet) {
        super::routing::say_routes(routing);
    }
    if !ctx.quiet {
        super::say(&format!(
            "triad: run {} of task `{}` on branch {} (arbiter: {})",
            state.run_id,
            state.task,
            state.branch,
            serde_json::to_value(state.mode)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("")
        ));
    }
    let task = state.task.clone();
    let done = drive(ctx, repo, &loaded, state, spec, args.json, |run| {
        run.start()
    });
    continue_unblocked(ctx, &task, done, args.json)
}

/// Prints what the planned run would cost in every arbiter mode; nothing is called or
/// written.
fn estimate(
    ctx: &Context,
    repo: &git2::Repository,
    loaded: &LoadedConfig,
    profile: Option<&str>,
    req: &RunRequest,
    state: &RunState,
    json: bool,
) -> CommandResult {
    if let (Some(routing), false) = (&state.routing, ctx.quiet) {
        super::routing::say_routes(routing);
    }
    let ledger = Ledger::new(repo.path().join("triad").join("ledger.jsonl"))
        .read()
        .unwrap_or_default();
    let store = super::bench::load_store(ctx)?;
    let modes = crate::pipeline::estimate::estimate(loaded, profile, req, &ledger, &store)?;
    if json {
        let v = serde_json::json!({"task": state.task, "mode": state.mode,
            "budget_usd": state.budget_usd, "modes": modes});
        out(&format!("{v}\n"))?;
    } else {
        out(&crate::report::cost::estimate_text(
            &state.task,
            state.mode,
            &modes,
            state.budget_usd,
        ))?;
    }
    super::ok()
}

/// Runs `git triad resume`.
pub fn resume(ctx: &Context, args: &ResumeArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut loaded = ctx.load_config()?;
    let _lock = lock_run(repo, &args.run_id)?;
    super::say_each(&crate::git::leftover::clean(repo.commondir()), ctx.quiet);
    let mut state = load_run(repo, &args.run_id)?;
    super::limits::fill(ctx, &mut loaded, &run_models(&state))?;
    if !state.status.resumable() {
        return Err(CommandError::usage(format!(
            "run {} already ended ({}): {}",
            state.run_id,
            state.status.as_str(),
            crate::report::run::message(&state)
        ))
        .hint(format!(
            "start a new run with `git triad run --task {}`",
            state.task
        )));
    }
    if let Some(b) = args.budget {
        state.budget_usd = Some(state.spend.cost_usd + b);
    }
    if let Some(StopReason::Chamber { session, .. }) = state.stop.clone() {
        state.feedback = super::chamber::run_decided(repo, &mut state, &session)?;
        if let Some(s) = state.stages.get_mut(state.current) {
            s.epoch_start = s.attempts.len();
        }
    }
    // Answers, dependencies done, a reassignment: what the task record says the run may do.
    let take_up = match pipeline::waiting::take_up(repo, &state).map_err(CommandError::failure)? {
        Ok(t) => t,
        Err(w) => return Err(CommandError::new(ExitCode::WaitingOnUser, w.why).hint(w.hint)),
    };
    let spec = recorded_spec(repo, &state)?;
    if !ctx.quiet {
        super::say(&format!(
            "triad: resuming run {} at the {} stage ({} so far)",
            state.run_id,
            state.current_stage().map_or("final", |s| s.as_str()),
            state.status.as_str()
        ));
    }
    let quiet = ctx.quiet;
    drive(ctx, repo, &loaded, state, spec, args.json, |run| {
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
        pipeline::waiting::unblocked_run(repo, slug).map_err(CommandError::failure)?
    else {
        return done;
    };
    let first = done?;
    if !ctx.quiet {
        super::say(&format!(
            "triad: the last dependency `{slug}` is done: run {run_id} continues"
        ));
    }
    let continued = resume(
        ctx,
        &ResumeArgs {
            run_id,
            budget: None,
            json,
        },
    )?;
    // A failure of the first command stands; else the continued run's outcome is the answer.
    Ok(if first == ExitCode::Ok {
        continued
    } else {
        first
    })
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
        .task_blob
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
        &crate::task::spec::spec_path(&state.task),
        &state.task,
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
        .profile
        .clone()
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

fn drive(
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
        let mut v = crate::report::run::json(state);
        v["hints"] = serde_json::json!(hints);
        out(&format!("{v}\n"))?;
    } else {
        let mut s = crate::report::run::summary(state);
        for h in hints {
            s.push_str(&format!("next: {h}\n"));
        }
        s.push_str(&format!(
            "see: git log --notes=triad {}   |   git triad log {}\n",
            state.branch, state.run_id
        ));
        out(&s)?;
    }
    Ok(status_exit(state.status))
}
