//! A stored task's lifecycle: the events that move it through the task state machine
//! ([`super::machine`]) around a run and around the user's decisions — the hooks the pipeline
//! calls, answers, arbiter decisions taken by the user, and auto-resuming parents whose
//! dependencies are done.
//!
//! Every function loads the task's record, applies the state machine, and stores the result
//! as one commit on `refs/triad/tasks/<slug>` (see [`super::store`]).

use std::collections::BTreeSet;
use std::path::Path;

use git2::Repository;

use super::answers;
use super::error::TaskError;
use super::machine::Machine;
use super::outcome::{Outcome, StageMeta};
use super::response::{ArbiterDecision, Decision, SpecialistResponse};
use super::run_status::RunStatus;
use super::spec::{valid_slug, TASKS_DIR};
use super::state::{Actor, Answer, Task, TaskState};
use super::store;

/// The timestamp every entry of one change carries.
fn now() -> String {
    crate::clock::now_ts()
}

/// Brings a task (created if absent) to IN_REVIEW by `stage` in `run`; `None` when it already
/// is. A new run may start from any state: it is the user's explicit request.
fn into_review(
    current: Option<Task>,
    slug: &str,
    run: &str,
    stage: &str,
    now: &str,
) -> Result<Option<Machine>, TaskError> {
    let mut m = match current {
        None => Machine::create(
            slug,
            Actor::Pipeline,
            Some(stage),
            &format!("captured by run {run}"),
            now,
        )?,
        Some(t) if t.state == TaskState::InReview => {
            if t.run.as_deref() == Some(run) && t.assigned_to == stage {
                return Ok(None);
            }
            let mut m = Machine::load(t, now);
            m.handoff(stage, run)?;
            return Ok(Some(m));
        }
        Some(t) => Machine::load(t, now),
    };
    let t = m.task();
    let resuming =
        t.state == TaskState::Assigned && t.run.as_deref() == Some(run) && t.assigned_to == stage;
    if !resuming {
        let note = match t.state {
            TaskState::Open => format!("run {run} started"),
            TaskState::Reassigned if t.run.as_deref() == Some(run) && t.assigned_to == stage => {
                format!("the {stage} stage takes the work over in run {run}")
            }
            s => format!("run {run} started while the task was {s}"),
        };
        m.assign(stage, run, &note)?;
    }
    m.start_review(run)?;
    Ok(Some(m))
}

/// A run starts (or resumes) at `first_stage`: the task is created if absent (OPEN), then
/// ASSIGNED to that stage and IN_REVIEW. Idempotent for the same run and stage.
pub fn on_run_start(
    repo: &Repository,
    slug: &str,
    run_id: &str,
    first_stage: &str,
) -> Result<Task, TaskError> {
    let now = now();
    let task = store::update(repo, slug, &format!("run {run_id} started"), |cur| {
        into_review(cur, slug, run_id, first_stage, &now)
    })?;
    task.ok_or_else(|| TaskError::Unknown(slug.to_string()))
}

/// The run moves on to `stage`: the task stays IN_REVIEW, now by that stage.
pub fn on_stage_start(
    repo: &Repository,
    slug: &str,
    run_id: &str,
    stage: &str,
) -> Result<Task, TaskError> {
    on_run_start(repo, slug, run_id, stage)
}

/// Slugs that dependency tasks must not take: every record and every TaskSpec file.
fn taken_slugs(repo: &Repository) -> Result<BTreeSet<String>, TaskError> {
    let mut all: BTreeSet<String> = store::slugs(repo)?.into_iter().collect();
    all.extend(spec_slugs(repo));
    Ok(all)
}

/// A stage answered a non-APPROVE outcome: the response is recorded, the arbiter routes it
/// (seed 004), dependency tasks are created (as records) for BLOCKED, and the decision is
/// returned.
pub fn on_stage_outcome(
    repo: &Repository,
    slug: &str,
    run_id: &str,
    stage: &str,
    meta: &StageMeta,
) -> Result<ArbiterDecision, TaskError> {
    if meta.outcome == Outcome::Approve {
        return Err(TaskError::ApproveNotRouted {
            stage: stage.to_string(),
        });
    }
    if !valid_slug(slug) {
        return Err(TaskError::BadSlug(slug.to_string()));
    }
    let resp = SpecialistResponse::from_stage(slug, stage, meta);
    let taken = taken_slugs(repo)?;
    let is_taken = |s: &str| taken.contains(s);
    let now = now();
    let routed = |cur: Option<Task>| -> Result<(Machine, ArbiterDecision), TaskError> {
        let mut m = match into_review(cur.clone(), slug, run_id, stage, &now)? {
            Some(m) => m,
            // Already in review by this stage in this run.
            None => Machine::load(
                cur.ok_or_else(|| TaskError::Unknown(slug.to_string()))?,
                &now,
            ),
        };
        let d = m.route(&resp, Some(run_id), &is_taken)?;
        Ok((m, d))
    };
    // Dependencies first: a parent must never wait on a task that does not exist.
    let (_, preview) = routed(store::load_task(repo, slug)?)?;
    create_dependencies(repo, slug, &preview.created_tasks, &resp)?;
    let mut decision = preview.clone();
    store::update(
        repo,
        slug,
        &format!("{stage} answered {}", meta.outcome.as_str()),
        |cur| {
            let (m, d) = routed(cur)?;
            decision = d;
            Ok(Some(m))
        },
    )?;
    if decision.created_tasks != preview.created_tasks {
        // The parent changed between the preview and the write; create what it now names.
        create_dependencies(repo, slug, &decision.created_tasks, &resp)?;
    }
    Ok(decision)
}

/// Creates each dependency task, assigned by the arbiter to its owner, on its own task ref
/// only: what it asks for is in its record, and nothing is written into the working tree.
fn create_dependencies(
    repo: &Repository,
    parent: &str,
    created: &[String],
    resp: &SpecialistResponse,
) -> Result<(), TaskError> {
    let now = now();
    for (i, dep) in created.iter().enumerate() {
        let (what, owner) = match resp.dependencies.get(i) {
            Some(d) => (d.task.trim().to_string(), d.owner.clone()),
            None => (resp.summary.trim().to_string(), String::new()),
        };
        let what = if what.is_empty() {
            format!("unblock `{parent}`")
        } else {
            what
        };
        store::update(repo, dep, &format!("dependency of {parent}"), |cur| {
            if cur.is_some() {
                return Ok(None);
            }
            let mut m = Machine::create(
                dep,
                Actor::Arbiter,
                None,
                &format!("created because `{parent}` is blocked"),
                &now,
            )?;
            m.assign_dependency(parent, &owner, &what)?;
            Ok(Some(m))
        })?;
    }
    Ok(())
}

/// A run ended with `status`, decided by `decided_by` (the arbiter when a model reviewed the
/// run, else the policy): approved/flagged → APPROVED; halted/retries exhausted/budget/failure
/// → ESCALATED to the user with the command that acts next; waiting → WAITING_ON_USER. A task
/// an outcome already routed keeps its state (a note records the run's end). A run still
/// `running` has not ended: [`TaskError::NotEnded`].
pub fn on_run_end(
    repo: &Repository,
    slug: &str,
    run_id: &str,
    status: RunStatus,
    final_verdict: Option<&str>,
    decided_by: Actor,
) -> Result<Task, TaskError> {
    let verdict = final_verdict
        .map(|v| format!(" (final verdict {v})"))
        .unwrap_or_default();
    let decision = match status {
        RunStatus::Approved | RunStatus::Flagged => ArbiterDecision::new(
            slug,
            Decision::Approve,
            format!("run {run_id} ended {status}{verdict}; `git triad log {run_id}` shows it"),
        ),
        RunStatus::Halted | RunStatus::RetriesExhausted => ArbiterDecision::new(
            slug,
            Decision::Escalate,
            format!(
                "run {run_id} ended {status}{verdict}: decide: accept the work anyway with \
                     `git triad override <commit>`, re-run with other models (`git triad run \
                     --task {slug}`), or `git triad task close|defer {slug}`"
            ),
        )
        .to("user"),
        RunStatus::BudgetExceeded => ArbiterDecision::new(
            slug,
            Decision::Escalate,
            format!(
                "run {run_id} stopped at its budget: `git triad resume {run_id} --budget <USD>` \
                     continues it"
            ),
        )
        .to("user"),
        RunStatus::Failed => ArbiterDecision::new(
            slug,
            Decision::Escalate,
            format!(
                "run {run_id} failed (`git triad log {run_id}` says why): `git triad resume \
                     {run_id}` retries once the cause is fixed"
            ),
        )
        .to("user"),
        RunStatus::WaitingOnUser => ArbiterDecision::new(
            slug,
            Decision::WaitingOnUser,
            format!("run {run_id} waits on the user; `git triad log {run_id}` shows the questions"),
        ),
        RunStatus::Running => return Err(TaskError::NotEnded(run_id.to_string())),
    };
    let now = now();
    let task = store::update(repo, slug, &format!("run {run_id} ended {status}"), |cur| {
        let mut m = match cur {
            Some(t) => Machine::load(t, &now),
            None => Machine::create(
                slug,
                Actor::Pipeline,
                None,
                &format!("first seen when run {run_id} ended"),
                &now,
            )?,
        };
        let state = m.task().state;
        let already = match decision.decision {
            Decision::Approve => state == TaskState::Approved,
            Decision::WaitingOnUser => state == TaskState::WaitingOnUser,
            _ => false,
        };
        if already {
            return Ok(if m.entries().is_empty() {
                None
            } else {
                Some(m)
            });
        }
        // Only a task still in the run's hands changes; one an outcome routed keeps its state.
        let applies = match decision.decision {
            Decision::Approve => matches!(
                state,
                TaskState::InReview
                    | TaskState::Assigned
                    | TaskState::Escalated
                    | TaskState::Reassigned
            ),
            _ => matches!(state, TaskState::InReview | TaskState::Assigned),
        };
        if applies {
            m.decide(&decision, decided_by, None)?;
        } else {
            m.note(
                Actor::Pipeline,
                None,
                Some(run_id),
                &format!("run {run_id} ended {status}{verdict}; the task stays {state}"),
            );
        }
        Ok(Some(m))
    })?
    .ok_or_else(|| TaskError::Unknown(slug.to_string()))?;
    resume_parent(repo, &task)?;
    Ok(task)
}

/// Applies what moves a finished task without anyone acting (seed 004): an APPROVED task
/// whose run's result (the tip of `triad/<slug>/<run>`) is reachable from HEAD is merged, so
/// the policy marks it EXECUTED. Returns the task as it stands; `None` when it has no record.
pub fn refresh(repo: &Repository, slug: &str) -> Result<Option<Task>, TaskError> {
    let Some(task) = store::load_task(repo, slug)? else {
        return Ok(None);
    };
    let Some(run) = task
        .run
        .clone()
        .filter(|_| task.state == TaskState::Approved)
    else {
        return Ok(Some(task));
    };
    let branch = format!("refs/heads/triad/{slug}/{run}");
    let (Some(tip), Ok(head)) = (
        crate::git::ref_target(repo, &branch),
        repo.head().and_then(|h| h.peel_to_commit()),
    ) else {
        return Ok(Some(task));
    };
    let merged = tip == head.id() || repo.graph_descendant_of(head.id(), tip).unwrap_or(false);
    if !merged {
        return Ok(Some(task));
    }
    let into = repo
        .head()
        .ok()
        .and_then(|h| h.shorthand().ok().map(str::to_string))
        .unwrap_or_else(|| "HEAD".into());
    let short = tip.to_string()[..10].to_string();
    let now = now();
    store::update(repo, slug, "result merged: executed", |cur| {
        let Some(t) = cur.filter(|t| t.state == TaskState::Approved) else {
            return Ok(None);
        };
        let mut m = Machine::load(t, &now);
        m.mark_executed(&short, &into)?;
        Ok(Some(m))
    })
    .map(|t| t.or(Some(task)))
}

/// Reopens every deferral whose revisit date has come (seed 004's revisit trigger): each
/// such task goes back to ASSIGNED, by policy, in one commit on its record. Returns the
/// tasks reopened now (a task reopened once is no longer DEFERRED, so it is returned once).
pub fn reopen_due(repo: &Repository) -> Result<Vec<Task>, TaskError> {
    let now = now();
    let mut reopened = Vec::new();
    for t in store::list(repo)? {
        if t.revisit_due(&now).is_none() {
            continue;
        }
        let mut done = false;
        let task = store::update(repo, &t.slug, "revisit date come: reopened", |cur| {
            done = false;
            let Some(t) = cur else { return Ok(None) };
            let mut m = Machine::load(t, &now);
            done = m.reopen_if_due(&now)?;
            Ok(done.then_some(m))
        })?;
        if let (true, Some(task)) = (done, task) {
            reopened.push(task);
        }
    }
    Ok(reopened)
}

/// The latest answers as a `## ANSWERS FROM THE USER` block for the resumed stage's prompt;
/// `None` while the task still waits or when nobody answered anything.
pub fn answers_for(repo: &Repository, slug: &str) -> Result<Option<String>, TaskError> {
    let Some(task) = store::load_task(repo, slug)? else {
        return Ok(None);
    };
    if task.state == TaskState::WaitingOnUser || task.answers.is_empty() {
        return Ok(None);
    }
    Ok(Some(answers::markdown(&task.answers)))
}

/// The user answers a WAITING_ON_USER task: answers are matched to the recorded questions and
/// the task goes back to ASSIGNED to the specialist who asked.
pub fn answer(
    repo: &Repository,
    slug: &str,
    given: Vec<Answer>,
    by: &str,
) -> Result<Task, TaskError> {
    let now = now();
    store::update(repo, slug, "answers", |cur| {
        let task = cur.ok_or_else(|| TaskError::Unknown(slug.to_string()))?;
        if task.state != TaskState::WaitingOnUser {
            return Err(TaskError::NotWaiting {
                slug: slug.to_string(),
                state: task.state,
            });
        }
        let matched = answers::match_questions(&task.questions, given.clone())?;
        let mut m = Machine::load(task, &now);
        m.answer(matched, by)?;
        Ok(Some(m))
    })?
    .ok_or_else(|| TaskError::Unknown(slug.to_string()))
}

/// A decision taken by a person (`by`), recorded as theirs. A task that only has
/// a TaskSpec gets its record first. A dependency that is done lets its parent resume.
/// Returns the task and, if it resumed, its parent.
pub fn decide(
    repo: &Repository,
    slug: &str,
    decision: &ArbiterDecision,
    by: &str,
) -> Result<(Task, Option<Task>), TaskError> {
    let now = now();
    let has_spec = spec_exists(repo, slug);
    let task = store::update(
        repo,
        slug,
        &format!("arbiter decision {}", decision.decision),
        |cur| {
            let mut m = match cur {
                Some(t) => Machine::load(t, &now),
                None if has_spec => Machine::create(
                    slug,
                    Actor::User,
                    Some(by),
                    "captured from its TaskSpec",
                    &now,
                )?,
                None => return Err(TaskError::Unknown(slug.to_string())),
            };
            m.decide(decision, Actor::User, Some(by))?;
            Ok(Some(m))
        },
    )?
    .ok_or_else(|| TaskError::Unknown(slug.to_string()))?;
    let parent = resume_parent(repo, &task)?;
    Ok((task, parent))
}

/// If `child` is done and its parent is BLOCKED on dependencies that are all done, the arbiter
/// resumes the parent (→ ASSIGNED to the specialist that was blocked). Returns the parent if
/// it resumed.
pub fn resume_parent(repo: &Repository, child: &Task) -> Result<Option<Task>, TaskError> {
    let Some(parent) = child.parent.as_deref() else {
        return Ok(None);
    };
    if !child.state.is_done() || !valid_slug(parent) {
        return Ok(None);
    }
    resume_when_done(repo, parent, &format!("{} is done", child.slug))
}

/// Resumes `slug` if it is BLOCKED and every dependency is done (→ ASSIGNED to the stage that
/// was blocked); returns it if it resumed. A run that waited on it goes on from there.
pub fn resume_blocked(repo: &Repository, slug: &str) -> Result<Option<Task>, TaskError> {
    resume_when_done(repo, slug, "its dependencies are done")
}

fn resume_when_done(
    repo: &Repository,
    parent: &str,
    what: &str,
) -> Result<Option<Task>, TaskError> {
    let now = now();
    let mut resumed = false;
    let task = store::update(repo, parent, what, |cur| {
        resumed = false;
        let Some(t) = cur else { return Ok(None) };
        if t.state != TaskState::Blocked {
            return Ok(None);
        }
        let mut deps = Vec::new();
        for d in &t.blocked_on {
            if let Some(dep) = store::load_task(repo, d)? {
                deps.push(dep);
            }
        }
        let mut m = Machine::load(t, &now);
        resumed = m.resume_after_dependencies(&deps)?;
        Ok(resumed.then_some(m))
    })?;
    Ok(if resumed { task } else { None })
}

/// Slugs of the TaskSpecs in HEAD and in the work tree (`.triad/tasks/<slug>.toml`).
pub fn spec_slugs(repo: &Repository) -> BTreeSet<String> {
    let mut out = committed_slugs(repo);
    if let Some(root) = repo.workdir() {
        if let Ok(entries) = std::fs::read_dir(root.join(TASKS_DIR)) {
            for e in entries.flatten() {
                if let Some(s) = e.file_name().to_str().and_then(slug_of) {
                    out.insert(s);
                }
            }
        }
    }
    out
}

/// The slugs of the TaskSpecs committed at HEAD (what a run can start from).
pub fn committed_slugs(repo: &Repository) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Ok(tree) = repo.head().and_then(|h| h.peel_to_tree()) {
        if let Ok(entry) = tree.get_path(Path::new(TASKS_DIR)) {
            if let Ok(dir) = repo.find_tree(entry.id()) {
                out.extend(dir.iter().filter_map(|e| e.name().ok().and_then(slug_of)));
            }
        }
    }
    out
}

/// The slug a TaskSpec's file name gives, if it is one.
fn slug_of(name: &str) -> Option<String> {
    name.strip_suffix(".toml")
        .filter(|s| valid_slug(s))
        .map(str::to_string)
}

/// Whether a TaskSpec for `slug` exists in HEAD or in the work tree.
pub fn spec_exists(repo: &Repository, slug: &str) -> bool {
    spec_slugs(repo).contains(slug)
}
