//! `git triad run` and `git triad resume`: the pipeline on a committed TaskSpec.

use std::collections::BTreeMap;

use clap::Args;

use super::helper::{
    continue_unblocked, drive, ensure_local_servers, fill_limits, load_store, need_repo,
    parse_budget, reopen_due, resume_run, roles_notice, routes, run_models, say_once, say_routes,
    tournament,
};
use super::{out, CommandError, CommandResult, Context};
use crate::config::{ArbiterMode, LoadedConfig, Role, RoutingMode};
use crate::model::budget::Ledger;
use crate::pipeline::{RunLock, RunRequest, RunState, Stage, Workflow};

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
/// (`git log --notes=triad`). How it ended is its exit code ([`crate::exit::ExitCode`]).
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
    #[arg(
        long,
        value_name = "WORKFLOW",
        value_enum,
        hide_possible_values = true,
        default_value_t
    )]
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
    /// Raise the run's cap to what it has spent plus USD (default: the recorded cap).
    #[arg(long, value_name = "USD", value_parser = parse_budget)]
    pub budget: Option<f64>,
    /// Take up a halted run by redoing the stage it stopped at and the N-1 before it.
    ///
    /// The first of them starts from the commit before it (what came after stays on the
    /// record), is told why the run stopped, and gets a fresh retry budget. `--rewind 1`
    /// redoes only the stage that halted.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4))]
    pub rewind: Option<u32>,
    /// With --rewind: the model the first stage redone uses (a registered model).
    #[arg(long, value_name = "MODEL", requires = "rewind")]
    pub model: Option<String>,
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Runs `git triad run`.
pub fn run(ctx: &Context, args: &RunArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut loaded = ctx.load_config()?;
    reopen_due(ctx, repo)?;
    let profile = loaded.profile_choice(&ctx.env, &args.named_models()).name;
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
    let routes = routes(ctx, &loaded, profile.as_deref(), args.routing)?;
    let (workflow, candidates) = tournament(routes.as_ref(), args.workflow, &args.candidates);
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
    let (mut state, spec) = crate::pipeline::plan(repo, &loaded, profile.as_deref(), &req)?;
    // What the roles run on, once the run is sure to start with them.
    say_roles(ctx, repo, &loaded, profile.as_deref());
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
    fill_limits(ctx, &mut loaded, &run_models(&state, true))?;
    state.record_config(serde_json::to_value(&loaded.config).unwrap_or_default());
    let _lock = RunLock::acquire(repo, state.run_id())?;
    if let Ok(Some(task)) = crate::task::workflow::refresh(repo, state.task()) {
        // A due deferral was reopened above; one still deferred is reopened by this run.
        if task.state == crate::task::TaskState::Deferred && !ctx.quiet {
            let when = task.revisit_at.as_deref().unwrap_or("no date");
            super::say(&format!(
                "triad: note: task `{}` was deferred (revisit at {when}); this run reopens it before its revisit date",
                task.slug
            ));
        }
    }
    // The servers of the models the run calls first. A fallback's is not started: a role's
    // list may end in the built-in local models, which need not be installed; a fallback
    // whose server is down fails over like any unreachable model.
    ensure_local_servers(ctx, &loaded, &run_models(&state, false))?;
    if let Ok(statuses) = repo.statuses(None) {
        let dirty = statuses.iter().any(|s| {
            !s.status().is_empty()
                && !s.status().contains(git2::Status::IGNORED)
                && !s.status().contains(git2::Status::WT_NEW)
        });
        if dirty && !ctx.quiet {
            super::say(&format!(
                "triad: note: your uncommitted changes are not part of this run; it starts from HEAD ({})",
                state.base().short()
            ));
        }
    }
    if let (Some(routing), false) = (state.routing(), ctx.quiet) {
        say_routes(routing);
    }
    if !ctx.quiet {
        super::say(&format!(
            "triad: run {} of task `{}` on branch {} (arbiter: {})",
            state.run_id(),
            state.task(),
            state.branch(),
            serde_json::to_value(state.mode())
                .unwrap_or_default()
                .as_str()
                .unwrap_or("")
        ));
    }
    let task = state.task().to_string();
    let done = drive(ctx, repo, &loaded, state, spec, args.json, |run| {
        run.start()
    });
    continue_unblocked(ctx, &task, done, args.json)
}

/// Says, once per repository, what the roles run on when it is not what the user chose or
/// the defaults name: the local profile `auto` picked, the user's models declared with no
/// role, models that stand in for ones whose key is not set.
fn say_roles(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig, profile: Option<&str>) {
    if profile == Some("local") && loaded.config.profile == "auto" {
        let declared = loaded.declared_first(profile);
        let line = if declared.is_empty() {
            "triad: no API key is set, so the built-in `local` profile is used: three small real models served by llama.cpp on 127.0.0.1 (see `git triad models list`; set a provider's key, e.g. ANTHROPIC_API_KEY, to use hosted models)".to_string()
        } else {
            format!(
                "triad: no API key is set, so your models with no role ({}) take every role first, and the built-in `local` profile's models follow (`git triad config show --origin roles` shows them)",
                declared.join(", ")
            )
        };
        say_once(ctx, repo, "local-profile", &line);
    }
    if let Some(line) = roles_notice(loaded, profile, &Role::ALL) {
        say_once(ctx, repo, "roles", &line);
    }
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
    if let (Some(routing), false) = (state.routing(), ctx.quiet) {
        say_routes(routing);
    }
    let ledger = Ledger::new(crate::git::paths::ledger(repo))
        .read()
        .unwrap_or_default();
    let store = load_store(ctx)?;
    let modes = crate::pipeline::estimate::estimate(loaded, profile, req, &ledger, &store)?;
    let estimate = crate::report::cost::Estimate {
        task: state.task(),
        chosen: state.mode(),
        run_cap: state.budget_usd(),
        modes: &modes,
    };
    if json {
        let v =
            serde_json::to_string(&estimate).map_err(|e| CommandError::failure(e.to_string()))?;
        out(&format!("{v}\n"))?;
    } else {
        out(&estimate.text())?;
    }
    super::ok()
}

/// Runs `git triad resume`.
pub fn resume(ctx: &Context, args: &ResumeArgs) -> CommandResult {
    let rewind = args.rewind.map(|n| crate::pipeline::resume::Rewind {
        stages: n as usize,
        model: args.model.as_deref(),
    });
    resume_run(ctx, &args.run_id, args.budget, rewind, args.json)
}
