//! The run record: `refs/triad/runs/<run-id>`, one commit per event, whose tree holds
//! `run.json` (the whole state) and `transcript/NNN-<stage>-<role>.json`.

use std::collections::BTreeMap;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::stage::Stage;
use crate::arbiter::{Issue, Verdict};
use crate::git::worktree::CommandOutcome;
use crate::git::{self, Context as _, GitError};

/// Ref namespace of run records.
pub const RUNS_PREFIX: &str = "refs/triad/runs/";

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
    /// Stopped by an error (provider down, ...); `resume` retries.
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

/// One attempt at a stage.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    /// 1-based.
    pub n: u32,
    /// The model that answered.
    pub model: String,
    /// The commit built from the answer (also for rejected attempts).
    pub commit: Option<String>,
    /// The arbiter's verdict, if reviewed.
    pub verdict: Option<Verdict>,
    /// The arbiter model, if reviewed.
    pub arbiter_model: Option<String>,
    /// `accepted`, `rejected`, `edits_failed`, `bad_answer`, `outcome`, `halted`.
    pub result: String,
    /// Short explanation.
    pub detail: String,
    /// USD for the stage call(s) and review.
    pub cost_usd: f64,
    /// Tokens in/out.
    pub tokens: [u64; 2],
    /// Milliseconds of model latency.
    pub latency_ms: u64,
}

/// One stage of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageRecord {
    /// Which.
    pub stage: Stage,
    /// The accepted commit.
    pub commit: Option<String>,
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
}

/// The whole state of a run (`run.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Format version.
    pub v: u32,
    /// The run id.
    pub run_id: String,
    /// Task slug.
    pub task: String,
    /// Blob id of the TaskSpec at start.
    pub task_blob: String,
    /// Base commit (HEAD at start).
    pub base: String,
    /// The scratch branch.
    pub branch: String,
    /// Where the run stands.
    pub status: RunStatus,
    /// Human explanation of the status.
    pub message: String,
    /// Arbiter mode.
    pub mode: String,
    /// Retries per stage.
    pub max_retries: u32,
    /// Escalation policy.
    pub on_exhausted: String,
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
    /// The verifier's implementation summary.
    pub implementation_summary: Option<Value>,
    /// Questions, dependencies etc. of a non-APPROVE outcome.
    pub outcome: Option<Value>,
    /// Cost so far in USD.
    pub cost_usd: f64,
    /// Tokens in/out so far.
    pub tokens: [u64; 2],
    /// The run's budget cap.
    pub budget_usd: Option<f64>,
    /// Number of transcript entries.
    pub transcripts: u32,
    /// Effective configuration when the run started (secrets never appear in config).
    pub config: Value,
    /// Unix time of start.
    pub started: u64,
    /// Reconciliation against the TaskSpec (`--reconcile`), when enabled.
    #[serde(default)]
    pub reconcile: Option<ReconcileState>,
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
    /// The branch tip for the next stage: the last accepted commit, else the base.
    pub fn tip(&self) -> &str {
        self.stages
            .iter()
            .rev()
            .find_map(|s| s.commit.as_deref())
            .unwrap_or(&self.base)
    }

    /// The final verdict: the worst of the reviewed stages' and the reconciliation's.
    pub fn final_verdict(&self) -> Option<Verdict> {
        self.stages
            .iter()
            .filter_map(|s| s.verdict)
            .chain(self.reconcile.as_ref().and_then(|r| r.verdict))
            .max()
    }
}

/// Reads and writes one run's record.
pub struct Recorder<'r> {
    repo: &'r Repository,
    refname: String,
    tip: Option<Oid>,
    pending: BTreeMap<String, Vec<u8>>,
    keep: Vec<Oid>,
}

impl<'r> Recorder<'r> {
    /// A recorder for a new run (the ref must not exist yet) or an existing one.
    pub fn open(repo: &'r Repository, run_id: &str) -> Self {
        let refname = format!("{RUNS_PREFIX}{run_id}");
        let tip = git::ref_target(repo, &refname);
        Recorder {
            repo,
            refname,
            tip,
            pending: BTreeMap::new(),
            keep: Vec::new(),
        }
    }

    /// Loads `run.json` from the record's tip.
    pub fn load(&self) -> Result<Option<RunState>, GitError> {
        let Some(tip) = self.tip else { return Ok(None) };
        let commit = self.repo.find_commit(tip).ctx("reading the run record")?;
        let tree = commit.tree().ctx("reading the run record")?;
        let entry = tree
            .get_path(std::path::Path::new("run.json"))
            .ctx("run record has no run.json")?;
        let blob = self.repo.find_blob(entry.id()).ctx("reading run.json")?;
        serde_json::from_slice(blob.content())
            .map(Some)
            .map_err(|e| {
                GitError::Command(format!("run.json of {} is unreadable: {e}", self.refname))
            })
    }

    /// Queues a transcript file for the next event.
    pub fn transcript(&mut self, state: &mut RunState, stage: &str, role: &str, body: &Value) {
        state.transcripts += 1;
        let name = format!("transcript/{:03}-{stage}-{role}.json", state.transcripts);
        let text = serde_json::to_vec_pretty(body).unwrap_or_default();
        self.pending.insert(name, text);
    }

    /// Keeps a commit reachable from the record (rejected attempts).
    pub fn keep(&mut self, commit: Oid) {
        self.keep.push(commit);
    }

    /// Writes one event: a commit whose tree is the previous one plus `run.json` and the
    /// queued transcripts; the ref moves by compare-and-swap.
    pub fn event(&mut self, state: &RunState, what: &str) -> Result<(), GitError> {
        let mut update = git2::build::TreeUpdateBuilder::new();
        let json = serde_json::to_vec_pretty(state)
            .map_err(|e| GitError::Command(format!("cannot serialize the run state: {e}")))?;
        let blob = self.repo.blob(&json).ctx("writing run.json")?;
        update.upsert("run.json", blob, git2::FileMode::Blob);
        for (path, bytes) in std::mem::take(&mut self.pending) {
            let blob = self.repo.blob(&bytes).ctx("writing a transcript")?;
            update.upsert(path, blob, git2::FileMode::Blob);
        }
        let base_tree = match self.tip {
            Some(t) => self
                .repo
                .find_commit(t)
                .and_then(|c| c.tree())
                .ctx("reading the run record")?,
            None => {
                let empty = self
                    .repo
                    .treebuilder(None)
                    .and_then(|b| b.write())
                    .ctx("writing an empty tree")?;
                self.repo.find_tree(empty).ctx("reading the empty tree")?
            }
        };
        let tree = update
            .create_updated(self.repo, &base_tree)
            .ctx("building the run record tree")?;
        let mut parents: Vec<Oid> = self.tip.into_iter().collect();
        parents.append(&mut self.keep);
        let msg = format!("triad run {}: {what}\n", state.run_id);
        let commit = git::commit(self.repo, tree, &parents, &msg)?;
        git::cas_ref(self.repo, &self.refname, commit, self.tip, &msg)?;
        self.tip = Some(commit);
        Ok(())
    }
}

/// Every run id with a record, newest first (by start time in run.json).
pub fn list_runs(repo: &Repository) -> Vec<RunState> {
    let mut runs = Vec::new();
    if let Ok(refs) = repo.references_glob(&format!("{RUNS_PREFIX}*")) {
        for r in refs.flatten() {
            let Some(name) = r.name() else { continue };
            let id = name.trim_start_matches(RUNS_PREFIX).to_string();
            if let Ok(Some(state)) = Recorder::open(repo, &id).load() {
                runs.push(state);
            }
        }
    }
    runs.sort_by(|a, b| b.started.cmp(&a.started).then(b.run_id.cmp(&a.run_id)));
    runs
}
