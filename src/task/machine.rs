//! The arbiter-owned task state machine: an explicit transition table and the operations
//! that move a task along it, each leaving one history entry.
//!
//! Two kinds of operations exist. The non-arbiter ones ([`Machine::assign`],
//! [`Machine::start_review`], [`Machine::handoff`], [`Machine::specialist_response`],
//! [`Machine::answer`]) have fixed, non-terminal targets. Only the arbiter path
//! ([`Machine::route`], [`Machine::decide`], [`Machine::assign_dependency`],
//! [`Machine::resume_after_dependencies`]) may enter CLOSED, DEFERRED, APPROVED or EXECUTED, and
//! every transition checks this again against the actor it records. There is no delete.

use super::error::TaskError;
use super::outcome::Outcome;
use super::response::{ArbiterDecision, SpecialistResponse};
use super::route::route_with;
use super::spec::valid_slug;
use super::state::{Actor, Answer, EventKind, HistoryEntry, Task, TaskState};

mod decide;

/// Whether the transition table has an edge `from` → `to`.
///
/// ASSIGNED is reachable from everywhere because a new run is the user's explicit request
/// (it reopens closed work too). OPEN is only ever the first state. A deferral may be
/// deferred again: its revisit date moves.
pub fn allowed(from: TaskState, to: TaskState) -> bool {
    use TaskState::*;
    match to {
        Open => false,
        Assigned => true,
        InReview => matches!(from, Assigned | InReview),
        RejectedWithReason => from == InReview,
        Escalated | Reassigned => !from.is_terminal(),
        Deferred => !from.is_terminal() || from == Deferred,
        WaitingOnUser => matches!(from, InReview | RejectedWithReason | Escalated | Assigned),
        Blocked => matches!(from, RejectedWithReason | Escalated),
        Approved => matches!(from, Assigned | InReview | Escalated | Reassigned),
        Executed => from == Approved,
        Closed => from != Closed,
    }
}

/// Who acts next, what happens next, what would move the task forward.
struct Duty {
    owner: String,
    next_action: String,
    unblock_condition: String,
}

fn duty(owner: impl Into<String>, next: impl Into<String>, unblock: impl Into<String>) -> Duty {
    Duty {
        owner: owner.into(),
        next_action: next.into(),
        unblock_condition: unblock.into(),
    }
}

/// What one history entry says besides its states.
#[derive(Default)]
struct Draft {
    by: Option<String>,
    run: Option<String>,
    response: Option<SpecialistResponse>,
    decision: Option<ArbiterDecision>,
    answers: Vec<Answer>,
    note: String,
}

/// A task being changed: the task and the history entries the changes produced.
#[derive(Debug, Clone)]
pub struct Machine {
    task: Task,
    entries: Vec<HistoryEntry>,
    now: String,
}

impl Machine {
    /// Captures a new task (OPEN); `now` stamps every entry of this change.
    pub fn create(
        slug: &str,
        actor: Actor,
        by: Option<&str>,
        note: &str,
        now: &str,
    ) -> Result<Machine, TaskError> {
        if !valid_slug(slug) {
            return Err(TaskError::BadSlug(slug.to_string()));
        }
        let task = Task::open(slug, now);
        let entry = HistoryEntry {
            by: by.map(str::to_string),
            note: note.to_string(),
            ..HistoryEntry::new(now, actor, EventKind::Created, None, TaskState::Open)
        };
        Ok(Machine {
            task,
            entries: vec![entry],
            now: now.to_string(),
        })
    }

    /// Continues from a stored task.
    pub fn load(task: Task, now: &str) -> Machine {
        Machine {
            task,
            entries: Vec::new(),
            now: now.to_string(),
        }
    }

    /// The task as changed so far.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// The history entries of the changes so far.
    pub fn entries(&self) -> &[HistoryEntry] {
        &self.entries
    }

    /// The changed task and its new history entries.
    pub fn into_parts(self) -> (Task, Vec<HistoryEntry>) {
        (self.task, self.entries)
    }

    /// The one place a state changes: checks the table, the arbiter rule and the invariant.
    fn go(
        &mut self,
        to: TaskState,
        actor: Actor,
        event: EventKind,
        duty: Duty,
        draft: Draft,
    ) -> Result<(), TaskError> {
        let from = self.task.state;
        if !allowed(from, to) {
            return Err(TaskError::IllegalTransition {
                slug: self.task.slug.clone(),
                from,
                to,
            });
        }
        if to.is_terminal() && !actor.decides() {
            return Err(TaskError::NotArbiter {
                slug: self.task.slug.clone(),
                to,
            });
        }
        let mut next = self.task.clone();
        next.state = to;
        next.owner = duty.owner;
        next.next_action = duty.next_action;
        next.unblock_condition = duty.unblock_condition;
        next.updated = self.now.clone();
        if let Some(run) = &draft.run {
            next.run = Some(run.clone());
        }
        if to != TaskState::Deferred {
            next.revisit_at = None;
        }
        if matches!(to, TaskState::Assigned | TaskState::InReview) {
            next.blocked_on.clear();
        }
        if let Some(field) = next.invariant_violation() {
            return Err(TaskError::Invariant {
                slug: next.slug.clone(),
                field,
            });
        }
        self.task = next;
        self.entries.push(HistoryEntry {
            by: draft.by,
            run: draft.run,
            response: draft.response,
            decision: draft.decision,
            answers: draft.answers,
            note: draft.note,
            ..HistoryEntry::new(&self.now, actor, event, Some(from), to)
        });
        Ok(())
    }

    /// Records a remark without changing the state.
    pub fn note(&mut self, actor: Actor, by: Option<&str>, run: Option<&str>, note: &str) {
        let state = self.task.state;
        self.entries.push(HistoryEntry {
            by: by.map(str::to_string),
            run: run.map(str::to_string),
            note: note.to_string(),
            ..HistoryEntry::new(&self.now, actor, EventKind::Note, Some(state), state)
        });
    }

    /// Assigns the task to a specialist for a run (ASSIGNED; the pipeline's bookkeeping).
    pub fn assign(&mut self, specialist: &str, run: &str, note: &str) -> Result<(), TaskError> {
        self.atomic(|m| {
            let slug = m.task.slug.clone();
            m.task.assigned_to = specialist.to_string();
            m.go(
                TaskState::Assigned,
                Actor::Pipeline,
                EventKind::Assigned,
                duty(
                    specialist,
                    format!("the {specialist} stage works on it in run {run}"),
                    format!("the {specialist} stage picks it up (`git triad resume {run}`, or `git triad run --task {slug}`)"),
                ),
                Draft {
                    by: Some(specialist.to_string()),
                    run: Some(run.to_string()),
                    note: note.to_string(),
                    ..Draft::default()
                },
            )
        })
    }

    /// The assigned specialist starts working (ASSIGNED → IN_REVIEW).
    pub fn start_review(&mut self, run: &str) -> Result<(), TaskError> {
        let who = self.specialist();
        self.go(
            TaskState::InReview,
            Actor::Pipeline,
            EventKind::ReviewStarted,
            review_duty(&who, run),
            Draft {
                by: Some(who.clone()),
                run: Some(run.to_string()),
                note: format!("the {who} stage started in run {run}"),
                ..Draft::default()
            },
        )
    }

    /// The run moved on to the next stage (IN_REVIEW → IN_REVIEW, another specialist).
    pub fn handoff(&mut self, stage: &str, run: &str) -> Result<(), TaskError> {
        self.atomic(|m| {
            let before = m.specialist();
            m.task.assigned_to = stage.to_string();
            m.go(
                TaskState::InReview,
                Actor::Pipeline,
                EventKind::Handoff,
                review_duty(stage, run),
                Draft {
                    by: Some(stage.to_string()),
                    run: Some(run.to_string()),
                    note: format!("{before} handed over to {stage}"),
                    ..Draft::default()
                },
            )
        })
    }

    /// Records a specialist's structured response: a non-APPROVE outcome moves the task to
    /// REJECTED_WITH_REASON for the arbiter to route; APPROVE keeps it IN_REVIEW.
    pub fn specialist_response(
        &mut self,
        resp: &SpecialistResponse,
        run: Option<&str>,
    ) -> Result<(), TaskError> {
        let who = resp.specialist.clone();
        let (to, duty) = if resp.outcome == Outcome::Approve {
            (
                TaskState::InReview,
                duty(
                    "arbiter",
                    format!("the arbiter reviews the {who} stage's work"),
                    "the arbiter decides",
                ),
            )
        } else {
            (
                TaskState::RejectedWithReason,
                duty(
                    "arbiter",
                    format!(
                        "the arbiter routes the {} response of the {who} stage",
                        resp.outcome.as_str()
                    ),
                    "the arbiter routes it",
                ),
            )
        };
        self.go(
            to,
            Actor::Specialist,
            EventKind::Response,
            duty,
            Draft {
                by: Some(who.clone()),
                run: run.map(str::to_string),
                response: Some(resp.clone()),
                note: format!("{who} answered {}", resp.outcome.as_str()),
                ..Draft::default()
            },
        )
    }

    /// The user's answers arrive: WAITING_ON_USER → ASSIGNED to the specialist who asked.
    pub fn answer(&mut self, answers: Vec<Answer>, by: &str) -> Result<(), TaskError> {
        self.atomic(|m| {
            if m.task.state != TaskState::WaitingOnUser {
                return Err(TaskError::NotWaiting {
                    slug: m.task.slug.clone(),
                    state: m.task.state,
                });
            }
            let who = m.specialist();
            let slug = m.task.slug.clone();
            let next = match &m.task.run {
                Some(run) => format!(
                    "continue with `git triad resume {run}`: the {who} stage gets the answers"
                ),
                None => format!("start a run: `git triad run --task {slug}`"),
            };
            m.task.answers = answers.clone();
            m.go(
                TaskState::Assigned,
                Actor::User,
                EventKind::Answers,
                duty(
                    who.clone(),
                    next,
                    format!("the {who} stage picks it up with the answers"),
                ),
                Draft {
                    by: Some(by.to_string()),
                    answers,
                    note: format!("answers for the {who} stage"),
                    ..Draft::default()
                },
            )
        })
    }

    /// The arbiter path for a specialist response: records it, applies the routing policy
    /// and returns the decision taken.
    pub fn route(
        &mut self,
        resp: &SpecialistResponse,
        run: Option<&str>,
        taken: &dyn Fn(&str) -> bool,
    ) -> Result<ArbiterDecision, TaskError> {
        self.atomic(|m| {
            m.specialist_response(resp, run)?;
            let decision = route_with(&m.task, resp, taken);
            m.apply(&decision, Actor::Arbiter, None, Some(resp), run)?;
            Ok(decision)
        })
    }

    /// The arbiter creates this task as a dependency of `parent` and assigns it to `owner`.
    pub fn assign_dependency(
        &mut self,
        parent: &str,
        owner: &str,
        what: &str,
    ) -> Result<(), TaskError> {
        self.atomic(|m| {
            let slug = m.task.slug.clone();
            let owner = if owner.trim().is_empty() {
                "operator"
            } else {
                owner.trim()
            };
            m.task.parent = Some(parent.to_string());
            m.task.assigned_to = owner.to_string();
            m.go(
                TaskState::Assigned,
                Actor::Arbiter,
                EventKind::Assigned,
                duty(
                    owner,
                    format!("do it: {what}; then `git triad task close {slug} --reason done` (or have a run do it: `git triad task new {slug}`, describe it, commit it, `git triad run --task {slug}`)"),
                    format!("it is done and closed; then `{parent}` resumes"),
                ),
                Draft {
                    note: format!("dependency of `{parent}`: {what}"),
                    ..Draft::default()
                },
            )
        })
    }

    /// The arbiter resumes a BLOCKED task once every dependency is CLOSED, EXECUTED or
    /// APPROVED: back to ASSIGNED to the specialist that was blocked. `Ok(false)` when the task
    /// is not blocked or a dependency is still open.
    pub fn resume_after_dependencies(&mut self, deps: &[Task]) -> Result<bool, TaskError> {
        if self.task.state != TaskState::Blocked {
            return Ok(false);
        }
        let done = self
            .task
            .blocked_on
            .iter()
            .all(|slug| deps.iter().any(|d| &d.slug == slug && d.state.is_done()));
        if !done {
            return Ok(false);
        }
        let who = self.specialist();
        let slug = self.task.slug.clone();
        let list = self.task.blocked_on.join(", ");
        self.go(
            TaskState::Assigned,
            Actor::Arbiter,
            EventKind::Resumed,
            duty(
                who.clone(),
                format!(
                    "the {who} stage continues: start a run with `git triad run --task {slug}`"
                ),
                format!("the {who} stage picks it up in a run"),
            ),
            Draft {
                note: format!("dependencies done ({list}); back to the {who} stage"),
                ..Draft::default()
            },
        )?;
        Ok(true)
    }

    /// The revisit trigger of a deferral (seed 004: DEFERRED is parked with a revisit
    /// trigger): a DEFERRED task whose revisit date has come on `today` goes back to
    /// ASSIGNED, by policy. `Ok(false)` when it is not deferred or not due.
    pub fn reopen_if_due(&mut self, today: &str) -> Result<bool, TaskError> {
        let Some(at) = self.task.revisit_due(today).map(str::to_string) else {
            return Ok(false);
        };
        let who = self.specialist();
        let slug = self.task.slug.clone();
        self.go(
            TaskState::Assigned,
            Actor::Policy,
            EventKind::Assigned,
            duty(
                who.clone(),
                format!("revisit it: start a run with `git triad run --task {slug}`, or defer it again (`git triad task defer {slug}`) or close it"),
                "a run picks it up, or a new decision".to_string(),
            ),
            Draft {
                note: format!("its revisit date {at} has come: reopened"),
                ..Draft::default()
            },
        )?;
        Ok(true)
    }

    fn specialist(&self) -> String {
        if self.task.assigned_to.trim().is_empty() {
            "operator".to_string()
        } else {
            self.task.assigned_to.clone()
        }
    }

    /// Runs `op`, undoing its partial changes to the task and history if it fails.
    fn atomic<T>(
        &mut self,
        op: impl FnOnce(&mut Self) -> Result<T, TaskError>,
    ) -> Result<T, TaskError> {
        let task = self.task.clone();
        let len = self.entries.len();
        let result = op(self);
        if result.is_err() {
            self.task = task;
            self.entries.truncate(len);
        }
        result
    }
}

fn review_duty(who: &str, run: &str) -> Duty {
    duty(
        who,
        format!("the {who} stage works on it in run {run}; the arbiter reviews its work"),
        format!("the {who} stage answers and the arbiter reviews it"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::outcome::StageMeta;
    use crate::task::response::Decision;

    type Op = Box<dyn Fn(&mut Machine) -> Result<(), TaskError>>;

    fn in_review() -> Machine {
        let mut m = Machine::create("t", Actor::Pipeline, None, "", "now").unwrap();
        m.assign("implement", "r1", "").unwrap();
        m.start_review("r1").unwrap();
        m
    }

    #[test]
    /// Seed 004: terminal states are the arbiter's authority — exercised by the arbiter, by a
    /// person deciding in its place, or by a fixed policy — never by a specialist or the
    /// pipeline's bookkeeping.
    fn only_deciders_enter_terminal_states() {
        for from in TaskState::ALL {
            for to in TaskState::ALL.into_iter().filter(|s| s.is_terminal()) {
                for actor in [Actor::Specialist, Actor::Pipeline] {
                    let mut m = in_review();
                    m.task.state = from;
                    let e = m
                        .go(
                            to,
                            actor,
                            EventKind::Note,
                            duty("a", "b", "c"),
                            Draft::default(),
                        )
                        .unwrap_err();
                    assert!(
                        matches!(
                            e,
                            TaskError::NotArbiter { .. } | TaskError::IllegalTransition { .. }
                        ),
                        "{from} -> {to} by {actor:?}: {e}"
                    );
                    assert_eq!(m.task.state, from, "a refused transition changes nothing");
                }
            }
        }
    }

    #[test]
    fn the_non_arbiter_api_never_reaches_a_terminal_state() {
        let resp = |o: Outcome| {
            let meta: StageMeta =
                serde_json::from_value(serde_json::json!({"outcome": o})).unwrap();
            SpecialistResponse::from_stage("t", "implement", &meta)
        };
        for from in TaskState::ALL {
            let ops: Vec<Op> = vec![
                Box::new(|m| m.assign("verify", "r2", "")),
                Box::new(|m| m.start_review("r2")),
                Box::new(|m| m.handoff("refactor", "r2")),
                Box::new(|m| m.answer(vec![], "me")),
                Box::new(move |m| m.specialist_response(&resp(Outcome::Approve), None)),
                Box::new(move |m| m.specialist_response(&resp(Outcome::Blocked), None)),
            ];
            for op in ops {
                let mut m = in_review();
                m.task.state = from;
                if op(&mut m).is_ok() && m.task.state != from {
                    assert!(!m.task.state.is_terminal(), "{from} -> {}", m.task.state);
                }
            }
        }
    }

    #[test]
    fn the_table_refuses_illegal_edges() {
        let mut m = Machine::create("t", Actor::Pipeline, None, "", "now").unwrap();
        let err = m.start_review("r").unwrap_err();
        assert!(matches!(err, TaskError::IllegalTransition { .. }), "{err}");
        assert!(!allowed(TaskState::Open, TaskState::Executed));
        assert!(allowed(TaskState::Approved, TaskState::Executed));
        assert!(!allowed(TaskState::Closed, TaskState::Closed));
        assert!(allowed(TaskState::Closed, TaskState::Assigned));
        assert!(allowed(TaskState::Deferred, TaskState::Deferred));
        assert!(!allowed(TaskState::Closed, TaskState::Deferred));
    }

    #[test]
    fn a_due_deferral_reopens_by_policy_and_one_not_due_stays() {
        let mut m = in_review();
        let mut d = ArbiterDecision::new("t", Decision::Defer, "later");
        d.revisit_at = Some("2026-06-01".into());
        m.decide(&d, Actor::User, Some("me")).unwrap();
        assert!(!m.reopen_if_due("2026-05-31T23:59:59.000Z").unwrap());
        assert_eq!(m.task.state, TaskState::Deferred);
        // Deferred again: the date moves.
        d.revisit_at = Some("2026-07-01".into());
        m.decide(&d, Actor::User, Some("me")).unwrap();
        assert_eq!(m.task.revisit_at.as_deref(), Some("2026-07-01"));
        assert!(m.reopen_if_due("2026-07-01").unwrap());
        assert_eq!(m.task.state, TaskState::Assigned);
        assert_eq!(m.task.revisit_at, None);
        assert_eq!(m.task.invariant_violation(), None);
        let last = m.entries.last().unwrap();
        assert_eq!(
            (last.actor, last.from),
            (Actor::Policy, Some(TaskState::Deferred))
        );
        assert!(last.note.contains("2026-07-01 has come"), "{}", last.note);
        assert!(!m.reopen_if_due("2026-07-02").unwrap(), "reopened once");
    }

    #[test]
    fn decisions_keep_the_invariant_and_record_the_arbiter() {
        for d in [
            Decision::Defer,
            Decision::Close,
            Decision::Escalate,
            Decision::Approve,
        ] {
            let mut m = in_review();
            m.decide(
                &ArbiterDecision::new("t", d, ""),
                Actor::Arbiter,
                Some("me"),
            )
            .unwrap();
            assert_eq!(m.task.invariant_violation(), None);
            let last = m.entries.last().unwrap();
            assert_eq!(
                (last.actor, last.by.as_deref()),
                (Actor::Arbiter, Some("me"))
            );
        }
        let mut m = in_review();
        let e = m
            .decide(
                &ArbiterDecision::new("t", Decision::Reassign, ""),
                Actor::Arbiter,
                None,
            )
            .unwrap_err();
        assert!(matches!(e, TaskError::InvalidDecision { .. }));
        let mut d = ArbiterDecision::new("t", Decision::Defer, "later");
        d.revisit_at = Some("2026-06-01".into());
        m.decide(&d, Actor::Arbiter, None).unwrap();
        assert_eq!(m.task.revisit_at.as_deref(), Some("2026-06-01"));
        assert!(m.task.unblock_condition.contains("2026-06-01"));
    }
}
