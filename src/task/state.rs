//! The task record (`state.json`) and its append-only history (`history.jsonl`).

use serde::{Deserialize, Serialize};

use super::response::{ArbiterDecision, SpecialistResponse};

/// Format version of `state.json` and of every history line.
pub const FORMAT_VERSION: u32 = 1;

/// Where a task stands (seed 004). Only the arbiter may enter a terminal state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskState {
    /// Captured, nobody works on it yet.
    Open,
    /// Assigned to a specialist (a stage).
    Assigned,
    /// A specialist is working on it in a run.
    InReview,
    /// A specialist returned a structured non-APPROVE outcome; the arbiter routes it next.
    RejectedWithReason,
    /// Needs an arbiter decision (taken by the user on the arbiter's behalf).
    Escalated,
    /// Handed to another specialist.
    Reassigned,
    /// Waits for the user's answers.
    WaitingOnUser,
    /// Waits for dependency tasks.
    Blocked,
    /// Parked on purpose, with a revisit trigger (terminal).
    Deferred,
    /// Approved by the arbiter (terminal).
    Approved,
    /// Carried out (terminal).
    Executed,
    /// Closed on purpose (terminal).
    Closed,
}

impl TaskState {
    /// Every state, in lifecycle order.
    pub const ALL: [TaskState; 12] = [
        TaskState::Open,
        TaskState::Assigned,
        TaskState::InReview,
        TaskState::RejectedWithReason,
        TaskState::Escalated,
        TaskState::Reassigned,
        TaskState::WaitingOnUser,
        TaskState::Blocked,
        TaskState::Deferred,
        TaskState::Approved,
        TaskState::Executed,
        TaskState::Closed,
    ];

    /// The wire name (`WAITING_ON_USER`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Open => "OPEN",
            TaskState::Assigned => "ASSIGNED",
            TaskState::InReview => "IN_REVIEW",
            TaskState::RejectedWithReason => "REJECTED_WITH_REASON",
            TaskState::Escalated => "ESCALATED",
            TaskState::Reassigned => "REASSIGNED",
            TaskState::WaitingOnUser => "WAITING_ON_USER",
            TaskState::Blocked => "BLOCKED",
            TaskState::Deferred => "DEFERRED",
            TaskState::Approved => "APPROVED",
            TaskState::Executed => "EXECUTED",
            TaskState::Closed => "CLOSED",
        }
    }

    /// Whether only the arbiter may set this state (seed 004: CLOSED, DEFERRED, APPROVED,
    /// EXECUTED).
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskState::Closed | TaskState::Deferred | TaskState::Approved | TaskState::Executed
        )
    }

    /// Whether a dependency in this state lets its parent resume.
    pub fn is_done(self) -> bool {
        matches!(
            self,
            TaskState::Closed | TaskState::Executed | TaskState::Approved
        )
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Who caused a history entry, truthfully: a terminal state is entered only by a decider —
/// the arbiter (its verdicts decided the run), a person (`task close|defer|reassign`, or
/// answers), or the policy (a rule decided with no model judging: `--arbiter off`, a merged
/// result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    /// The arbiter: a reviewing model's verdicts, or its routing of an outcome.
    Arbiter,
    /// A specialist (a pipeline stage).
    Specialist,
    /// A person: answers, and decisions taken with `git triad task close|defer|reassign`.
    User,
    /// The pipeline's own bookkeeping (run start, stage hand-off).
    Pipeline,
    /// A fixed rule, with no model judging (an unreviewed run's end, a result merged).
    Policy,
}

impl Actor {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Actor::Arbiter => "arbiter",
            Actor::Specialist => "specialist",
            Actor::User => "user",
            Actor::Pipeline => "pipeline",
            Actor::Policy => "policy",
        }
    }

    /// Whether this actor may take decisions (enter a terminal state).
    pub fn decides(self) -> bool {
        matches!(self, Actor::Arbiter | Actor::User | Actor::Policy)
    }
}

/// What a history entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// The task was captured.
    Created,
    /// Assigned to a specialist (run start, reopen).
    Assigned,
    /// A specialist started working.
    ReviewStarted,
    /// The run moved on to another stage.
    Handoff,
    /// A specialist's structured response.
    Response,
    /// An arbiter decision.
    Decision,
    /// The user's answers to NEEDS_INFO questions.
    Answers,
    /// The arbiter resumed a blocked task because its dependencies are done.
    Resumed,
    /// A remark without a state change.
    Note,
}

/// One answered question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The question as asked.
    pub question: String,
    /// The user's answer.
    pub answer: String,
}

/// The whole current state of a task (`state.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Format version.
    pub v: u32,
    /// The task's slug (its TaskSpec is `.triad/tasks/<slug>.toml`).
    pub slug: String,
    /// Where it stands.
    pub state: TaskState,
    /// Who acts next (never empty).
    pub owner: String,
    /// What happens next (never empty).
    pub next_action: String,
    /// What would move it forward (never empty).
    pub unblock_condition: String,
    /// The specialist (stage) it belongs to; answers and resumed dependencies return it here.
    #[serde(default)]
    pub assigned_to: String,
    /// The run it was last worked on in.
    #[serde(default)]
    pub run: Option<String>,
    /// The task this one is a dependency of.
    #[serde(default)]
    pub parent: Option<String>,
    /// Dependencies still outstanding.
    #[serde(default)]
    pub blocked_on: Vec<String>,
    /// Every dependency ever created for it (names are never reused).
    #[serde(default)]
    pub dependencies: Vec<String>,
    /// When a deferred task should be looked at again.
    #[serde(default)]
    pub revisit_at: Option<String>,
    /// The latest NEEDS_INFO questions.
    #[serde(default)]
    pub questions: Vec<String>,
    /// The latest answers to them.
    #[serde(default)]
    pub answers: Vec<Answer>,
    /// Time of the last change (RFC 3339 UTC).
    pub updated: String,
}

impl Task {
    /// The revisit date of a DEFERRED task whose date has come (`today` is `YYYY-MM-DD` or a
    /// longer RFC 3339 time); `None` otherwise.
    pub fn revisit_due(&self, today: &str) -> Option<&str> {
        let at = self.revisit_at.as_deref()?;
        let today = &today[..today.len().min(10)];
        (self.state == TaskState::Deferred && at <= today).then_some(at)
    }

    /// A freshly captured task: OPEN, the user starts it with a run.
    pub fn open(slug: &str, now: &str) -> Task {
        Task {
            v: FORMAT_VERSION,
            slug: slug.to_string(),
            state: TaskState::Open,
            owner: "user".into(),
            next_action: format!("start a run: `git triad run --task {slug}`"),
            unblock_condition: "a run starts and assigns it to a stage".into(),
            assigned_to: String::new(),
            run: None,
            parent: None,
            blocked_on: Vec::new(),
            dependencies: Vec::new(),
            revisit_at: None,
            questions: Vec::new(),
            answers: Vec::new(),
            updated: now.to_string(),
        }
    }

    /// The first empty field of the owner / next action / unblock condition invariant.
    pub fn invariant_violation(&self) -> Option<&'static str> {
        if self.owner.trim().is_empty() {
            Some("owner")
        } else if self.next_action.trim().is_empty() {
            Some("next_action")
        } else if self.unblock_condition.trim().is_empty() {
            Some("unblock_condition")
        } else {
            None
        }
    }
}

/// One line of `history.jsonl`: a transition (or a note) with its cause.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// Format version.
    pub v: u32,
    /// When (RFC 3339 UTC).
    pub ts: String,
    /// Who caused it.
    pub actor: Actor,
    /// Which specialist or person, when known (`implement`, `Ann <ann@example.com>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// What happened.
    pub event: EventKind,
    /// The state before (`None` for creation).
    pub from: Option<TaskState>,
    /// The state after.
    pub to: TaskState,
    /// The run it happened in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// The specialist response, for `response` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<SpecialistResponse>,
    /// The arbiter decision, for `decision` events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ArbiterDecision>,
    /// The answers, for `answers` events.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Answer>,
    /// Human explanation.
    #[serde(default)]
    pub note: String,
}

impl HistoryEntry {
    /// An entry of the current format at `ts`: `actor` caused `event`, moving the task from
    /// `from` (`None` when it is created) to `to`. Who exactly, the run, a response, a
    /// decision, answers and the note start empty, for the caller to fill in.
    pub fn new(
        ts: &str,
        actor: Actor,
        event: EventKind,
        from: Option<TaskState>,
        to: TaskState,
    ) -> HistoryEntry {
        HistoryEntry {
            v: FORMAT_VERSION,
            ts: ts.to_string(),
            actor,
            by: None,
            event,
            from,
            to,
            run: None,
            response: None,
            decision: None,
            answers: Vec::new(),
            note: String::new(),
        }
    }

    /// Whether this entry moved the task into a terminal state.
    pub fn enters_terminal(&self) -> bool {
        self.to.is_terminal() && self.from != Some(self.to)
    }

    /// One JSON line (no trailing newline).
    pub fn to_line(&self) -> String {
        // A struct of strings, enums and vectors always serializes.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Parses `history.jsonl`, skipping lines that are not entries of a known version.
pub fn parse_history(text: &str) -> Vec<HistoryEntry> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<HistoryEntry>(l).ok())
        .filter(|e| e.v == FORMAT_VERSION)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_use_the_seed_names_and_terminals() {
        for s in TaskState::ALL {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(json, format!("\"{}\"", s.as_str()));
        }
        let terminal: Vec<_> = TaskState::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        assert_eq!(
            terminal,
            [
                TaskState::Deferred,
                TaskState::Approved,
                TaskState::Executed,
                TaskState::Closed
            ]
        );
    }

    #[test]
    fn history_skips_unreadable_lines() {
        let e = HistoryEntry::new(
            "t",
            Actor::Pipeline,
            EventKind::Created,
            None,
            TaskState::Open,
        );
        let mut future = e.clone();
        future.v = 9;
        let text = format!(
            "{}\nnot json\n{}\n{{\"v\":1}}\n{}\n",
            e.to_line(),
            future.to_line(),
            e.to_line()
        );
        assert_eq!(parse_history(&text), vec![e.clone(), e]);
    }

    #[test]
    fn an_open_task_keeps_the_invariant() {
        assert_eq!(Task::open("x", "t").invariant_violation(), None);
    }
}
