//! Work moving to another stage (seed 004's REASSIGNED): a stage that calls its work out of
//! its scope hands it to the stage the arbiter routed it to, and a run that waited on you
//! takes up what the task record now says.

use super::{Flow, Run, RunError};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{AttemptResult, RunStatus};
use crate::pipeline::stage::Stage;
use crate::pipeline::waiting::TakeUp;
use crate::task::outcome::Outcome;

/// How many times one run hands work to another stage before it asks you instead: two
/// stages pointing at each other must not loop.
pub const MAX_HANDOVERS: usize = 2;

impl Run<'_> {
    /// Goes on with what a waiting run may now do (see [`crate::pipeline::waiting`]): the
    /// stopped stage again with `block` in its prompt and a fresh retry budget, or another
    /// stage taking the work over.
    pub fn take_up(&mut self, what: TakeUp) -> Result<(), RunError> {
        match what {
            TakeUp::Nothing => Ok(()),
            TakeUp::Continue(block) => {
                let idx = self.state.current;
                if let Some(s) = self.state.stages.get_mut(idx) {
                    s.epoch_start = s.attempts.len();
                }
                self.state.feedback = block;
                self.state.status = RunStatus::Running;
                self.rec.event(&self.state, "taken up again")?;
                Ok(())
            }
            TakeUp::MoveTo(to, block) => self.hand_over(to, block).map(|_| ()),
        }
    }

    /// How many times this run handed work to another stage (every OUT_OF_SCOPE answer
    /// that was routed to one).
    pub(super) fn handovers(&self) -> usize {
        self.state
            .stages
            .iter()
            .flat_map(|s| &s.attempts)
            .filter(|a| {
                a.result == AttemptResult::Outcome && a.detail == Outcome::OutOfScope.as_str()
            })
            .count()
    }

    /// Gives the current stage's work to `to`, which works with `block` in its prompt and a
    /// fresh retry budget. An earlier stage redoes its work and the stages after it follow
    /// again (their commits stay reachable from the record); a later stage takes it over
    /// from where the run stands, and the stages in between are left out.
    pub(super) fn hand_over(&mut self, to: Stage, block: String) -> Result<Flow, RunError> {
        let idx = self.state.current;
        let target = to.index();
        let from = self.state.stages[idx].stage;
        let old_tip = self.state.tip().oid()?;
        let redo = if target <= idx {
            target..idx + 1
        } else {
            idx..idx + 1
        };
        for s in &mut self.state.stages[redo] {
            if target < idx {
                s.commit = None;
                s.verdict = None;
                s.draft = None;
            }
            s.epoch_start = s.attempts.len();
        }
        let t = &mut self.state.stages[target];
        t.epoch_start = t.attempts.len();
        if target < Stage::Verify.index() {
            self.state.verify = None;
            if let Some(c) = self.state.consensus.as_mut() {
                if let Some(done) = c.current.take() {
                    c.past.push(done);
                }
                c.observation = None;
                c.done = false;
            }
        }
        self.state.current = target;
        self.state.feedback = block;
        self.state.status = RunStatus::Running;
        self.state.stop = None;
        let new_tip = self.state.tip().oid()?;
        self.rec.keep(old_tip);
        self.rec
            .event(&self.state, &format!("{from} reassigned its work to {to}"))?;
        if new_tip != old_tip {
            self.move_branch(new_tip, Some(old_tip), "reassigned")?;
        }
        self.env.observer.progress(&Progress::Reassigned {
            from,
            to,
            model: self.state.stages[target].model(),
        });
        Ok(Flow::Continue)
    }
}
