//! Stopping a run: the status and the reason recorded together, a failed model call told
//! apart by what failed, and a stopped branch's tip marked so the pre-push gate blocks it.

use git2::Oid;

use super::step::{Cx, Flow, Journal, RunError};
use crate::arbiter::{ArbiterReview, Verdict};
use crate::model::{Cause, ModelError};
use crate::notes::{self, NoteLine, OverrideRecord, Record, ReviewRecord};
use crate::pipeline::record::{one_line, ModelFailure, RunStatus, StopReason};

/// A model call failed: over budget, no valid answer, or no provider answered.
pub(in crate::pipeline) fn model_failed(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    step: &str,
    e: ModelError,
) -> Result<Flow, RunError> {
    let (status, failure) = match e {
        ModelError::Budget(_) => (RunStatus::BudgetExceeded, ModelFailure::Budget),
        // A model that cannot answer in its schema is a failed call, never a verdict: the
        // run fails, with no HALT mark (the reviews and the reconciliation act on the facts
        // alone before it comes to this; what reaches here is a judge of a workflow).
        ModelError::SchemaViolation { .. } => (RunStatus::Failed, ModelFailure::Schema),
        ModelError::TooLarge { .. } => (RunStatus::Failed, ModelFailure::Window),
        _ => (RunStatus::Failed, ModelFailure::Provider),
    };
    let mut causes: Vec<Cause> = Vec::new();
    for c in e.causes() {
        if !causes.contains(c) {
            causes.push(c.clone());
        }
    }
    let reason = StopReason::ModelFailed {
        step: step.to_string(),
        failure,
        error: crate::redact::redact(&e.to_string()).into_owned(),
        causes,
    };
    halt(
        cx,
        j,
        status,
        reason,
        &format!("{step} stopped: {}", status.as_str()),
    )
}

/// Stops the run with `status` and `reason` and records it. A stopped branch must not
/// look clean to the pre-push gate, so a halted run's tip is marked first; when that
/// note cannot be written, the run is recorded as failed for that reason instead.
pub(in crate::pipeline) fn halt(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    status: RunStatus,
    reason: StopReason,
    event: &str,
) -> Result<Flow, RunError> {
    j.state.stop(status, reason);
    mark_or_fail(cx, j);
    j.event(event)?;
    Ok(Flow::Stop)
}

/// Stops the run to wait on the user for `reason` (a deadlock, a refusal a person must
/// settle) and records it as [`halt`] does, with `event` in the transcript.
pub(in crate::pipeline) fn wait_on_user(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    reason: StopReason,
    event: &str,
) -> Result<Flow, RunError> {
    halt(cx, j, RunStatus::WaitingOnUser, reason, event)
}

/// A halted run (or one out of retries) gets its tip marked; when that note cannot be
/// written, the run is failed for that reason instead (the gate reads only notes).
pub(in crate::pipeline) fn mark_or_fail(cx: &Cx<'_>, j: &mut Journal<'_>) {
    if !matches!(
        j.state.status(),
        RunStatus::Halted | RunStatus::RetriesExhausted
    ) {
        return;
    }
    if let Err((commit, e)) = mark_stopped_tip(cx, &mut *j) {
        j.state.stop(
            RunStatus::Failed,
            StopReason::NoteNotWritten {
                commit: commit.into(),
                error: e.to_string(),
            },
        );
    }
}

/// Marks the tip of a stopped run with a `run`-stage verdict (HALT, or REJECT when
/// retries ran out), unless the tip is the base (nothing new to push) or already carries
/// that verdict.
fn mark_stopped_tip(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<(), (Oid, notes::NotesError)> {
    if j.state.tip() == j.state.base() {
        return Ok(());
    }
    let Ok(tip) = j.state.tip().oid() else {
        return Ok(());
    };
    let verdict = if j.state.status() == RunStatus::Halted {
        Verdict::Halt
    } else {
        Verdict::Reject
    };
    let base = j.state.base().oid().ok();
    if notes::outcome_recorded(cx.repo(), base, tip, verdict).map_err(|e| (tip, e))? {
        return Ok(());
    }
    let reason = j
        .state
        .stop_reason()
        .as_ref()
        .map_or(String::new(), |r| r.describe());
    let review = ArbiterReview {
        stage: "run".into(),
        reviewed_model: "the whole run".into(),
        arbiter_model: "git-triad (run outcome)".into(),
        verdict,
        model_verdict: verdict,
        floor: None,
        derived: None,
        issues: vec![],
        alternatives: vec![],
        confidence: 1.0,
        reasoning: format!(
            "the run stopped ({}): {}",
            j.state.status().as_str(),
            one_line(&reason, "")
        ),
        token_cost: 0.0,
        coverage: None,
        sandbox: None,
        behaviour: None,
        tests: None,
    };
    let record = Record::Review(Box::new(ReviewRecord {
        run: Some(j.state.run_id().to_string()),
        task: Some(j.state.task().to_string()),
        attempt: 0,
        stage_reviewed: "run".into(),
        chamber: match j.state.stop_reason() {
            Some(StopReason::Chamber { session, .. }) => Some(session.clone()),
            _ => None,
        },
        review,
    }));
    // With the patch id of the run's whole change: a squash of the run is blocked too.
    let written = match base {
        Some(base) => notes::record_change(cx.repo(), base, tip, record),
        None => notes::record(cx.repo(), tip, record),
    };
    written.map_err(|e| (tip, e))?;
    j.state.add_mark(tip.into());
    Ok(())
}

/// A run that ends approved or flagged after a stop of its own (a halt a person took up with
/// `resume --rewind`, a stop resumed): the run-outcome marks its stops left no longer say how
/// it ended. Each one not yet answered — on a commit a stop marked, or one the result holds —
/// is answered by an override line that git triad writes for this run, naming it by id and
/// saying why, so the gate lets the result through as it would any answered verdict and the
/// notes keep both. Returns one sentence per commit whose mark it superseded.
pub(in crate::pipeline) fn supersede_marks(
    cx: &Cx<'_>,
    j: &Journal<'_>,
) -> Result<Vec<String>, RunError> {
    let verdict = match j.state.status() {
        RunStatus::Approved => Verdict::Approve,
        RunStatus::Flagged => Verdict::Flag,
        _ => return Ok(Vec::new()),
    };
    let repo = cx.repo();
    let tip = j.state.tip().oid()?;
    let mut commits: Vec<Oid> = j
        .state
        .marks()
        .iter()
        .filter_map(|c| c.oid().ok())
        .collect();
    let mut walk = repo.revwalk().map_err(|source| crate::git::GitError::Git {
        what: "walking the run's commits".into(),
        source,
    })?;
    if walk.push(tip).is_ok() && walk.hide(j.state.base().oid()?).is_ok() {
        for c in walk.flatten() {
            if !commits.contains(&c) {
                commits.push(c);
            }
        }
    }
    let run = j.state.run_id();
    let who = match notes::identity(repo) {
        Some((name, email)) => format!("git triad (run {run}, taken up by {name} <{email}>)"),
        None => format!("git triad (run {run})"),
    };
    let mut done = Vec::new();
    for commit in commits {
        let lines = notes::read(repo, commit).map_err(|e| note_failed(commit, e))?;
        let answered: Vec<_> = notes::answered(&lines)
            .into_iter()
            .filter_map(|(v, _)| v.line.id().cloned())
            .collect();
        let marks: Vec<(String, Verdict)> = lines
            .iter()
            .filter_map(|l| match &l.line {
                NoteLine::Verdict(v)
                    if matches!(v.verdict, Verdict::Halt | Verdict::Reject)
                        && v.record
                            .value
                            .get("stage_reviewed")
                            .and_then(|s| s.as_str())
                            == Some("run")
                        && v.record.value.get("run").and_then(|r| r.as_str()) == Some(run)
                        && !answered.contains(v.record.id()) =>
                {
                    Some((v.record.id().to_string(), v.verdict))
                }
                _ => None,
            })
            .collect();
        let Some(overrides) = marks.iter().map(|(_, v)| *v).max() else {
            continue;
        };
        let short = crate::git::ObjectId::from(commit).short().to_string();
        let reason = format!(
            "superseded: run {run} stopped here ({overrides}), was taken up and ended {verdict} at {}; this line answers its earlier run-outcome mark, not a review",
            j.state.tip().short()
        );
        notes::record(
            repo,
            commit,
            Record::Override(OverrideRecord {
                verdict,
                overrides,
                answers: Some(marks.into_iter().map(|(id, _)| id).collect()),
                reason,
                who: who.clone(),
            }),
        )
        .map_err(|e| note_failed(commit, e))?;
        done.push(format!(
            "the run's earlier {overrides} mark on {short} is superseded by its {verdict}"
        ));
    }
    Ok(done)
}

/// A note that could not be read or written, as the run's error.
fn note_failed(commit: Oid, e: notes::NotesError) -> RunError {
    RunError::Git(crate::git::GitError::Command(format!(
        "the verdict note of {commit}: {e}"
    )))
}
