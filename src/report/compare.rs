//! `git triad bench --compare` for people (a table per task and configuration, then the
//! totals) and for machines (every run, the same rows, and the totals as JSON).

use serde::Serialize;

use super::render_table;
use crate::routing::compare::{task_rows, totals, CompareRow, CompareRun, LOOP};

/// What `bench --compare --format json` prints.
#[derive(Serialize)]
struct Comparison<'a> {
    /// The check every result was judged by, when the user gave one.
    check: Option<&'a str>,
    /// Every run, judged.
    runs: &'a [CompareRun],
    /// One row per task and configuration.
    tasks: Vec<CompareRow>,
    /// One row per configuration over every task.
    configurations: Vec<CompareRow>,
}

/// The comparison as one JSON document.
pub fn json(runs: &[CompareRun], check: Option<&str>) -> String {
    let comparison = Comparison {
        check,
        runs,
        tasks: task_rows(runs),
        configurations: totals(runs),
    };
    // Plain data with string keys: serializing it cannot fail.
    format!(
        "{}\n",
        serde_json::to_string(&comparison).unwrap_or_default()
    )
}

/// The comparison as a table: what `fixed` means, a row per task and configuration, the
/// totals when there is more than one task, and each pipeline's wall time over the loop's.
pub fn text(runs: &[CompareRun], check: Option<&str>) -> String {
    let by_task = task_rows(runs);
    let all = totals(runs);
    let several = by_task.iter().any(|r| r.task != by_task[0].task);
    let mut table = vec![[
        "TASK".to_string(),
        "CONFIGURATION".into(),
        "MODELS".into(),
        "FIXED".into(),
        "CLAIMED".into(),
        "FALSE SUCCESS".into(),
        "CALLS".into(),
        "WALL".into(),
        "$".into(),
    ]];
    let shown = by_task.iter().chain(all.iter().filter(|_| several));
    for r in shown {
        table.push([
            r.task.clone().unwrap_or_else(|| "(all)".into()),
            config_name(&r.config),
            r.models.join(", "),
            format!("{}/{}", r.fixed, r.runs),
            format!("{}/{}", r.claimed, r.runs),
            r.false_success.to_string(),
            match r.call_budget {
                Some(budget) => format!("{} of {budget}", r.calls),
                None => r.calls.to_string(),
            },
            format!("{:.0} s", r.wall_seconds),
            format!("{:.4}", r.cost_usd),
        ]);
    }
    let judged_by = match check {
        Some(c) => format!("the verify command and the check `{c}` pass"),
        None => "the verify command passes".to_string(),
    };
    let mut s = format!(
        "fixed = a claimed success on a non-empty change that {judged_by}; false success = a claimed success that is not\n"
    );
    if runs.iter().any(|r| r.config == LOOP) && all.len() > 1 {
        s.push_str("the plain loop may make as many model calls as the pipeline made on the same task and run\n");
    }
    s.push_str(&render_table(&table));
    for r in &all {
        if let Some(ratio) = r.wall_vs_loop {
            s.push_str(&format!(
                "wall time of the {}: {ratio:.2} × the plain loop's\n",
                config_name(&r.config)
            ));
        }
    }
    s
}

/// A configuration as the table names it.
fn config_name(config: &str) -> String {
    if config == LOOP {
        "plain test loop".to_string()
    } else {
        format!("pipeline, arbiter {config}")
    }
}
