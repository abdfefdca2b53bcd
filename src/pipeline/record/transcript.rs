//! One model call of a run as its record keeps it, `transcript/NNN-<stage>-<role>.json`: the
//! step it served, the exchange itself, and what the step was shown besides (what its prompt
//! left out, the findings and facts a review weighed, the probes it ran). Every call of a run
//! is kept as this one type, written by [`super::Recorder::transcript`] alone.

use serde::{Deserialize, Serialize};

use super::DebatePhase;
use crate::arbiter::schema::IssueProbe;
use crate::arbiter::service::Reviewed;
use crate::code::Finding;
use crate::model::Exchange;
use crate::pipeline::fit::LeftOut;
use crate::pipeline::reconcile::Facts;

/// One model call of a run, kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The step it served: a stage, or `consensus`, `parallel`, `tournament`, `debate`,
    /// `reconcile`.
    pub stage: String,
    /// The role it served (`implementer`, `arbiter`, `voter`, `candidate`, `judge`, ...).
    #[serde(default)]
    pub role: String,
    /// The stage's attempt, 1-based (a stage's own call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The debate's phase (a debater's call).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<DebatePhase>,
    /// The tournament candidate it judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// The call (`None` for a review in parts: see `parts`).
    #[serde(flatten)]
    pub call: Option<Exchange>,
    /// A review in parts: one call a part, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Exchange>,
    /// What the stage prompt left out to fit the model's window.
    #[serde(default, skip_serializing_if = "LeftOut::is_empty")]
    pub left_out: LeftOut,
    /// The deterministic findings a review was shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<Finding>>,
    /// The probes a review's issues carried, with what running each showed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<IssueProbe>,
    /// The facts a reconciliation weighed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<Box<Facts>>,
}

impl Transcript {
    /// The `call` `stage`'s `role` made.
    pub fn new(stage: &str, role: &str, call: Exchange) -> Transcript {
        Transcript {
            call: Some(call),
            ..Transcript::empty(stage, role)
        }
    }

    /// A review's calls (one, or one a part) made for `stage`, with the probes its issues
    /// carried.
    pub fn review(stage: &str, reviewed: &Reviewed) -> Transcript {
        let mut t = Transcript::empty(stage, "arbiter");
        match reviewed.exchanges.as_slice() {
            [one] => t.call = Some(one.clone()),
            parts => t.parts = parts.to_vec(),
        }
        t.probes = reviewed
            .review
            .issues
            .iter()
            .filter_map(|i| i.probe.clone())
            .collect();
        t
    }

    fn empty(stage: &str, role: &str) -> Transcript {
        Transcript {
            stage: stage.to_string(),
            role: role.to_string(),
            attempt: None,
            phase: None,
            candidate: None,
            call: None,
            parts: Vec::new(),
            left_out: LeftOut::default(),
            findings: None,
            probes: Vec::new(),
            facts: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// A provider call as every transcript lists it.
    fn call() -> Value {
        json!({"ts": 1, "role": "implementer", "model": "m", "provider": "p",
            "requested_id": "m", "reported_id": "m", "model_mismatch": false,
            "input_tokens": 10, "output_tokens": 5, "cost_usd": 0.0, "latency_ms": 3,
            "attempts": 1, "outcome": "ok"})
    }

    /// Reads `old` (as an earlier build wrote it) and writes it again.
    fn again(old: &Value) -> (Transcript, Value) {
        let t: Transcript = serde_json::from_value(old.clone()).unwrap();
        let written = serde_json::to_value(&t).unwrap();
        (t, written)
    }

    #[test]
    fn a_stage_call_reads_as_written_before_and_keeps_its_keys() {
        let old = json!({"stage": "implement", "role": "implementer", "attempt": 2,
            "model": "m", "request": {"system": "sys", "user": "do it"},
            "left_out": {}, "response": "the answer", "calls": [call()]});
        let (t, written) = again(&old);
        assert_eq!(t.attempt, Some(2));
        let c = t.call.as_ref().unwrap();
        assert_eq!(c.request.system.as_deref(), Some("sys"));
        assert_eq!(c.calls[0].input_tokens, 10);
        for key in [
            "stage", "role", "attempt", "model", "request", "response", "calls",
        ] {
            assert_eq!(written[key], old[key], "{key}");
        }
    }

    #[test]
    fn a_review_keeps_its_findings_probes_and_parts() {
        let old = json!({"model": "a", "request": {"user": "review"}, "response": {"verdict": "FLAG"},
            "calls": [], "probes": [{"code": "assert f() == 1", "outcome": "confirmed",
            "detail": "f() returned 2"}], "stage": "verify", "role": "arbiter",
            "findings": []});
        let (t, written) = again(&old);
        assert_eq!(t.probes[0].result.detail, "f() returned 2");
        assert_eq!(written["probes"], old["probes"]);
        assert_eq!(written["findings"], json!([]));
        assert_eq!(written["response"]["verdict"], "FLAG");
        // A review in parts has no call of its own: one a part.
        let parts = json!({"parts": [{"model": "a", "request": {"user": "1"}, "response": {},
            "calls": [call()]}], "stage": "verify", "role": "arbiter", "findings": []});
        let (t, written) = again(&parts);
        assert!(t.call.is_none(), "{t:?}");
        assert_eq!(t.parts.len(), 1);
        assert_eq!(written["parts"], parts["parts"]);
        assert!(written.get("calls").is_none(), "{written}");
    }

    #[test]
    fn a_reconciliation_keeps_its_facts_and_a_debate_its_phase() {
        let old = json!({"model": "a", "request": {"user": "u"}, "response": {}, "calls": [],
            "stage": "reconcile", "facts": {"changed_files": ["a.py"], "missing_files": [],
            "unlisted_changes": [], "listed_unchanged": [], "tests_found": [],
            "missing_tests": [], "unmapped_requirements": [], "omitted_requirements": [],
            "summary_present": true}});
        let (t, _) = again(&old);
        assert_eq!(t.facts.unwrap().changed_files, ["a.py"]);
        let debate = json!({"stage": "debate", "role": "debater", "phase": "rebuttals",
            "model": "a", "request": {"user": "u"}, "response": {}, "calls": []});
        let (t, written) = again(&debate);
        assert_eq!(t.phase, Some(DebatePhase::Rebuttals));
        assert_eq!(written["phase"], "rebuttals");
    }
}
