//! `git triad bench --compare`: the repository's own tasks run as the pipeline under each
//! arbiter mode and as the plain test loop, on the user's own models, judged by facts.
//!
//! The comparison is fair by construction: for each task and repetition the pipeline runs
//! first, and the loop then builds with the model the pipeline's implement stage used, is
//! shown the verify command's failure at the base as that stage is, and may make as many
//! model calls as the pipeline made (counted in the ledger under the run's id).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::BenchArgs;
use crate::cli::{out, say, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, Role};
use crate::model::budget::Ledger;
use crate::pipeline::baseline::{plain_loop, LoopRequest};
use crate::pipeline::plan::committed_task;
use crate::pipeline::{Stage, VerifyPlan};
use crate::routing::compare::{
    judge_branch, loop_budget, Arm, Calls, CompareRun, Judged, CONFIGS, LOOP,
};
use crate::task::workflow::committed_slugs;
use crate::task::TaskSpec;

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
    let implementer = loaded
        .role_models(Role::Implementer, profile.as_deref())
        .into_iter()
        .next()
        .ok_or_else(|| {
            CommandError::usage("the implementer role has no model").hint(
                "name one under [roles.implementer] in your config, or use `-c profile=local`",
            )
        })?;
    // The servers of the roles a run calls start before any arm is timed: neither arm's wall
    // time counts a local model server starting.
    let needed: Vec<String> = [
        Role::Architect,
        Role::Implementer,
        Role::Refactorer,
        Role::Verifier,
        Role::Arbiter,
    ]
    .into_iter()
    .flat_map(|r| loaded.role_models(r, profile.as_deref()))
    .collect();
    crate::cli::helper::ensure_local_servers(ctx, loaded, &needed)?;
    let check = args.check.as_deref();
    let mut runs = Vec::new();
    for slug in &slugs {
        // As `run` reads it: committed at HEAD, not modified in the work tree.
        let (spec, _, base) = committed_task(repo, slug)?;
        let verify = match VerifyPlan::decide(&spec, &loaded.config, ctx.trusted()) {
            VerifyPlan::Run { command, timeout } => (command, timeout),
            VerifyPlan::Skip(why) => {
                return Err(CommandError::usage(format!(
                    "task `{slug}` cannot be compared: {}",
                    why.describe()
                ))
                .hint("the comparison judges every configuration by the task's verify command"))
            }
        };
        let judge = |arm: Arm| -> CommandResult<CompareRun> {
            let facts = match &arm.branch {
                Some(b) => judge_branch(
                    repo,
                    base,
                    b,
                    (&verify.0, verify.1),
                    check,
                    &loaded.config.sandbox,
                )
                .map_err(|e| CommandError::failure(e.to_string()))?,
                None => Judged::default(),
            };
            let run = CompareRun::judged(arm, &facts);
            progress(ctx, &judged_line(&run, &facts));
            Ok(run)
        };
        for n in 1..=args.repeat {
            let mut judged = Vec::new();
            for config in configs.iter().filter(|c| *c != LOOP) {
                progress(
                    ctx,
                    &format!("{slug}: {config}, run {n} of {}", args.repeat),
                );
                judged.push(judge(pipeline_arm(ctx, repo, slug, config, n)?)?);
            }
            if configs.iter().any(|c| c == LOOP) {
                let calls: Vec<usize> = judged.iter().map(|r| r.calls).collect();
                let budget = loop_budget(&calls);
                let builder = judged
                    .iter()
                    .map(|r| &r.builder)
                    .find(|b| !b.is_empty())
                    .map_or_else(|| implementer.clone(), String::clone);
                progress(
                    ctx,
                    &format!(
                        "{slug}: loop, run {n} of {}: {builder}, at most {budget} model call(s) ({})",
                        args.repeat,
                        if calls.is_empty() {
                            "no pipeline ran beside it"
                        } else {
                            "as many as the pipeline made"
                        }
                    ),
                );
                let the_loop = LoopArm {
                    spec: &spec,
                    builder,
                    budget,
                    verify: (&verify.0, verify.1),
                    run: n,
                };
                judged.push(judge(loop_arm(ctx, loaded, repo, &the_loop)?)?);
            }
            judged.sort_by_key(|r| CONFIGS.iter().position(|c| *c == r.config));
            runs.extend(judged);
        }
    }
    let json = args.format == super::ReportFormat::Json;
    out(&if json {
        crate::report::compare::json(&runs, check)
    } else {
        crate::report::compare::text(&runs, check)
    })?;
    crate::cli::ok()
}

/// A progress line on stderr, unless quiet.
fn progress(ctx: &Context, line: &str) {
    if !ctx.quiet {
        say(&format!("bench: {line}"));
    }
}

/// One judged run in a line: what the facts say, then its calls, time and cost.
fn judged_line(run: &CompareRun, facts: &Judged) -> String {
    let verdict = if run.fixed {
        "fixed"
    } else if run.false_success {
        "FALSE SUCCESS"
    } else {
        "not fixed"
    };
    let check = match facts.check_passes {
        Some(true) => ", the check passes".to_string(),
        Some(false) => format!(
            ", the check fails: {}",
            facts
                .check_tail
                .lines()
                .last()
                .unwrap_or("no output")
                .trim()
        ),
        None => String::new(),
    };
    format!(
        "{}: {}: {verdict} ({}, {} file(s) changed, verify {}{check}; {} call(s) to {}; {:.0} s, ${:.4})",
        run.task,
        run.config,
        run.status,
        run.changed,
        if run.verify_passes { "passes" } else { "fails" },
        run.calls,
        if run.models.is_empty() {
            "no model".to_string()
        } else {
            run.models.join(", ")
        },
        run.seconds,
        run.cost_usd
    )
}

/// What the plain loop is given for one task and run.
struct LoopArm<'a> {
    /// The task.
    spec: &'a TaskSpec,
    /// The model that builds: the pipeline's implement stage's.
    builder: String,
    /// Model calls it may make.
    budget: usize,
    /// The verify command and its timeout.
    verify: (&'a str, Duration),
    /// Which repetition.
    run: u32,
}

/// Runs the plain loop once.
fn loop_arm(
    ctx: &Context,
    loaded: &LoadedConfig,
    repo: &git2::Repository,
    the_loop: &LoopArm<'_>,
) -> CommandResult<Arm> {
    crate::cli::helper::ensure_local_servers(ctx, loaded, std::slice::from_ref(&the_loop.builder))?;
    let started = Instant::now();
    let client = crate::cli::helper::client_for(ctx, repo, loaded);
    let lines = |l: &str| progress(ctx, l);
    let outcome = plain_loop(&LoopRequest {
        repo,
        config: &loaded.config,
        client: &client,
        spec: the_loop.spec,
        model: &the_loop.builder,
        verify: the_loop.verify,
        tries: u32::try_from(the_loop.budget).unwrap_or(u32::MAX),
        say: &lines,
    })
    .map_err(|e| {
        CommandError::failure(format!("the plain loop failed: {e}"))
            .hint("`git triad doctor` checks the models and the box; run again once it is clean")
    })?;
    Ok(Arm {
        task: the_loop.spec.id.clone(),
        run: the_loop.run,
        config: LOOP.into(),
        status: if outcome.passed { "passed" } else { "failed" }.into(),
        claimed: outcome.passed,
        branch: outcome.branch,
        builder: the_loop.builder.clone(),
        calls: Calls::of(&client.records()),
        call_budget: Some(the_loop.budget),
        cost_usd: outcome.spend.cost_usd,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Runs the pipeline on `slug` with arbiter mode `mode` as `git triad run` would, in its own
/// process, and counts its model calls in the ledger.
fn pipeline_arm(
    ctx: &Context,
    repo: &git2::Repository,
    slug: &str,
    mode: &str,
    n: u32,
) -> CommandResult<Arm> {
    let started = Instant::now();
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
    let seconds = started.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&output.stdout);
    let report: Reported = serde_json::from_str(text.trim()).map_err(|e| {
        CommandError::failure(format!(
            "`git triad run --task {slug} --arbiter {mode}` gave no run report ({e}; exit {:?})",
            output.status.code()
        ))
        .hint(format!(
            "run `git triad run --task {slug} --arbiter {mode}` yourself to see why"
        ))
    })?;
    let ledger = repo.path().join("triad").join("ledger.jsonl");
    let records = Ledger::new(ledger.clone()).read().map_err(|e| {
        CommandError::failure(format!(
            "cannot read {} to count the run's model calls: {e}",
            ledger.display()
        ))
        .hint("the comparison gives the loop as many calls as the pipeline made; make the file readable and compare again")
    })?;
    let builder = report
        .stages
        .iter()
        .find(|s| s.stage == Stage::Implement)
        .map(|s| s.model.clone())
        .unwrap_or_default();
    Ok(Arm {
        task: slug.to_string(),
        run: n,
        config: mode.to_string(),
        claimed: matches!(report.status.as_str(), "approved" | "flagged"),
        status: report.status,
        branch: report.branch,
        builder,
        calls: Calls::of_run(&records, &report.run),
        call_budget: None,
        cost_usd: report.cost_usd,
        seconds,
    })
}

/// What the comparison reads of `run --json` (a [`RunReport`](crate::report::run::RunReport)).
#[derive(Deserialize)]
struct Reported {
    /// The run id, under which the ledger records its calls.
    run: String,
    /// Where the run stands (`approved`, `halted`, …).
    status: String,
    /// Its scratch branch.
    branch: Option<String>,
    /// Its stages, with the model of each.
    stages: Vec<ReportedStage>,
    /// USD it spent.
    cost_usd: f64,
}

/// What the comparison reads of one stage of `run --json`.
#[derive(Deserialize)]
struct ReportedStage {
    /// Which.
    stage: Stage,
    /// The model of its last attempt.
    model: String,
}
