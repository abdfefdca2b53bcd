//! What a parallel-exploration run (`--workflow parallel`, seed 001 §5.2) records: the
//! candidates and their branches, each candidate's ratings of the others and its vote, the
//! winner and how it won, and the synthesis built on top of the winner.

use serde::{Deserialize, Serialize};

use crate::git::{FileStat, ObjectId};
use crate::model::Spend;

/// Where the parallel exploration of a run stands. Each phase is recorded before the next
/// begins, so a killed run resumes at the phase it was in without paying twice for the ones
/// it finished (the fan-out is one phase: its calls run together).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ParallelState {
    /// The models asked to build a solution, in the order given (`--candidates`, else the
    /// implementer role's distinct models).
    pub models: Vec<String>,
    /// Who breaks a tied vote: the tiebreaker role's first model that is not a candidate,
    /// else the arbiter role's; `None` when every such model is a candidate.
    pub tiebreaker: Option<String>,
    /// The fan-out's outcome, one per model (empty until the fan-out has run).
    pub candidates: Vec<Candidate>,
    /// Wall time of the fan-out (all candidate calls together), in milliseconds.
    #[serde(default)]
    pub fanout_ms: u64,
    /// The cross-reviews and votes, one per present candidate once it answered.
    #[serde(default)]
    pub reviews: Vec<CrossReview>,
    /// The winning candidate, once the vote (or the tiebreaker) decided.
    pub winner: Option<Winner>,
    /// The winner's enhancement of its own solution, once made or given up on.
    pub synthesis: Option<Synthesis>,
    /// Whether the exploration is over and the run goes on to Verify.
    pub done: bool,
    /// A tournament (`--workflow tournament`, `--routing tournament`): the arbiters, none
    /// of them a candidate, that review every candidate instead of a vote; empty for a
    /// parallel exploration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judges: Vec<String>,
    /// A tournament's reviews, one per present candidate once reviewed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judgments: Vec<CandidateReview>,
}

impl ParallelState {
    /// Whether this is a tournament: the arbiter picks, nobody votes.
    pub fn tournament(&self) -> bool {
        !self.judges.is_empty()
    }

    /// The candidates that built a solution.
    pub fn present(&self) -> impl Iterator<Item = &Candidate> {
        self.candidates.iter().filter(|c| c.commit.is_some())
    }

    /// Whether fewer candidates took part than were asked: such a run is never presented
    /// as the full panel.
    pub fn degraded(&self) -> bool {
        self.present().count() < self.models.len()
    }

    /// The candidate built by `model`.
    pub fn candidate(&self, model: &str) -> Option<&Candidate> {
        self.candidates.iter().find(|c| c.model == model)
    }
}

/// One candidate's solution, built alone from the identical task prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The model.
    pub model: String,
    /// How the others see it in the cross-review (`A`, `B`, ...): they judge the work,
    /// not the name.
    pub label: String,
    /// Its branch, `triad/<task>/<run>-<model>`; it stays after the run, won or lost.
    pub branch: String,
    /// The commit of its solution on top of the base; `None` when it built none.
    pub commit: Option<ObjectId>,
    /// Its own summary, or why it built nothing (down, unusable answer).
    pub detail: String,
    /// What its solution changed.
    #[serde(default)]
    pub changed: Vec<FileStat>,
    /// What its call cost.
    pub spend: Spend,
}

/// One candidate's review of the others' solutions and its vote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossReview {
    /// The reviewing candidate's model.
    pub reviewer: String,
    /// Its ratings of the other candidates (never of itself).
    pub ratings: Vec<Rating>,
    /// The model it voted for; `None` when its ballot was refused or it could not answer.
    pub vote: Option<String>,
    /// Why it voted so.
    pub reason: String,
    /// Ballots refused, with why (a vote for itself, for no candidate): the reviewer is
    /// asked once more after the first; after the second its ballot is discarded.
    #[serde(default)]
    pub refused: Vec<String>,
    /// Set when the reviewer could not answer (down): it has no vote.
    #[serde(default)]
    pub absent: Option<String>,
}

impl CrossReview {
    /// Whether this reviewer is finished: it voted, could not answer, or used up its
    /// second chance.
    pub fn settled(&self) -> bool {
        self.vote.is_some() || self.absent.is_some() || self.refused.len() >= 2
    }
}

/// A score given by one candidate to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rating {
    /// The rated candidate's model.
    pub candidate: String,
    /// 1 (unusable) to 10 (nothing to improve).
    pub score: u8,
    /// Why, in a sentence or two.
    pub reason: String,
}

/// How the winner won.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WonBy {
    /// It had more votes than any other candidate.
    Majority,
    /// The top of the vote was tied; the tiebreaker chose among the tied.
    Tiebreaker,
    /// A tournament: the arbiter's review of it was the best.
    Arbiter,
    /// The vote could not choose and no tiebreaker could: the deterministic findings of
    /// the solutions (syntax errors, unresolved imports) did, else the ratings each got.
    Evidence,
    /// It was the only usable solution: the others could not answer or answered nothing
    /// usable. A degraded panel, so the run ends at most FLAG.
    Alone,
}

impl WonBy {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            WonBy::Majority => "majority",
            WonBy::Tiebreaker => "tiebreaker",
            WonBy::Arbiter => "arbiter",
            WonBy::Evidence => "evidence",
            WonBy::Alone => "alone",
        }
    }
}

/// The winning candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Winner {
    /// Its model.
    pub model: String,
    /// How it won.
    pub by: WonBy,
    /// Votes per present candidate, in candidate order.
    pub votes: Vec<(String, u32)>,
    /// The tiebreaker's written justification (empty for a majority).
    #[serde(default)]
    pub justification: String,
}

/// The winner's enhancement of its solution with the best of the others.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Synthesis {
    /// The winner's model, which made it.
    pub model: String,
    /// The synthesis commit on top of the winner's; `None` when the synthesis could not be
    /// used and the winner's solution goes on as it is.
    pub commit: Option<ObjectId>,
    /// Its summary, or why it was not used.
    pub detail: String,
    /// What the call cost.
    pub spend: Spend,
}

/// A tournament arbiter's review of one candidate, by the evidence it reviews any stage
/// with (the diff against the base, syntax and import findings, the deterministic floor).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateReview {
    /// The candidate's model.
    pub candidate: String,
    /// The arbiter that answered; `None` when none could.
    pub arbiter: Option<String>,
    /// The verdict in force (after the floor); `None` when no arbiter could answer.
    pub verdict: Option<crate::arbiter::Verdict>,
    /// Issues by severity: critical, major, minor.
    pub issues: [u32; 3],
    /// The arbiter's confidence, 0–1.
    pub confidence: f64,
    /// The first line of its reasoning, or why there is no review.
    pub detail: String,
}

impl CandidateReview {
    /// The order of merit, best first: the verdict, then the weight of the issues, then
    /// the confidence (reversed).
    pub fn rank(&self) -> (u8, u32, i64) {
        use crate::arbiter::Verdict;
        let verdict = match self.verdict {
            Some(Verdict::Approve) => 0,
            Some(Verdict::Flag) => 1,
            Some(Verdict::Reject) => 2,
            Some(Verdict::Halt) => 3,
            None => 4,
        };
        let [critical, major, minor] = self.issues;
        (
            verdict,
            critical * 100 + major * 10 + minor,
            -((self.confidence * 1000.0) as i64),
        )
    }
}
