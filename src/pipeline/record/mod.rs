//! What a run records about itself (`run.json`, format 2): typed state, attempts, the reason
//! it stopped. [`recorder`] keeps it in git; [`upgrade`] reads what format 1 wrote.

mod chamber;
mod debate;
mod format;
mod parallel;
mod recorder;
mod stop;
mod transcript;
mod upgrade;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use chamber::{ChamberLink, ChamberRun};
pub use debate::{
    Absence, Against, DebateNext, DebatePhase, DebateState, Debater, Judgment, Speech,
};
pub use format::FormatRecord;
pub use parallel::{
    Candidate, CandidateReview, CrossReview, ParallelState, Rating, Synthesis, Winner, WonBy,
};
pub use recorder::{list_runs, Recorder};
pub use stop::{one_line, ModelFailure, NoRewind, StopReason};
pub use transcript::Transcript;

use super::fit::LeftOut;
use super::reconcile::ImplementationSummary;
use super::stage::Stage;
use crate::arbiter::{Issue, Verdict};
use crate::config::{ArbiterMode, OnExhausted};
use crate::consensus::envelope::Message;
use crate::consensus::suggestion::Suggestion;
use crate::consensus::Deliberation;
use crate::git::worktree::CommandOutcome;
use crate::git::{FileStat, ObjectId};
use crate::model::Spend;
use crate::routing::route::Routing;
use crate::task::outcome::StageMeta;

/// Ref namespace of run records.
pub const RUNS_PREFIX: &str = "refs/triad/runs/";

/// The `run.json` format this build writes. Format 1 (the first release) is read through
/// [`upgrade`].
pub const RECORD_VERSION: u32 = 2;

/// How a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Working (or killed while working: `resume` continues it).
    Running,
    /// Finished; the final verdict was APPROVE.
    Approved,
    /// Finished; the final verdict was FLAG.
    Flagged,
    /// The arbiter (or an escalation) halted the run.
    Halted,
    /// Retries used up and no escalation left.
    RetriesExhausted,
    /// Stopped before crossing the budget.
    BudgetExceeded,
    /// A stage asked the user for information.
    WaitingOnUser,
    /// Stopped by an error (provider down, a note that could not be written, ...);
    /// `resume` retries.
    Failed,
}

impl RunStatus {
    /// Whether `resume` may continue the run.
    pub fn resumable(self) -> bool {
        matches!(
            self,
            RunStatus::Running
                | RunStatus::Failed
                | RunStatus::BudgetExceeded
                | RunStatus::WaitingOnUser
        )
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Approved => "approved",
            RunStatus::Flagged => "flagged",
            RunStatus::Halted => "halted",
            RunStatus::RetriesExhausted => "retries_exhausted",
            RunStatus::BudgetExceeded => "budget_exceeded",
            RunStatus::WaitingOnUser => "waiting_on_user",
            RunStatus::Failed => "failed",
        }
    }
}

/// What became of one attempt at a stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttemptResult {
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
    /// It answered an outcome other than APPROVE; the run stopped.
    Outcome,
    /// The arbiter halted the run on it.
    Halted,
}

impl AttemptResult {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptResult::Accepted => "accepted",
            AttemptResult::Rejected => "rejected",
            AttemptResult::EditsFailed => "edits_failed",
            AttemptResult::BadAnswer => "bad_answer",
            AttemptResult::NoChange => "no_change",
            AttemptResult::Incomplete => "incomplete",
            AttemptResult::Failing => "failing",
            AttemptResult::Outcome => "outcome",
            AttemptResult::Halted => "halted",
        }
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
}

impl StageRecord {
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

/// The whole state of a run (`run.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Format version ([`RECORD_VERSION`]).
    pub v: u32,
    /// The run id.
    pub run_id: String,
    /// Task slug.
    pub task: String,
    /// Blob id of the TaskSpec at start.
    pub task_blob: ObjectId,
    /// Base commit (HEAD at start).
    pub base: ObjectId,
    /// The scratch branch.
    pub branch: String,
    /// Where the run stands.
    pub status: RunStatus,
    /// Why the run stopped, once it has (`None` while it runs).
    pub stop: Option<StopReason>,
    /// Arbiter mode.
    pub mode: ArbiterMode,
    /// Retries per stage.
    pub max_retries: u32,
    /// Escalation policy.
    pub on_exhausted: OnExhausted,
    /// Index of the stage in progress.
    pub current: usize,
    /// Stages.
    pub stages: Vec<StageRecord>,
    /// FLAG issues waiting for the next stage.
    pub pending_flags: Vec<Issue>,
    /// All flags raised in the run (for the arbiter's "previous flags").
    pub all_flags: Vec<Issue>,
    /// Retry feedback for the current stage.
    pub feedback: String,
    /// The verify command's result.
    pub verify: Option<CommandOutcome>,
    /// The commit the verify command ran at: a verifier that fixes something has the
    /// command run again at its own commit, and a retry after it at the tip again.
    #[serde(default)]
    pub verify_at: Option<ObjectId>,
    /// Whether the verify command passed at the run's base, once a building stage's change
    /// made it fail (a command that already failed there holds no building stage back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_verify: Option<bool>,
    /// The verifier's implementation summary.
    pub implementation_summary: Option<ImplementationSummary>,
    /// What every call of the run cost so far.
    pub spend: Spend,
    /// The run's budget cap.
    pub budget_usd: Option<f64>,
    /// Number of transcript entries.
    pub transcripts: u32,
    /// Effective configuration when the run started (secrets never appear in config).
    pub config: Value,
    /// Unix time of start.
    pub started: u64,
    /// Reconciliation against the TaskSpec (`--reconcile`), when enabled.
    pub reconcile: Option<ReconcileState>,
    /// An attempt of the current stage that answered and was committed, waiting for its
    /// review: recorded before the arbiter is asked, so a run killed during the review
    /// resumes with the review, without asking the stage model again. Absent in records of
    /// earlier builds, which read as "nothing waiting".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub under_review: Option<UnderReview>,
    /// The consensus stage (`--consensus`), when enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consensus: Option<ConsensusState>,
    /// Parallel exploration (`--workflow parallel`): candidates, votes, winner, synthesis.
    /// Absent for a sequential run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<ParallelState>,
    /// Debate (`--workflow debate`): papers, rebuttals, final arguments and the judgment
    /// whose winning position the architect builds. Absent for other workflows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debate: Option<DebateState>,
    /// The chamber of a run with `--chamber auto` (none: decisions are not deliberated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chamber: Option<ChamberRun>,
    /// Every run of the formatter (`format.command`) between the last stage before Verify
    /// and Verify, in order. Empty when none is configured (and in earlier records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub format: Vec<FormatRecord>,
    /// Every message between the run's agents, in order (seed 001 §4.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<Message>,
    /// Cross-domain suggestions of accepted stage answers and what became of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
    /// How the roles routed by measured fitness got their models, and why (records written
    /// before routing existed have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// The profile the run was planned with (`Some(None)`: none), so a resume fills the same
    /// roles the same way; `None` in records written before it was kept.
    #[serde(
        default,
        deserialize_with = "recorded",
        skip_serializing_if = "Option::is_none"
    )]
    pub profile: Option<Option<String>>,
}

/// Reads a field that may be `null` as present: `Some(None)`, where a missing one is `None`.
fn recorded<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A committed attempt waiting for the arbiter (see [`RunState::under_review`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnderReview {
    /// The attempt, with its commit, its spend and what it changed.
    pub attempt: AttemptRecord,
    /// The stage's metadata block, which the review is shown.
    pub meta: StageMeta,
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
}

impl RunState {
    /// The branch tip for the next stage: the last accepted commit (or the formatter's
    /// commit on top of it), else the base.
    pub fn tip(&self) -> &ObjectId {
        let stage_tip = self.stage_tip();
        match self.format.last() {
            Some(f) if &f.input == stage_tip => f.commit.as_ref().unwrap_or(stage_tip),
            _ => stage_tip,
        }
    }

    /// The last accepted stage commit, else the base (the formatter's input).
    pub fn stage_tip(&self) -> &ObjectId {
        self.stages
            .iter()
            .rev()
            .find_map(|s| s.commit.as_ref())
            .unwrap_or(&self.base)
    }

    /// The final verdict: the worst of the reviewed stages', the reconciliation's and the
    /// one the run's end implies (HALT for a halted run, REJECT when retries ran out), so a
    /// stopped run never reads as approved by the stages it did finish.
    pub fn final_verdict(&self) -> Option<Verdict> {
        let ended = match self.status {
            RunStatus::Halted => Some(Verdict::Halt),
            RunStatus::RetriesExhausted => Some(Verdict::Reject),
            _ => None,
        };
        self.stages
            .iter()
            .filter_map(|s| s.verdict)
            .chain(self.reconcile.as_ref().and_then(|r| r.verdict))
            .chain(
                self.consensus
                    .as_ref()
                    .and_then(|c| c.observation.as_ref())
                    .map(|o| o.verdict),
            )
            .chain(ended)
            .max()
    }

    /// The models that may judge this run's stages after their assigned arbiter: the
    /// arbiter role's routed models when the run routed that role, else its list.
    pub fn arbiter_pool(
        &self,
        loaded: &crate::config::LoadedConfig,
        profile: Option<&str>,
    ) -> Vec<String> {
        self.routing
            .as_ref()
            .and_then(|r| r.models(crate::config::Role::Arbiter))
            .map_or_else(
                || loaded.role_models(crate::config::Role::Arbiter, profile),
                <[String]>::to_vec,
            )
    }

    /// The stage in progress, if any is left.
    pub fn current_stage(&self) -> Option<Stage> {
        self.stages.get(self.current).map(|s| s.stage)
    }

    /// Stops the run: the status and the reason, together.
    pub fn stop(&mut self, status: RunStatus, reason: StopReason) {
        self.status = status;
        self.stop = Some(reason);
    }
}
