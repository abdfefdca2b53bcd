//! `git triad bench`: measure models on the built-in task set, report what was measured, or
//! compare the plain test loop with the pipeline on the repository's own tasks.

pub(crate) mod compare;

use clap::{Args, ValueEnum};

use super::helper::{load_store, store_path};
use super::{out, say, CommandError, CommandResult, Context};
use crate::bench::grade::PYTHON;
use crate::bench::{Bench, BenchObserver, BenchRequest, Graded};
use crate::clock::now_unix;
use crate::config::{LoadedConfig, Role};
use crate::exit::ExitCode;
use crate::model::ModelClient;
use crate::routing::store::FitnessStore;
use crate::routing::tasks::{TaskSet, SET_NAMES};

/// Output formats of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// A table for the terminal.
    Text,
    /// A markdown table.
    Markdown,
    /// Every measurement with its raw figures.
    Json,
}

/// Measure models on the built-in task set, graded by facts, for routing by fitness.
///
/// Build tasks (architect, implementer, refactorer) are asked exactly as a run asks its
/// stage; each answer is applied in a temporary git repository and graded by hidden Python
/// tests and by the files it must and must not change. The tests run the models' code with
/// python3 on this machine, in a temporary directory, without your keys in its environment.
/// Review cases (arbiter and verifier, graded alike) are real diffs with an injected bug
/// (off-by-one, wrong operator, missing edge case, hallucinated API, security slip) or clean
/// controls: a bug counts as caught when an issue is anchored on its lines, a clean change
/// rejected is a false positive. With two or more models, each reviewer also judges failed
/// build answers, its own and others': the self-preference figure is how much more often it
/// lets its own through.
///
/// Results are kept per user in $XDG_DATA_HOME/git-triad/fitness.json (else
/// ~/.local/share/git-triad/) with model, date, task-set version and raw figures; they stay
/// fresh for 30 days. `git triad models list` shows them; roles set to "auto" and
/// `git triad run --routing` pick models by them.
///
/// Examples: git triad bench --models gpt-5,claude-sonnet-4-5 --repeat 2;
/// git triad -c profile=local bench --tasks quick; git triad bench --report --format markdown;
/// git triad bench --compare --task fix-login --configs loop,bookend --repeat 3
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Models to measure, comma-separated (default: the models of the active profile's roles).
    #[arg(long, value_delimiter = ',', value_name = "M1,M2")]
    pub models: Vec<String>,
    /// Roles to measure, comma-separated: architect, implementer, refactorer, verifier, arbiter
    /// (default: all).
    #[arg(long, value_delimiter = ',', value_name = "ROLE,...")]
    pub roles: Vec<Role>,
    /// `standard` (every task), `quick` (one build task per role, one bug and one clean
    /// review), or task ids, comma-separated.
    #[arg(long, value_name = "SET", default_value = "standard")]
    pub tasks: String,
    /// Answers per task; repeats steady the figures of models that do not answer the same
    /// way twice.
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=20))]
    pub repeat: u32,
    /// Spending cap for the whole bench in USD (default: budget.run_usd).
    #[arg(long, value_name = "USD", value_parser = crate::cli::helper::parse_budget)]
    pub budget: Option<f64>,
    /// Show the stored measurements instead of measuring; no model is called.
    #[arg(long, conflicts_with_all = ["share", "import"])]
    pub report: bool,
    /// Commit your measurements to refs/triad/fitness in this repository, to push and share;
    /// no model is called.
    #[arg(long, conflicts_with = "import")]
    pub share: bool,
    /// Take the measurements of this repository's refs/triad/fitness (fetched from a
    /// teammate) into your own where they are newer; never done without you asking.
    #[arg(long)]
    pub import: bool,
    /// Format of the report, and of the summary printed after measuring.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,
    /// Instead of measuring the built-in tasks: run this repository's committed tasks as the
    /// pipeline under each arbiter mode and as a plain test loop given the same model (the
    /// pipeline's implement stage's), the same information (the task, the files, the verify
    /// command's failure at the base) and as many model calls as the pipeline made, and show
    /// per task what each fixed and claimed, its false successes, calls and wall time. Each
    /// run leaves its branch; a result is judged by facts (a non-empty change the verify
    /// command and `--check` pass), never by a model's word.
    #[arg(long, conflicts_with_all = ["report", "share", "import"])]
    pub compare: bool,
    /// With `--compare`: the task to run (repeatable; default: every committed TaskSpec).
    #[arg(long, value_name = "SLUG", requires = "compare")]
    pub task: Vec<String>,
    /// With `--compare`: the configurations, comma-separated, from loop, off, final,
    /// bookend, full (default: all).
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "C1,C2",
        requires = "compare"
    )]
    pub configs: Vec<String>,
    /// With `--compare`: a command of yours that checks a result beyond the task's own
    /// tests (hidden from the models), run in the box on a scratch copy of each result with
    /// the verify command's timeout; exit 0 means right. A claimed success it fails is a
    /// false success.
    #[arg(long, value_name = "COMMAND", requires = "compare")]
    pub check: Option<String>,
}

/// Progress lines on stderr.
struct Lines {
    enabled: bool,
}

impl BenchObserver for Lines {
    fn graded(&self, g: &Graded<'_>) {
        if self.enabled {
            let f = g.figure;
            say(&format!(
                "bench: {} {} {}: {} ({:.1} s, {}+{} tokens, ${:.4})",
                g.model,
                g.measures,
                f.task,
                f.detail,
                f.latency_ms as f64 / 1000.0,
                f.input_tokens,
                f.output_tokens,
                f.cost_usd
            ));
        }
    }

    fn skipped(&self, model: &str, why: &str) {
        if self.enabled {
            say(&format!("bench: skipping {model}: {why}"));
        }
    }

    fn self_preference(&self, model: &str, figure: &str) {
        if self.enabled {
            say(&format!(
                "bench: {model} reviewing failed answers: {figure}"
            ));
        }
    }
}

/// `--share` (commit the user's store on the ref) or `--import` (take the ref's newer
/// measurements into the user's store).
fn share(ctx: &Context, publish: bool) -> CommandResult {
    use crate::routing::share::{self, FITNESS_REF};
    let repo = crate::cli::helper::need_repo(ctx)?;
    let failed = |e: share::ShareError| CommandError::failure(e);
    let mut mine = load_store(ctx)?;
    if publish {
        if mine.entries.is_empty() {
            return Err(
                CommandError::usage("nothing is measured yet, so nothing is shared")
                    .hint("measure first: `git triad bench`"),
            );
        }
        let commit = share::publish(repo, &mine).map_err(failed)?;
        out(&format!(
            "shared {} measurement(s) on {FITNESS_REF} ({}); push it with `git push <remote> {FITNESS_REF}`\n",
            mine.entries.len(),
            &commit[..10.min(commit.len())]
        ))?;
        return super::ok();
    }
    let shared = share::read(repo).map_err(failed)?.ok_or_else(|| {
        CommandError::usage(format!("this repository has no {FITNESS_REF}")).hint(format!(
            "fetch it first: `git fetch <remote> {FITNESS_REF}:{FITNESS_REF}`"
        ))
    })?;
    let offered = shared.entries.len();
    let tip = crate::git::ref_target(repo, FITNESS_REF).map_or(String::new(), |o| o.to_string());
    let origin = format!("{FITNESS_REF} at {}", &tip[..10.min(tip.len())]);
    let taken = share::import(&mut mine, shared, &origin);
    let path = store_path(ctx)?;
    mine.save(&path).map_err(CommandError::failure)?;
    out(&format!(
        "imported {taken} of {offered} measurement(s) from {origin} into {}; `git triad bench --report` shows them\n",
        path.display()
    ))?;
    super::ok()
}

fn render(store: &FitnessStore, loaded: &LoadedConfig, format: ReportFormat) -> String {
    let now = now_unix();
    match format {
        ReportFormat::Text => crate::report::fitness::text(store, &loaded.config, now),
        ReportFormat::Markdown => crate::report::fitness::markdown(store, &loaded.config, now),
        ReportFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&crate::report::fitness::json(store, &loaded.config, now))
                .unwrap_or_default()
        ),
    }
}

/// The models of every role of the active profile, in role order, each once.
fn default_models(loaded: &LoadedConfig, profile: Option<&str>) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    for role in Role::PIPELINE {
        for m in loaded.role_models(role, profile) {
            if !models.contains(&m) {
                models.push(m);
            }
        }
    }
    models
}

/// Runs `git triad bench`.
pub fn run(ctx: &Context, args: &BenchArgs) -> CommandResult {
    let mut loaded = ctx.load_config()?;
    if args.report {
        let store = load_store(ctx)?;
        out(&render(&store, &loaded, args.format))?;
        return super::ok();
    }
    if args.share || args.import {
        return share(ctx, args.share);
    }
    if args.compare {
        return compare::run(ctx, args, &loaded);
    }
    let profile = loaded.active_profile(&ctx.env);
    let models = if args.models.is_empty() {
        default_models(&loaded, profile.as_deref())
    } else {
        args.models.clone()
    };
    if models.is_empty() {
        return Err(CommandError::usage(
            "no model to measure: every role is \"auto\" with no models listed after it",
        )
        .hint("name the models to measure: `git triad bench --models <model>,<model>`"));
    }
    for m in &models {
        if !loaded.config.models.contains_key(m) {
            return Err(
                CommandError::usage(format!("model `{m}` is not registered"))
                    .hint("`git triad models list` shows the registered models"),
            );
        }
    }
    let roles = if args.roles.is_empty() {
        // The task set has no tiebreaker tasks: its judging is measured as the arbiter's.
        Role::PIPELINE
            .into_iter()
            .filter(|r| *r != Role::Tiebreaker)
            .collect()
    } else {
        args.roles.clone()
    };
    let mut tasks = TaskSet::select(&args.tasks).map_err(|e| {
        CommandError::usage(e).hint(format!(
            "use {}, or ids from: {}",
            SET_NAMES.join(" or "),
            TaskSet::standard().ids().join(", ")
        ))
    })?;
    // A task whose tests cannot run here is left out and said, not failed for every model;
    // the figures then name the set they were measured on.
    let left_out: Vec<String> = tasks
        .build
        .iter()
        .filter(|t| !t.missing().is_empty())
        .map(|t| format!("{} (needs {})", t.id, t.missing().join(", ")))
        .collect();
    if !left_out.is_empty() {
        tasks.build.retain(|t| t.missing().is_empty());
        tasks.name = format!("{} without {}", tasks.name, left_out.len());
        if !ctx.quiet {
            say(&format!(
                "bench: left out, as their tests cannot run here: {}",
                left_out.join(", ")
            ));
        }
    }
    let builds = tasks.build.iter().any(|t| roles.contains(&t.role));
    if builds && crate::bench::grade::python().is_none() {
        return Err(CommandError::failure(format!(
            "`{PYTHON}` does not start, and the build tasks are graded by hidden Python tests"
        ))
        .hint("install Python 3, or measure only reviews with `--roles arbiter,verifier`"));
    }
    crate::cli::helper::ensure_local_servers(ctx, &loaded, &models)?;
    let host = crate::cli::helper::Terminal { ctx };
    crate::pipeline::drive::fill_limits(&mut loaded, &ctx.env_lookup(), &models, &host)?;
    let client = match &ctx.repo {
        Some(repo) => crate::cli::helper::client_for(ctx, repo, &loaded),
        None => ModelClient::new(&loaded.config, ctx.env_lookup()),
    };
    client.set_budget(args.budget.or(loaded.config.budget.run_usd));
    let observer = Lines {
        enabled: !ctx.quiet,
    };
    let root = ctx
        .repo
        .as_ref()
        .and_then(|r| r.workdir())
        .map(|p| p.to_path_buf());
    let bench = Bench {
        client: &client,
        config: &loaded.config,
        root: root.as_deref(),
        observer: &observer,
    };
    let req = BenchRequest {
        models,
        roles,
        tasks,
        repeat: args.repeat,
    };
    if !ctx.quiet {
        say(&format!(
            "bench: task set `{}` on {} in the roles {}",
            req.tasks.name,
            req.models.join(", "),
            req.roles
                .iter()
                .map(|r| r.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let rt = super::runtime()?;
    let outcome = rt
        .block_on(bench.run(&req, now_unix()))
        .map_err(|e| CommandError::failure(format!("the bench could not set up a task: {e}")))?;

    let path = store_path(ctx)?;
    let mut store = load_store(ctx)?;
    for e in &outcome.entries {
        store.record(e.clone());
    }
    if !outcome.entries.is_empty() {
        store.save(&path).map_err(CommandError::failure)?;
    }
    let measured = FitnessStore {
        entries: outcome.entries.clone(),
        ..FitnessStore::default()
    };
    let mut text = render(&measured, &loaded, args.format);
    if args.format == ReportFormat::Text {
        text.push_str(&format!(
            "spent ${:.4}, {} + {} tokens; kept in {}\n",
            outcome.spend.cost_usd,
            outcome.spend.input_tokens,
            outcome.spend.output_tokens,
            path.display()
        ));
        for (m, why) in &outcome.skipped {
            text.push_str(&format!("not measured: {m}: {why}\n"));
        }
    }
    out(&text)?;
    if let Some(b) = outcome.budget {
        return Err(CommandError::new(
            ExitCode::BudgetExceeded,
            format!("the bench stopped before crossing its budget: {b}"),
        )
        .hint(
            "measurements finished before the stop are kept; raise the cap with `--budget <USD>`",
        ));
    }
    if outcome.entries.is_empty() {
        return Err(CommandError::failure("no model could be measured")
            .hint("`git triad models check <model>` tests one model's connection"));
    }
    super::ok()
}
