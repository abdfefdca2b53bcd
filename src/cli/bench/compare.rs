//! `git triad bench --compare`: the repository's own tasks run as the plain test loop and
//! as the pipeline under each arbiter mode, on the user's own models, judged by facts.

use std::process::{Command, Stdio};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::BenchArgs;
use crate::cli::{out, say, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, Role};
use crate::pipeline::baseline::{plain_loop, LoopRequest};
use crate::pipeline::plan::committed_task;
use crate::pipeline::VerifyPlan;
use crate::routing::compare::{check_branch, rows, CompareRow, CompareRun, CONFIGS};
use crate::task::workflow::committed_slugs;

/// Runs `git triad bench --compare`.
pub(super) fn run(ctx: &Context, args: &BenchArgs, loaded: &LoadedConfig) -> CommandResult {
    let repo = crate::cli::helper::need_repo(ctx)?;
    let configs: Vec<String> = if args.configs.is_empty() {
        CONFIGS.iter().map(|c| c.to_string()).collect()
    } else {
        args.configs.clone()
    };
    if let Some(bad) = configs.iter().find(|c| !CONFIGS.contains(&c.as_str())) {
        return Err(
            CommandError::usage(format!("`{bad}` is not a configuration to compare"))
                .hint(format!("use some of: {}", CONFIGS.join(", "))),
        );
    }
    let slugs: Vec<String> = if args.task.is_empty() {
        committed_slugs(repo).into_iter().collect()
    } else {
        args.task.clone()
    };
    if slugs.is_empty() {
        return Err(CommandError::usage("no committed TaskSpec to compare on")
            .hint("name one with `--task <slug>`; `git triad task new` writes one"));
    }
    let profile = loaded.active_profile(&ctx.env);
    let model = loaded
        .role_models(Role::Implementer, profile.as_deref())
        .into_iter()
        .next()
        .ok_or_else(|| CommandError::usage("the implementer role has no model"))?;
    let mut runs = Vec::new();
    for slug in &slugs {
        // As `run` reads it: committed at HEAD, not modified in the work tree.
        let (spec, _, base) = committed_task(repo, slug)?;
        let (command, timeout) = match VerifyPlan::decide(&spec, &loaded.config, ctx.trusted()) {
            VerifyPlan::Run { command, timeout } => (command, timeout),
            VerifyPlan::Skip(why) => {
                return Err(CommandError::usage(format!(
                    "task `{slug}` cannot be compared: {}",
                    why.describe()
                ))
                .hint("the comparison judges every configuration by the task's verify command"))
            }
        };
        for config in &configs {
            for n in 1..=args.repeat {
                if !ctx.quiet {
                    say(&format!(
                        "bench: {slug}: {config}, run {n} of {}",
                        args.repeat
                    ));
                }
                let started = Instant::now();
                let (status, claimed, branch, cost) = if config == "loop" {
                    crate::cli::helper::ensure_local_servers(
                        ctx,
                        loaded,
                        std::slice::from_ref(&model),
                    )?;
                    let client = crate::cli::helper::client_for(ctx, repo, loaded);
                    let quiet = ctx.quiet;
                    let lines = move |l: &str| {
                        if !quiet {
                            say(&format!("bench: {l}"));
                        }
                    };
                    let outcome = plain_loop(&LoopRequest {
                        repo,
                        config: &loaded.config,
                        client: &client,
                        spec: &spec,
                        model: &model,
                        verify: (&command, timeout),
                        tries: 3,
                        say: &lines,
                    })
                    .map_err(|e| CommandError::failure(format!("the plain loop failed: {e}")))?;
                    let status = if outcome.passed { "passed" } else { "failed" };
                    (
                        status.to_string(),
                        outcome.passed,
                        outcome.branch,
                        outcome.spend.cost_usd,
                    )
                } else {
                    pipeline_run(ctx, slug, config)?
                };
                let (changed, passes) = match &branch {
                    Some(b) => {
                        check_branch(repo, base, b, &command, timeout, &loaded.config.sandbox)
                            .map_err(|e| CommandError::failure(e.to_string()))?
                    }
                    None => (0, false),
                };
                let run = CompareRun::judged(
                    slug,
                    config,
                    &status,
                    claimed,
                    branch,
                    changed,
                    passes,
                    cost,
                    started.elapsed().as_secs_f64(),
                );
                if !ctx.quiet {
                    say(&format!(
                        "bench: {slug}: {config}: {} ({}, {} file(s) changed, verify {}; {:.0} s, ${:.4})",
                        if run.completed { "completed" } else { "not completed" },
                        run.status,
                        run.changed,
                        if run.verify_passes { "passes" } else { "fails" },
                        run.seconds,
                        run.cost_usd
                    ));
                }
                runs.push(run);
            }
        }
    }
    out(&render(&runs, args.format == super::ReportFormat::Json))?;
    crate::cli::ok()
}

/// Runs the pipeline on `slug` with arbiter mode `mode` as `git triad run` would, in its own
/// process: (status, whether it claims success, branch, cost).
fn pipeline_run(
    ctx: &Context,
    slug: &str,
    mode: &str,
) -> CommandResult<(String, bool, Option<String>, f64)> {
    let exe = std::env::current_exe()
        .map_err(|e| CommandError::failure(format!("cannot find this program: {e}")))?;
    let mut cmd = Command::new(exe);
    cmd.current_dir(&ctx.cwd);
    for o in &ctx.overrides {
        cmd.arg("-c").arg(o);
    }
    if ctx.quiet {
        cmd.arg("-q");
    }
    cmd.args([
        "--no-tui",
        "run",
        "--task",
        slug,
        "--arbiter",
        mode,
        "--json",
    ])
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::inherit());
    let output = cmd
        .output()
        .map_err(|e| CommandError::failure(format!("cannot start `git triad run`: {e}")))?;
    let text = String::from_utf8_lossy(&output.stdout);
    let report: Reported = serde_json::from_str(text.trim()).map_err(|e| {
        CommandError::failure(format!(
            "`git triad run --task {slug} --arbiter {mode}` gave no run report ({e}; exit {:?})",
            output.status.code()
        ))
    })?;
    let claimed = matches!(report.status.as_str(), "approved" | "flagged");
    Ok((report.status, claimed, report.branch, report.cost_usd))
}

/// What the comparison reads of `run --json` (a [`RunReport`](crate::report::run::RunReport)).
#[derive(Deserialize)]
struct Reported {
    /// Where the run stands (`approved`, `halted`, …).
    status: String,
    /// Its scratch branch.
    branch: Option<String>,
    /// USD it spent.
    cost_usd: f64,
}

/// What `bench --compare --format json` prints: every run, then a row per configuration.
#[derive(Serialize)]
struct Comparison<'a> {
    runs: &'a [CompareRun],
    configurations: Vec<CompareRow>,
}

/// The comparison for people (a table) or machines (JSON: every run and the rows).
fn render(runs: &[CompareRun], json: bool) -> String {
    let rows = rows(runs);
    if json {
        let comparison = Comparison {
            runs,
            configurations: rows,
        };
        // Plain data with string keys: serializing it cannot fail.
        return format!(
            "{}\n",
            serde_json::to_string(&comparison).unwrap_or_default()
        );
    }
    let mut table = vec![[
        "CONFIGURATION".to_string(),
        "COMPLETED".into(),
        "FALSE SUCCESS".into(),
        "$/RUN".into(),
        "WALL/RUN".into(),
    ]];
    for r in &rows {
        table.push([
            if r.config == "loop" {
                "plain test loop".to_string()
            } else {
                format!("pipeline, arbiter {}", r.config)
            },
            format!("{}/{}", r.completed, r.runs),
            r.false_success.to_string(),
            format!("{:.4}", r.cost_usd),
            format!("{:.0} s", r.seconds),
        ]);
    }
    format!(
        "completed = a claimed success on a non-empty change the task's verify command passes\n{}",
        crate::report::render_table(&table)
    )
}
