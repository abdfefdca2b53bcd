//! What the ledger says was spent: totals per day, month, model, role and run, each period
//! held against its cap; and the mean call of a model in a role, which `run --estimate`
//! builds on.

use std::collections::BTreeMap;

use serde::Serialize;

use super::budget::CallRecord;
use crate::clock::{date_of, day_start_unix, month_start_unix, DAY_SECS};
use crate::config::BudgetConfig;

/// Share of a cap from which `git triad usage` warns.
pub const WARN_SHARE: f64 = 0.8;

/// Serializes a sum of dollars rounded to a billionth of a dollar: a float sum of prices
/// such as 0.0126 otherwise prints as 0.012599999999999998, a figure no price or cap has,
/// which a script comparing spend to a cap would read as it stands.
pub fn rounded_usd<S: serde::Serializer>(usd: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((usd * 1e9).round() / 1e9)
}

/// Calls and what they cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Calls made (failed ones included: they may have cost tokens).
    pub calls: u64,
    /// Calls that failed.
    pub failed: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// USD.
    #[serde(serialize_with = "rounded_usd")]
    pub cost_usd: f64,
}

impl Totals {
    fn add(&mut self, r: &CallRecord) {
        self.calls += 1;
        self.failed += u64::from(r.outcome != "ok");
        self.input_tokens += r.input_tokens;
        self.output_tokens += r.output_tokens;
        self.cost_usd += r.cost_usd;
    }
}

/// A period's spending against its cap.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CapUse {
    /// The config key of the cap (`budget.daily_usd`).
    pub key: &'static str,
    /// The period (`2026-01-05`, `2026-01`).
    pub period: String,
    /// Spent in the period.
    #[serde(serialize_with = "rounded_usd")]
    pub spent_usd: f64,
    /// The cap, if one is set.
    pub cap_usd: Option<f64>,
}

impl CapUse {
    /// Spent as a share of the cap.
    pub fn share(&self) -> Option<f64> {
        self.cap_usd.map(|c| self.spent_usd / c)
    }

    /// Whether the period is at [`WARN_SHARE`] of its cap or beyond.
    pub fn warn(&self) -> bool {
        self.share().is_some_and(|s| s >= WARN_SHARE)
    }
}

/// The ledger summed up.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageReport {
    /// Today and this month against `budget.daily_usd` and `budget.monthly_usd`.
    pub caps: Vec<CapUse>,
    /// Per UTC day, within the window.
    pub by_day: BTreeMap<String, Totals>,
    /// Per UTC month, the whole ledger.
    pub by_month: BTreeMap<String, Totals>,
    /// Per model, within the window.
    pub by_model: BTreeMap<String, Totals>,
    /// Per role, within the window.
    pub by_role: BTreeMap<String, Totals>,
    /// Per run id (`""`: calls outside a run), within the window.
    pub by_run: BTreeMap<String, Totals>,
    /// Days the window covers (today included).
    pub days: u32,
    /// Every call in the ledger.
    pub all: Totals,
}

/// Sums `records` as of `now` (unix seconds): the per-model, role, run and day tables cover
/// the last `days` days; months and the caps read the whole ledger.
pub fn usage(records: &[CallRecord], budget: &BudgetConfig, now: u64, days: u32) -> UsageReport {
    let day_start = day_start_unix(now);
    let window_start = day_start.saturating_sub(DAY_SECS * u64::from(days.saturating_sub(1)));
    let month_start = month_start_unix(now);
    let mut r = UsageReport {
        days,
        ..UsageReport::default()
    };
    let (mut today, mut month) = (0.0, 0.0);
    for c in records {
        r.all.add(c);
        let date = date_of(c.ts);
        r.by_month.entry(date[..7].to_string()).or_default().add(c);
        if c.ts >= day_start {
            today += c.cost_usd;
        }
        if c.ts >= month_start {
            month += c.cost_usd;
        }
        if c.ts < window_start {
            continue;
        }
        r.by_day.entry(date).or_default().add(c);
        r.by_model.entry(c.model.clone()).or_default().add(c);
        r.by_role.entry(c.role.clone()).or_default().add(c);
        r.by_run
            .entry(c.run.clone().unwrap_or_default())
            .or_default()
            .add(c);
    }
    let cap = |c: Option<f64>| c.filter(|v| *v > 0.0);
    let now_date = date_of(now);
    r.caps = vec![
        CapUse {
            key: "budget.daily_usd",
            period: now_date.clone(),
            spent_usd: today,
            cap_usd: cap(budget.daily_usd),
        },
        CapUse {
            key: "budget.monthly_usd",
            period: now_date[..7].to_string(),
            spent_usd: month,
            cap_usd: cap(budget.monthly_usd),
        },
    ];
    r
}

/// The mean successful call of `model` in `role` in the ledger: (input tokens, output
/// tokens, how many calls), or `None` without one.
pub fn mean_call(records: &[CallRecord], model: &str, role: &str) -> Option<(f64, f64, usize)> {
    let calls: Vec<&CallRecord> = records
        .iter()
        .filter(|r| r.model == model && r.role == role && r.outcome == "ok")
        .collect();
    if calls.is_empty() {
        return None;
    }
    let n = calls.len() as f64;
    let sum_in: u64 = calls.iter().map(|r| r.input_tokens).sum();
    let sum_out: u64 = calls.iter().map(|r| r.output_tokens).sum();
    Some((sum_in as f64 / n, sum_out as f64 / n, calls.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ts: u64, model: &str, role: &str, usd: f64, run: Option<&str>) -> CallRecord {
        CallRecord {
            ts,
            input_tokens: 100,
            output_tokens: 10,
            cost_usd: usd,
            latency_ms: 5,
            run: run.map(str::to_string),
            ..CallRecord::of(role, model, "p", model)
        }
    }

    #[test]
    fn periods_windows_and_caps() {
        // 2026-11-22T10:00:00Z
        let now = 1_795_305_600 + 36_000;
        let records = vec![
            call(now - 40 * 86_400, "a", "architect", 1.0, Some("r0")),
            call(now - 86_400, "a", "arbiter", 0.5, Some("r1")),
            call(now - 60, "b", "arbiter", 3.0, None),
            call(now - 30, "b", "implementer", 1.5, Some("r2")),
        ];
        let budget = BudgetConfig {
            run_usd: None,
            daily_usd: Some(5.0),
            monthly_usd: None,
        };
        let r = usage(&records, &budget, now, 7);
        assert_eq!(r.all.calls, 4);
        assert_eq!(r.by_month.len(), 2, "{:?}", r.by_month);
        assert_eq!(
            r.by_day.len(),
            2,
            "the 40-day-old call is outside the window"
        );
        assert_eq!(r.by_run[""].calls, 1);
        assert_eq!(r.by_model["b"].cost_usd, 4.5);
        assert_eq!(r.caps[0].period, "2026-11-22");
        assert_eq!(r.caps[0].spent_usd, 4.5);
        assert!(r.caps[0].warn(), "4.5 of 5 is 90 %");
        assert_eq!(r.caps[1].spent_usd, 5.0);
        assert!(!r.caps[1].warn(), "no monthly cap, no warning");
        assert_eq!(mean_call(&records, "b", "arbiter"), Some((100.0, 10.0, 1)));
        assert_eq!(mean_call(&records, "b", "verifier"), None);
    }
}
