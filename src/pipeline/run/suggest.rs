//! Cross-domain suggestions in a run (seed 001 §6.1 and §6.2's last row, seed 000 §B11.4):
//! every accepted stage answer is a message in the run's record, its suggestions are decided
//! by the primary role-holder of their domain, a rejection may be escalated by its author
//! to a vote of all agents, and what was accepted must show in the output.

use super::call::structured_call;
use super::consensus::{deliberate, panel, Stepped, Target};
use super::facts::shown;
use super::step::{Cx, Flow, Journal, RunError};
use super::stop::model_failed;
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::consensus::suggestion::{
    EscalationAnswer, EvaluationAnswer, Suggestion, SuggestionStatus,
};
use crate::consensus::{Choice, Decision, Deliberation, Objection};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::record::RunState;
use crate::pipeline::stage::Stage;
use crate::task::outcome::StageMeta;

/// Records an accepted stage answer: its message to the next stage, and its suggestions
/// (numbered `S1`, `S2`… across the run).
pub(super) fn heard(
    j: &mut Journal<'_>,
    stage: Stage,
    model: &str,
    spend: Spend,
    meta: &StageMeta,
) {
    let kind = match stage {
        Stage::Architect => MessageKind::Proposal,
        Stage::Implement | Stage::Refactor => MessageKind::Implementation,
        Stage::Verify => MessageKind::Verification,
    };
    let to = Stage::ALL
        .get(stage.index() + 1)
        .map_or("orchestrator", |s| s.as_str());
    let mut msg = Message::new(stage.as_str(), to, kind, &meta.summary)
        .confidence(meta.confidence)
        .by(model, spend);
    msg.objections = meta
        .objections
        .iter()
        .filter_map(|o| match o {
            serde_json::Value::String(t) => Some(t.clone()),
            v => v
                .get("text")
                .or_else(|| v.get("reason"))
                .and_then(|t| t.as_str())
                .map(str::to_string),
        })
        .map(|text| Objection {
            text: crate::bounded::clip(&text, 500),
            evidence: String::new(),
        })
        .take(10)
        .collect();
    for v in meta.suggestions.iter().take(10) {
        let id = format!("S{}", j.state.suggestions().len() + 1);
        let Some(mut s) = Suggestion::from_meta(v, id, stage.as_str(), model) else {
            continue;
        };
        if stage == Stage::Verify {
            s.decide(
                "orchestrator",
                "",
                SuggestionStatus::Unrouted,
                "made at the last stage: no later stage could apply it",
            );
        } else if s.domain.is_some_and(|d| d.owner() == stage.role()) {
            s.decide(
                "orchestrator",
                "",
                SuggestionStatus::Unrouted,
                "it is in its author's own domain: not a cross-domain suggestion",
            );
        }
        msg.suggestions.push(s.clone());
        j.state.propose(s);
    }
    j.state.say(msg);
}

/// The suggestion that needs a decision next, if any.
pub(super) fn due(j: &Journal<'_>) -> Option<usize> {
    j.state.suggestions().iter().position(|s| match s.status {
        SuggestionStatus::Proposed | SuggestionStatus::Escalated => true,
        // Rejected by the role-holder; its author has not yet been asked.
        SuggestionStatus::Rejected => s.history.len() == 1,
        _ => false,
    })
}

/// One decision on suggestion `i`: by its domain's role-holder, then (after a rejection)
/// its author's choice to escalate, then the agents' vote.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>, i: usize) -> Result<Flow, RunError> {
    let s = j.state.suggestions()[i].clone();
    match s.status {
        SuggestionStatus::Proposed => evaluate(cx, j, i, &s),
        SuggestionStatus::Rejected => offer_escalation(cx, j, i, &s),
        _ => vote_on(cx, j, i, &s),
    }
}

/// The model holding `role` in this run, with its stage's role name.
fn holder(j: &Journal<'_>, role: Role) -> Option<String> {
    j.state
        .stages()
        .iter()
        .find(|st| st.stage.role() == role)
        .map(|st| {
            if st.commit.is_some() {
                st.last_model().to_string()
            } else {
                st.model().to_string()
            }
        })
}

fn evaluate(cx: &Cx<'_>, j: &mut Journal<'_>, i: usize, s: &Suggestion) -> Result<Flow, RunError> {
    let Some(domain) = s.domain else {
        return Ok(Flow::Continue);
    };
    let role = domain.owner();
    let Some(model) = holder(j, role) else {
        return Ok(Flow::Continue);
    };
    let shown = shown(cx, j)?;
    let user = format!(
        "ROLE: {role} (primary role-holder of the {} domain)\nThe {} stage suggests a change in your domain. Accept it (it must then be applied) or reject it, with a reason grounded in the task and the code.\n\n{}\nTASK:\n{}\n\nTHE RUN'S CHANGE SO FAR:\n{}\n",
        domain.as_str(),
        s.author,
        describe(s),
        shown.task,
        shown.diff
    );
    let (status, reason, spend) = match structured_call::<EvaluationAnswer>(
        cx,
        j,
        ("consensus", role.as_str()),
        role,
        &model,
        "suggestion",
        user,
    ) {
        Ok((a, spend)) if a.accept => (SuggestionStatus::Accepted, a.reason, spend),
        Ok((a, spend)) => (SuggestionStatus::Rejected, a.reason, spend),
        Err(e @ ModelError::Budget(_)) => return model_failed(cx, j, "suggestion", e),
        Err(e) => (
            SuggestionStatus::Unrouted,
            format!(
                "the {role} could not be asked: {}",
                crate::redact::Redactor::global().redact(&e.to_string())
            ),
            Spend::default(),
        ),
    };
    decided(cx, j, i, (role.as_str(), &model, spend), status, &reason)
}

fn offer_escalation(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    i: usize,
    s: &Suggestion,
) -> Result<Flow, RunError> {
    let role = Stage::ALL
        .iter()
        .find(|st| st.as_str() == s.author)
        .map_or(Role::Implementer, |st| st.role());
    let rejection = s.history.last().map_or("", |e| e.reason.as_str());
    let user = format!(
        "ROLE: {role} (author of suggestion {})\nYour suggestion was rejected by the holder of its domain: {rejection}\nYou may escalate it to a vote of all agents. Escalate only if the rejection is wrong on the evidence, and make your case.\n\n{}",
        s.id,
        describe(s)
    );
    let (status, reason, spend) = match structured_call::<EscalationAnswer>(
        cx,
        j,
        ("consensus", role.as_str()),
        role,
        &s.author_model,
        "suggestion",
        user,
    ) {
        Ok((a, spend)) if a.escalate => (SuggestionStatus::Escalated, a.argument, spend),
        Ok((a, spend)) => (
            SuggestionStatus::Rejected,
            format!("not escalated: {}", a.argument),
            spend,
        ),
        Err(e @ ModelError::Budget(_)) => return model_failed(cx, j, "suggestion", e),
        Err(e) => (
            SuggestionStatus::Rejected,
            format!(
                "the author could not be asked: {}",
                crate::redact::Redactor::global().redact(&e.to_string())
            ),
            Spend::default(),
        ),
    };
    let by = format!("{} (author)", s.author);
    decided(cx, j, i, (&by, &s.author_model, spend), status, &reason)
}

fn vote_on(cx: &Cx<'_>, j: &mut Journal<'_>, i: usize, s: &Suggestion) -> Result<Flow, RunError> {
    let target = Target::Suggestion(i);
    let Some(d) = s.vote.clone() else {
        let (voters, tiebreaker) = panel(cx, j);
        if let Some(s) = j.state.suggestion_mut(i) {
            s.vote = Some(Deliberation::new(voters, tiebreaker));
        }
        j.event(&format!("suggestion {}: put to a vote", s.id))?;
        return Ok(Flow::Continue);
    };
    let ask = format!(
        "Should suggestion {} be adopted although the holder of its domain rejected it? approve = adopt it, reject = the rejection stands. {} REJECTION AND APPEAL: {}",
        s.id,
        describe(s).replace('\n', " "),
        s.history
            .iter()
            .map(|e| format!("{}: {}", e.by, e.reason))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let shown = shown(cx, j)?;
    match deliberate(cx, j, target, &d, &ask, &shown)? {
        Stepped::Went(flow) => Ok(flow),
        Stepped::Decided(decision) => settled(cx, j, i, Some(decision), ""),
        // A vote on a suggestion that no one can settle leaves the rejection standing.
        Stepped::Deadlocked(why) => settled(cx, j, i, None, &why),
    }
}

/// The vote on suggestion `i` ended: adopted on `approve`; the rejection stands on any
/// other decision, or when none could be reached (`why`).
fn settled(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    i: usize,
    decision: Option<Decision>,
    why: &str,
) -> Result<Flow, RunError> {
    if let Some(d) = (decision.as_ref()).and_then(|_| j.state.suggestion_mut(i)?.vote.as_mut()) {
        if let Some(dec) = &decision {
            d.conclude(dec.clone());
        }
    }
    let (status, reason) = match &decision {
        Some(d) if d.choice == Choice::Approve => (
            SuggestionStatus::Adopted,
            format!("the agents adopted it ({})", d.by.as_str()),
        ),
        Some(d) => (
            SuggestionStatus::Overruled,
            format!("the agents upheld the rejection ({})", d.by.as_str()),
        ),
        None => (
            SuggestionStatus::Overruled,
            format!("no decision could be reached ({why}); the rejection stands"),
        ),
    };
    decided(cx, j, i, ("vote", "", Spend::default()), status, &reason)
}

/// Suggestion `i` is decided (`status`, for `reason`) by `by` (its `model`, at `spend`):
/// recorded, said, and told to its author.
fn decided(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    i: usize,
    (by, model, spend): (&str, &str, Spend),
    status: SuggestionStatus,
    reason: &str,
) -> Result<Flow, RunError> {
    let tip = j.state.tip().as_str().to_string();
    let Some(s) = j.state.suggestion_mut(i) else {
        return Ok(Flow::Continue);
    };
    s.decide(by, model, status, reason);
    if status.binding() {
        s.bound_at = Some(tip);
    }
    let id = s.id.clone();
    let to = s.author.clone();
    let idea = if s.text.is_empty() {
        &s.rationale
    } else {
        &s.text
    };
    let what = format!(
        "{id} ({}) {}: {reason}",
        crate::bounded::clip(idea, 120),
        status_name(status)
    );
    j.state
        .say(Message::new(by, &to, MessageKind::Suggestion, &what).by(model, spend));
    cx.progress(&Progress::Deliberated {
        who: by,
        what: &crate::bounded::clip(&what, 200),
    });
    j.event(&format!("suggestion {id}: {}", status_name(status)))?;
    Ok(Flow::Continue)
}

/// The accepted suggestions a stage's prompt carries: the editing stages apply them, the
/// verifier accounts for each in its implementation summary.
pub(super) fn block(state: &RunState, stage: Stage) -> String {
    let binding: Vec<&Suggestion> = state
        .suggestions()
        .iter()
        .filter(|s| s.status.binding())
        .collect();
    if binding.is_empty() {
        return String::new();
    }
    let mut s = if stage == Stage::Verify {
        "\n## Accepted suggestions\nFor each, list its id in `implementation_summary.suggestions_applied` if the output reflects it, or explain it in `deviations`; one silently dropped fails the run.\n".to_string()
    } else {
        "\n## Accepted suggestions (they must be applied)\nApply those in your role's domain; keep the ones already applied.\n".to_string()
    };
    for x in binding {
        s.push_str(&format!("\n### {}\n{}", x.id, describe(x)));
    }
    s
}

/// Accepted or adopted suggestions that `summary` neither lists as applied nor names in a
/// deviation — or lists as applied although the output (`final_tip`) is still the commit it
/// was accepted on: a claim of application with no change behind it is not one.
pub fn dropped(
    suggestions: &[Suggestion],
    summary: Option<&ImplementationSummary>,
    final_tip: &str,
) -> Vec<String> {
    suggestions
        .iter()
        .filter(|s| s.status.binding())
        .filter(|s| {
            let unchanged = s.bound_at.as_deref() == Some(final_tip);
            summary.is_none_or(|sum| {
                let deviation = sum
                    .deviations
                    .iter()
                    .any(|d| d.what.contains(&s.id) || d.reason.contains(&s.id));
                let applied = sum.suggestions_applied.iter().any(|a| a.trim() == s.id);
                !deviation && (!applied || unchanged)
            })
        })
        .map(|s| s.id.clone())
        .collect()
}

fn status_name(s: SuggestionStatus) -> &'static str {
    match s {
        SuggestionStatus::Proposed => "proposed",
        SuggestionStatus::Accepted => "accepted",
        SuggestionStatus::Rejected => "rejected",
        SuggestionStatus::Escalated => "escalated",
        SuggestionStatus::Adopted => "adopted",
        SuggestionStatus::Overruled => "overruled",
        SuggestionStatus::Unrouted => "unrouted",
    }
}

/// A suggestion as every model asked about it, or told to apply it, reads it: the idea
/// first, then why, the sketch and the impact.
fn describe(s: &Suggestion) -> String {
    let line = |label: &str, v: &str| {
        if v.trim().is_empty() {
            String::new()
        } else {
            format!("{label}: {}\n", v.trim())
        }
    };
    format!(
        "SUGGESTION {} by the {} stage, domain {} (confidence {:.2}):\n{}{}{}{}",
        s.id,
        s.author,
        s.domain.map_or("none", |d| d.as_str()),
        s.confidence,
        line("the idea", &s.text),
        line("why", &s.rationale),
        if s.code_sketch.is_empty() {
            String::new()
        } else {
            format!("code sketch:\n{}\n", s.code_sketch)
        },
        if s.impact.is_empty() {
            String::new()
        } else {
            format!("impact: {}\n", s.impact)
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consensus::suggestion::Suggestion;
    use serde_json::json;

    fn bound(at: &str) -> Suggestion {
        let mut s = Suggestion::from_meta(
            &json!({"domain": "quality", "rationale": "test negatives"}),
            "S1".into(),
            "implement",
            "m",
        )
        .unwrap();
        s.decide("refactorer", "m2", SuggestionStatus::Accepted, "yes");
        s.bound_at = Some(at.into());
        s
    }

    #[test]
    fn a_claim_of_application_needs_a_change_after_acceptance() {
        let applied = ImplementationSummary {
            suggestions_applied: vec!["S1".into()],
            ..Default::default()
        };
        let s = [bound("aaa")];
        assert!(dropped(&s, Some(&applied), "bbb").is_empty());
        assert_eq!(dropped(&s, Some(&applied), "aaa"), ["S1"]);
        assert_eq!(
            dropped(&s, Some(&ImplementationSummary::default()), "bbb"),
            ["S1"]
        );
        assert_eq!(dropped(&s, None, "bbb"), ["S1"]);
    }
}
