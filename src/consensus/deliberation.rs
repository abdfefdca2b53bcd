//! The consensus decision tree (seed 001 §6.2, §9) as a state machine over recorded facts.
//!
//! [`Deliberation::next`] reads what has happened (ballots, rebuttals, rulings, papers) and
//! says what must happen next; the caller makes those calls and records their answers with
//! the `record_*` methods. Nothing else is kept, so a deliberation read back from a run record
//! continues exactly where it stopped.
//!
//! - every agent agrees: proceed;
//! - a majority agrees: the majority wins and each dissent is logged; a dissenter gets one
//!   rebuttal (one in the whole deliberation); the tiebreaker judges whether the rebuttals are
//!   compelling; if so, the agents vote again;
//! - no majority: every agent writes a position paper; the tiebreaker selects one with a
//!   written justification;
//! - after [`MAX_ROUNDS`] votes, the tiebreaker decides alone, with a written justification.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ballot::{tally, Ballot, Choice, Objection, Split};

/// Votes at most; then the tiebreaker decides unilaterally (seed 001 §9).
pub const MAX_ROUNDS: u32 = 3;

/// An agent of the deliberation: a model and its primary role in the run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Voter {
    /// The model.
    pub model: String,
    /// Its primary role (`architect`).
    pub role: String,
}

/// A dissenter's one rebuttal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rebuttal {
    /// The dissenting voter.
    pub voter: String,
    /// The argument.
    pub argument: String,
    /// What supports it.
    pub evidence: String,
}

/// What a dissenter answers when given its rebuttal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RebuttalAnswer {
    /// The argument against the majority's position.
    pub argument: String,
    /// Files, lines, tests or requirements that support it.
    #[serde(default)]
    pub evidence: String,
}

/// The tiebreaker's judgement of a round's rebuttals.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Ruling {
    /// Whether the rebuttals are compelling enough to vote again.
    pub compelling: bool,
    /// Why, in writing.
    pub justification: String,
}

/// An agent's position paper (when no position has a majority).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PositionPaper {
    /// The author.
    pub voter: String,
    /// What it wrote, clipped to the record's bounds (recorded flat beside `voter`).
    #[serde(flatten)]
    pub paper: PaperAnswer,
}

/// What an agent answers when asked for a position paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PaperAnswer {
    /// The position argued for.
    pub choice: Choice,
    /// The argument, with evidence.
    pub position: String,
    /// The trade-offs of this position, explicitly.
    #[serde(default)]
    pub tradeoffs: Vec<String>,
    /// Changes the position requires.
    #[serde(default)]
    pub amendments: Vec<String>,
}

/// The tiebreaker's choice among position papers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SelectionAnswer {
    /// The number of the winning paper, as numbered in the request (1-based).
    pub winner: u32,
    /// Why this paper wins over the others, in writing.
    pub justification: String,
}

/// The tiebreaker's decision alone, once the rounds are used up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UnilateralAnswer {
    /// The decision.
    pub choice: Choice,
    /// Why, in writing.
    pub justification: String,
    /// Changes required (for `amend`).
    #[serde(default)]
    pub amendments: Vec<String>,
}

/// One vote and what followed it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// 1-based.
    pub n: u32,
    /// Ballots cast.
    pub ballots: Vec<Ballot>,
    /// Rebuttals of this round's dissenters.
    #[serde(default)]
    pub rebuttals: Vec<Rebuttal>,
    /// The tiebreaker's judgement of the rebuttals.
    #[serde(default)]
    pub ruling: Option<Ruling>,
}

/// How a decision was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedBy {
    /// Every agent agreed.
    Unanimous,
    /// A majority, the dissent logged.
    Majority,
    /// The tiebreaker selected a position paper.
    Tiebreaker,
    /// The tiebreaker decided alone after the last round (or with too few agents to vote).
    Unilateral,
}

impl DecidedBy {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            DecidedBy::Unanimous => "unanimous",
            DecidedBy::Majority => "majority",
            DecidedBy::Tiebreaker => "tiebreaker",
            DecidedBy::Unilateral => "unilateral",
        }
    }
}

/// The outcome of a deliberation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// What was decided.
    pub choice: Choice,
    /// How.
    pub by: DecidedBy,
    /// The tiebreaker's written justification (empty when the agents decided).
    pub justification: String,
    /// The minority's ballots, kept.
    pub dissent: Vec<Ballot>,
    /// Changes the decision requires.
    pub amendments: Vec<String>,
    /// Objections of the winning side (what a `reject` rests on).
    pub objections: Vec<Objection>,
    /// Votes held.
    pub rounds: u32,
}

/// What the deliberation needs next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Ballots from these voters in round `round`.
    Vote {
        /// The round (1-based).
        round: u32,
        /// Voters who have not voted in it.
        voters: Vec<String>,
    },
    /// A rebuttal from each of these dissenters.
    Rebut {
        /// Dissenters owed their one rebuttal.
        voters: Vec<String>,
    },
    /// The tiebreaker's ruling on the last round's rebuttals.
    Rule,
    /// Position papers from these voters.
    Papers {
        /// Voters who have not written one.
        voters: Vec<String>,
    },
    /// The tiebreaker's selection among the papers.
    Select,
    /// The tiebreaker's decision alone.
    Unilateral,
    /// Decided.
    Done(Decision),
}

/// A deliberation: who takes part and everything that happened so far.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deliberation {
    /// The agents who vote.
    pub voters: Vec<Voter>,
    /// The tiebreaker model (a model that does not vote, when there is one).
    pub tiebreaker: Option<String>,
    /// Votes, in order.
    pub rounds: Vec<Round>,
    /// Position papers (no-majority branch).
    #[serde(default)]
    pub papers: Vec<PositionPaper>,
    /// Agents that could not take part (provider down, no valid answer), with why: the
    /// deliberation went on without them and the outcome says so.
    #[serde(default)]
    pub absent: Vec<(String, String)>,
    /// The decision, once reached.
    pub decision: Option<Decision>,
}

impl Deliberation {
    /// A deliberation among `voters`, ties broken by `tiebreaker`.
    pub fn new(voters: Vec<Voter>, tiebreaker: Option<String>) -> Deliberation {
        Deliberation {
            voters,
            tiebreaker,
            rounds: Vec::new(),
            papers: Vec::new(),
            absent: Vec::new(),
            decision: None,
        }
    }

    /// Voters still taking part.
    pub fn present(&self) -> Vec<&Voter> {
        self.voters
            .iter()
            .filter(|v| !self.absent.iter().any(|(m, _)| *m == v.model))
            .collect()
    }

    /// Whether fewer agents took part than were called (the outcome must say so).
    pub fn degraded(&self) -> bool {
        !self.absent.is_empty()
    }

    /// What must happen next, from what has happened. Pure: the same record gives the same
    /// answer, which is what makes a killed deliberation resumable.
    pub fn next(&self) -> Next {
        if let Some(d) = &self.decision {
            return Next::Done(d.clone());
        }
        let present: Vec<String> = self.present().iter().map(|v| v.model.clone()).collect();
        if present.len() < 2 {
            // One agent cannot agree with anyone: the tiebreaker decides, with its ballot.
            return Next::Unilateral;
        }
        let Some(round) = self.rounds.last() else {
            return Next::Vote {
                round: 1,
                voters: present,
            };
        };
        let missing: Vec<String> = present
            .iter()
            .filter(|m| !round.ballots.iter().any(|b| &b.voter == *m))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Next::Vote {
                round: round.n,
                voters: missing,
            };
        }
        // Every ballot of the round counts, also one whose voter could not go on afterwards:
        // a dissenter whose rebuttal failed still dissented, so the vote is no unanimity.
        match tally(&round.ballots) {
            Split::Unanimous { choice } => Next::Done(self.decide(choice, DecidedBy::Unanimous)),
            Split::Majority { choice, dissenters } => {
                let owed: Vec<String> = dissenters
                    .into_iter()
                    .filter(|d| !self.rebutted(d) && present.contains(d))
                    .collect();
                if !owed.is_empty() {
                    return Next::Rebut { voters: owed };
                }
                if round.rebuttals.is_empty() {
                    // Every dissenter already used its rebuttal: the majority stands.
                    return Next::Done(self.decide(choice, DecidedBy::Majority));
                }
                match &round.ruling {
                    None => Next::Rule,
                    Some(r) if !r.compelling => {
                        Next::Done(self.decide(choice, DecidedBy::Majority))
                    }
                    Some(_) if round.n >= MAX_ROUNDS => Next::Unilateral,
                    Some(_) => Next::Vote {
                        round: round.n + 1,
                        voters: present,
                    },
                }
            }
            Split::NoMajority => {
                let missing: Vec<String> = present
                    .iter()
                    .filter(|m| !self.papers.iter().any(|p| &p.voter == *m))
                    .cloned()
                    .collect();
                if missing.is_empty() {
                    Next::Select
                } else {
                    Next::Papers { voters: missing }
                }
            }
        }
    }

    fn rebutted(&self, voter: &str) -> bool {
        self.rounds
            .iter()
            .any(|r| r.rebuttals.iter().any(|b| b.voter == voter))
    }

    /// The decision for `choice` from the last round's ballots.
    fn decide(&self, choice: Choice, by: DecidedBy) -> Decision {
        let ballots = self
            .rounds
            .last()
            .map(|r| r.ballots.as_slice())
            .unwrap_or(&[]);
        let winners = ballots.iter().filter(|b| b.choice == choice);
        Decision {
            choice,
            by,
            justification: String::new(),
            dissent: ballots
                .iter()
                .filter(|b| b.choice != choice)
                .cloned()
                .collect(),
            amendments: dedup(winners.clone().flat_map(|b| b.amendments.clone())),
            objections: winners.flat_map(|b| b.objections.clone()).collect(),
            rounds: self.rounds.len() as u32,
        }
    }

    /// Records a ballot in round `n` (a new round starts with its first ballot).
    pub fn record_ballot(&mut self, n: u32, ballot: Ballot) {
        if self.rounds.last().is_none_or(|r| r.n != n) {
            self.rounds.push(Round {
                n,
                ballots: Vec::new(),
                rebuttals: Vec::new(),
                ruling: None,
            });
        }
        if let Some(r) = self.rounds.last_mut() {
            r.ballots.retain(|b| b.voter != ballot.voter);
            r.ballots.push(ballot);
        }
    }

    /// Records an agent that could not take part, and why.
    pub fn record_absent(&mut self, voter: &str, why: &str) {
        if !self.absent.iter().any(|(m, _)| m == voter) {
            self.absent.push((voter.to_string(), why.to_string()));
        }
    }

    /// Records a dissenter's rebuttal in the last round.
    pub fn record_rebuttal(&mut self, voter: &str, a: RebuttalAnswer) {
        if let Some(r) = self.rounds.last_mut() {
            r.rebuttals.push(Rebuttal {
                voter: voter.to_string(),
                argument: crate::bounded::clip(&a.argument, 2000),
                evidence: crate::bounded::clip(&a.evidence, 1000),
            });
        }
    }

    /// Records the tiebreaker's ruling on the last round's rebuttals.
    pub fn record_ruling(&mut self, ruling: Ruling) {
        if let Some(r) = self.rounds.last_mut() {
            r.ruling = Some(ruling);
        }
    }

    /// Records a position paper.
    pub fn record_paper(&mut self, voter: &str, a: PaperAnswer) {
        self.papers.retain(|p| p.voter != voter);
        self.papers.push(PositionPaper {
            voter: voter.to_string(),
            paper: PaperAnswer {
                choice: a.choice,
                position: crate::bounded::clip(&a.position, 3000),
                tradeoffs: a.tradeoffs.into_iter().take(10).collect(),
                amendments: a.amendments.into_iter().take(10).collect(),
            },
        });
    }

    /// Records the tiebreaker's selection; a paper number out of range is refused (the
    /// caller asks again or stops), never guessed.
    pub fn record_selection(&mut self, a: SelectionAnswer) -> Result<(), String> {
        let Some(chosen) = (a.winner as usize)
            .checked_sub(1)
            .and_then(|i| self.papers.get(i))
            .cloned()
        else {
            return Err(format!(
                "`winner` is {}, but the papers are numbered 1 to {}",
                a.winner,
                self.papers.len()
            ));
        };
        let PaperAnswer {
            choice, amendments, ..
        } = chosen.paper;
        self.tiebreak(DecidedBy::Tiebreaker, choice, a.justification, amendments);
        Ok(())
    }

    /// Records the tiebreaker's decision alone.
    pub fn record_unilateral(&mut self, a: UnilateralAnswer) {
        let amendments = a.amendments.into_iter().take(10).collect();
        self.tiebreak(DecidedBy::Unilateral, a.choice, a.justification, amendments);
    }

    /// Records a decision the tiebreaker made (by selecting a paper or alone): the
    /// dissent kept is every last-round ballot for another choice, whoever wrote the paper.
    fn tiebreak(
        &mut self,
        by: DecidedBy,
        choice: Choice,
        justification: String,
        amendments: Vec<String>,
    ) {
        let dissent = self
            .rounds
            .last()
            .map(|r| {
                r.ballots
                    .iter()
                    .filter(|b| b.choice != choice)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        self.decision = Some(Decision {
            choice,
            by,
            justification,
            dissent,
            amendments,
            objections: Vec::new(),
            rounds: self.rounds.len() as u32,
        });
    }

    /// Stores a decision the tree reached by itself ([`Next::Done`] from [`next`](Self::next)).
    pub fn conclude(&mut self, d: Decision) {
        self.decision = Some(d);
    }
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

#[cfg(test)]
#[path = "deliberation_tests.rs"]
mod tests;
