//! What the facts showed during a run: the verify command's results, the best evidenced
//! commit and going back to it, the box's layers, and the tip the next stage builds on.

use super::RunState;
use crate::git::ObjectId;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::record::{AttemptRecord, Evidenced};
use crate::sandbox::CommandOutcome;

impl RunState {
    /// The verify command's last result.
    pub fn verify(&self) -> Option<&CommandOutcome> {
        self.verify.as_ref()
    }

    /// The commit the verify command last ran at.
    pub fn verify_at(&self) -> Option<&ObjectId> {
        self.verify_at.as_ref()
    }

    /// Whether the verify command passed at the run's base, once that was asked.
    pub fn base_verify(&self) -> Option<bool> {
        self.base_verify
    }

    /// The verifier's implementation summary, once it gave a readable one.
    pub fn implementation_summary(&self) -> Option<&ImplementationSummary> {
        self.implementation_summary.as_ref()
    }

    /// Records the verify command's `outcome` at commit `at`.
    pub fn record_verify(&mut self, outcome: CommandOutcome, at: ObjectId) {
        self.verify = Some(outcome);
        self.verify_at = Some(at);
    }

    /// Records whether the verify command passed at the run's base.
    pub fn set_base_verify(&mut self, passed: bool) {
        self.base_verify = Some(passed);
    }

    /// Records the verifier's implementation summary (`None`: none could be read).
    pub fn set_implementation_summary(&mut self, summary: Option<ImplementationSummary>) {
        self.implementation_summary = summary;
    }

    /// Records the layers of the box around the run's last boxed command.
    pub fn set_sandbox(&mut self, layers: Option<crate::sandbox::Layers>) {
        if layers.is_some() {
            self.sandbox = layers;
        }
    }

    /// The layers of the box around the run's last boxed command.
    pub fn sandbox(&self) -> Option<&crate::sandbox::Layers> {
        self.sandbox.as_ref()
    }

    /// The best commit by facts so far.
    pub fn best(&self) -> Option<&Evidenced> {
        self.best.as_ref()
    }

    /// Records `best` as the run's best evidenced commit (the last one to pass every fact).
    pub fn set_best(&mut self, best: Evidenced) {
        self.best = Some(best);
    }

    /// Goes back to the best evidenced commit instead of stopping or keeping a change that
    /// broke it: every stage after the one that made it loses its commit (kept on the
    /// record), the stage in progress (or, after the last stage, the last one with a commit)
    /// is marked dropped with `why` (the others with what came after the best commit; the
    /// `attempt` that failed, if given, kept on its record), and the run goes on at the next
    /// stage. `false` (nothing done) without a best commit, or when nothing after it is on
    /// the result.
    pub fn drop_to_best(&mut self, why: &str, attempt: Option<AttemptRecord>) -> bool {
        let Some(best) = &self.best else {
            return false;
        };
        let from = best.stage.index() + 1;
        let done = self.current >= self.stages.len();
        let blamed = if done {
            let last = self.stages.iter().rposition(|s| s.commit.is_some());
            match last.filter(|&i| i >= from) {
                Some(i) => i,
                None => return false,
            }
        } else if self.current < from {
            return false;
        } else {
            self.current
        };
        if let Some(a) = attempt {
            self.stages[blamed].attempts.push(a);
        }
        for (i, s) in self.stages.iter_mut().enumerate().skip(from) {
            if i == blamed {
                s.dropped = Some(why.to_string());
            } else if i < blamed && s.commit.is_some() {
                s.dropped = Some(format!(
                    "its commit came after the best evidenced commit ({}), which a later stage's failure sent the run back to",
                    best.commit.short()
                ));
            }
            if i <= blamed {
                s.commit = None;
                s.verdict = None;
                s.draft = None;
            }
        }
        // A formatter run on a dropped commit is not on the result either.
        self.format.retain(|f| {
            self.stages
                .iter()
                .any(|s| s.commit.as_ref() == Some(&f.input))
        });
        self.under_review = None;
        self.feedback.clear();
        self.pending_flags.clear();
        if !done {
            self.current += 1;
        }
        true
    }

    /// The branch tip for the next stage: the last accepted commit (or the formatter's
    /// commit on top of it), else the base.
    pub fn tip(&self) -> &ObjectId {
        let stage_tip = self.stage_tip();
        match self.format.last() {
            Some(f) if &f.input == stage_tip => f.commit.as_ref().unwrap_or(stage_tip),
            _ => stage_tip,
        }
    }

    /// The last accepted stage commit, else the base (the formatter's input).
    pub fn stage_tip(&self) -> &ObjectId {
        self.stages
            .iter()
            .rev()
            .find_map(|s| s.commit.as_ref())
            .unwrap_or(&self.base)
    }
}
