//! `git triad run` and `git triad resume`: the pipeline on a committed TaskSpec.

use clap::Args;

use super::helper::{
    continue_after, load_store, need_repo, ops, parse_budget, reopen_due, report, resume_run,
    Terminal,
};
use super::{out, say, CommandError, CommandResult, Context};
use crate::config::{ArbiterMode, LoadedConfig, Role, RoutingMode, AUTO_PROFILE, LOCAL_PROFILE};
use crate::exit::ExitCode;
use crate::model::budget::Ledger;
use crate::ops::Ran;
use crate::pipeline::{Planned, RunRequest, Stage, Workflow};

fn parse_chamber(s: &str) -> Result<bool, String> {
    match s {
        "auto" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("`{s}` is not a chamber mode (off, auto)")),
    }
}

fn parse_mode(s: &str) -> Result<ArbiterMode, String> {
    s.parse()
}

/// Run Architect → Implement → Refactor → Verify on a committed TaskSpec.
///
/// Each accepted stage becomes a commit on the branch `triad/<task>/<run-id>`, built in
/// memory from HEAD: your working tree, index, HEAD and stash are never touched. A different
/// model (the arbiter) reviews the stages the mode selects; its verdicts are git notes
/// (`git log --notes=triad`). How it ended is its exit code ([`crate::exit::ExitCode`]).
///
/// Example: git triad run --task add-login --arbiter full --budget 2
#[derive(Debug, Default, Args)]
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
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

impl RunArgs {
    /// The run these arguments ask for, in one step: each flag is one field of the
    /// request, and the pipeline decides the rest ([`crate::pipeline::plan`]).
    pub fn request(&self) -> RunRequest {
        let stage_models = [
            (Role::Architect, &self.architect),
            (Role::Implementer, &self.implementer),
            (Role::Refactorer, &self.refactorer),
            (Role::Verifier, &self.verifier),
        ];
        let arbiter_stage = [
            (Stage::Architect, &self.arbiter_architect),
            (Stage::Implement, &self.arbiter_implement),
            (Stage::Refactor, &self.arbiter_refactor),
            (Stage::Verify, &self.arbiter_verify),
        ];
        RunRequest {
            task: self.task.clone(),
            mode: self.arbiter,
            stage_models: stage_models
                .into_iter()
                .filter_map(|(role, m)| Some((role, m.clone()?)))
                .collect(),
            arbiter_model: self.arbiter_model.clone(),
            arbiter_stage: arbiter_stage
                .into_iter()
                .filter_map(|(stage, m)| Some((stage, m.clone()?)))
                .collect(),
            max_retries: self.max_retries,
            budget: self.budget,
            reconcile: self.reconcile,
            reconcile_model: self.reconcile_model.clone(),
            consensus: self.consensus,
            workflow: self.workflow,
            candidates: self.candidates.clone(),
            chamber: self.chamber,
            routing: self.routing,
        }
    }
}

/// Continue a run after a crash, a kill, a provider failure, the budget, or your answers.
#[derive(Debug, Default, Args)]
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
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Runs `git triad run`: the arguments become one request, the pipeline plans it, the
/// operations drive it ([`crate::ops::Ops::run`]), and the command says how it ended.
pub fn run(ctx: &Context, args: &RunArgs) -> CommandResult {
    run_typed(ctx, args).map(|done| done.exit)
}

/// What `run` drove: the run asked for (none for `--estimate`), then the run it unblocked
/// if it finished that run's last dependency, and the exit code they mean together.
pub struct RunDone {
    /// The runs, in the order they ran.
    pub runs: Vec<Ran>,
    /// What they mean together ([`crate::ops::exit::continued_exit`]).
    pub exit: ExitCode,
}

/// [`run`], with the runs it drove as their typed outcomes (a session's tool reads them).
pub fn run_typed(ctx: &Context, args: &RunArgs) -> CommandResult<RunDone> {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    reopen_due(ctx, repo)?;
    let req = args.request();
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    let planned = ops.plan(&loaded, &req)?;
    // What the roles run on, once the run is sure to start with them.
    say_roles(ctx, repo, &loaded, planned.choice.profile.as_deref());
    if args.estimate {
        let exit = estimate(ctx, &loaded, &req, &planned, args.output.json())?;
        return Ok(RunDone { runs: vec![], exit });
    }
    let task = planned.state.task().to_string();
    let (first, done) = match ops.run(loaded, planned) {
        Ok(ran) => {
            let done = report(ctx, &ran.state, args.output.json());
            (Some(ran), done)
        }
        Err(e) => (None, Err(CommandError::from(e))),
    };
    let (exit, continued) = continue_after(ctx, &task, done, args.output.json())?;
    Ok(RunDone {
        runs: first.into_iter().chain(continued).collect(),
        exit,
    })
}

/// Says, once per repository, what the roles run on when it is not what the user chose or
/// the defaults name: the local profile `auto` picked, the user's models declared with no
/// role, models that stand in for ones whose key is not set.
fn say_roles(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig, profile: Option<&str>) {
    if profile == Some(LOCAL_PROFILE) && loaded.config.profile == AUTO_PROFILE {
        let declared = loaded.declared_first(profile);
        let line = if declared.is_empty() {
            "triad: no API key is set, so the built-in `local` profile is used: three small real models served by llama.cpp on 127.0.0.1 (see `git triad models list`; set a provider's key, e.g. ANTHROPIC_API_KEY, to use hosted models)".to_string()
        } else {
            format!(
                "triad: no API key is set, so your models with no role ({}) take every role, in place of the built-in `local` profile's models (`git triad config show --origin roles` shows them)",
                declared.join(", ")
            )
        };
        say_once(ctx, repo, "local-profile", &line);
    }
    if let Some(line) = roles_notice(loaded, profile, &Role::PIPELINE) {
        say_once(ctx, repo, "roles", &line);
    }
}

/// Prints what the planned run would cost in every arbiter mode; nothing is called or
/// written.
fn estimate(
    ctx: &Context,
    loaded: &LoadedConfig,
    req: &RunRequest,
    planned: &Planned,
    json: bool,
) -> CommandResult {
    let state = &planned.state;
    if !ctx.quiet {
        for line in state.routing().map(|r| r.said()).unwrap_or_default() {
            super::say(&format!("triad: {line}"));
        }
    }
    let repo = need_repo(ctx)?;
    let ledger = Ledger::new(crate::git::paths::ledger(repo))
        .read()
        .unwrap_or_default();
    let store = load_store(ctx)?;
    let modes = crate::pipeline::estimate::estimate(loaded, req, &planned.choice, &ledger, &store)?;
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
    resume_typed(ctx, args).map(|ran| ran.exit)
}

/// [`resume`], with the run it drove as its typed outcome (a session's tool reads it).
pub fn resume_typed(ctx: &Context, args: &ResumeArgs) -> CommandResult<Ran> {
    let rewind = args.rewind.map(|n| crate::pipeline::resume::Rewind {
        stages: n as usize,
        model: args.model.as_deref(),
    });
    resume_run(ctx, &args.run_id, args.budget, rewind, args.output.json())
}

/// Says `line` on stderr unless it was the last line said under `name` in this
/// repository: a marker, `$GIT_DIR/triad/notices/<name>`, keeps it, so a notice comes once
/// and again only when what it says changes.
fn say_once(ctx: &Context, repo: &git2::Repository, name: &str, line: &str) {
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
fn roles_notice(loaded: &LoadedConfig, profile: Option<&str>, roles: &[Role]) -> Option<String> {
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
    let own = loaded.declared_models();
    if adapted
        .iter()
        .all(|r| r.substitutes.iter().all(|m| own.contains(m)))
    {
        return Some(format!(
            "triad: the roles you did not set use your own models, in place of defaults you cannot call: {} (`git triad config show --origin roles` shows every role and why)",
            roles.join("; ")
        ));
    }
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
