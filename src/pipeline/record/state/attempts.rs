//! Where a run stands among its stages: the stage in progress, its attempts, retry budgets
//! and feedback, and every move between stages (accept, skip, rewind, hand over).

use super::RunState;
use crate::arbiter::{Issue, Verdict};
use crate::config::OnExhausted;
use crate::git::ObjectId;
use crate::pipeline::record::{AttemptRecord, StageRecord, UnderReview};
use crate::pipeline::stage::Stage;

impl RunState {
    /// Retries a stage gets after its first attempt.
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Retries the stage at `idx` gets after its first attempt: the run's, and for a
    /// building stage (implement, refactor) also every attempt of the stages skipped just
    /// before it for having nothing to do (a bug fix's plan): a skipped stage's calls go to
    /// the stage that has the work.
    pub fn retries_at(&self, idx: usize) -> u32 {
        let Some(stage) = self.stages.get(idx) else {
            return self.max_retries;
        };
        if !matches!(stage.stage, Stage::Implement | Stage::Refactor) {
            return self.max_retries;
        }
        let skipped = self.stages[..idx]
            .iter()
            .rev()
            .take_while(|s| s.skipped.is_some())
            .count() as u32;
        self.max_retries + skipped * (self.max_retries + 1)
    }

    /// What a stage whose retries are used up does.
    pub fn on_exhausted(&self) -> OnExhausted {
        self.on_exhausted
    }

    /// The index of the stage in progress (past the last: every stage is done).
    pub fn current(&self) -> usize {
        self.current
    }

    /// The stages, in order.
    pub fn stages(&self) -> &[StageRecord] {
        &self.stages
    }

    /// The issues of the last FLAG, waiting for the next stage.
    pub fn pending_flags(&self) -> &[Issue] {
        &self.pending_flags
    }

    /// Every flag raised in the run (each later review is shown them).
    pub fn all_flags(&self) -> &[Issue] {
        &self.all_flags
    }

    /// What the stage in progress is told in its next attempt (empty: nothing).
    pub fn feedback(&self) -> &str {
        &self.feedback
    }

    /// The committed attempt waiting for its review, if any.
    pub fn under_review(&self) -> Option<&UnderReview> {
        self.under_review.as_ref()
    }

    /// Records an attempt at the stage in progress, which stays in progress.
    pub fn push_attempt(&mut self, attempt: AttemptRecord) {
        self.stages[self.current].attempts.push(attempt);
    }

    /// Records a refused attempt at the stage in progress and what its next attempt is told.
    pub fn refuse(&mut self, attempt: AttemptRecord, feedback: String) {
        self.push_attempt(attempt);
        self.feedback = feedback;
    }

    /// Accepts `attempt`'s `commit` as the result of the stage in progress, with the
    /// arbiter's `verdict` when it was reviewed, and moves on to the next stage, which
    /// starts with no feedback.
    pub fn accept(&mut self, attempt: AttemptRecord, commit: ObjectId, verdict: Option<Verdict>) {
        let s = &mut self.stages[self.current];
        s.attempts.push(attempt);
        s.commit = Some(commit);
        s.verdict = verdict;
        self.feedback.clear();
        self.current += 1;
    }

    /// Skips the stage in progress, which the task leaves nothing to do (`why`), and moves
    /// on to the next one; what it was told carries over to it.
    pub fn skip(&mut self, why: String) {
        self.stages[self.current].skipped = Some(why);
        self.current += 1;
    }

    /// The commit the next attempt at the stage in progress builds on instead of the
    /// stage's start (`None`: the stage's start).
    pub fn set_draft(&mut self, draft: Option<ObjectId>) {
        self.stages[self.current].draft = draft;
    }

    /// The issues of a FLAG go to the next stage and to every later review.
    pub fn carry_flags(&mut self, issues: Vec<Issue>) {
        self.all_flags.extend(issues.iter().cloned());
        self.pending_flags = issues;
    }

    /// No flags wait for the next stage (an APPROVE).
    pub fn clear_flags(&mut self) {
        self.pending_flags.clear();
    }

    /// Keeps a committed attempt for its review (a resumed run reviews it).
    pub fn hold_for_review(&mut self, held: UnderReview) {
        self.under_review = Some(held);
    }

    /// The attempt held for review, taken out of the state.
    pub fn take_under_review(&mut self) -> Option<UnderReview> {
        self.under_review.take()
    }

    /// The stage in progress starts a fresh retry budget, told `feedback` (a run taken up
    /// after it waited).
    pub fn fresh_budget(&mut self, feedback: String) {
        if let Some(s) = self.stages.get_mut(self.current) {
            s.epoch_start = s.attempts.len();
        }
        self.feedback = feedback;
    }

    /// The retries of the stage in progress are used up: the earlier stage `to` is redone
    /// with its next model, and both start fresh retry budgets; `why` goes before the
    /// feedback so far.
    pub fn rewind(&mut self, to: Stage, why: &str) {
        let prev = to.index();
        let ps = &mut self.stages[prev];
        ps.model_index += 1;
        ps.commit = None;
        ps.verdict = None;
        ps.epoch_start = ps.attempts.len();
        let s = &mut self.stages[self.current];
        s.epoch_start = s.attempts.len();
        self.current = prev;
        self.feedback = format!("{why}{}", self.feedback);
    }

    /// A person's answer to a HALT (seed 000 B3.3: "rewind N stages, change model
    /// assignment, or abort"): the stage the run stopped at, and the `n - 1` before it, are
    /// redone from the commit before them (theirs stay on the record), the first of them on
    /// `model` when given (put first in its list, added when it was not there), with a fresh
    /// retry budget and `feedback`. Answers the stage the run goes back to, or why it
    /// cannot.
    pub fn rewind_by_you(
        &mut self,
        n: usize,
        model: Option<&str>,
        feedback: String,
    ) -> Result<Stage, String> {
        let at = self.current.min(self.stages.len().saturating_sub(1));
        if n == 0 || n > at + 1 {
            return Err(format!(
                "--rewind takes 1 to {} here: the run stopped at the {} stage",
                at + 1,
                self.stages[at].stage
            ));
        }
        let to = at + 1 - n;
        for s in &mut self.stages[to..] {
            s.commit = None;
            s.verdict = None;
            s.draft = None;
            s.dropped = None;
            s.epoch_start = s.attempts.len();
        }
        if let Some(m) = model {
            let s = &mut self.stages[to];
            let from = s.model_index.min(s.models.len());
            s.models.retain(|x| x != m);
            s.models.insert(from.min(s.models.len()), m.to_string());
            s.model_index = from.min(s.models.len() - 1);
        }
        if self.best.as_ref().is_some_and(|b| b.stage.index() >= to) {
            self.best = None;
        }
        self.format.clear();
        self.under_review = None;
        self.pending_flags.clear();
        self.current = to;
        self.feedback = feedback;
        self.set_running();
        Ok(self.stages[to].stage)
    }

    /// The reconciliation's one REJECT rewind: `to` and the stages after it are redone,
    /// `to` on top of the rejected change (`draft`), told `feedback`; the verify command and
    /// the summary are asked again.
    pub fn reconcile_rewind(&mut self, to: Stage, draft: ObjectId, feedback: String) {
        for s in &mut self.stages[to.index()..] {
            s.commit = None;
            s.verdict = None;
            s.epoch_start = s.attempts.len();
            s.draft = None;
        }
        self.stages[to.index()].draft = Some(draft);
        self.reconcile_mut().rewound = true;
        self.current = to.index();
        self.verify = None;
        self.implementation_summary = None;
        self.feedback = feedback;
    }

    /// The consensus sends the refactor stage back, on top of its result, told `feedback`;
    /// its deliberation is kept among the past ones.
    pub fn back_to_refactor(&mut self, feedback: String) {
        self.feedback = feedback;
        if let Some(c) = self.consensus.as_mut() {
            if let Some(done) = c.current.take() {
                c.past.push(done);
            }
            c.observation = None;
        }
        let refactor = &mut self.stages[Stage::Refactor.index()];
        refactor.epoch_start = refactor.attempts.len();
        self.current = Stage::Refactor.index();
        self.verify = None;
    }

    /// The stage in progress hands its work to `to`, which works with `block` in its prompt
    /// and a fresh retry budget. An earlier stage redoes its work and the stages after it
    /// follow again; a later stage takes it over from where the run stands, and the stages
    /// in between are left out.
    pub fn hand_over(&mut self, to: Stage, block: String) {
        let idx = self.current;
        let target = to.index();
        let redo = if target <= idx {
            target..idx + 1
        } else {
            idx..idx + 1
        };
        for s in &mut self.stages[redo] {
            if target < idx {
                s.commit = None;
                s.verdict = None;
                s.draft = None;
            }
            s.epoch_start = s.attempts.len();
        }
        let t = &mut self.stages[target];
        t.epoch_start = t.attempts.len();
        if target < Stage::Verify.index() {
            self.verify = None;
            if let Some(c) = self.consensus.as_mut() {
                if let Some(done) = c.current.take() {
                    c.past.push(done);
                }
                c.observation = None;
                c.done = false;
            }
        }
        self.current = target;
        self.feedback = block;
        self.set_running();
    }

    /// A parallel exploration's result stands in for the implement stage (`attempt`, its
    /// one accepted attempt, at `tip`); Verify comes next.
    pub fn conclude_exploration(&mut self, attempt: AttemptRecord, tip: ObjectId) {
        let implement = &mut self.stages[Stage::Implement.index()];
        implement.attempts.push(attempt);
        implement.commit = Some(tip);
        self.current = Stage::Verify.index();
        self.parallel_mut().done = true;
    }

    /// Under budget pressure, stage `idx` asks its model at position `at` next (see
    /// `pipeline::run::economy`).
    pub fn put_model_next(&mut self, idx: usize, at: usize) {
        let s = &mut self.stages[idx];
        let from = s.model_index.min(s.models.len());
        let model = s.models.remove(at);
        s.models.insert(from, model);
    }

    /// The stage in progress, if any is left.
    pub fn current_stage(&self) -> Option<Stage> {
        self.stages.get(self.current).map(|s| s.stage)
    }
}
