//! `git triad bench --compare`: the repository's own tasks run as the pipeline under each
//! arbiter mode and as the plain test loop, on the user's own models, judged by facts.
//!
//! The comparison is fair by construction: for each task and repetition the pipeline runs
//! first, and the loop then builds with the model the pipeline's implement stage used, is
//! shown the verify command's failure at the base as that stage is, and may make as many
//! model calls as the pipeline made (counted in the ledger under the run's id).

use std::time::{Duration, Instant};

use super::args::{BenchArgs, ReportFormat};
use crate::cli::{out, say, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, Role};
use crate::ops::compare::CompareError;
use crate::pipeline::baseline::{plain_loop, LoopRequest};
use crate::pipeline::plan::committed_task;
use crate::pipeline::VerifyPlan;
use crate::routing::compare::{
    judge_branch, loop_budget, Arm, ArmStatus, Calls, CompareRun, Judged, LoopStatus, CONFIGS, LOOP,
};
use crate::task::lifecycle::committed_slugs;
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
    let json = args.format == ReportFormat::Json;
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
        status: ArmStatus::Loop(if outcome.passed {
            LoopStatus::Passed
        } else {
            LoopStatus::Failed
        }),
        claimed: outcome.passed,
        branch: outcome.branch,
        builder: the_loop.builder.clone(),
        calls: Calls::of(&client.records()),
        call_budget: Some(the_loop.budget),
        cost_usd: outcome.spend.cost_usd,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Runs the pipeline on `slug` with arbiter mode `mode` as `git triad run --task <slug>
/// --arbiter <mode>` would, in this process ([`crate::ops::Ops::compare_arm`]), its
/// progress as lines on stderr.
fn pipeline_arm(
    ctx: &Context,
    repo: &git2::Repository,
    slug: &str,
    mode: &str,
    n: u32,
) -> CommandResult<Arm> {
    let req = arm_request(slug, mode);
    let host = Lines { ctx };
    let ops = crate::cli::helper::ops(ctx, repo, &host);
    ops.compare_arm(ctx.load_config()?, &req, mode, n)
        .map_err(|e| {
            let again = format!("run `git triad run --task {slug} --arbiter {mode}` yourself to see why");
            match e {
                CompareError::Ledger { .. } => CommandError::failure(e.to_string()).hint(
                    "the comparison gives the loop as many calls as the pipeline made; make the file readable and compare again",
                ),
                CompareError::Start(e) => CommandError::from(e).hint(again),
                CompareError::Run(e) => CommandError::from(*e).hint(again),
            }
        })
}

/// The run of pipeline arm `mode` on `slug`, as `git triad run --task <slug> --arbiter
/// <mode>` asks it: every other choice at the command's default.
pub(crate) fn arm_request(slug: &str, mode: &str) -> crate::pipeline::RunRequest {
    crate::pipeline::RunRequest {
        task: slug.to_string(),
        mode: crate::config::ArbiterMode::ALL
            .into_iter()
            .find(|m| m.as_str() == mode),
        ..Default::default()
    }
}

/// The comparison as a run's host: notes as `triad: …` lines and the run's progress as
/// plain lines on stderr (none with `--quiet`), never a live view: the arms run one after
/// another under the comparison's own progress lines.
struct Lines<'c> {
    ctx: &'c Context,
}

impl crate::pipeline::Host for Lines<'_> {
    fn note(&self, line: &str) {
        if !self.ctx.quiet {
            say(&format!("triad: {line}"));
        }
    }

    fn watch(
        &self,
        _client: &crate::model::ModelClient,
        _start: &crate::pipeline::RunState,
        go: crate::pipeline::drive::Go<'_>,
    ) -> crate::pipeline::drive::Driven {
        go(&crate::cli::progress::Lines {
            enabled: !self.ctx.quiet,
        })
    }
}
