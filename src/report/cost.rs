//! Money for people: `git triad usage` (the ledger against the caps) and
//! `git triad run --estimate` (a run's expected cost in every arbiter mode).

use std::collections::BTreeMap;

use serde::Serialize;

use super::table::render_table;
use crate::config::ArbiterMode;
use crate::model::usage::{CapUse, Totals, UsageReport, WARN_SHARE};
use crate::pipeline::estimate::ModeEstimate;

/// What `git triad usage --json` prints: the sums and the warnings about the caps.
#[derive(Debug, serde::Serialize)]
pub struct UsageJson<'a> {
    /// The sums.
    #[serde(flatten)]
    pub usage: &'a crate::model::usage::UsageReport,
    /// The caps nearly used up, in sentences.
    pub warnings: Vec<String>,
}

/// A period against its cap: `$0.4000 of $50.00 budget.monthly_usd (0.8 %)`.
fn cap_line(c: &CapUse) -> String {
    match (c.cap_usd, c.share()) {
        (Some(cap), Some(share)) => format!(
            "${:.4} of ${cap:.4} {} ({:.1} %)",
            c.spent_usd,
            c.key,
            share * 100.0
        ),
        _ => format!("${:.4}; {} is not set", c.spent_usd, c.key),
    }
}

/// The warnings of a report: every period at 80 % of its cap or beyond.
pub fn usage_warnings(r: &UsageReport) -> Vec<String> {
    r.caps
        .iter()
        .filter(|c| c.warn())
        .map(|c| {
            format!(
                "{} has used {:.0} % of {} (${:.4} of ${:.4}); calls that would cross it are refused",
                c.period,
                c.share().unwrap_or(0.0) * 100.0,
                c.key,
                c.spent_usd,
                c.cap_usd.unwrap_or(0.0)
            )
        })
        .collect()
}

fn table(
    title: &str,
    first: &str,
    rows: &BTreeMap<String, Totals>,
    label: &dyn Fn(&str) -> String,
) -> String {
    let mut t = vec![[
        first.to_string(),
        "CALLS".into(),
        "FAILED".into(),
        "TOKENS IN".into(),
        "TOKENS OUT".into(),
        "COST".into(),
    ]];
    for (k, v) in rows {
        t.push([
            label(k),
            v.calls.to_string(),
            v.failed.to_string(),
            v.input_tokens.to_string(),
            v.output_tokens.to_string(),
            format!("${:.4}", v.cost_usd),
        ]);
    }
    format!("\n{title}\n{}", render_table(&t))
}

/// `git triad usage` for the terminal.
pub fn usage_text(r: &UsageReport, ledger: &str) -> String {
    if r.all.calls == 0 {
        return format!("no model call is recorded in {ledger} yet\n");
    }
    let mut s = format!(
        "ledger {ledger}: {} calls, ${:.4} in all\n",
        r.all.calls, r.all.cost_usd
    );
    for c in &r.caps {
        s.push_str(&format!("{} (UTC): {}\n", c.period, cap_line(c)));
    }
    for w in usage_warnings(r) {
        s.push_str(&format!("warning: {w}\n"));
    }
    let window = format!("last {} day(s)", r.days);
    let same = |k: &str| k.to_string();
    s.push_str(&table(
        &format!("by day ({window})"),
        "DAY",
        &r.by_day,
        &same,
    ));
    s.push_str(&table("by month", "MONTH", &r.by_month, &same));
    s.push_str(&table(
        &format!("by model ({window})"),
        "MODEL",
        &r.by_model,
        &same,
    ));
    s.push_str(&table(
        &format!("by role ({window})"),
        "ROLE",
        &r.by_role,
        &same,
    ));
    s.push_str(&table(
        &format!("by run ({window})"),
        "RUN",
        &r.by_run,
        &|k| {
            if k.is_empty() {
                "(no run)".to_string()
            } else {
                k.to_string()
            }
        },
    ));
    s.push_str(&format!(
        "\n(no run): reviews, benches and checks. Warnings start at {:.0} % of a cap.\n",
        WARN_SHARE * 100.0
    ));
    s
}

/// What `git triad run --estimate` reports: the same value printed as JSON (`--json`) or,
/// through [`Estimate::text`], as tables.
#[derive(Debug, Serialize)]
pub struct Estimate<'a> {
    /// The task estimated.
    pub task: &'a str,
    /// The arbiter mode the run would use.
    #[serde(rename = "mode")]
    pub chosen: ArbiterMode,
    /// The run's cap, if it has one.
    #[serde(rename = "budget_usd")]
    pub run_cap: Option<f64>,
    /// Every mode's calls and cost.
    pub modes: &'a [ModeEstimate],
}

impl Estimate<'_> {
    /// For the terminal: each call's basis, then one line per mode.
    pub fn text(&self) -> String {
        let &Estimate {
            task,
            chosen,
            run_cap,
            modes,
        } = self;
        let mut s = format!("estimate for task `{task}` (no model was called)\n\n");
        // The full mode holds every call any mode makes.
        let all = modes.iter().max_by_key(|m| m.calls.len());
        let mut t = vec![[
            "CALL".to_string(),
            "MODEL".into(),
            "TOKENS IN".into(),
            "TOKENS OUT".into(),
            "COST".into(),
            "FROM".into(),
        ]];
        for c in all.map(|m| m.calls.as_slice()).unwrap_or_default() {
            t.push(match (&c.basis, c.cost_usd) {
                (Some(b), Some(cost)) => [
                    c.what.clone(),
                    c.model.clone(),
                    format!("{:.0}", b.input_tokens),
                    format!("{:.0}", b.output_tokens),
                    format!("${cost:.4}"),
                    b.source.clone(),
                ],
                _ => [
                    c.what.clone(),
                    c.model.clone(),
                    "?".into(),
                    "?".into(),
                    "?".into(),
                    format!("not measured: no ledger call, no bench as {}", c.role),
                ],
            });
        }
        s.push_str(&render_table(&t));
        let mut t = vec![[
            "MODE".to_string(),
            "CALLS".into(),
            "TOKENS IN".into(),
            "TOKENS OUT".into(),
            "COST".into(),
        ]];
        for m in modes {
            let (i, o, usd) = m.totals();
            let open = m.unmeasured();
            let at_least = if open > 0 { ">= " } else { "" };
            t.push([
                format!(
                    "{}{}",
                    m.mode.as_str(),
                    if m.mode == chosen { " (this run)" } else { "" }
                ),
                m.calls.len().to_string(),
                format!("{at_least}{i:.0}"),
                format!("{at_least}{o:.0}"),
                if open > 0 {
                    format!(">= ${usd:.4} ({open} call(s) not measured)")
                } else {
                    format!("${usd:.4}")
                },
            ]);
        }
        s.push('\n');
        s.push_str(&render_table(&t));
        s.push_str(&format!(
            "\none attempt per stage; each REJECT repeats a stage and its review. {}\n",
            match run_cap {
                Some(cap) => format!("The run's cap is ${cap:.2}."),
                None => "The run has no cap.".to_string(),
            }
        ));
        s
    }
}
