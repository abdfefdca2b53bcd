//! How a run ends: its status and stop reason set together, the final verdict the
//! record implies, and the commits its stops marked for the pre-push gate.

use super::RunState;
use crate::arbiter::Verdict;
use crate::git::ObjectId;
use crate::pipeline::record::{RunStatus, StopReason};

impl RunState {
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

    /// Where the run stands.
    pub fn status(&self) -> RunStatus {
        self.status
    }

    /// Why the run stopped, once it has (`None` while it runs).
    pub fn stop_reason(&self) -> Option<&StopReason> {
        self.stop.as_ref()
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

    /// A run that waited is taken up: a fresh retry budget with `feedback`, and working
    /// again (the reason it waited stays on record until its loop runs).
    pub fn taken_up(&mut self, feedback: String) {
        self.fresh_budget(feedback);
        self.status = RunStatus::Running;
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
}
