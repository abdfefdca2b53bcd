//! The agent message envelope (seed 001 §4.3): every message between agents of a run — a
//! proposal, an implementation, a review, an objection, a suggestion, a vote, a consensus, a
//! verification — recorded with who sent it to whom, what it said and what it cost, so
//! `git triad log` can show who proposed, objected and decided what.

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::ballot::Objection;
use super::suggestion::Suggestion;
use crate::model::Spend;

/// Characters of a message's content kept in the record (the full answers are in the
/// transcripts).
pub const CONTENT_CHARS: usize = 1500;

/// What kind of message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MessageKind {
    /// A design: the architect's scaffold, a position paper, a candidate solution.
    Proposal,
    /// Code: the implement and refactor stages' work.
    Implementation,
    /// An arbiter's review.
    Review,
    /// A disagreement with reasons.
    Objection,
    /// A cross-domain suggestion, or a decision on one.
    Suggestion,
    /// A ballot.
    Vote,
    /// A decision of the agents or the tiebreaker.
    Consensus,
    /// The verifier's check.
    Verification,
}

impl MessageKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageKind::Proposal => "proposal",
            MessageKind::Implementation => "implementation",
            MessageKind::Review => "review",
            MessageKind::Objection => "objection",
            MessageKind::Suggestion => "suggestion",
            MessageKind::Vote => "vote",
            MessageKind::Consensus => "consensus",
            MessageKind::Verification => "verification",
        }
    }
}

/// Who sent a message and what it cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageMeta {
    /// The model that wrote it (empty for the orchestrator's own messages).
    pub model: String,
    /// Tokens in and out, latency and cost of the call that produced it.
    pub spend: Spend,
}

/// One message between agents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A UUID v4.
    pub id: String,
    /// The sending agent: a stage (`architect`), `arbiter`, `tiebreaker` or `orchestrator`.
    pub from: String,
    /// The receiving agent, `all` or `orchestrator`.
    pub to: String,
    /// What kind of message.
    #[serde(rename = "type")]
    pub kind: MessageKind,
    /// What it said, clipped to [`CONTENT_CHARS`].
    pub content: String,
    /// The sender's self-assessed confidence, 0.0 to 1.0.
    pub confidence: Option<f64>,
    /// Suggestions attached to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// Objections attached to it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objections: Vec<Objection>,
    /// Model and cost.
    pub meta: MessageMeta,
    /// When (RFC 3339, UTC).
    pub ts: String,
}

impl Message {
    /// A new message stamped now, with a fresh id and its content clipped.
    pub fn new(from: &str, to: &str, kind: MessageKind, content: &str) -> Message {
        Message {
            id: uuid_v4(),
            from: from.to_string(),
            to: to.to_string(),
            kind,
            content: crate::bounded::clip(content, CONTENT_CHARS),
            confidence: None,
            suggestions: Vec::new(),
            objections: Vec::new(),
            meta: MessageMeta::default(),
            ts: crate::clock::now_ts(),
        }
    }

    /// With the model that wrote it and what its call cost.
    pub fn by(mut self, model: &str, spend: Spend) -> Message {
        self.meta = MessageMeta {
            model: model.to_string(),
            spend,
        };
        self
    }

    /// With a confidence, clamped into 0..=1 (a model's number is not trusted to be in range).
    pub fn confidence(mut self, c: Option<f64>) -> Message {
        self.confidence = c.filter(|c| c.is_finite()).map(|c| c.clamp(0.0, 1.0));
        self
    }
}

/// A random (version 4) UUID in its usual text form.
pub fn uuid_v4() -> String {
    let mut b: [u8; 16] = rand::rng().random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_version_4_uuids_and_differ() {
        let a = uuid_v4();
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(["8", "9", "a", "b"].contains(&&a[19..20]), "{a}");
        assert_ne!(a, uuid_v4());
    }

    #[test]
    fn content_is_clipped_and_confidence_clamped() {
        let m = Message::new(
            "architect",
            "implement",
            MessageKind::Proposal,
            &"x".repeat(9000),
        )
        .confidence(Some(3.0));
        assert!(m.content.len() < 2000);
        assert_eq!(m.confidence, Some(1.0));
        let m = m.confidence(Some(f64::NAN));
        assert_eq!(m.confidence, None);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["type"], "proposal");
    }
}
