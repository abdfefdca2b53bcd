//! The whole state of a run (`run.json`): read through its accessors, changed only through
//! the methods below, each of which keeps it whole (an attempt goes to the stage in
//! progress, moving on clears the feedback, a rewind resets the retry budgets it must, a
//! stop sets the status and its reason together). The workflows' own records (parallel,
//! debate, consensus, chamber, reconciliation, suggestions) are lent whole to the steps that
//! keep them.
//!
//! This file holds what the run is (its identity, plan, spend and the records it lends);
//! its children say where it stands among its stages ([`attempts`]), what the facts showed
//! ([`evidence`]) and how it ended ([`outcome`]).

mod attempts;
mod evidence;
mod outcome;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{
    ChamberRun, ConsensusState, DebateState, Evidenced, FormatRecord, ParallelState,
    ReconcileState, RunStatus, StageRecord, StopReason, UnderReview, RECORD_VERSION,
};
use crate::arbiter::Issue;
use crate::config::{ArbiterMode, OnExhausted};
use crate::consensus::envelope::Message;
use crate::consensus::suggestion::Suggestion;
use crate::git::ObjectId;
use crate::model::Spend;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::record::WorkflowState;
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

    /// The arbiter mode the run was planned with.
    pub fn mode(&self) -> ArbiterMode {
        self.mode
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::record::{AttemptRecord, AttemptResult};
    use crate::pipeline::stage::Stage;

    fn id(n: u8) -> ObjectId {
        git2::Oid::from_bytes(&[n; 20]).unwrap().into()
    }

    /// A new run over the four stages, each with two models.
    fn run() -> RunState {
        let stages = Stage::ALL
            .iter()
            .map(|&stage| StageRecord::planned(stage, vec!["a".into(), "b".into()], None, false))
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
        s.record_verify(CommandOutcome::ended("true", Some(0), ""), id(5));
        s.reconcile_rewind(Stage::Implement, id(5), "## gaps".into());
        assert_eq!(s.current_stage(), Some(Stage::Implement));
        assert_eq!(s.stages()[1].draft, Some(id(5)));
        assert!(s.stages()[1..].iter().all(|st| st.commit.is_none()));
        assert_eq!(s.tip(), &id(2));
        assert!(s.verify().is_none() && s.reconcile().unwrap().rewound);
    }
}
