//! Carrying out what follows an attempt, as [`crate::pipeline::transition`] decides it:
//! accept it, try again with feedback, stop on an outcome, escalate when the retries are
//! used up (stop, or rewind one stage with its next model), finish. Each records one event
//! and answers a [`Flow`].

use git2::Oid;

use super::asked;
use super::branch::move_branch;
use super::chamber::{self, ask_chamber, outcome_question, Chambered};
use super::reassign::{hand_over, handovers, MAX_HANDOVERS};
use super::step::{Cx, Flow, Journal, RunError};
use super::stop::halt;
use super::suggest::heard;
use crate::arbiter::Verdict;
use crate::git::{Context as _, FileStat};
use crate::model::Spend;
use crate::pipeline::fit::LeftOut;
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{one_line, AttemptRecord, AttemptResult, RunStatus, StopReason};
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::Stop;
use crate::task::outcome::{Outcome, StageMeta};
use crate::task::Decision;

/// Accepts `commit` as the current stage's result and moves to the next stage: recorded
/// first (with the commit kept reachable from the record), then the branch follows, so
/// a kill between the two leaves a branch that `resume` moves up to the record.
pub(super) fn accept(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    mut attempt: AttemptRecord,
    commit: Oid,
    verdict: Option<Verdict>,
    meta: &StageMeta,
) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let old_tip = j.state.tip().oid()?;
    let stage = j.state.stages()[idx].stage;
    attempt.result = AttemptResult::Accepted;
    heard(j, stage, &attempt.model.clone(), attempt.spend, meta);
    if let Some(facts) = attempt.evidenced.clone() {
        j.state.set_best(crate::pipeline::record::Evidenced {
            commit: commit.into(),
            stage,
            facts,
        });
    }
    j.state.accept(attempt, commit.into(), verdict);
    j.keep(commit);
    j.event(&format!("{stage} accepted"))?;
    move_branch(cx, j, commit, Some(old_tip), &format!("{stage} accepted"))?;
    Ok(Flow::Continue)
}

/// Records a refused attempt and tries the stage again with `feedback` in its prompt;
/// the attempt's detail, when empty, is the feedback's first line.
pub(super) fn retry(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    mut attempt: AttemptRecord,
    feedback: &str,
) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    if attempt.detail.is_empty() {
        attempt.detail = one_line(feedback, attempt.result.as_str());
    }
    cx.progress(&Progress::AttemptRefused {
        stage,
        n: attempt.n,
        result: attempt.result,
        detail: &attempt.detail,
    });
    let result = attempt.result;
    let feedback = if feedback.starts_with("##") {
        feedback.to_string()
    } else {
        format!("## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\n{feedback}\n")
    };
    j.state.refuse(attempt, feedback);
    j.event(&format!("{stage} attempt {}", result.as_str()))?;
    Ok(Flow::Continue)
}

/// A stage answered an outcome other than APPROVE: the task state machine routes it
/// (seed 004) and the run stops, waiting on the user for NEEDS_INFO.
pub(super) fn stop_on_outcome(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    answered: Answered,
    meta: StageMeta,
) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    let attempt = answered.record(AttemptResult::Outcome, meta.outcome.as_str());
    if chamber::outcome_is_decision(meta.outcome) {
        let trigger = meta.outcome.as_str();
        let fallback = format!(
            "## YOUR PREVIOUS ANSWER WAS {trigger}\n\nThe chamber's answer to it was not taken. \
             Do the task as the TaskSpec says, or answer {trigger} again saying what would \
             change the decision.\n"
        );
        let question = outcome_question(cx, j, stage, &meta);
        match ask_chamber(cx, j, stage, trigger, question, &fallback)? {
            Chambered::Answer { block, .. } => return retry(cx, j, attempt, &block),
            Chambered::Escalated { session } => {
                j.state.push_attempt(attempt);
                let reason = StopReason::Chamber {
                    stage,
                    session,
                    trigger: trigger.to_string(),
                };
                let event = format!("{stage} decision escalated by the chamber");
                return halt(cx, j, RunStatus::WaitingOnUser, reason, &event);
            }
            Chambered::Nothing => {}
        }
    }
    // Questions the task or the code answers are answered there, not sent to you.
    let mut meta = meta;
    if meta.outcome == Outcome::NeedsInfo {
        if let Some(asked) = asked::from_task(cx, j, stage, &answered.model, &meta.questions)? {
            if asked.unanswered.is_empty() {
                let mut attempt = attempt;
                attempt.detail = format!(
                    "asked {} question(s), each answered from the task and the code",
                    asked.answered.len()
                );
                return retry(cx, j, attempt, &asked.block());
            }
            meta.questions = asked.unanswered;
        }
    }
    // A stage after the best evidenced commit does not stop the run, or leave it waiting on
    // you: its answer is recorded, and the run goes on from that commit.
    let why = format!(
        "it answered {} ({})",
        meta.outcome.as_str(),
        one_line(&meta.summary, "no summary")
    );
    if meta.outcome != Outcome::OutOfScope {
        if let Some(flow) = drop_to_best(cx, j, Some(attempt.clone()), &why)? {
            return Ok(flow);
        }
    }
    j.state.push_attempt(attempt);
    // Nothing is silently dropped: every task keeps an owner and a next action.
    let decision = match crate::task::lifecycle::on_stage_outcome(
        cx.repo(),
        j.state.task(),
        j.state.run_id(),
        stage.as_str(),
        &meta,
    ) {
        Ok(d) => Some(d),
        Err(e) => {
            tracing::error!("could not record the task's outcome: {e}");
            None
        }
    };
    // A reassignment to another stage runs that stage (a bounded number of times).
    let to = decision
        .as_ref()
        .filter(|d| meta.outcome == Outcome::OutOfScope && d.decision == Decision::Reassign)
        .and_then(|d| d.assigned_to.as_deref())
        .and_then(Stage::parse)
        .filter(|s| *s != stage);
    if let Some(to) = to {
        if j.state.parallel().is_none() && handovers(&j.state) <= MAX_HANDOVERS {
            let block = crate::pipeline::waiting::reassigned_block(stage, to, &meta.summary);
            return hand_over(cx, j, to, block);
        }
    }
    // Waiting on answers, on dependency tasks, or on someone to take the work over;
    // anything else needs a decision.
    let status = match meta.outcome {
        Outcome::NeedsInfo | Outcome::Blocked | Outcome::OutOfScope => RunStatus::WaitingOnUser,
        _ => RunStatus::Halted,
    };
    let event = format!("{stage} answered {}", meta.outcome.as_str());
    let reason = StopReason::Outcome {
        stage,
        meta: Box::new(meta),
        decision,
    };
    halt(cx, j, status, reason, &event)
}

/// Retries are used up, and the run stops (see [`crate::pipeline::transition::due`]),
/// unless it has a best evidenced commit to go on from: then the stage is dropped.
pub(super) fn exhausted(cx: &Cx<'_>, j: &mut Journal<'_>, stop: Stop) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let s = &j.state.stages()[idx];
    let stage = s.stage;
    let last = s
        .attempts
        .last()
        .map_or("", |a| a.detail.as_str())
        .to_string();
    let why = format!(
        "its {} attempt(s) failed (the last: {})",
        s.attempts_in_epoch(),
        one_line(&last, "no detail")
    );
    if let Some(flow) = drop_to_best(cx, j, None, &why)? {
        return Ok(flow);
    }
    let s = &j.state.stages()[idx];
    let (reason, event) = match stop {
        Stop::Exhausted(why) => (
            StopReason::RetriesExhausted { stage, why },
            "retries exhausted".to_string(),
        ),
        _ => (
            StopReason::RetriesHalt {
                stage,
                tries: s.attempts_in_epoch(),
                last: s
                    .attempts
                    .last()
                    .map_or("", |a| a.detail.as_str())
                    .to_string(),
            },
            format!("{stage} retries exhausted: halt"),
        ),
    };
    halt(cx, j, stop.status(), reason, &event)
}

/// Retries are used up: the stage before, `to`, is redone with its next model, told
/// why (see [`crate::pipeline::transition::due`]).
pub(super) fn rewind(cx: &Cx<'_>, j: &mut Journal<'_>, to: Stage) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    let prev = to.index();
    let old_tip = j.state.tip().oid()?;
    let why = format!(
        "## REWIND\nThe {stage} stage could not be completed on top of the previous {to} output; redo the {to} stage differently.\n\n"
    );
    j.state.rewind(to, &why);
    let new_tip = j.state.tip().oid()?;
    // The abandoned stage commits stay reachable from the record.
    j.keep(old_tip);
    j.event(&format!("rewind to {to}"))?;
    move_branch(cx, j, new_tip, Some(old_tip), "rewind")?;
    cx.progress(&Progress::Rewound {
        to,
        model: j.state.stages()[prev].model(),
    });
    Ok(Flow::Continue)
}

/// Goes back to the run's best evidenced commit instead of stopping on, or keeping, the
/// stage in progress that failed (`why`; its `attempt` kept on the record): the branch
/// moves back to that commit and the run goes on at the next stage, to end at least FLAG.
/// `None` (nothing done) when the run has no best commit to go back to, and the caller
/// stops as before: a run never worse than its best evidenced commit is only held to it
/// once it has one.
pub(super) fn drop_to_best(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    attempt: Option<AttemptRecord>,
    why: &str,
) -> Result<Option<Flow>, RunError> {
    let Some(best) = j.state.best().map(|b| b.commit.clone()) else {
        return Ok(None);
    };
    // Evidenced without the verify command (off while building), the commit is held to it
    // now: a run never falls back to a commit whose verify command fails.
    if super::verify::passes_at(cx, &best) == Some(false) {
        return Ok(None);
    }
    let stage = j.state.current_stage().unwrap_or(Stage::Verify);
    let old_tip = j.state.tip().oid()?;
    if let Some(c) = attempt.as_ref().and_then(|a| a.commit.as_ref()) {
        j.keep(c.oid()?);
    }
    if !j.state.drop_to_best(why, attempt) {
        return Ok(None);
    }
    j.keep(old_tip);
    let new_tip = j.state.tip().oid()?;
    j.event(&format!(
        "{stage} dropped: back to the best evidenced commit"
    ))?;
    move_branch(
        cx,
        j,
        new_tip,
        Some(old_tip),
        "back to the best evidenced commit",
    )?;
    cx.progress(&Progress::Dropped {
        stage,
        why,
        best: &best,
    });
    Ok(Some(Flow::Continue))
}

/// Every stage is done (and reconciled): the run ends APPROVE or FLAG, unless it changed
/// nothing at all (then no claim of success stands).
pub(super) fn finish(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<(), RunError> {
    if run_changes(cx, j)?.is_empty() {
        halt(
            cx,
            j,
            RunStatus::Halted,
            StopReason::NothingChanged,
            "finished with no change",
        )?;
        return Ok(());
    }
    j.state.finish();
    // A run that stopped before and now ends well: its own stop marks say otherwise.
    for line in super::stop::supersede_marks(cx, j)? {
        cx.progress(&Progress::Superseded { line: &line });
    }
    j.event("finished")?;
    Ok(())
}

/// What the whole run changed so far (base → tip), file by file.
fn run_changes(cx: &Cx<'_>, j: &Journal<'_>) -> Result<Vec<FileStat>, RunError> {
    let tip = cx.tree(j.state.tip(), "reading a run tree")?;
    let diff =
        crate::git::diff_trees(cx.repo(), Some(&cx.base_tree()?), &tip).ctx("diffing the run")?;
    Ok(FileStat::of(&diff))
}

/// An answered attempt before its fate is known.
pub(super) struct Answered {
    /// 1-based attempt number.
    pub n: u32,
    /// The model that answered.
    pub model: String,
    /// What the call cost.
    pub spend: Spend,
    /// What the prompt left out to fit the model's window.
    pub left_out: LeftOut,
}

impl Answered {
    /// The attempt's record once its fate is known.
    pub fn record(&self, result: AttemptResult, detail: impl Into<String>) -> AttemptRecord {
        AttemptRecord {
            n: self.n,
            model: self.model.clone(),
            commit: None,
            verdict: None,
            arbiter_model: None,
            result,
            detail: detail.into(),
            spend: self.spend,
            changed: Vec::new(),
            left_out: self.left_out.clone(),
            evidenced: None,
        }
    }
}
