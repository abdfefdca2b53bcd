//! Cross-domain suggestions in a run (seed 001 §6.1 and §6.2's last row, seed 000 §B11.4):
//! every accepted stage answer is a message in the run's record, its suggestions are decided
//! by the primary role-holder of their domain, a rejection may be escalated by its author
//! to a vote of all agents, and what was accepted must show in the output.

use super::consensus::{Stepped, Target};
use super::{Flow, Run, RunError};
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::consensus::suggestion::{
    EscalationAnswer, EvaluationAnswer, Suggestion, SuggestionStatus,
};
use crate::consensus::{Choice, Decision, Deliberation, Objection};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::stage::Stage;
use crate::task::outcome::StageMeta;

impl Run<'_> {
    /// Records an accepted stage answer: its message to the next stage, and its suggestions
    /// (numbered `S1`, `S2`… across the run).
    pub(super) fn heard(&mut self, stage: Stage, model: &str, spend: Spend, meta: &StageMeta) {
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
            let id = format!("S{}", self.state.suggestions.len() + 1);
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
            self.state.suggestions.push(s);
        }
        self.state.messages.push(msg);
    }

    /// The suggestion that needs a decision next, if any.
    pub(super) fn suggestion_due(&self) -> Option<usize> {
        self.state.suggestions.iter().position(|s| match s.status {
            SuggestionStatus::Proposed | SuggestionStatus::Escalated => true,
            // Rejected by the role-holder; its author has not yet been asked.
            SuggestionStatus::Rejected => s.history.len() == 1,
            _ => false,
        })
    }

    /// One decision on suggestion `i`: by its domain's role-holder, then (after a rejection)
    /// its author's choice to escalate, then the agents' vote.
    pub(super) fn suggestion_step(&mut self, i: usize) -> Result<Flow, RunError> {
        let s = self.state.suggestions[i].clone();
        match s.status {
            SuggestionStatus::Proposed => self.evaluate(i, &s),
            SuggestionStatus::Rejected => self.offer_escalation(i, &s),
            _ => self.vote_on(i, &s),
        }
    }

    /// The model holding `role` in this run, with its stage's role name.
    fn holder(&self, role: Role) -> Option<String> {
        self.state
            .stages
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

    fn evaluate(&mut self, i: usize, s: &Suggestion) -> Result<Flow, RunError> {
        let Some(domain) = s.domain else {
            return Ok(Flow::Continue);
        };
        let role = domain.owner();
        let Some(model) = self.holder(role) else {
            return Ok(Flow::Continue);
        };
        let shown = self.shown()?;
        let user = format!(
            "ROLE: {role} (primary role-holder of the {} domain)\nThe {} stage suggests a change in your domain. Accept it (it must then be applied) or reject it, with a reason grounded in the task and the code.\n\n{}\nTASK:\n{}\n\nTHE RUN'S CHANGE SO FAR:\n{}\n",
            domain.as_str(),
            s.author,
            describe(s),
            shown.task,
            shown.diff
        );
        let (status, reason, spend) = match self.consensus_call::<EvaluationAnswer>(
            role,
            &model,
            "suggestion",
            user,
            role.as_str(),
        ) {
            Ok((a, spend)) if a.accept => (SuggestionStatus::Accepted, a.reason, spend),
            Ok((a, spend)) => (SuggestionStatus::Rejected, a.reason, spend),
            Err(e @ ModelError::Budget(_)) => return self.model_failed("suggestion", e),
            Err(e) => (
                SuggestionStatus::Unrouted,
                format!(
                    "the {role} could not be asked: {}",
                    crate::redact::Redactor::global().redact(&e.to_string())
                ),
                Spend::default(),
            ),
        };
        self.decided(i, role.as_str(), &model, status, &reason, spend)
    }

    fn offer_escalation(&mut self, i: usize, s: &Suggestion) -> Result<Flow, RunError> {
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
        let (status, reason, spend) = match self.consensus_call::<EscalationAnswer>(
            role,
            &s.author_model,
            "suggestion",
            user,
            role.as_str(),
        ) {
            Ok((a, spend)) if a.escalate => (SuggestionStatus::Escalated, a.argument, spend),
            Ok((a, spend)) => (
                SuggestionStatus::Rejected,
                format!("not escalated: {}", a.argument),
                spend,
            ),
            Err(e @ ModelError::Budget(_)) => return self.model_failed("suggestion", e),
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
        self.decided(i, &by, &s.author_model, status, &reason, spend)
    }

    fn vote_on(&mut self, i: usize, s: &Suggestion) -> Result<Flow, RunError> {
        self.target = Target::Suggestion(i);
        let Some(d) = s.vote.clone() else {
            let (voters, tiebreaker) = self.panel();
            self.state.suggestions[i].vote = Some(Deliberation::new(voters, tiebreaker));
            self.rec
                .event(&self.state, &format!("suggestion {}: put to a vote", s.id))?;
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
        let shown = self.shown()?;
        match self.deliberate(&d, &ask, &shown)? {
            Stepped::Went(flow) => Ok(flow),
            Stepped::Decided(decision) => self.suggestion_settled(i, Some(decision), ""),
        }
    }

    /// The vote on suggestion `i` ended: adopted on `approve`; the rejection stands on any
    /// other decision, or when none could be reached (`why`).
    pub(super) fn suggestion_settled(
        &mut self,
        i: usize,
        decision: Option<Decision>,
        why: &str,
    ) -> Result<Flow, RunError> {
        if let Some(d) = (decision.as_ref()).and_then(|_| self.state.suggestions[i].vote.as_mut()) {
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
        self.decided(i, "vote", "", status, &reason, Spend::default())
    }

    fn decided(
        &mut self,
        i: usize,
        by: &str,
        model: &str,
        status: SuggestionStatus,
        reason: &str,
        spend: Spend,
    ) -> Result<Flow, RunError> {
        let tip = self.state.tip().as_str().to_string();
        let s = &mut self.state.suggestions[i];
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
        self.state
            .messages
            .push(Message::new(by, &to, MessageKind::Suggestion, &what).by(model, spend));
        self.env.observer.progress(&Progress::Deliberated {
            who: by,
            what: &crate::bounded::clip(&what, 200),
        });
        self.rec.event(
            &self.state,
            &format!("suggestion {id}: {}", status_name(status)),
        )?;
        Ok(Flow::Continue)
    }

    /// The accepted suggestions a stage's prompt carries: the editing stages apply them, the
    /// verifier accounts for each in its implementation summary.
    pub(super) fn suggestion_block(&self, stage: Stage) -> String {
        let binding: Vec<&Suggestion> = self
            .state
            .suggestions
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
