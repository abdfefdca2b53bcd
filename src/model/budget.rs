//! Spending: worst-case estimates before a call, the run's cap, and the local ledger.

use std::io::Write;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::ModelConfig;

/// USD for a number of tokens at per-million prices.
pub fn cost_usd(model: &ModelConfig, input_tokens: u64, output_tokens: u64) -> f64 {
    let (price_in, price_out) = model.prices();
    (input_tokens as f64 * price_in + output_tokens as f64 * price_out) / 1_000_000.0
}

/// A worst-case token count for a prompt of `chars` characters.
///
/// Real tokenizers average about four characters a token for English and code; assuming
/// three keeps the estimate on the safe side.
pub fn worst_case_input_tokens(chars: usize) -> u64 {
    (chars as u64).div_ceil(3) + 16
}

/// The run's spending cap, plus daily and monthly caps fed from the ledger.
#[derive(Debug, Clone, Default)]
pub struct BudgetGuard {
    cap_usd: Option<f64>,
    spent_usd: f64,
    /// What the run (or session) spent before this process took it over: a resumed run's
    /// cap counts it, so resuming never resets what was spent.
    before_usd: f64,
    /// (label, cap, spent before this process started).
    periods: Vec<(&'static str, f64, f64)>,
}

/// A call that would cross a cap.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the next call could cost up to ${estimate:.4}, which would take the {scope} past its budget of ${cap:.2} (spent so far: ${spent:.4})")]
pub struct BudgetExceeded {
    /// Which cap: `run`, `day` or `month`.
    pub scope: &'static str,
    /// The cap.
    pub cap: f64,
    /// Spent before this call, in that scope.
    pub spent: f64,
    /// Worst-case cost of the refused call.
    pub estimate: f64,
}

impl BudgetGuard {
    /// A guard with a cap; `None`, zero or negative means uncapped.
    pub fn new(cap_usd: Option<f64>) -> Self {
        BudgetGuard {
            cap_usd: cap_usd.filter(|c| *c > 0.0),
            spent_usd: 0.0,
            before_usd: 0.0,
            periods: Vec::new(),
        }
    }

    /// Adds a period cap (`day`, `month`) with what the ledger says was already spent.
    pub fn with_period(mut self, label: &'static str, cap: Option<f64>, already: f64) -> Self {
        if let Some(cap) = cap.filter(|c| *c > 0.0) {
            self.periods.push((label, cap, already));
        }
        self
    }

    /// Refuses a call whose worst case would cross any cap.
    pub fn check(&self, estimate: f64) -> Result<(), BudgetExceeded> {
        if let Some(cap) = self.cap_usd {
            let spent = self.before_usd + self.spent_usd;
            if spent + estimate > cap {
                return Err(BudgetExceeded {
                    scope: "run",
                    cap,
                    spent,
                    estimate,
                });
            }
        }
        for (label, cap, already) in &self.periods {
            let spent = already + self.spent_usd;
            if spent + estimate > *cap {
                return Err(BudgetExceeded {
                    scope: label,
                    cap: *cap,
                    spent,
                    estimate,
                });
            }
        }
        Ok(())
    }

    /// Replaces the run cap, keeping what was spent.
    pub fn set_cap(&mut self, cap_usd: Option<f64>) {
        self.cap_usd = cap_usd.filter(|c| *c > 0.0);
    }

    /// Sets the whole cap of a run (or session) that had spent `before_usd` before this
    /// process: calls are refused once `before_usd` plus this process's spending would
    /// cross `cap_usd`. A cap already used up refuses every call; it never means "no cap".
    pub fn set_cap_after(&mut self, cap_usd: Option<f64>, before_usd: f64) {
        self.set_cap(cap_usd);
        self.before_usd = before_usd.max(0.0);
    }

    /// Adds what a call really cost.
    pub fn spend(&mut self, usd: f64) {
        self.spent_usd += usd;
    }

    /// Spent so far.
    pub fn spent(&self) -> f64 {
        self.spent_usd
    }

    /// The cap, if any.
    pub fn cap(&self) -> Option<f64> {
        self.cap_usd
    }
}

/// One accounted model call, as kept in records and the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// Unix time (seconds) when the call started.
    pub ts: u64,
    /// The role the call served.
    pub role: String,
    /// Registry name of the model.
    pub model: String,
    /// Provider name.
    pub provider: String,
    /// The id sent on the wire.
    pub requested_id: String,
    /// The id the server reported, if it reported one.
    pub reported_id: Option<String>,
    /// Whether the reported id differs from the requested one.
    pub model_mismatch: bool,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Bytes of prompt text sent, which calibrate the token estimate of the model's family
    /// against `input_tokens` ([`super::window::Calibration`]); 0 in lines written before
    /// they were kept.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prompt_bytes: u64,
    /// Cost in USD at the registry's prices.
    pub cost_usd: f64,
    /// Wall time of the successful exchange or of the last failed one, in milliseconds.
    pub latency_ms: u64,
    /// HTTP attempts made (1 = no retry).
    pub attempts: u32,
    /// `ok`, or why the call failed.
    pub outcome: String,
    /// The run the call served (`None`: a review, a bench, a check, or a ledger line written
    /// before runs were recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

impl CallRecord {
    /// A call of `role` to `model` of `provider` by wire id `requested_id`, with nothing
    /// counted yet: no answer, no tokens, no cost, one attempt, outcome `ok`, no run. Every
    /// record starts here and sets what its call measured.
    pub fn of(role: &str, model: &str, provider: &str, requested_id: &str) -> CallRecord {
        CallRecord {
            ts: 0,
            role: role.to_string(),
            model: model.to_string(),
            provider: provider.to_string(),
            requested_id: requested_id.to_string(),
            reported_id: None,
            model_mismatch: false,
            input_tokens: 0,
            output_tokens: 0,
            prompt_bytes: 0,
            cost_usd: 0.0,
            latency_ms: 0,
            attempts: 1,
            outcome: "ok".into(),
            run: None,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a set of calls cost: USD, tokens and model latency, summed from the client's call
/// records in this one place (a run, an attempt and a review all read it from here).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Cost in USD at the registry's prices.
    pub cost_usd: f64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Milliseconds the models took.
    pub latency_ms: u64,
}

impl Spend {
    /// The sum of `records`.
    pub fn of(records: &[CallRecord]) -> Spend {
        records.iter().fold(Spend::default(), |mut s, r| {
            s.cost_usd += r.cost_usd;
            s.input_tokens = s.input_tokens.saturating_add(r.input_tokens);
            s.output_tokens = s.output_tokens.saturating_add(r.output_tokens);
            s.latency_ms = s.latency_ms.saturating_add(r.latency_ms);
            s
        })
    }

    /// Input plus output tokens.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

impl std::ops::AddAssign for Spend {
    fn add_assign(&mut self, rhs: Spend) {
        self.cost_usd += rhs.cost_usd;
        self.input_tokens = self.input_tokens.saturating_add(rhs.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(rhs.output_tokens);
        self.latency_ms = self.latency_ms.saturating_add(rhs.latency_ms);
    }
}

/// The append-only local ledger (`$GIT_DIR/triad/ledger.jsonl`, never shared).
#[derive(Debug, Clone)]
pub struct Ledger {
    path: PathBuf,
}

impl Ledger {
    /// A ledger at `path` (created on first write).
    pub fn new(path: PathBuf) -> Self {
        Ledger { path }
    }

    /// Appends one record as a JSON line.
    pub fn append(&self, record: &CallRecord) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let line = serde_json::to_string(record).map_err(std::io::Error::other)?;
        // A failed call's outcome quotes the server, which may have echoed a key.
        let mut line = crate::redact::redact(&line).into_owned();
        line.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        // One write call per line so concurrent appenders do not interleave.
        f.write_all(line.as_bytes())
    }

    /// Every record, skipping lines that do not parse.
    pub fn read(&self) -> std::io::Result<Vec<CallRecord>> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => Ok(text
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }
}

/// USD that `records` spent since the start of the UTC day and month of `now_unix`:
/// `(day, month)`.
pub fn spent_in_period(records: &[CallRecord], now_unix: u64) -> (f64, f64) {
    let day_start = crate::clock::day_start_unix(now_unix);
    let month_start = crate::clock::month_start_unix(now_unix);
    let mut day = 0.0;
    let mut month = 0.0;
    for r in records {
        if r.ts >= month_start {
            month += r.cost_usd;
        }
        if r.ts >= day_start {
            day += r.cost_usd;
        }
    }
    (day, month)
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn period_caps_count_earlier_spending() {
        let g = BudgetGuard::new(None).with_period("day", Some(1.0), 0.9);
        assert_eq!(g.check(0.2).unwrap_err().scope, "day");
        assert!(g.check(0.05).is_ok());
    }

    #[test]
    fn a_cap_used_up_before_this_process_refuses_every_call() {
        let mut g = BudgetGuard::new(None);
        g.set_cap_after(Some(0.005), 0.005);
        let e = g.check(0.0001).unwrap_err();
        assert_eq!((e.cap, e.spent), (0.005, 0.005));
        g.set_cap_after(Some(1.005), 0.005);
        assert!(g.check(0.5).is_ok());
        g.spend(0.9);
        let e = g.check(0.2).unwrap_err();
        assert!((e.spent - 0.905).abs() < 1e-9, "{e}");
    }

    #[test]
    fn guard_refuses_a_call_that_could_cross_the_cap() {
        let mut g = BudgetGuard::new(Some(1.0));
        assert!(g.check(0.6).is_ok());
        g.spend(0.6);
        let e = g.check(0.5).unwrap_err();
        assert_eq!(e.spent, 0.6);
        assert!(
            BudgetGuard::new(Some(0.0)).check(1e9).is_ok(),
            "0 = uncapped"
        );
    }
}
