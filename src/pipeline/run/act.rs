//! What happens after an attempt: accept it, try again with feedback, stop on an outcome or
//! a failure, escalate when the retries are used up, finish. Each transition records one
//! event and answers a [`Flow`].

use git2::Oid;

use super::attempt::Answered;
use super::chamber::{self, Chambered};
use super::reassign::MAX_HANDOVERS;
use super::{Flow, Run, RunError};
use crate::arbiter::{ArbiterReview, Verdict};
use crate::git::Context as _;
use crate::model::ModelError;
use crate::notes::{self, Record, ReviewRecord};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    one_line, AttemptRecord, AttemptResult, ModelFailure, RunStatus, StopReason,
};
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::Stop;
use crate::task::outcome::{Outcome, StageMeta};
use crate::task::Decision;

impl Run<'_> {
    /// Accepts `commit` as the current stage's result and moves to the next stage: recorded
    /// first (with the commit kept reachable from the record), then the branch follows, so
    /// a kill between the two leaves a branch that `resume` moves up to the record.
    pub(super) fn accept(
        &mut self,
        mut attempt: AttemptRecord,
        commit: Oid,
        verdict: Option<Verdict>,
        meta: &StageMeta,
    ) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let old_tip = self.state.tip().oid()?;
        let stage = self.state.stages[idx].stage;
        attempt.result = AttemptResult::Accepted;
        self.heard(stage, &attempt.model.clone(), attempt.spend, meta);
        let s = &mut self.state.stages[idx];
        s.attempts.push(attempt);
        s.commit = Some(commit.into());
        s.verdict = verdict;
        self.state.feedback.clear();
        self.state.current += 1;
        self.rec.keep(commit);
        self.rec.event(&self.state, &format!("{stage} accepted"))?;
        self.move_branch(commit, Some(old_tip), &format!("{stage} accepted"))?;
        Ok(Flow::Continue)
    }

    /// Records a refused attempt and tries the stage again with `feedback` in its prompt;
    /// the attempt's detail, when empty, is the feedback's first line.
    pub(super) fn retry(
        &mut self,
        mut attempt: AttemptRecord,
        feedback: &str,
    ) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let stage = self.state.stages[idx].stage;
        if attempt.detail.is_empty() {
            attempt.detail = one_line(feedback, attempt.result.as_str());
        }
        self.env.observer.progress(&Progress::AttemptRefused {
            stage,
            n: attempt.n,
            result: attempt.result,
            detail: &attempt.detail,
        });
        let result = attempt.result;
        self.state.stages[idx].attempts.push(attempt);
        self.state.feedback = if feedback.starts_with("##") {
            feedback.to_string()
        } else {
            format!("## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\n{feedback}\n")
        };
        self.rec
            .event(&self.state, &format!("{stage} attempt {}", result.as_str()))?;
        Ok(Flow::Continue)
    }

    /// A stage answered an outcome other than APPROVE: the task state machine routes it
    /// (seed 004) and the run stops, waiting on the user for NEEDS_INFO.
    pub(super) fn stop_on_outcome(
        &mut self,
        answered: Answered,
        meta: StageMeta,
    ) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let stage = self.state.stages[idx].stage;
        let attempt = answered.record(AttemptResult::Outcome, meta.outcome.as_str());
        if chamber::outcome_is_decision(meta.outcome) {
            let trigger = meta.outcome.as_str();
            let fallback = format!(
                "## YOUR PREVIOUS ANSWER WAS {trigger}\n\nThe chamber's answer to it was not taken. \
                 Do the task as the TaskSpec says, or answer {trigger} again saying what would \
                 change the decision.\n"
            );
            let question = self.outcome_question(stage, &meta);
            match self.ask_chamber(stage, trigger, question, &fallback)? {
                Chambered::Answer { block, .. } => return self.retry(attempt, &block),
                Chambered::Escalated { session } => {
                    self.state.stages[idx].attempts.push(attempt);
                    let reason = StopReason::Chamber {
                        stage,
                        session,
                        trigger: trigger.to_string(),
                    };
                    let event = format!("{stage} decision escalated by the chamber");
                    return self.halt(RunStatus::WaitingOnUser, reason, &event);
                }
                Chambered::Nothing => {}
            }
        }
        self.state.stages[idx].attempts.push(attempt);
        // Nothing is silently dropped: every task keeps an owner and a next action.
        let decision = match crate::task::workflow::on_stage_outcome(
            self.env.repo,
            &self.state.task,
            &self.state.run_id,
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
            .and_then(|a| Stage::ALL.into_iter().find(|s| s.as_str() == a))
            .filter(|s| *s != stage);
        if let Some(to) = to {
            if self.state.parallel.is_none() && self.handovers() <= MAX_HANDOVERS {
                let block = crate::pipeline::waiting::reassigned_block(stage, to, &meta.summary);
                return self.hand_over(to, block);
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
        self.halt(status, reason, &event)
    }

    /// A model call failed: over budget, no valid answer, or no provider answered.
    pub(super) fn model_failed(&mut self, step: &str, e: ModelError) -> Result<Flow, RunError> {
        let (status, failure) = match e {
            ModelError::Budget(_) => (RunStatus::BudgetExceeded, ModelFailure::Budget),
            // A reviewer that cannot produce a valid verdict cannot approve anything: stop
            // for a human, as a HALT, rather than fail (resume would ask the same model).
            ModelError::SchemaViolation { .. } => (RunStatus::Halted, ModelFailure::Schema),
            ModelError::TooLarge { .. } => (RunStatus::Failed, ModelFailure::Window),
            _ => (RunStatus::Failed, ModelFailure::Provider),
        };
        let reason = StopReason::ModelFailed {
            step: step.to_string(),
            failure,
            error: crate::redact::redact(&e.to_string()).into_owned(),
        };
        self.halt(
            status,
            reason,
            &format!("{step} stopped: {}", status.as_str()),
        )
    }

    /// Retries are used up, and the run stops (see [`crate::pipeline::transition::due`]).
    pub(super) fn exhausted(&mut self, stop: Stop) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let s = &self.state.stages[idx];
        let stage = s.stage;
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
        self.halt(stop.status(), reason, &event)
    }

    /// Retries are used up: the stage before, `to`, is redone with its next model, told
    /// why (see [`crate::pipeline::transition::due`]).
    pub(super) fn rewind(&mut self, to: Stage) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let stage = self.state.stages[idx].stage;
        let prev = to.index();
        let old_tip = self.state.tip().oid()?;
        let ps = &mut self.state.stages[prev];
        ps.model_index += 1;
        ps.commit = None;
        ps.verdict = None;
        ps.epoch_start = ps.attempts.len();
        let s = &mut self.state.stages[idx];
        s.epoch_start = s.attempts.len();
        self.state.current = prev;
        self.state.feedback = format!(
            "## REWIND\nThe {stage} stage could not be completed on top of the previous {to} output; redo the {to} stage differently.\n\n{}",
            self.state.feedback
        );
        let new_tip = self.state.tip().oid()?;
        // The abandoned stage commits stay reachable from the record.
        self.rec.keep(old_tip);
        self.rec.event(&self.state, &format!("rewind to {to}"))?;
        self.move_branch(new_tip, Some(old_tip), "rewind")?;
        self.env.observer.progress(&Progress::Rewound {
            to,
            model: self.state.stages[prev].model(),
        });
        Ok(Flow::Continue)
    }

    /// Every stage is done (and reconciled): the run ends APPROVE or FLAG, unless it changed
    /// nothing at all (then no claim of success stands).
    pub(super) fn finish(&mut self) -> Result<(), RunError> {
        if self.run_changes()?.is_empty() {
            self.halt(
                RunStatus::Halted,
                StopReason::NothingChanged,
                "finished with no change",
            )?;
            return Ok(());
        }
        let verdict = self.state.final_verdict();
        self.state.status = match verdict {
            Some(Verdict::Flag) => RunStatus::Flagged,
            _ => RunStatus::Approved,
        };
        self.state.stop = Some(StopReason::Finished { verdict });
        self.rec.event(&self.state, "finished")?;
        Ok(())
    }

    /// What the whole run changed so far (base → tip), file by file.
    pub(super) fn run_changes(&self) -> Result<Vec<crate::git::FileStat>, RunError> {
        let repo = self.env.repo;
        let tree = |id: &crate::git::ObjectId| -> Result<git2::Tree<'_>, RunError> {
            Ok(repo
                .find_commit(id.oid()?)
                .and_then(|c| c.tree())
                .ctx("reading a run tree")?)
        };
        let diff = crate::git::diff_trees(
            repo,
            Some(&tree(&self.state.base)?),
            &tree(self.state.tip())?,
        )
        .ctx("diffing the run")?;
        Ok(crate::git::FileStat::of(&diff))
    }

    /// Stops the run with `status` and `reason` and records it. A stopped branch must not
    /// look clean to the pre-push gate, so a halted run's tip is marked first; when that
    /// note cannot be written, the run is recorded as failed for that reason instead.
    pub(super) fn halt(
        &mut self,
        status: RunStatus,
        reason: StopReason,
        event: &str,
    ) -> Result<Flow, RunError> {
        self.state.stop(status, reason);
        self.mark_or_fail();
        self.rec.event(&self.state, event)?;
        Ok(Flow::Stop)
    }

    /// A halted run (or one out of retries) gets its tip marked; when that note cannot be
    /// written, the run is failed for that reason instead (the gate reads only notes).
    pub(super) fn mark_or_fail(&mut self) {
        if !matches!(
            self.state.status,
            RunStatus::Halted | RunStatus::RetriesExhausted
        ) {
            return;
        }
        if let Err((commit, e)) = self.mark_stopped_tip() {
            self.state.stop(
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
    fn mark_stopped_tip(&self) -> Result<(), (Oid, notes::NotesError)> {
        if self.state.tip() == &self.state.base {
            return Ok(());
        }
        let Ok(tip) = self.state.tip().oid() else {
            return Ok(());
        };
        let verdict = if self.state.status == RunStatus::Halted {
            Verdict::Halt
        } else {
            Verdict::Reject
        };
        let lines = notes::read(self.env.repo, tip).map_err(|e| (tip, e))?;
        if notes::effective(&lines).is_some_and(|e| e.verdict == verdict.as_str()) {
            return Ok(());
        }
        let reason = self
            .state
            .stop
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
                self.state.status.as_str(),
                one_line(&reason, "")
            ),
            token_cost: 0.0,
            coverage: None,
        };
        let record = Record::Review(Box::new(ReviewRecord {
            run: Some(self.state.run_id.clone()),
            task: Some(self.state.task.clone()),
            attempt: 0,
            stage_reviewed: "run".into(),
            chamber: match &self.state.stop {
                Some(StopReason::Chamber { session, .. }) => Some(session.clone()),
                _ => None,
            },
            review,
        }));
        notes::record(self.env.repo, tip, record)
            .map(|_| ())
            .map_err(|e| (tip, e))
    }
}
