//! What the review buys, measured fairly: the same task run as the plain test loop and as the
//! pipeline under each arbiter mode, with the same building model, the same information and
//! the same number of model calls, each result judged by facts (a non-empty change the task's
//! verify command passes and, when the user gives one, a check the models never saw), with
//! calls, cost and wall time per task and configuration.

use std::time::Duration;

use git2::Repository;
use serde::Serialize;

use crate::config::ArbiterMode;
use crate::git::export::run_boxed;
use crate::git::GitError;
use crate::model::budget::CallRecord;
use crate::model::usage::rounded_usd;
use crate::task::RunStatus;

/// One configuration compared: [`LOOP`], then every pipeline arbiter mode by its name
/// ([`ArbiterMode::NAMES`]: `off`, `final`, `bookend`, `full`).
pub const CONFIGS: [&str; 1 + ArbiterMode::ALL.len()] = {
    let mut all = [LOOP; 1 + ArbiterMode::ALL.len()];
    let mut i = 0;
    while i < ArbiterMode::NAMES.len() {
        all[i + 1] = ArbiterMode::NAMES[i];
        i += 1;
    }
    all
};

/// The plain test loop's configuration name.
pub const LOOP: &str = "loop";

/// Model calls the loop may make on a task and run that no pipeline configuration ran
/// beside it (`--configs loop` alone): the three tries of the usual test loop.
pub const LOOP_CALLS_ALONE: usize = 3;

/// Lines of a failing check's output kept to say why it failed.
const CHECK_TAIL_LINES: usize = 5;

/// The model calls of one run of an arm, counted as the ledger counts them: every call asked
/// of a model, failed ones included.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Calls {
    /// Calls made.
    pub count: usize,
    /// The models called, in the order they were first called.
    pub models: Vec<String>,
}

impl Calls {
    /// The calls of `records` (a client's own, or the ledger lines of one run).
    pub fn of<'a>(records: impl IntoIterator<Item = &'a CallRecord>) -> Calls {
        let mut calls = Calls::default();
        for r in records {
            calls.count += 1;
            if !calls.models.contains(&r.model) {
                calls.models.push(r.model.clone());
            }
        }
        calls
    }

    /// The calls the ledger's `records` hold for run `run` (a pipeline run records each of
    /// its calls under its id, whatever role or model served it).
    pub fn of_run(records: &[CallRecord], run: &str) -> Calls {
        Calls::of(records.iter().filter(|r| r.run.as_deref() == Some(run)))
    }
}

/// How many model calls the loop may make on one task and run: as many as the pipeline
/// runs beside it made (the most of them, when several configurations ran), so the loop
/// never has fewer calls than the pipeline it is measured against; [`LOOP_CALLS_ALONE`]
/// when none ran; at least one.
pub fn loop_budget(pipeline_calls: &[usize]) -> usize {
    pipeline_calls
        .iter()
        .copied()
        .max()
        .map_or(LOOP_CALLS_ALONE, |n| n.max(1))
}

crate::names::named! {
    /// How the plain loop's run ended: whether its verify command passed in the end.
    pub enum LoopStatus: "a loop status", written snake_case {
        /// The command passed.
        Passed,
        /// It did not pass within the loop's calls.
        Failed,
    }
}

/// How an arm's run ended: a pipeline run's status, or the loop's; written as the one
/// name each has (`approved`, `halted`, … or `passed`, `failed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ArmStatus {
    /// A pipeline arm: the run's status.
    Run(RunStatus),
    /// The plain loop.
    Loop(LoopStatus),
}

impl std::fmt::Display for ArmStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArmStatus::Run(s) => s.fmt(f),
            ArmStatus::Loop(s) => s.fmt(f),
        }
    }
}

/// What one run of an arm says of itself, before the facts judge its result.
#[derive(Debug, Clone)]
pub struct Arm {
    /// The task's id.
    pub task: String,
    /// Which repetition (from 1): the loop's run `n` is measured against the pipeline's run
    /// `n` of the same task.
    pub run: u32,
    /// `loop`, or the arbiter mode.
    pub config: String,
    /// How it ended.
    pub status: ArmStatus,
    /// It claims success: APPROVE or FLAG, or the loop's passing command.
    pub claimed: bool,
    /// The branch with its result, when it made one.
    pub branch: Option<String>,
    /// The model that wrote the code (the loop's; the pipeline's implement stage's).
    pub builder: String,
    /// Its model calls.
    pub calls: Calls,
    /// The calls it was allowed (the loop's budget; the pipeline has none).
    pub call_budget: Option<usize>,
    /// USD spent.
    pub cost_usd: f64,
    /// Wall time of the arm itself in seconds (judging its result is not counted).
    pub seconds: f64,
}

/// What the facts say of an arm's result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Files it changes against the base (the task's own `.triad/` files left out).
    pub changed: usize,
    /// The task's verify command passes on it.
    pub verify_passes: bool,
    /// The user's check passes on it (`None`: no check was given, or there is no result).
    pub check_passes: Option<bool>,
    /// The end of a failing check's output.
    pub check_tail: String,
}

/// Judges the result on `branch` against `base` by facts, each command run in the box
/// (`policy`) on its own scratch copy of the branch, as the verify command runs in a run:
/// the files it changes, whether the task's `verify` command passes, and whether the user's
/// `check` passes (given the verify command's timeout).
pub fn judge_branch(
    repo: &Repository,
    base: git2::Oid,
    branch: &str,
    verify: (&str, Duration),
    check: Option<&str>,
    policy: &crate::sandbox::Policy,
) -> Result<Judged, GitError> {
    use crate::git::Context as _;
    let tip = repo
        .revparse_single(branch)
        .and_then(|o| o.peel_to_commit())
        .ctx("reading a compared run's branch")?;
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .ctx("reading the base")?;
    let tree = tip.tree().ctx("reading a compared run's tree")?;
    let changed = crate::git::diff_trees(repo, Some(&base_tree), &tree)
        .ctx("diffing a compared run")?
        .iter()
        .filter(|f| !f.path.starts_with(".triad/"))
        .count();
    let (_, outcome) = run_boxed(repo, &tree, verify.0, verify.1, 5, policy);
    let mut judged = Judged {
        changed,
        verify_passes: outcome.exit_code == Some(0),
        ..Judged::default()
    };
    if let Some(check) = check {
        let (_, outcome) = run_boxed(repo, &tree, check, verify.1, CHECK_TAIL_LINES, policy);
        let passes = outcome.exit_code == Some(0);
        judged.check_passes = Some(passes);
        if !passes {
            judged.check_tail = crate::privacy::mask_key_shaped(&outcome.tail).into_owned();
        }
    }
    Ok(judged)
}

/// One run of one configuration on one task, judged.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRun {
    /// The task's id.
    pub task: String,
    /// Which repetition (from 1).
    pub run: u32,
    /// `loop`, or the arbiter mode.
    pub config: String,
    /// How the run ended.
    pub status: ArmStatus,
    /// The branch with its result, when it made one.
    pub branch: Option<String>,
    /// The model that wrote the code.
    pub builder: String,
    /// Every model it called, in the order first called.
    pub models: Vec<String>,
    /// Model calls made.
    pub calls: usize,
    /// Model calls allowed: the loop's budget (`None` for the pipeline).
    pub call_budget: Option<usize>,
    /// Files its result changes.
    pub changed: usize,
    /// The verify command passes on its result.
    pub verify_passes: bool,
    /// The user's check passes on its result (`None`: no check given, or no result).
    pub check_passes: Option<bool>,
    /// It claims success (APPROVE/FLAG, or the loop's passing command).
    pub claimed: bool,
    /// It fixed the task: it claims success, its change is not empty, and the verify
    /// command and the check (when given) pass on it.
    pub fixed: bool,
    /// It claimed success on a result the facts fail: an empty change, a failing verify
    /// command, or a failing check (a pipeline must never do this).
    pub false_success: bool,
    /// USD spent.
    #[serde(serialize_with = "rounded_usd")]
    pub cost_usd: f64,
    /// Wall time of the arm in seconds.
    pub seconds: f64,
}

impl CompareRun {
    /// Judges `arm` by `facts`: its claim stands only where they agree.
    pub fn judged(arm: Arm, facts: &Judged) -> CompareRun {
        let right = facts.changed > 0 && facts.verify_passes && facts.check_passes != Some(false);
        CompareRun {
            task: arm.task,
            run: arm.run,
            config: arm.config,
            status: arm.status,
            branch: arm.branch,
            builder: arm.builder,
            models: arm.calls.models,
            calls: arm.calls.count,
            call_budget: arm.call_budget,
            changed: facts.changed,
            verify_passes: facts.verify_passes,
            check_passes: facts.check_passes,
            claimed: arm.claimed,
            fixed: arm.claimed && right,
            false_success: arm.claimed && !right,
            cost_usd: arm.cost_usd,
            seconds: arm.seconds,
        }
    }
}

/// One line of the comparison: a configuration over its runs of one task, or of every task.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// The task (`None`: every task).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The configuration.
    pub config: String,
    /// Every model its runs called, in the order first called.
    pub models: Vec<String>,
    /// Runs.
    pub runs: usize,
    /// Runs that fixed the task (see [`CompareRun::fixed`]).
    pub fixed: usize,
    /// Runs that claimed success.
    pub claimed: usize,
    /// Runs that claimed success on a result the facts fail.
    pub false_success: usize,
    /// Model calls of all its runs.
    pub calls: usize,
    /// Model calls its runs were allowed, when they had a budget (the loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_budget: Option<usize>,
    /// USD of all its runs.
    #[serde(serialize_with = "rounded_usd")]
    pub cost_usd: f64,
    /// Wall seconds of all its runs.
    pub wall_seconds: f64,
    /// A pipeline configuration's wall time over the plain loop's on the same runs, when
    /// both ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_vs_loop: Option<f64>,
}

impl CompareRow {
    /// The row of `runs` (all of one configuration), for `task` (`None`: every task).
    fn of(task: Option<&str>, config: &str, runs: &[&CompareRun]) -> CompareRow {
        let mut models: Vec<String> = Vec::new();
        for m in runs.iter().flat_map(|r| &r.models) {
            if !models.contains(m) {
                models.push(m.clone());
            }
        }
        let count = |f: fn(&CompareRun) -> bool| runs.iter().filter(|r| f(r)).count();
        CompareRow {
            task: task.map(str::to_string),
            config: config.to_string(),
            models,
            runs: runs.len(),
            fixed: count(|r| r.fixed),
            claimed: count(|r| r.claimed),
            false_success: count(|r| r.false_success),
            calls: runs.iter().map(|r| r.calls).sum(),
            call_budget: runs
                .iter()
                .filter_map(|r| r.call_budget)
                .reduce(|a, b| a + b),
            cost_usd: runs.iter().map(|r| r.cost_usd).sum(),
            wall_seconds: runs.iter().map(|r| r.seconds).sum(),
            wall_vs_loop: None,
        }
    }
}

/// The rows of `runs` for `task` (`None`: every task), in the order of [`CONFIGS`], each
/// pipeline row with its wall time over the loop's when the loop ran.
fn rows_of(runs: &[CompareRun], task: Option<&str>) -> Vec<CompareRow> {
    let mut rows: Vec<CompareRow> = CONFIGS
        .iter()
        .filter_map(|c| {
            let of: Vec<&CompareRun> = runs
                .iter()
                .filter(|r| r.config == *c && task.is_none_or(|t| r.task == t))
                .collect();
            (!of.is_empty()).then(|| CompareRow::of(task, c, &of))
        })
        .collect();
    let loop_wall = rows
        .iter()
        .find(|r| r.config == LOOP)
        .map(|r| r.wall_seconds);
    for row in rows.iter_mut().filter(|r| r.config != LOOP) {
        row.wall_vs_loop = loop_wall.filter(|w| *w > 0.0).map(|w| row.wall_seconds / w);
    }
    rows
}

/// One row per task and configuration, tasks in the order first run.
pub fn task_rows(runs: &[CompareRun]) -> Vec<CompareRow> {
    let mut tasks: Vec<&str> = Vec::new();
    for r in runs {
        if !tasks.contains(&r.task.as_str()) {
            tasks.push(&r.task);
        }
    }
    tasks
        .into_iter()
        .flat_map(|t| rows_of(runs, Some(t)))
        .collect()
}

/// One row per configuration over every task.
pub fn totals(runs: &[CompareRun]) -> Vec<CompareRow> {
    rows_of(runs, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(config: &str, claimed: bool, calls: usize, seconds: f64) -> Arm {
        Arm {
            task: "t".into(),
            run: 1,
            config: config.into(),
            status: ArmStatus::Run(if claimed {
                RunStatus::Approved
            } else {
                RunStatus::Failed
            }),
            claimed,
            branch: None,
            builder: "m".into(),
            calls: Calls {
                count: calls,
                models: vec!["m".into()],
            },
            call_budget: None,
            cost_usd: 0.0,
            seconds,
        }
    }

    fn facts(changed: usize, verify: bool, check: Option<bool>) -> Judged {
        Judged {
            changed,
            verify_passes: verify,
            check_passes: check,
            check_tail: String::new(),
        }
    }

    #[test]
    fn a_claim_is_a_fix_only_where_every_fact_agrees() {
        let ok = CompareRun::judged(arm("bookend", true, 5, 3.0), &facts(2, true, Some(true)));
        assert!(ok.fixed && !ok.false_success);
        let no_check = CompareRun::judged(arm("bookend", true, 5, 3.0), &facts(2, true, None));
        assert!(no_check.fixed);
        let empty = CompareRun::judged(arm("bookend", true, 5, 3.0), &facts(0, true, None));
        assert!(!empty.fixed && empty.false_success);
        let hidden = CompareRun::judged(arm("loop", true, 1, 1.0), &facts(1, true, Some(false)));
        assert!(!hidden.fixed && hidden.false_success, "{hidden:?}");
        let unclaimed = CompareRun::judged(arm("loop", false, 3, 1.0), &facts(1, true, Some(true)));
        assert!(!unclaimed.fixed && !unclaimed.false_success && !unclaimed.claimed);
    }

    #[test]
    fn rows_count_per_task_and_configuration_with_the_pipeline_wall_over_the_loops() {
        let runs = [
            CompareRun::judged(arm("bookend", true, 6, 30.0), &facts(1, true, Some(true))),
            CompareRun::judged(arm("loop", true, 2, 10.0), &facts(1, true, Some(false))),
            CompareRun::judged(arm("loop", false, 6, 20.0), &facts(1, false, Some(false))),
        ];
        let rows = task_rows(&runs);
        assert_eq!(rows[0].config, "loop");
        assert_eq!(
            (
                rows[0].runs,
                rows[0].fixed,
                rows[0].claimed,
                rows[0].false_success
            ),
            (2, 0, 1, 1)
        );
        assert_eq!((rows[0].calls, rows[0].wall_vs_loop), (8, None));
        assert_eq!((rows[1].fixed, rows[1].calls), (1, 6));
        assert_eq!(rows[1].wall_vs_loop, Some(1.0));
        assert_eq!(totals(&runs)[1].task, None);
    }

    #[test]
    fn the_loop_gets_as_many_calls_as_the_pipeline_made() {
        assert_eq!(loop_budget(&[7]), 7);
        assert_eq!(loop_budget(&[4, 9]), 9);
        assert_eq!(loop_budget(&[0]), 1);
        assert_eq!(loop_budget(&[]), LOOP_CALLS_ALONE);
    }

    #[test]
    fn calls_are_counted_per_run_with_their_models() {
        let call = |model: &str, run: Option<&str>| CallRecord {
            run: run.map(str::to_string),
            ..CallRecord::of("implementer", model, "p", model)
        };
        let ledger = [
            call("a", Some("r1")),
            call("b", Some("r1")),
            call("a", Some("r2")),
            call("a", Some("r1")),
            call("a", None),
        ];
        let calls = Calls::of_run(&ledger, "r1");
        assert_eq!(calls.count, 3);
        assert_eq!(calls.models, ["a", "b"]);
    }
}
