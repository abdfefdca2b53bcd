//! What a run records about itself (`run.json`, format 2): typed state, attempts, the reason
//! it stopped. [`recorder`] keeps it in git; [`upgrade`] reads what format 1 wrote. A
//! workflow's own record lives in its folder (`pipeline/workflow/`) and is named here too.

mod chamber;
mod debate;
mod followed;
mod format;
mod parallel;
mod recorder;
mod state;
mod stop;
mod transcript;
mod upgrade;
mod workflow_state;

use serde::{Deserialize, Serialize};

pub use chamber::{ChamberLink, ChamberRun};
pub use debate::{
    Absence, Against, DebateNext, DebatePhase, DebateState, Debater, Judgment, Speech,
};
pub use followed::Followed;
pub use format::FormatRecord;
pub use parallel::{
    Candidate, CandidateReview, CrossReview, ParallelState, Rating, Synthesis, Winner, WonBy,
};
pub use recorder::{list_runs, scan_runs, CorruptRun, Recorder};
pub use state::{RunState, Start};
pub use stop::{one_line, ModelFailure, NoRewind, StopReason};
pub use transcript::Transcript;
pub(crate) use workflow_state::registry;
pub use workflow_state::WorkflowState;

use super::fit::LeftOut;
use super::stage::Stage;
use crate::arbiter::Verdict;
use crate::consensus::Deliberation;
use crate::git::{FileStat, ObjectId};
use crate::model::Spend;
use crate::task::outcome::StageMeta;

/// Ref namespace of run records.
pub const RUNS_PREFIX: &str = "refs/triad/runs/";

/// The `run.json` format this build writes. Format 1 (the first release) is read through
/// [`upgrade`].
pub const RECORD_VERSION: u32 = 2;

pub use crate::task::RunStatus;

crate::names::named! {
    /// What became of one attempt at a stage, by the name `run.json` records.
    pub enum AttemptResult: "an attempt result", written snake_case {
        /// Committed and accepted (reviewed or not).
        Accepted,
        /// The arbiter rejected it; the stage is retried with its feedback.
        Rejected,
        /// Its edit blocks did not apply; retried with the reasons.
        EditsFailed,
        /// Its answer could not be read (no metadata block, malformed edits); retried.
        BadAnswer,
        /// It changed nothing where the stage must, or claimed changes it did not make; retried.
        NoChange,
        /// Its change visibly leaves a requirement of the TaskSpec undone (a file the
        /// requirement names left as it was, a function it names found nowhere); retried.
        Incomplete,
        /// Its change makes the verify command fail where it passed at the run's base; retried
        /// on top of that change, with the command's output.
        Failing,
        /// Its retries ran out while it still broke what the run's best evidenced commit
        /// showed: kept on the record, not on the result, and the run went on from that commit.
        Dropped,
        /// It answered an outcome other than APPROVE; the run stopped.
        Outcome,
        /// The arbiter halted the run on it.
        Halted,
    }
}

/// One attempt at a stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// 1-based.
    pub n: u32,
    /// The model that answered.
    pub model: String,
    /// The commit built from the answer (also for rejected attempts).
    pub commit: Option<ObjectId>,
    /// The arbiter's verdict, if reviewed.
    pub verdict: Option<Verdict>,
    /// The arbiter model, if reviewed.
    pub arbiter_model: Option<String>,
    /// What became of it.
    pub result: AttemptResult,
    /// Short explanation.
    pub detail: String,
    /// The stage call and its review.
    pub spend: Spend,
    /// What the attempt's edits changed, file by file (empty: nothing, or not applied).
    #[serde(default)]
    pub changed: Vec<FileStat>,
    /// What its prompt left out to fit the model's window (empty: nothing).
    #[serde(default, skip_serializing_if = "LeftOut::is_empty")]
    pub left_out: LeftOut,
    /// The facts its commit passed when it passed every fact the run checks (see
    /// [`Evidenced`]); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidenced: Option<Vec<String>>,
}

/// One stage of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// Which.
    pub stage: Stage,
    /// The accepted commit.
    pub commit: Option<ObjectId>,
    /// Final verdict (None when not reviewed).
    pub verdict: Option<Verdict>,
    /// Candidate models for the stage, in order.
    pub models: Vec<String>,
    /// Index of the model currently used (advanced by rewinds).
    pub model_index: usize,
    /// Arbiter model for this stage, when reviewed.
    pub arbiter_model: Option<String>,
    /// Attempts, in order.
    pub attempts: Vec<AttemptRecord>,
    /// Whether the stage is reviewed in this run's mode.
    pub reviewed: bool,
    /// Index into `attempts` where the current retry budget began (a rewind resets it).
    pub epoch_start: usize,
    /// The commit of an attempt whose change made the verify command fail: the next attempt
    /// is shown its files and builds on them (its own commit's parent stays the stage's).
    /// Cleared once an attempt is committed as the stage's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draft: Option<ObjectId>,
    /// Why the stage's work is not on the result: it broke what the run's best evidenced
    /// commit showed, or stopped the run while that commit passed every fact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<String>,
    /// Why the stage was not asked at all: the task left it nothing to do (see
    /// `run_idle_stages`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl StageRecord {
    /// A stage as a plan makes it: its `models` in order (the first assigned), its arbiter
    /// when `reviewed`, nothing attempted yet.
    pub fn planned(
        stage: Stage,
        models: Vec<String>,
        arbiter_model: Option<String>,
        reviewed: bool,
    ) -> StageRecord {
        StageRecord {
            stage,
            commit: None,
            verdict: None,
            models,
            model_index: 0,
            arbiter_model,
            attempts: Vec::new(),
            reviewed,
            epoch_start: 0,
            draft: None,
            dropped: None,
            skipped: None,
        }
    }

    /// Attempts made in the current retry budget.
    pub fn attempts_in_epoch(&self) -> u32 {
        self.attempts.len().saturating_sub(self.epoch_start) as u32
    }

    /// The model currently assigned.
    pub fn model(&self) -> &str {
        self.models
            .get(self.model_index)
            .or_else(|| self.models.last())
            .map(String::as_str)
            .unwrap_or_default()
    }

    /// The model that answered last, else the one assigned.
    pub fn last_model(&self) -> &str {
        self.attempts
            .last()
            .map_or_else(|| self.model(), |a| a.model.as_str())
    }
}

/// A committed attempt waiting for the arbiter (see [`RunState::under_review`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderReview {
    /// The attempt, with its commit, its spend and what it changed.
    pub attempt: AttemptRecord,
    /// The stage's metadata block, which the review is shown.
    pub meta: StageMeta,
    /// The facts the attempt established for its review (claims, unmet requirements,
    /// weakened tests, failing examples), recorded before the arbiter is asked so a resumed
    /// review has every one of them (`None`: a record older than this field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<Vec<crate::code::Finding>>,
}

/// The best commit of a run by facts: one that passed every fact the run can check (the
/// verify command, the acceptance examples, no weakened test, every typed requirement met),
/// at least one of them real. A later stage that breaks it, or would stop the run, is
/// dropped, and the run ends on this commit, at least FLAG.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidenced {
    /// The commit.
    pub commit: ObjectId,
    /// The stage that made it.
    pub stage: Stage,
    /// The facts it passed, one sentence each.
    pub facts: Vec<String>,
}

/// Where the consensus stage of a run stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ConsensusState {
    /// The deliberation under way (or just decided).
    pub current: Option<Deliberation>,
    /// Earlier deliberations of this run (each sent the refactor stage back).
    #[serde(default)]
    pub past: Vec<Deliberation>,
    /// The arbiter's observation of the last decision.
    pub observation: Option<Observation>,
    /// Whether the consensus stage is finished for the current refactored result.
    pub done: bool,
}

/// The arbiter's look at a consensus: sound, or groupthink.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The arbiter model (empty when the facts alone decided).
    pub model: String,
    /// APPROVE or FLAG: the observer cannot block, only flag.
    pub verdict: Verdict,
    /// What it saw.
    pub reasoning: String,
    /// Facts that contradict the agreement (critical findings the agents approved over).
    #[serde(default)]
    pub contradicted_by: Vec<String>,
}

/// Where the reconciliation of a run stands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReconcileState {
    /// `--reconcile-model`, if given.
    pub model: Option<String>,
    /// Whether the one REJECT rewind was used.
    pub rewound: bool,
    /// The last reconciliation verdict.
    pub verdict: Option<Verdict>,
    /// Whether reconciliation is finished for the current final commit.
    pub done: bool,
    /// The model that gave the last verdict (records before it say nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arbiter_model: Option<String>,
    /// When the facts raised the model's verdict: what it answered, and the facts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raised: Option<Raised>,
}

/// A verdict the facts raised above what the model answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Raised {
    /// What the model answered.
    pub from: Verdict,
    /// The facts that raised it, in words.
    pub by: Vec<String>,
}
