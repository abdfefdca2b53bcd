//! The whole state of a run (`run.json`): read through its accessors, changed only through
//! the methods below, each of which keeps it whole (an attempt goes to the stage in
//! progress, moving on clears the feedback, a rewind resets the retry budgets it must, a
//! stop sets the status and its reason together). The workflows' own records (parallel,
//! debate, consensus, chamber, reconciliation, suggestions) are lent whole to the steps that
//! keep them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    AttemptRecord, ChamberRun, ConsensusState, DebateState, Evidenced, FormatRecord, ParallelState,
    ReconcileState, RunStatus, StageRecord, StopReason, UnderReview, RECORD_VERSION,
};
use crate::arbiter::{Issue, Verdict};
use crate::config::{ArbiterMode, OnExhausted};
use crate::consensus::envelope::Message;
use crate::consensus::suggestion::Suggestion;
use crate::git::ObjectId;
use crate::model::Spend;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::stage::Stage;
use crate::pipeline::workflow::WorkflowState;
use crate::routing::route::Routing;
use crate::sandbox::CommandOutcome;

/// What a new run starts with, as its plan decided it.
pub struct Start {
    /// The run id.
    pub run_id: String,
    /// Task slug.
    pub task: String,
    /// Blob id of the TaskSpec at start.
    pub task_blob: ObjectId,
    /// Base commit (HEAD at start).
    pub base: ObjectId,
    /// Arbiter mode.
    pub mode: ArbiterMode,
    /// Retries per stage.
    pub max_retries: u32,
    /// Escalation policy.
    pub on_exhausted: OnExhausted,
    /// The stages with their models.
    pub stages: Vec<StageRecord>,
    /// The run's budget cap.
    pub budget_usd: Option<f64>,
    /// Effective configuration.
    pub config: Value,
    /// The reconciliation, when enabled.
    pub reconcile: Option<ReconcileState>,
    /// The consensus stage, when enabled.
    pub consensus: Option<ConsensusState>,
    /// The workflow it follows, with nothing of it recorded yet.
    pub workflow: WorkflowState,
    /// The chamber, with `--chamber auto`.
    pub chamber: Option<ChamberRun>,
    /// How roles routed by fitness got their models.
    pub routing: Option<Routing>,
    /// The profile the run is planned with.
    pub profile: Option<String>,
}

/// The whole state of a run (`run.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    /// Format version ([`RECORD_VERSION`]).
    v: u32,
    /// The run id.
    run_id: String,
    /// Task slug.
    task: String,
    /// Blob id of the TaskSpec at start.
    task_blob: ObjectId,
    /// Base commit (HEAD at start).
    base: ObjectId,
    /// The scratch branch.
    branch: String,
    /// Where the run stands.
    status: RunStatus,
    /// Why the run stopped, once it has (`None` while it runs).
    stop: Option<StopReason>,
    /// Arbiter mode.
    mode: ArbiterMode,
    /// Retries per stage.
    max_retries: u32,
    /// Escalation policy.
    on_exhausted: OnExhausted,
    /// Index of the stage in progress.
    current: usize,
    /// Stages.
    stages: Vec<StageRecord>,
    /// FLAG issues waiting for the next stage.
    pending_flags: Vec<Issue>,
    /// All flags raised in the run (for the arbiter's "previous flags").
    all_flags: Vec<Issue>,
    /// Retry feedback for the current stage.
    feedback: String,
    /// The verify command's result.
    verify: Option<CommandOutcome>,
    /// The commit the verify command ran at: a verifier that fixes something has the
    /// command run again at its own commit, and a retry after it at the tip again.
    #[serde(default)]
    verify_at: Option<ObjectId>,
    /// Whether the verify command passed at the run's base, once a building stage's change
    /// made it fail (a command that already failed there holds no building stage back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base_verify: Option<bool>,
    /// The verifier's implementation summary.
    implementation_summary: Option<ImplementationSummary>,
    /// What every call of the run cost so far.
    spend: Spend,
    /// The run's budget cap.
    budget_usd: Option<f64>,
    /// Number of transcript entries.
    transcripts: u32,
    /// Effective configuration when the run started (secrets never appear in config).
    config: Value,
    /// Unix time of start.
    started: u64,
    /// Reconciliation against the TaskSpec (`--reconcile`), when enabled.
    reconcile: Option<ReconcileState>,
    /// An attempt of the current stage that answered and was committed, waiting for its
    /// review: recorded before the arbiter is asked, so a run killed during the review
    /// resumes with the review, without asking the stage model again. Absent in records of
    /// earlier builds, which read as "nothing waiting".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    under_review: Option<UnderReview>,
    /// The consensus stage (`--consensus`), when enabled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    consensus: Option<ConsensusState>,
    /// The workflow it follows, with what it recorded of it (the keys `parallel` and
    /// `debate` of earlier builds: see [`WorkflowState`]).
    #[serde(flatten)]
    workflow: WorkflowState,
    /// The chamber of a run with `--chamber auto` (none: decisions are not deliberated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chamber: Option<ChamberRun>,
    /// Every run of the formatter (`format.command`) between the last stage before Verify
    /// and Verify, in order. Empty when none is configured (and in earlier records).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    format: Vec<FormatRecord>,
    /// Every message between the run's agents, in order (seed 001 §4.3).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    messages: Vec<Message>,
    /// Cross-domain suggestions of accepted stage answers and what became of each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    suggestions: Vec<Suggestion>,
    /// How the roles routed by measured fitness got their models, and why (records written
    /// before routing existed have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    routing: Option<Routing>,
    /// The best commit by facts so far, once one passed every fact (see [`Evidenced`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    best: Option<Evidenced>,
    /// The layers of the box that held around the run's last boxed command (the verify
    /// command at any stage, the formatter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    sandbox: Option<crate::sandbox::Layers>,
    /// The profile the run was planned with (`Some(None)`: none), so a resume fills the same
    /// roles the same way; `None` in records written before it was kept.
    #[serde(
        default,
        deserialize_with = "recorded",
        skip_serializing_if = "Option::is_none"
    )]
    profile: Option<Option<String>>,
    /// The commits the run's stops marked for the pre-push gate (a run-outcome HALT or
    /// REJECT), so that a rescued run that ends approved or flagged supersedes each one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    marks: Vec<ObjectId>,
}

/// Reads a field that may be `null` as present: `Some(None)`, where a missing one is `None`.
fn recorded<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

impl RunState {
    /// A new run as its plan decided it: running, at its first stage, nothing spent.
    pub fn new(start: Start) -> RunState {
        RunState {
            v: RECORD_VERSION,
            branch: format!("triad/{}/{}", start.task, start.run_id),
            run_id: start.run_id,
            task: start.task,
            task_blob: start.task_blob,
            base: start.base,
            status: RunStatus::Running,
            stop: None,
            mode: start.mode,
            max_retries: start.max_retries,
            on_exhausted: start.on_exhausted,
            current: 0,
            stages: start.stages,
            pending_flags: Vec::new(),
            all_flags: Vec::new(),
            feedback: String::new(),
            verify: None,
            verify_at: None,
            base_verify: None,
            implementation_summary: None,
            spend: Spend::default(),
            budget_usd: start.budget_usd,
            transcripts: 0,
            config: start.config,
            reconcile: start.reconcile,
            consensus: start.consensus,
            workflow: start.workflow,
            chamber: start.chamber,
            format: Vec::new(),
            messages: Vec::new(),
            suggestions: Vec::new(),
            routing: start.routing,
            profile: Some(start.profile),
            started: crate::clock::now_unix(),
            under_review: None,
            best: None,
            sandbox: None,
            marks: Vec::new(),
        }
    }

    /// The commits the run's stops marked for the pre-push gate, oldest first.
    pub fn marks(&self) -> &[ObjectId] {
        &self.marks
    }

    /// Keeps that a stop marked `commit` for the pre-push gate.
    pub fn add_mark(&mut self, commit: ObjectId) {
        if !self.marks.contains(&commit) {
            self.marks.push(commit);
        }
    }

    /// The record's format version ([`RECORD_VERSION`] once written by this build).
    pub fn v(&self) -> u32 {
        self.v
    }

    /// The run id.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// The task's slug.
    pub fn task(&self) -> &str {
        &self.task
    }

    /// The blob of the TaskSpec as the run started with it.
    pub fn task_blob(&self) -> &ObjectId {
        &self.task_blob
    }

    /// The commit the run started from (HEAD then).
    pub fn base(&self) -> &ObjectId {
        &self.base
    }

    /// The run's scratch branch.
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// Where the run stands.
    pub fn status(&self) -> RunStatus {
        self.status
    }

    /// Why the run stopped, once it has (`None` while it runs).
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
    }

    /// The arbiter mode the run was planned with.
    pub fn mode(&self) -> ArbiterMode {
        self.mode
    }

    /// Retries a stage gets after its first attempt.
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Retries the stage at `idx` gets after its first attempt: the run's, and for a
    /// building stage (implement, refactor) also every attempt of the stages skipped just
    /// before it for having nothing to do (a bug fix's plan): a skipped stage's calls go to
    /// the stage that has the work.
    pub fn retries_at(&self, idx: usize) -> u32 {
        let Some(stage) = self.stages.get(idx) else {
            return self.max_retries;
        };
        if !matches!(stage.stage, Stage::Implement | Stage::Refactor) {
            return self.max_retries;
        }
        let skipped = self.stages[..idx]
            .iter()
            .rev()
            .take_while(|s| s.skipped.is_some())
            .count() as u32;
        self.max_retries + skipped * (self.max_retries + 1)
    }

    /// What a stage whose retries are used up does.
    pub fn on_exhausted(&self) -> OnExhausted {
        self.on_exhausted
    }

    /// The index of the stage in progress (past the last: every stage is done).
    pub fn current(&self) -> usize {
        self.current
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[StageRecord] {
        &self.stages
    }

    /// The issues of the last FLAG, waiting for the next stage.
    pub fn pending_flags(&self) -> &[Issue] {
        &self.pending_flags
    }

    /// Every flag raised in the run (each later review is shown them).
    pub fn all_flags(&self) -> &[Issue] {
        &self.all_flags
    }

    /// What the stage in progress is told in its next attempt (empty: nothing).
    pub fn feedback(&self) -> &str {
        &self.feedback
    }

    /// The verify command's last result.
    pub fn verify(&self) -> Option<&CommandOutcome> {
        self.verify.as_ref()
    }

    /// The commit the verify command last ran at.
    pub fn verify_at(&self) -> Option<&ObjectId> {
        self.verify_at.as_ref()
    }

    /// Whether the verify command passed at the run's base, once that was asked.
    pub fn base_verify(&self) -> Option<bool> {
        self.base_verify
    }

    /// The verifier's implementation summary, once it gave a readable one.
    pub fn implementation_summary(&self) -> Option<&ImplementationSummary> {
        self.implementation_summary.as_ref()
    }

    /// What every call of the run cost so far.
    pub fn spend(&self) -> Spend {
        self.spend
    }

    /// The run's budget cap, if any.
    pub fn budget_usd(&self) -> Option<f64> {
        self.budget_usd
    }

    /// How many transcripts the record holds.
    pub fn transcripts(&self) -> u32 {
        self.transcripts
    }

    /// The configuration the run used (secrets never appear in it).
    pub fn config(&self) -> &Value {
        &self.config
    }

    /// When the run started (Unix seconds).
    pub fn started(&self) -> u64 {
        self.started
    }

    /// The reconciliation, when the run has one.
    pub fn reconcile(&self) -> Option<&ReconcileState> {
        self.reconcile.as_ref()
    }

    /// The committed attempt waiting for its review, if any.
    pub fn under_review(&self) -> Option<&UnderReview> {
        self.under_review.as_ref()
    }

    /// The consensus stage, when the run has one.
    pub fn consensus(&self) -> Option<&ConsensusState> {
        self.consensus.as_ref()
    }

    /// The workflow it follows, with what it recorded of it.
    pub fn workflow(&self) -> &WorkflowState {
        &self.workflow
    }

    /// The workflow's record, for its steps to record a phase.
    pub fn workflow_mut(&mut self) -> &mut WorkflowState {
        &mut self.workflow
    }

    /// Every model the run may call: each stage's models (with `fallbacks`; else only the
    /// first, the one a stage calls unless it fails) and arbiter, its workflow's models and
    /// its chamber's.
    pub fn models(&self, fallbacks: bool) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for s in &self.stages {
            let take = if fallbacks { s.models.len() } else { 1 };
            models.extend(s.models.iter().take(take).cloned());
            models.extend(s.arbiter_model.iter().cloned());
        }
        models.extend(self.workflow.models());
        if let Some(c) = &self.chamber {
            models.extend(c.panel.iter().cloned());
            models.push(c.arbiter.clone());
        }
        models
    }

    /// The parallel exploration or tournament, for those workflows.
    pub fn parallel(&self) -> Option<&ParallelState> {
        self.workflow.parallel()
    }

    /// The debate, for that workflow.
    pub fn debate(&self) -> Option<&DebateState> {
        self.workflow.debate()
    }

    /// The chamber, with `--chamber auto`.
    pub fn chamber(&self) -> Option<&ChamberRun> {
        self.chamber.as_ref()
    }

    /// Every run of the formatter, in order.
    pub fn format(&self) -> &[FormatRecord] {
        &self.format
    }

    /// Every message between the run's agents, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The cross-domain suggestions and what became of each.
    pub fn suggestions(&self) -> &[Suggestion] {
        &self.suggestions
    }

    /// How the roles routed by fitness got their models.
    pub fn routing(&self) -> Option<&Routing> {
        self.routing.as_ref()
    }

    /// The profile the run was planned with (`Some(None)`: none; `None`: not recorded).
    pub fn profile(&self) -> Option<Option<&str>> {
        self.profile.as_ref().map(Option::as_deref)
    }

    /// Counts what a call cost in the run's spend.
    pub fn add_spend(&mut self, spend: Spend) {
        self.spend += spend;
    }

    /// Raises the budget cap to what was spent plus `more` (`resume --budget`).
    pub fn raise_budget(&mut self, more: f64) {
        self.budget_usd = Some(self.spend.cost_usd + more);
    }

    /// Records the configuration the run really uses (after the models' limits are known).
    pub fn record_config(&mut self, config: Value) {
        self.config = config;
    }

    /// Counts one more transcript and answers its number.
    pub fn count_transcript(&mut self) -> u32 {
        self.transcripts += 1;
        self.transcripts
    }

    /// Adds a message between the run's agents.
    pub fn say(&mut self, message: Message) {
        self.messages.push(message);
    }

    /// Adds a cross-domain suggestion.
    pub fn propose(&mut self, suggestion: Suggestion) {
        self.suggestions.push(suggestion);
    }

    /// Suggestion `i`, to decide or put to a vote.
    pub fn suggestion_mut(&mut self, i: usize) -> Option<&mut Suggestion> {
        self.suggestions.get_mut(i)
    }

    /// Adds a run of the formatter.
    pub fn push_format(&mut self, record: FormatRecord) {
        self.format.push(record);
    }

    /// The consensus stage, to deliberate, when the run has one.
    pub fn consensus_mut(&mut self) -> Option<&mut ConsensusState> {
        self.consensus.as_mut()
    }

    /// The parallel exploration, to record its phases.
    pub fn parallel_mut(&mut self) -> &mut ParallelState {
        self.workflow.parallel_mut()
    }

    /// The debate, to record its phases.
    pub fn debate_mut(&mut self) -> &mut DebateState {
        self.workflow.debate_mut()
    }

    /// The chamber, to link its sessions, with `--chamber auto`.
    pub fn chamber_mut(&mut self) -> Option<&mut ChamberRun> {
        self.chamber.as_mut()
    }

    /// The reconciliation, to record it.
    pub fn reconcile_mut(&mut self) -> &mut ReconcileState {
        self.reconcile.get_or_insert_with(Default::default)
    }

    /// Records an attempt at the stage in progress, which stays in progress.
    pub fn push_attempt(&mut self, attempt: AttemptRecord) {
        self.stages[self.current].attempts.push(attempt);
    }

    /// Records a refused attempt at the stage in progress and what its next attempt is told.
    pub fn refuse(&mut self, attempt: AttemptRecord, feedback: String) {
        self.push_attempt(attempt);
        self.feedback = feedback;
    }

    /// Accepts `attempt`'s `commit` as the result of the stage in progress, with the
    /// arbiter's `verdict` when it was reviewed, and moves on to the next stage, which
    /// starts with no feedback.
    pub fn accept(&mut self, attempt: AttemptRecord, commit: ObjectId, verdict: Option<Verdict>) {
        let s = &mut self.stages[self.current];
        s.attempts.push(attempt);
        s.commit = Some(commit);
        s.verdict = verdict;
        self.feedback.clear();
        self.current += 1;
    }

    /// Skips the stage in progress, which the task leaves nothing to do (`why`), and moves
    /// on to the next one; what it was told carries over to it.
    pub fn skip(&mut self, why: String) {
        self.stages[self.current].skipped = Some(why);
        self.current += 1;
    }

    /// The commit the next attempt at the stage in progress builds on instead of the
    /// stage's start (`None`: the stage's start).
    pub fn set_draft(&mut self, draft: Option<ObjectId>) {
        self.stages[self.current].draft = draft;
    }

    /// The issues of a FLAG go to the next stage and to every later review.
    pub fn carry_flags(&mut self, issues: Vec<Issue>) {
        self.all_flags.extend(issues.iter().cloned());
        self.pending_flags = issues;
    }

    /// No flags wait for the next stage (an APPROVE).
    pub fn clear_flags(&mut self) {
        self.pending_flags.clear();
    }

    /// Records the verify command's `outcome` at commit `at`.
    pub fn record_verify(&mut self, outcome: CommandOutcome, at: ObjectId) {
        self.verify = Some(outcome);
        self.verify_at = Some(at);
    }

    /// Records whether the verify command passed at the run's base.
    pub fn set_base_verify(&mut self, passed: bool) {
        self.base_verify = Some(passed);
    }

    /// Records the verifier's implementation summary (`None`: none could be read).
    pub fn set_implementation_summary(&mut self, summary: Option<ImplementationSummary>) {
        self.implementation_summary = summary;
    }

    /// Keeps a committed attempt for its review (a resumed run reviews it).
    pub fn hold_for_review(&mut self, held: UnderReview) {
        self.under_review = Some(held);
    }

    /// The attempt held for review, taken out of the state.
    pub fn take_under_review(&mut self) -> Option<UnderReview> {
        self.under_review.take()
    }

    /// The run is working (again): no stop reason stands.
    pub fn set_running(&mut self) {
        self.status = RunStatus::Running;
        self.stop = None;
    }

    /// Stops the run: the status and the reason, together.
    pub fn stop(&mut self, status: RunStatus, reason: StopReason) {
        self.status = status;
        self.stop = Some(reason);
    }

    /// Every stage is done: the run ends FLAG when any verdict flagged it or a stage was
    /// dropped for its best evidenced commit, else APPROVE.
    pub fn finish(&mut self) {
        let verdict = self.final_verdict();
        self.status = match verdict {
            Some(Verdict::Flag) => RunStatus::Flagged,
            _ => RunStatus::Approved,
        };
        let dropped = self
            .stages
            .iter()
            .filter_map(|s| Some(format!("{}: {}", s.stage, s.dropped.as_ref()?)))
            .collect();
        self.stop = Some(StopReason::Finished { verdict, dropped });
    }

    /// Records the layers of the box around the run's last boxed command.
    pub fn set_sandbox(&mut self, layers: Option<crate::sandbox::Layers>) {
        if layers.is_some() {
            self.sandbox = layers;
        }
    }

    /// The layers of the box around the run's last boxed command.
    pub fn sandbox(&self) -> Option<&crate::sandbox::Layers> {
        self.sandbox.as_ref()
    }

    /// The best commit by facts so far.
    pub fn best(&self) -> Option<&Evidenced> {
        self.best.as_ref()
    }

    /// Records `best` as the run's best evidenced commit (the last one to pass every fact).
    pub fn set_best(&mut self, best: Evidenced) {
        self.best = Some(best);
    }

    /// Goes back to the best evidenced commit instead of stopping or keeping a change that
    /// broke it: every stage after the one that made it loses its commit (kept on the
    /// record), the stage in progress (or, after the last stage, the last one with a commit)
    /// is marked dropped with `why` (the others with what came after the best commit; the
    /// `attempt` that failed, if given, kept on its record), and the run goes on at the next
    /// stage. `false` (nothing done) without a best commit, or when nothing after it is on
    /// the result.
    pub fn drop_to_best(&mut self, why: &str, attempt: Option<AttemptRecord>) -> bool {
        let Some(best) = &self.best else {
            return false;
        };
        let from = best.stage.index() + 1;
        let done = self.current >= self.stages.len();
        let blamed = if done {
            let last = self.stages.iter().rposition(|s| s.commit.is_some());
            match last.filter(|&i| i >= from) {
                Some(i) => i,
                None => return false,
            }
        } else if self.current < from {
            return false;
        } else {
            self.current
        };
        if let Some(a) = attempt {
            self.stages[blamed].attempts.push(a);
        }
        for (i, s) in self.stages.iter_mut().enumerate().skip(from) {
            if i == blamed {
                s.dropped = Some(why.to_string());
            } else if i < blamed && s.commit.is_some() {
                s.dropped = Some(format!(
                    "its commit came after the best evidenced commit ({}), which a later stage's failure sent the run back to",
                    best.commit.short()
                ));
            }
            if i <= blamed {
                s.commit = None;
                s.verdict = None;
                s.draft = None;
            }
        }
        // A formatter run on a dropped commit is not on the result either.
        self.format.retain(|f| {
            self.stages
                .iter()
                .any(|s| s.commit.as_ref() == Some(&f.input))
        });
        self.under_review = None;
        self.feedback.clear();
        self.pending_flags.clear();
        if !done {
            self.current += 1;
        }
        true
    }

    /// The stage in progress starts a fresh retry budget, told `feedback` (a run taken up
    /// after it waited).
    pub fn fresh_budget(&mut self, feedback: String) {
        if let Some(s) = self.stages.get_mut(self.current) {
            s.epoch_start = s.attempts.len();
        }
        self.feedback = feedback;
    }

    /// A run that waited is taken up: a fresh retry budget with `feedback`, and working
    /// again (the reason it waited stays on record until its loop runs).
    pub fn taken_up(&mut self, feedback: String) {
        self.fresh_budget(feedback);
        self.status = RunStatus::Running;
    }

    /// The retries of the stage in progress are used up: the earlier stage `to` is redone
    /// with its next model, and both start fresh retry budgets; `why` goes before the
    /// feedback so far.
    pub fn rewind(&mut self, to: Stage, why: &str) {
        let prev = to.index();
        let ps = &mut self.stages[prev];
        ps.model_index += 1;
        ps.commit = None;
        ps.verdict = None;
        ps.epoch_start = ps.attempts.len();
        let s = &mut self.stages[self.current];
        s.epoch_start = s.attempts.len();
        self.current = prev;
        self.feedback = format!("{why}{}", self.feedback);
    }

    /// A person's answer to a HALT (seed 000 B3.3: "rewind N stages, change model
    /// assignment, or abort"): the stage the run stopped at, and the `n - 1` before it, are
    /// redone from the commit before them (theirs stay on the record), the first of them on
    /// `model` when given (put first in its list, added when it was not there), with a fresh
    /// retry budget and `feedback`. Answers the stage the run goes back to, or why it
    /// cannot.
    pub fn rewind_by_you(
        &mut self,
        n: usize,
        model: Option<&str>,
        feedback: String,
    ) -> Result<Stage, String> {
        let at = self.current.min(self.stages.len().saturating_sub(1));
        if n == 0 || n > at + 1 {
            return Err(format!(
                "--rewind takes 1 to {} here: the run stopped at the {} stage",
                at + 1,
                self.stages[at].stage
            ));
        }
        let to = at + 1 - n;
        for s in &mut self.stages[to..] {
            s.commit = None;
            s.verdict = None;
            s.draft = None;
            s.dropped = None;
            s.epoch_start = s.attempts.len();
        }
        if let Some(m) = model {
            let s = &mut self.stages[to];
            let from = s.model_index.min(s.models.len());
            s.models.retain(|x| x != m);
            s.models.insert(from.min(s.models.len()), m.to_string());
            s.model_index = from.min(s.models.len() - 1);
        }
        if self.best.as_ref().is_some_and(|b| b.stage.index() >= to) {
            self.best = None;
        }
        self.format.clear();
        self.under_review = None;
        self.pending_flags.clear();
        self.current = to;
        self.feedback = feedback;
        self.set_running();
        Ok(self.stages[to].stage)
    }

    /// The reconciliation's one REJECT rewind: `to` and the stages after it are redone,
    /// `to` on top of the rejected change (`draft`), told `feedback`; the verify command and
    /// the summary are asked again.
    pub fn reconcile_rewind(&mut self, to: Stage, draft: ObjectId, feedback: String) {
        for s in &mut self.stages[to.index()..] {
            s.commit = None;
            s.verdict = None;
            s.epoch_start = s.attempts.len();
            s.draft = None;
        }
        self.stages[to.index()].draft = Some(draft);
        self.reconcile_mut().rewound = true;
        self.current = to.index();
        self.verify = None;
        self.implementation_summary = None;
        self.feedback = feedback;
    }

    /// The consensus sends the refactor stage back, on top of its result, told `feedback`;
    /// its deliberation is kept among the past ones.
    pub fn back_to_refactor(&mut self, feedback: String) {
        self.feedback = feedback;
        if let Some(c) = self.consensus.as_mut() {
            if let Some(done) = c.current.take() {
                c.past.push(done);
            }
            c.observation = None;
        }
        let refactor = &mut self.stages[Stage::Refactor.index()];
        refactor.epoch_start = refactor.attempts.len();
        self.current = Stage::Refactor.index();
        self.verify = None;
    }

    /// The stage in progress hands its work to `to`, which works with `block` in its prompt
    /// and a fresh retry budget. An earlier stage redoes its work and the stages after it
    /// follow again; a later stage takes it over from where the run stands, and the stages
    /// in between are left out.
    pub fn hand_over(&mut self, to: Stage, block: String) {
        let idx = self.current;
        let target = to.index();
        let redo = if target <= idx {
            target..idx + 1
        } else {
            idx..idx + 1
        };
        for s in &mut self.stages[redo] {
            if target < idx {
                s.commit = None;
                s.verdict = None;
                s.draft = None;
            }
            s.epoch_start = s.attempts.len();
        }
        let t = &mut self.stages[target];
        t.epoch_start = t.attempts.len();
        if target < Stage::Verify.index() {
            self.verify = None;
            if let Some(c) = self.consensus.as_mut() {
                if let Some(done) = c.current.take() {
                    c.past.push(done);
                }
                c.observation = None;
                c.done = false;
            }
        }
        self.current = target;
        self.feedback = block;
        self.set_running();
    }

    /// A parallel exploration's result stands in for the implement stage (`attempt`, its
    /// one accepted attempt, at `tip`); Verify comes next.
    pub fn conclude_exploration(&mut self, attempt: AttemptRecord, tip: ObjectId) {
        let implement = &mut self.stages[Stage::Implement.index()];
        implement.attempts.push(attempt);
        implement.commit = Some(tip);
        self.current = Stage::Verify.index();
        self.parallel_mut().done = true;
    }

    /// Under budget pressure, stage `idx` asks its model at position `at` next (see
    /// `pipeline::run::economy`).
    pub fn put_model_next(&mut self, idx: usize, at: usize) {
        let s = &mut self.stages[idx];
        let from = s.model_index.min(s.models.len());
        let model = s.models.remove(at);
        s.models.insert(from, model);
    }

    /// After `git triad reconcile`: a REJECT or HALT halts the run (answers true); any
    /// other verdict leaves it as it ended (`was`, for `why`), flagged when the verdicts now
    /// say so, except a halted run, which stays halted.
    pub fn reconciled_again(&mut self, was: RunStatus, why: Option<StopReason>) -> bool {
        let verdict = self.reconcile.as_ref().and_then(|r| r.verdict);
        if matches!(verdict, Some(Verdict::Reject | Verdict::Halt)) {
            self.status = RunStatus::Halted;
            return true;
        }
        self.status = if was == RunStatus::Halted {
            was
        } else {
            match self.final_verdict() {
                Some(Verdict::Flag) => RunStatus::Flagged,
                _ => RunStatus::Approved,
            }
        };
        self.stop = why;
        false
    }
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
        // A stage dropped for the best evidenced commit leaves the run at least FLAG; so does
        // a panel that went on with its only usable solution.
        let alone = self
            .parallel()
            .and_then(|p| p.winner.as_ref())
            .is_some_and(|w| w.by == crate::pipeline::record::WonBy::Alone);
        let dropped =
            (self.stages.iter().any(|s| s.dropped.is_some()) || alone).then_some(Verdict::Flag);
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
            .chain(dropped)
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::record::AttemptResult;

    fn id(n: u8) -> ObjectId {
        git2::Oid::from_bytes(&[n; 20]).unwrap().into()
    }

    /// A new run over the four stages, each with two models.
    fn run() -> RunState {
        let stages = Stage::ALL
            .iter()
            .map(|&stage| StageRecord {
                stage,
                commit: None,
                verdict: None,
                models: vec!["a".into(), "b".into()],
                model_index: 0,
                arbiter_model: None,
                attempts: Vec::new(),
                reviewed: false,
                epoch_start: 0,
                draft: None,
                dropped: None,
                skipped: None,
            })
            .collect();
        RunState::new(Start {
            run_id: "r1".into(),
            task: "t".into(),
            task_blob: id(9),
            base: id(1),
            mode: ArbiterMode::Bookend,
            max_retries: 2,
            on_exhausted: OnExhausted::Rewind,
            stages,
            budget_usd: None,
            config: Value::Null,
            reconcile: None,
            consensus: Some(ConsensusState::default()),
            workflow: WorkflowState::Sequential,
            chamber: None,
            routing: None,
            profile: None,
        })
    }

    fn attempt(n: u32, result: AttemptResult) -> AttemptRecord {
        AttemptRecord {
            n,
            model: "a".into(),
            commit: None,
            verdict: None,
            arbiter_model: None,
            result,
            detail: String::new(),
            spend: Spend::default(),
            changed: Vec::new(),
            left_out: Default::default(),
            evidenced: None,
        }
    }

    #[test]
    fn a_new_run_is_running_at_its_first_stage_on_its_own_branch() {
        let s = run();
        assert_eq!(s.status(), RunStatus::Running);
        assert_eq!(s.current_stage(), Some(Stage::Architect));
        assert_eq!(s.branch(), "triad/t/r1");
        assert_eq!(s.tip(), s.base());
        assert_eq!(s.profile(), Some(None));
    }

    #[test]
    fn a_refusal_stays_at_the_stage_and_acceptance_moves_on_without_feedback() {
        let mut s = run();
        s.refuse(attempt(1, AttemptResult::Rejected), "## fix it".into());
        assert_eq!(s.current(), 0);
        assert_eq!(s.feedback(), "## fix it");
        assert_eq!(s.stages()[0].attempts_in_epoch(), 1);
        s.accept(attempt(2, AttemptResult::Accepted), id(2), None);
        assert_eq!(s.current(), 1);
        assert_eq!(s.feedback(), "");
        assert_eq!(s.tip(), &id(2));
    }

    #[test]
    fn a_rewind_redoes_the_earlier_stage_with_its_next_model_and_fresh_budgets() {
        let mut s = run();
        s.accept(attempt(1, AttemptResult::Accepted), id(2), None);
        for n in 1..=3 {
            s.refuse(attempt(n, AttemptResult::Rejected), "## again".into());
        }
        s.rewind(Stage::Architect, "## REWIND\n");
        assert_eq!(s.current(), 0);
        let architect = &s.stages()[0];
        assert_eq!((architect.model(), architect.commit.as_ref()), ("b", None));
        assert_eq!(architect.attempts_in_epoch(), 0);
        assert_eq!(s.stages()[1].attempts_in_epoch(), 0);
        assert_eq!(s.feedback(), "## REWIND\n## again");
        assert_eq!(s.tip(), s.base());
    }

    #[test]
    fn a_hand_over_to_an_earlier_stage_redoes_it_and_the_consensus_again() {
        let mut s = run();
        s.accept(attempt(1, AttemptResult::Accepted), id(2), None);
        s.accept(attempt(1, AttemptResult::Accepted), id(3), None);
        s.consensus_mut().unwrap().done = true;
        s.stop(RunStatus::WaitingOnUser, StopReason::NothingChanged);
        s.hand_over(Stage::Architect, "## yours".into());
        assert_eq!(s.current(), 0);
        assert!(s.stages()[..3].iter().all(|st| st.commit.is_none()));
        assert!(!s.consensus().unwrap().done);
        assert_eq!((s.status(), s.stop_reason()), (RunStatus::Running, None));
    }

    #[test]
    fn the_reconciliation_rewinds_once_on_top_of_the_rejected_change() {
        let mut s = run();
        for n in 2..=5 {
            s.accept(attempt(1, AttemptResult::Accepted), id(n), None);
        }
        s.record_verify(
            CommandOutcome {
                command: "true".into(),
                exit_code: Some(0),
                timed_out: false,
                tail: String::new(),
                duration_ms: 1,
                layers: None,
                stopped_by: None,
                left_out: Vec::new(),
            },
            id(5),
        );
        s.reconcile_rewind(Stage::Implement, id(5), "## gaps".into());
        assert_eq!(s.current_stage(), Some(Stage::Implement));
        assert_eq!(s.stages()[1].draft, Some(id(5)));
        assert!(s.stages()[1..].iter().all(|st| st.commit.is_none()));
        assert_eq!(s.tip(), &id(2));
        assert!(s.verify().is_none() && s.reconcile().unwrap().rewound);
    }
}
