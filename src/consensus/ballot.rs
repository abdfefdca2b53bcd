//! Votes and how they split (seed 001 §6.2): every agent answers the same question with one
//! of three positions, and the split decides which branch of the decision tree applies.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A position on the result put to the vote.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Choice {
    /// Proceed with the result as it is.
    Approve,
    /// Proceed only after the named amendments are made.
    Amend,
    /// Do not proceed: the result is wrong in a way amendments do not fix.
    Reject,
}

impl Choice {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Choice::Approve => "approve",
            Choice::Amend => "amend",
            Choice::Reject => "reject",
        }
    }
}

impl std::fmt::Display for Choice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A disagreement with a reason: what is wrong and what shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Objection {
    /// What is wrong, in one or two sentences.
    pub text: String,
    /// Where it shows: a file and line, a test, a requirement id.
    #[serde(default)]
    pub evidence: String,
}

/// What a voter answers (the structured output of a vote call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BallotAnswer {
    /// The position taken.
    pub choice: Choice,
    /// Why, with reference to the diff and the evidence.
    pub rationale: String,
    /// Self-assessed confidence, 0.0 to 1.0.
    pub confidence: f64,
    /// Disagreements with the result (required for `amend` and `reject`).
    #[serde(default)]
    pub objections: Vec<Objection>,
    /// Changes that would make the result acceptable (for `amend`).
    #[serde(default)]
    pub amendments: Vec<String>,
}

/// One agent's vote in one round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ballot {
    /// The model that voted (agents are models, each with its primary role).
    pub voter: String,
    /// The voter's primary role in this run (`implementer`).
    pub role: String,
    /// The position.
    pub choice: Choice,
    /// Why.
    pub rationale: String,
    /// 0.0 to 1.0, clamped.
    pub confidence: f64,
    /// Disagreements.
    pub objections: Vec<Objection>,
    /// Requested changes.
    pub amendments: Vec<String>,
}

impl Ballot {
    /// A ballot from a voter's answer; the confidence is clamped into 0..=1 (a model's number
    /// is not trusted to be in range).
    pub fn from_answer(voter: &str, role: &str, a: BallotAnswer) -> Ballot {
        let confidence = if a.confidence.is_finite() {
            a.confidence.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Ballot {
            voter: voter.to_string(),
            role: role.to_string(),
            choice: a.choice,
            rationale: crate::bounded::clip(&a.rationale, 2000),
            confidence,
            objections: a.objections.into_iter().take(10).collect(),
            amendments: a.amendments.into_iter().take(10).collect(),
        }
    }
}

/// How a round's ballots split: the branch of the decision tree that applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "split", rename_all = "snake_case")]
pub enum Split {
    /// Every agent took the same position.
    Unanimous {
        /// The position.
        choice: Choice,
    },
    /// More than half took one position; the others dissent.
    Majority {
        /// The majority's position.
        choice: Choice,
        /// The dissenting voters.
        dissenters: Vec<String>,
    },
    /// No position has more than half the votes (every agent disagrees, or a tie).
    NoMajority,
}

/// The split of `ballots`. No ballots is no majority (nothing was agreed).
pub fn tally(ballots: &[Ballot]) -> Split {
    let n = ballots.len();
    for choice in [Choice::Approve, Choice::Amend, Choice::Reject] {
        let count = ballots.iter().filter(|b| b.choice == choice).count();
        if n > 0 && count == n {
            return Split::Unanimous { choice };
        }
        if count * 2 > n {
            let dissenters = ballots
                .iter()
                .filter(|b| b.choice != choice)
                .map(|b| b.voter.clone())
                .collect();
            return Split::Majority { choice, dissenters };
        }
    }
    Split::NoMajority
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn ballot(voter: &str, choice: Choice) -> Ballot {
        Ballot {
            voter: voter.into(),
            role: "implementer".into(),
            choice,
            rationale: String::new(),
            confidence: 0.5,
            objections: vec![],
            amendments: vec![],
        }
    }

    #[test]
    fn splits_follow_the_decision_tree() {
        use Choice::*;
        let t = |v: &[Choice]| {
            let b: Vec<Ballot> = v
                .iter()
                .enumerate()
                .map(|(i, c)| ballot(&format!("m{i}"), *c))
                .collect();
            tally(&b)
        };
        assert_eq!(
            t(&[Approve, Approve, Approve]),
            Split::Unanimous { choice: Approve }
        );
        assert_eq!(
            t(&[Approve, Reject, Approve]),
            Split::Majority {
                choice: Approve,
                dissenters: vec!["m1".into()]
            }
        );
        assert_eq!(t(&[Approve, Amend, Reject]), Split::NoMajority);
        // Two agents who disagree have no majority either: a tie.
        assert_eq!(t(&[Approve, Reject]), Split::NoMajority);
        assert_eq!(t(&[Amend, Amend, Reject, Reject]), Split::NoMajority);
        assert_eq!(t(&[]), Split::NoMajority);
    }

    #[test]
    fn a_models_confidence_is_clamped() {
        let a = BallotAnswer {
            choice: Choice::Approve,
            rationale: "r".into(),
            confidence: f64::NAN,
            objections: vec![],
            amendments: vec![],
        };
        assert_eq!(Ballot::from_answer("m", "r", a.clone()).confidence, 0.0);
        let a = BallotAnswer {
            confidence: 7.0,
            ..a
        };
        assert_eq!(Ballot::from_answer("m", "r", a).confidence, 1.0);
    }
}
