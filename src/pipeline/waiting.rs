//! What a run that stopped for you waits on, and whether it may go on (seed 004): answers to
//! a stage's questions (NEEDS_INFO), dependency tasks done (BLOCKED), or a stage to take
//! over work another called out of its scope (OUT_OF_SCOPE). The task record on
//! `refs/triad/tasks/<slug>` is the truth; the run only follows it.

use git2::Repository;

use super::record::{RunState, RunStatus, StopReason};
use super::stage::Stage;
use crate::task::outcome::Outcome;
use crate::task::{lifecycle, store, Decision, TaskError, TaskState};

/// Why a waiting run cannot go on yet, and what would let it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StillWaiting {
    /// What it waits for.
    pub why: String,
    /// The command that acts next.
    pub hint: String,
}

/// What the resumed run does first, when it may go on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakeUp {
    /// Nothing to take up: the run was not stopped by a stage outcome.
    Nothing,
    /// The stopped stage goes on with this block in its prompt.
    Continue(String),
    /// Another stage takes the work over, with this block in its prompt.
    MoveTo(Stage, String),
}

/// Decides whether a run that waits on a stage outcome may go on, from its task's record:
/// answers arrived (NEEDS_INFO), every dependency task is done (BLOCKED; a parent whose last
/// dependency closed is moved back to its stage here if nobody did yet), or the task was
/// reassigned to a stage (OUT_OF_SCOPE to the operator, then `task reassign`).
pub fn take_up(
    repo: &Repository,
    state: &RunState,
) -> Result<Result<TakeUp, StillWaiting>, TaskError> {
    if state.status() != RunStatus::WaitingOnUser {
        return Ok(Ok(TakeUp::Nothing));
    }
    let run = state.run_id();
    let slug = state.task();
    let Some(StopReason::Outcome { stage, meta, .. }) = state.stop_reason() else {
        return Ok(Ok(TakeUp::Nothing));
    };
    match meta.outcome {
        Outcome::Blocked => {
            let Some(task) = store::load_task(repo, slug)? else {
                return Ok(Err(lost(slug)));
            };
            let open = open_dependencies(repo, &task.blocked_on)?;
            if task.state == TaskState::Blocked && !open.is_empty() {
                return Ok(Err(StillWaiting {
                    why: format!(
                        "run {run} waits for the dependency task(s) of `{slug}`: {}",
                        open.join("; ")
                    ),
                    hint: format!(
                        "do each and close it (`git triad task close <dep> --reason done`): the run continues by itself when the last one closes, or `git triad resume {run}`"
                    ),
                }));
            }
            if task.state == TaskState::Blocked {
                lifecycle::resume_blocked(repo, slug)?;
            }
            Ok(Ok(TakeUp::Continue(dependencies_done(repo, state)?)))
        }
        Outcome::OutOfScope => {
            let Some(task) = store::load_task(repo, slug)? else {
                return Ok(Err(lost(slug)));
            };
            let to = Stage::ALL
                .into_iter()
                .find(|s| s.as_str() == task.assigned_to);
            match (task.state, to) {
                (TaskState::Reassigned | TaskState::Assigned, Some(to)) => Ok(Ok(TakeUp::MoveTo(
                    to,
                    reassigned_block(*stage, to, &meta.summary),
                ))),
                _ => Ok(Err(StillWaiting {
                    why: format!(
                        "run {run} waits: the {stage} stage called the work out of its scope and `{slug}` is {} to {}",
                        task.state,
                        if task.assigned_to.is_empty() { "nobody" } else { &task.assigned_to }
                    ),
                    hint: format!(
                        "give it to a stage (`git triad task reassign {slug} --to <stage> --reason ...`), then `git triad resume {run}`; or do it by hand and `git triad task close {slug}`"
                    ),
                })),
            }
        }
        _ => {
            let answers = lifecycle::answers_for(repo, slug)?;
            Ok(answers.map(TakeUp::Continue).ok_or_else(|| StillWaiting {
                why: format!("run {run} is waiting for your answers"),
                hint: format!(
                    "answer the questions with `git triad task answer {slug}`, then resume"
                ),
            }))
        }
    }
}

fn lost(slug: &str) -> StillWaiting {
    StillWaiting {
        why: format!("the task record of `{slug}` is missing (refs/triad/tasks/{slug})"),
        hint: format!("start a new run with `git triad run --task {slug}`"),
    }
}

/// The dependencies not done yet, each as "slug (STATE, owner: who: what to do)".
fn open_dependencies(repo: &Repository, deps: &[String]) -> Result<Vec<String>, TaskError> {
    let mut open = Vec::new();
    for d in deps {
        match store::load_task(repo, d)? {
            Some(t) if t.state.is_done() => {}
            Some(t) => open.push(format!(
                "{d} ({}, owner {}: {})",
                t.state, t.owner, t.next_action
            )),
            None => open.push(format!("{d} (no record)")),
        }
    }
    Ok(open)
}

/// The block the blocked stage gets when it goes on: what it waited for and how each
/// dependency ended.
fn dependencies_done(repo: &Repository, state: &RunState) -> Result<String, TaskError> {
    let Some(StopReason::Outcome {
        stage,
        meta,
        decision,
    }) = state.stop_reason()
    else {
        return Ok(String::new());
    };
    let created = decision
        .as_ref()
        .map(|d| d.created_tasks.clone())
        .unwrap_or_default();
    let mut s = format!(
        "## YOUR DEPENDENCIES ARE DONE\n\nThe {stage} stage answered BLOCKED. What it waited for is done now:\n"
    );
    for (i, slug) in created.iter().enumerate() {
        let what = meta
            .dependencies
            .get(i)
            .map_or(String::new(), |d| d.task.trim().to_string());
        let how = store::load(repo, slug)?
            .and_then(|r| {
                r.history
                    .iter()
                    .rev()
                    .find_map(|e| e.decision.as_ref().map(|d| (d.decision, d.note.clone())))
                    .map(|(d, note)| format!("{} ({note})", closed_word(d)))
            })
            .unwrap_or_else(|| "done".into());
        s.push_str(&format!("- {what} (task {slug}): {how}\n"));
    }
    s.push_str(&format!(
        "\nDo the work of the {stage} stage now, as the TaskSpec says; answer BLOCKED again only for something new.\n"
    ));
    Ok(s)
}

fn closed_word(d: Decision) -> &'static str {
    match d {
        Decision::Close => "closed",
        Decision::Approve => "approved",
        Decision::Execute => "executed",
        _ => "done",
    }
}

/// The block a stage gets when it takes over work another stage called out of its scope.
pub fn reassigned_block(from: Stage, to: Stage, summary: &str) -> String {
    let why = summary.trim();
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(": \"{why}\"")
    };
    format!(
        "## REASSIGNED TO YOU\n\nThe {from} stage answered OUT_OF_SCOPE{why}. The arbiter gave this work to the {to} stage: do it now, as the TaskSpec says, as the {to} stage.\n"
    )
}

/// The run of `slug`'s parent that waited on its dependencies, when `slug` was the last one
/// to be done: that run may go on now (`git triad task close` and `git triad run` continue
/// it by themselves).
pub fn unblocked_run(repo: &Repository, slug: &str) -> Result<Option<String>, TaskError> {
    let Some(child) = store::load_task(repo, slug)? else {
        return Ok(None);
    };
    let Some(parent) = child.parent.as_deref().filter(|_| child.state.is_done()) else {
        return Ok(None);
    };
    let Some(p) = store::load_task(repo, parent)? else {
        return Ok(None);
    };
    if p.state != TaskState::Assigned || !p.blocked_on.is_empty() {
        return Ok(None);
    }
    let Some(run) = p.run.clone() else {
        return Ok(None);
    };
    let waits = super::Recorder::open(repo, &run)
        .load()
        .ok()
        .flatten()
        .is_some_and(|s| {
            s.status() == RunStatus::WaitingOnUser
                && matches!(s.stop_reason(), Some(StopReason::Outcome { meta, .. }) if meta.outcome == Outcome::Blocked)
        });
    Ok(waits.then_some(run))
}
