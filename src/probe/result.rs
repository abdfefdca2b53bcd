//! What a probe showed, as the record keeps it: its outcome, the call and values that
//! showed it, and what the same probe showed at the base; and the lines a change touched,
//! which decide whether a probe is about the change at all.

use serde::{Deserialize, Serialize};

crate::names::named! {
    /// What running a probe showed, by the name notes and `log` show.
    pub enum ProbeOutcome: "a probe outcome", written snake_case {
        /// The probe fails against the reviewed code: the claimed defect is real.
        Confirmed,
        /// The probe passes: the claimed defect does not happen.
        Refuted,
        /// The probe itself does not run, so it shows nothing either way.
        Broken,
        /// The probe was not run (see the result's detail for why).
        Unprobed,
        /// The probe fails, but not on anything the change did: recorded, never counted.
        Irrelevant,
    }
}

/// What one probe showed, as the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// The outcome.
    pub outcome: ProbeOutcome,
    /// One line on why: the failing comparison, the exception, the compile error, or why
    /// the probe was not run.
    pub detail: String,
    /// The call that failed (`mean([])`), when the probe showed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call: Option<String>,
    /// What the probe expected of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// What it returned or raised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// What the same probe showed on the base tree, when it failed on the reviewed one and
    /// the base has the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<BaseResult>,
}

/// What a probe showed on the base of the reviewed change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseResult {
    /// Its outcome there.
    pub outcome: ProbeOutcome,
    /// What the call returned or raised there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

impl ProbeResult {
    /// Whether the probe failed on the base just as on the reviewed tree (the same call,
    /// the same value or error): the change did not alter what it shows.
    pub fn same_at_base(&self) -> bool {
        self.outcome == ProbeOutcome::Confirmed
            && self
                .base
                .as_ref()
                .is_some_and(|b| b.outcome == ProbeOutcome::Confirmed && b.actual == self.actual)
    }
}

/// The lines a change added or modified, per file (new-side line numbers): a probe that
/// runs none of them is not about the change.
pub type ChangedLines = std::collections::BTreeMap<String, std::collections::BTreeSet<u32>>;

impl ProbeResult {
    /// A probe that was not run, and why.
    pub fn unprobed(why: impl Into<String>) -> Self {
        ProbeResult::simple(ProbeOutcome::Unprobed, why)
    }

    /// A probe that does not run, and why.
    pub fn broken(why: impl Into<String>) -> Self {
        ProbeResult::simple(ProbeOutcome::Broken, why)
    }

    /// The same result with another outcome (for tests of what outcomes decide).
    #[cfg(test)]
    pub(crate) fn with(self, outcome: ProbeOutcome) -> Self {
        ProbeResult { outcome, ..self }
    }

    fn simple(outcome: ProbeOutcome, detail: impl Into<String>) -> Self {
        ProbeResult {
            outcome,
            detail: detail.into(),
            call: None,
            expected: None,
            actual: None,
            base: None,
        }
    }

    /// The counterexample as one line: `call: expected E, got A` (the detail when the
    /// probe showed no values).
    pub fn counterexample(&self) -> String {
        match (&self.call, &self.expected, &self.actual) {
            (Some(c), Some(e), Some(a)) => format!("{c}: expected {e}, got {a}"),
            (Some(c), None, Some(a)) => format!("{c}: {a}"),
            _ => self.detail.clone(),
        }
    }
}
