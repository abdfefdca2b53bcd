//! Applying a decision (the arbiter's, a person's or the policy's): the target state, who acts
//! next, and who is recorded as deciding.

use super::{duty, Draft, Machine};
use crate::task::error::TaskError;
use crate::task::response::{ArbiterDecision, Decision, SpecialistResponse};
use crate::task::state::{Actor, EventKind, TaskState};

impl Machine {
    /// Applies a decision taken by `actor` (the arbiter, a person with `by` naming them, or
    /// the policy), recorded as that actor's.
    pub fn decide(
        &mut self,
        decision: &ArbiterDecision,
        actor: Actor,
        by: Option<&str>,
    ) -> Result<(), TaskError> {
        self.atomic(|m| {
            let run = m.task.run.clone();
            m.apply(decision, actor, by, None, run.as_deref())
        })
    }

    /// The policy marks an APPROVED task EXECUTED: its run's result is merged into `into`.
    pub fn mark_executed(&mut self, commit: &str, into: &str) -> Result<(), TaskError> {
        let slug = self.task.slug.clone();
        self.go(
            TaskState::Executed,
            Actor::Policy,
            EventKind::Decision,
            duty(
                "nobody",
                "nothing: the result is merged".to_string(),
                format!("reopen with `git triad run --task {slug}`"),
            ),
            Draft {
                note: format!("the run's result {commit} is merged into {into}"),
                ..Draft::default()
            },
        )
    }

    /// Moves the task to the state `d` decides, as the arbiter; `resp` is the response being
    /// routed, if any.
    pub(super) fn apply(
        &mut self,
        d: &ArbiterDecision,
        actor: Actor,
        by: Option<&str>,
        resp: Option<&SpecialistResponse>,
        run: Option<&str>,
    ) -> Result<(), TaskError> {
        let slug = self.task.slug.clone();
        let invalid = |why: &str| TaskError::InvalidDecision {
            slug: slug.clone(),
            decision: d.decision.as_str().to_string(),
            why: why.to_string(),
        };
        let reopen = format!("reopen with `git triad run --task {slug}`");
        let note = if d.note.trim().is_empty() {
            d.decision.as_str().to_lowercase()
        } else {
            d.note.trim().to_string()
        };
        let (to, duty) = match d.decision {
            Decision::Reassign => {
                let target = d
                    .assigned_to
                    .as_deref()
                    .map(str::trim)
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| invalid("it names nobody to reassign to"))?;
                self.task.assigned_to = target.to_string();
                (
                    TaskState::Reassigned,
                    duty(
                        target,
                        format!("{target} takes it over: start a run (`git triad run --task {slug}`) or do it by hand and close it"),
                        format!("{target} picks it up"),
                    ),
                )
            }
            Decision::WaitingOnUser => {
                if let Some(r) = resp {
                    self.task.questions = r.requests.clone();
                    self.task.answers.clear();
                }
                if let Some(who) = d.assigned_to.as_deref().filter(|w| !w.trim().is_empty()) {
                    self.task.assigned_to = who.to_string();
                }
                let who = self.specialist();
                let resume = match run {
                    Some(r) => format!("`git triad resume {r}`"),
                    None => format!("`git triad run --task {slug}`"),
                };
                (
                    TaskState::WaitingOnUser,
                    duty(
                        "user",
                        format!(
                            "answer the {} question(s) of the {who} stage: `git triad task answer {slug}`",
                            self.task.questions.len()
                        ),
                        format!("the user's answers arrive; then it returns to the {who} stage ({resume})"),
                    ),
                )
            }
            Decision::CreateDependency => {
                if d.created_tasks.is_empty() {
                    return Err(invalid("it creates no dependency task"));
                }
                self.task.blocked_on = d.created_tasks.clone();
                for t in &d.created_tasks {
                    if !self.task.dependencies.contains(t) {
                        self.task.dependencies.push(t.clone());
                    }
                }
                let mut owners: Vec<String> = resp
                    .map(|r| {
                        r.dependencies
                            .iter()
                            .map(|x| x.owner.trim().to_string())
                            .filter(|o| !o.is_empty())
                            .collect()
                    })
                    .unwrap_or_default();
                owners.dedup();
                let owner = if owners.is_empty() {
                    "operator".to_string()
                } else {
                    owners.join(", ")
                };
                let list = d.created_tasks.join(", ");
                let who = self.specialist();
                (
                    TaskState::Blocked,
                    duty(
                        owner,
                        format!("finish the dependency task(s) {list}, then close each: `git triad task close <dep> --reason done`"),
                        format!("{list} all CLOSED, EXECUTED or APPROVED; then it returns to the {who} stage"),
                    ),
                )
            }
            Decision::Defer => {
                let unblock = match &d.revisit_at {
                    Some(at) => format!("revisit at {at}: {reopen}"),
                    None => reopen.clone(),
                };
                (
                    TaskState::Deferred,
                    duty("arbiter", format!("none: deferred ({note})"), unblock),
                )
            }
            Decision::Close => (
                TaskState::Closed,
                duty("arbiter", format!("none: closed ({note})"), reopen.clone()),
            ),
            Decision::Approve => (
                TaskState::Approved,
                duty(
                    "arbiter",
                    format!("none: approved ({note})"),
                    reopen.clone(),
                ),
            ),
            Decision::Execute => (
                TaskState::Executed,
                duty(
                    "arbiter",
                    format!("none: executed ({note})"),
                    reopen.clone(),
                ),
            ),
            Decision::Escalate => {
                let owner = d
                    .assigned_to
                    .as_deref()
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .unwrap_or("arbiter");
                (
                    TaskState::Escalated,
                    duty(
                        owner,
                        note.clone(),
                        format!("a decision: `git triad task close|defer|reassign {slug}`, or a new run"),
                    ),
                )
            }
        };
        let mut decision = d.clone();
        if to == TaskState::Deferred {
            self.task.revisit_at = d.revisit_at.clone();
        }
        decision.task_id = slug.clone();
        self.go(
            to,
            actor,
            EventKind::Decision,
            duty,
            Draft {
                by: by.map(str::to_string),
                run: run.map(str::to_string),
                decision: Some(decision),
                note,
                ..Draft::default()
            },
        )
    }
}
