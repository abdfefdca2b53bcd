//! `git triad bench`: measure models on the built-in task set, report what was measured, or
//! compare the plain test loop with the pipeline on the repository's own tasks.

mod args;
pub(crate) mod compare;

pub use args::{BenchArgs, ReportFormat};

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
