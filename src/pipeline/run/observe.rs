//! The arbiter's observation of a consensus (seed 000 §B9 row 4): it does not vote and
//! cannot block; it may FLAG the consensus itself, and the facts FLAG an approval that
//! contradicts the hard evidence whatever any model says.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::call::structured_call;
use super::facts::Shown;
use super::step::{Cx, Journal};
use crate::arbiter::Verdict;
use crate::config::Role;
use crate::consensus::prompt as text;
use crate::consensus::{Choice, Decision, Deliberation};
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::Observation;

/// What the arbiter answers when it observes a consensus.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ObserverAnswer {
    /// APPROVE (the consensus is sound) or FLAG (groupthink, or evidence ignored). Any other
    /// verdict is read as FLAG: the observer cannot block.
    pub verdict: Verdict,
    /// What it saw, concretely.
    pub reasoning: String,
}

/// The arbiter's observation, floored by the facts: an approval over critical findings
/// is groupthink whatever any model says.
pub(super) fn observe(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    d: &Deliberation,
    decision: &Decision,
    shown: &Shown,
) -> Observation {
    let contradicted_by: Vec<String> = if decision.choice == Choice::Approve {
        shown
            .evidence
            .iter()
            .filter(|e| e.starts_with("critical"))
            .cloned()
            .collect()
    } else {
        Vec::new()
    };
    let voters: Vec<&str> = d.voters.iter().map(|v| v.model.as_str()).collect();
    let observer = cx
        .env
        .config
        .role_models(Role::Arbiter, cx.env.profile.as_deref())
        .into_iter()
        .find(|m| {
            !voters
                .iter()
                .any(|v| v == m || same_wire_model(cx.env.config, v, m))
        });
    let asked = observer.as_ref().map(|model| {
        let user = format!(
            "ROLE: observer\nDECISION: {} ({}), {} round(s){}\n{}\nTHE DELIBERATION:\n{}\nHARD EVIDENCE:\n{}\nTHE CHANGE:\n{}",
            decision.choice,
            decision.by.as_str(),
            decision.rounds,
            if decision.justification.is_empty() {
                String::new()
            } else {
                format!("\nTIEBREAKER'S JUSTIFICATION: {}", decision.justification)
            },
            if d.degraded() { "Fewer agents voted than were called." } else { "" },
            text::transcript(d),
            if shown.evidence.is_empty() { "none".to_string() } else { shown.evidence.join("\n") },
            shown.diff
        );
        (
            model.clone(),
            structured_call::<ObserverAnswer>(cx, j, ("consensus", "arbiter"), Role::Arbiter, model, "observer", user),
        )
    });
    let (model, mut verdict, mut reasoning) = match asked {
        Some((m, Ok((a, _)))) => {
            let v = if a.verdict == Verdict::Approve {
                Verdict::Approve
            } else {
                Verdict::Flag
            };
            (m, v, a.reasoning)
        }
        Some((m, Err(e))) => (
            m,
            Verdict::Approve,
            format!(
                "the arbiter could not observe ({}); the facts alone were checked",
                crate::redact::Redactor::global().redact(&e.to_string())
            ),
        ),
        None => (
            String::new(),
            Verdict::Approve,
            "no arbiter outside the panel; the facts alone were checked".into(),
        ),
    };
    if !contradicted_by.is_empty() {
        verdict = Verdict::Flag;
        reasoning = format!(
            "groupthink by the facts: the agents approved over {} critical finding(s). {reasoning}",
            contradicted_by.len()
        );
    }
    Observation {
        model,
        verdict,
        reasoning: crate::bounded::clip(&reasoning, 2000),
        contradicted_by,
    }
}
