//! Cross-domain suggestions (seed 001 §6.1, §6.2 last row): any stage may suggest something
//! in another role's territory; the primary role-holder of that domain decides on it; a
//! rejected suggestion may be escalated by its author to a vote of all agents; an accepted
//! one must show in the output (seed 000 §B11.4, "suggestion integration").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::config::Role;

/// Whose territory a suggestion enters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Structure, interfaces, file layout: the architect's.
    Architecture,
    /// Logic and wiring: the implementer's.
    Implementation,
    /// Quality, tests, edge cases: the refactorer's.
    Quality,
}

impl Domain {
    /// The role that holds the domain and decides on suggestions entering it.
    pub fn owner(self) -> Role {
        match self {
            Domain::Architecture => Role::Architect,
            Domain::Implementation => Role::Implementer,
            Domain::Quality => Role::Refactorer,
        }
    }

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Domain::Architecture => "architecture",
            Domain::Implementation => "implementation",
            Domain::Quality => "quality",
        }
    }

    fn parse(text: &str) -> Option<Domain> {
        match text.trim().to_ascii_lowercase().as_str() {
            "architecture" | "architect" | "design" => Some(Domain::Architecture),
            "implementation" | "implement" | "implementer" | "logic" => {
                Some(Domain::Implementation)
            }
            "quality" | "refactor" | "refactorer" | "tests" | "testing" => Some(Domain::Quality),
            _ => None,
        }
    }
}

/// Where a suggestion stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionStatus {
    /// Made, not yet decided.
    Proposed,
    /// The domain's role-holder accepted it: it must be applied.
    Accepted,
    /// The role-holder rejected it; its author may escalate.
    Rejected,
    /// Rejected, escalated by its author, waiting for the vote.
    Escalated,
    /// The agents' vote adopted it after a rejection: it must be applied.
    Adopted,
    /// The agents' vote upheld the rejection.
    Overruled,
    /// No domain was named, so no one can decide on it; kept for the record.
    Unrouted,
}

impl SuggestionStatus {
    /// Whether the suggestion must show in the output.
    pub fn binding(self) -> bool {
        matches!(self, SuggestionStatus::Accepted | SuggestionStatus::Adopted)
    }
}

/// One decision on a suggestion, with its reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuggestionEvent {
    /// Who decided: a role (`refactorer`), `vote` or the author (`escalated by implement`).
    pub by: String,
    /// The model that answered.
    pub model: String,
    /// The status it led to.
    pub status: SuggestionStatus,
    /// Why.
    pub reason: String,
}

/// A cross-domain suggestion with everything decided about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// `S1`, `S2`… in the order they were made in the run.
    pub id: String,
    /// The stage that made it.
    pub author: String,
    /// The model that made it.
    pub author_model: String,
    /// Whose territory it enters (`None`: not said).
    pub domain: Option<Domain>,
    /// The idea itself: what the author suggests doing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// Why it is better than the current approach.
    pub rationale: String,
    /// The author's confidence, 0.0 to 1.0.
    pub confidence: f64,
    /// Optional code showing the alternative.
    pub code_sketch: String,
    /// What changes downstream if it is adopted.
    pub impact: String,
    /// Where it stands.
    pub status: SuggestionStatus,
    /// Decisions so far.
    pub history: Vec<SuggestionEvent>,
    /// The run's tip when it became binding: an output that claims to apply it must have
    /// changed after this commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound_at: Option<String>,
    /// The agents' vote, once its author escalated a rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vote: Option<super::Deliberation>,
}

impl Suggestion {
    /// Reads a suggestion from a stage's metadata: an object with `domain`, `text` (the
    /// idea), `rationale`, `confidence`, `code_sketch`, `impact` (a bare string is the idea
    /// without a domain). `None` for one that says nothing.
    pub fn from_meta(value: &Value, id: String, author: &str, model: &str) -> Option<Suggestion> {
        let text = |k: &str, max: usize| {
            value
                .get(k)
                .and_then(Value::as_str)
                .map(|s| crate::bounded::clip(s.trim(), max))
                .unwrap_or_default()
        };
        let (idea, rationale, domain, confidence, code_sketch, impact) = match value {
            Value::String(s) => (
                crate::bounded::clip(s.trim(), 1500),
                String::new(),
                None,
                0.5,
                String::new(),
                String::new(),
            ),
            Value::Object(_) => {
                let domain = value
                    .get("domain")
                    .and_then(Value::as_str)
                    .and_then(Domain::parse);
                let confidence = value
                    .get("confidence")
                    .and_then(Value::as_f64)
                    .filter(|c| c.is_finite())
                    .map_or(0.5, |c| c.clamp(0.0, 1.0));
                (
                    text("text", 1500),
                    text("rationale", 1500),
                    domain,
                    confidence,
                    text("code_sketch", 3000),
                    text("impact_assessment", 1000) + &text("impact", 1000),
                )
            }
            _ => return None,
        };
        if idea.is_empty() && rationale.is_empty() {
            return None;
        }
        Some(Suggestion {
            id,
            author: author.to_string(),
            author_model: model.to_string(),
            status: if domain.is_some() {
                SuggestionStatus::Proposed
            } else {
                SuggestionStatus::Unrouted
            },
            domain,
            text: idea,
            rationale,
            confidence,
            code_sketch,
            impact,
            history: Vec::new(),
            bound_at: None,
            vote: None,
        })
    }

    /// Records a decision.
    pub fn decide(&mut self, by: &str, model: &str, status: SuggestionStatus, reason: &str) {
        self.status = status;
        self.history.push(SuggestionEvent {
            by: by.to_string(),
            model: model.to_string(),
            status,
            reason: crate::bounded::clip(reason, 1000),
        });
    }
}

/// What the domain's role-holder answers about a suggestion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EvaluationAnswer {
    /// `true` to accept it (it must then be applied), `false` to reject it.
    pub accept: bool,
    /// Why, in terms of the task and the code.
    pub reason: String,
}

/// What a suggestion's author answers after a rejection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EscalationAnswer {
    /// `true` to put the suggestion to a vote of all agents.
    pub escalate: bool,
    /// The case for it, answering the rejection's reason.
    pub argument: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn suggestions_are_read_from_objects_and_strings() {
        let s = Suggestion::from_meta(
            &json!({"domain": "quality", "rationale": "test the empty string", "confidence": 9,
                    "code_sketch": "assert f('') == 0", "impact_assessment": "one more test"}),
            "S1".into(),
            "implement",
            "m",
        )
        .unwrap();
        assert_eq!(s.domain, Some(Domain::Quality));
        assert_eq!(s.domain.unwrap().owner(), Role::Refactorer);
        assert_eq!(s.confidence, 1.0);
        assert_eq!(s.impact, "one more test");
        assert_eq!(s.status, SuggestionStatus::Proposed);

        let s = Suggestion::from_meta(&json!("use a dict"), "S2".into(), "architect", "m").unwrap();
        assert_eq!((s.domain, s.status), (None, SuggestionStatus::Unrouted));
        assert_eq!(s.text, "use a dict");
        let s = Suggestion::from_meta(
            &json!({"domain": "quality", "text": "cache the parsed config"}),
            "S3".into(),
            "implement",
            "m",
        )
        .unwrap();
        assert_eq!(
            (s.text.as_str(), s.rationale.as_str()),
            ("cache the parsed config", "")
        );
        assert!(
            Suggestion::from_meta(&json!({"domain": "quality"}), "S3".into(), "a", "m").is_none()
        );
        assert!(Suggestion::from_meta(&json!(3), "S3".into(), "a", "m").is_none());
    }

    #[test]
    fn only_accepted_or_adopted_suggestions_bind() {
        let mut s = Suggestion::from_meta(
            &json!({"domain": "architecture", "rationale": "r"}),
            "S1".into(),
            "refactor",
            "m",
        )
        .unwrap();
        s.decide("architect", "m2", SuggestionStatus::Rejected, "no");
        assert!(!s.status.binding());
        s.decide(
            "escalated by refactor",
            "m",
            SuggestionStatus::Escalated,
            "but",
        );
        s.decide("vote", "", SuggestionStatus::Adopted, "2 of 3");
        assert!(s.status.binding());
        assert_eq!(s.history.len(), 3);
    }
}
