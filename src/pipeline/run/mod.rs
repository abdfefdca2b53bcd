//! One run, owned: [`Run`] holds what the run reads ([`step::Cx`]: its surroundings and
//! TaskSpec) and what it changes ([`step::Journal`]: its state and the record it is written
//! to), and its loop, below, says which step comes next.
//!
//! The steps are free functions over those two, each in the module that answers its
//! question: one attempt at a stage in [`attempt`] (its prompt in [`prompt`], the facts of
//! its tree in [`facts`], a building stage held to them in [`building`], its review in
//! [`review`]); what follows an attempt in [`act`], as [`super::transition`] decides it;
//! stopping in [`stop`]; the verify command in [`verify`]; the reconciliation in
//! [`reconcile`]; the workflow before Verify in [`super::workflow`], decisions due in
//! [`consensus`] and [`suggest`]; the formatter in [`format`]. Every step is recorded before the next begins,
//! so a killed run resumes from its record; the scratch branch follows the record
//! ([`branch`]).

mod act;
mod asked;
mod attempt;
pub(super) mod branch;
mod building;
pub(super) mod call;
mod chamber;
mod checks;
mod consensus;
mod economy;
mod examples;
pub(super) mod facts;
mod format;
mod idle;
mod observe;
mod prompt;
mod reassign;
mod reconcile;
mod requirements;
mod review;
pub(super) mod step;
pub(super) mod stop;
mod suggest;
mod verify;
mod whole;

pub(crate) use step::BlockOn;
pub use step::{Flow, RunEnv, RunError};

use self::step::{Cx, Journal};
use super::observer::Progress;
use super::record::{RunState, RunStatus, StopReason};
use super::stage::Stage;
use super::transition::{self, Due, Policy};
use super::waiting::TakeUp;
use crate::arbiter::Verdict;
use crate::task::{Actor, TaskSpec};

/// One run: what it reads and what it changes.
pub struct Run<'a> {
    cx: Cx<'a>,
    j: Journal<'a>,
}

impl<'a> Run<'a> {
    /// A run over `state` (new or loaded from its record).
    pub fn new(env: &'a RunEnv<'a>, state: RunState, spec: TaskSpec) -> Self {
        // The ledger says which run each call served.
        env.client.set_run(Some(state.run_id()));
        Run {
            cx: Cx::new(env, spec, state.base().clone()),
            j: Journal::open(env.repo, state),
        }
    }

    /// The state as it stands.
    pub fn state(&self) -> &RunState {
        &self.j.state
    }

    /// The state, for a caller that is done with the run.
    pub fn into_state(self) -> RunState {
        self.j.into_state()
    }

    /// Writes the first event and creates the scratch branch at the base.
    pub fn start(&mut self) -> Result<(), RunError> {
        self.j.event("start")?;
        let base = self.j.state.base().oid()?;
        branch::move_branch(&self.cx, &self.j, base, None, "start run")?;
        Ok(())
    }

    /// Puts the branch where the record says the run stands, before any model is called;
    /// says what it repaired, if anything (see [`branch`]).
    pub fn sync_branch(&mut self) -> Result<Option<String>, RunError> {
        branch::sync(&self.cx, &self.j)
    }

    /// Goes on with what a waiting run may now do (see [`crate::pipeline::waiting`]).
    pub fn take_up(&mut self, what: TakeUp) -> Result<(), RunError> {
        reassign::take_up(&self.cx, &mut self.j, what)
    }

    /// `git triad reconcile <run-id>`: reconciles a finished run again, without rewinding.
    pub fn reconcile_again(&mut self) -> Result<Option<Verdict>, RunError> {
        reconcile::again(&self.cx, &mut self.j)
    }

    /// Runs stages until the run finishes or stops; the state says how. A git failure is
    /// recorded as a failed run (so the task is not left in review) and returned.
    pub fn execute(&mut self) -> Result<(), RunError> {
        let (cx, j) = (&self.cx, &mut self.j);
        let stage = j.state.current_stage().unwrap_or(Stage::Verify);
        if let Err(e) = crate::task::lifecycle::on_run_start(
            cx.repo(),
            j.state.task(),
            j.state.run_id(),
            stage.as_str(),
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        let result = run_loop(cx, j);
        if let Err(e) = &result {
            j.state.stop(
                RunStatus::Failed,
                StopReason::GitFailed {
                    error: e.to_string(),
                },
            );
            // The record may be what failed; the error below says so either way.
            let _ = j.event("stopped by a repository error");
        }
        // Who decided the task's fate: the arbiter when a model reviewed anything, else the
        // policy (an unreviewed run ends by rule, not by judgement).
        let reviewed = j.state.stages().iter().any(|s| s.verdict.is_some())
            || j.state
                .reconcile()
                .as_ref()
                .is_some_and(|r| r.verdict.is_some())
            || matches!(j.state.stop_reason(), Some(StopReason::ArbiterHalt { .. }));
        let decided_by = if reviewed {
            Actor::Arbiter
        } else {
            Actor::Policy
        };
        if let Err(e) = crate::task::lifecycle::on_run_end(
            cx.repo(),
            j.state.task(),
            j.state.run_id(),
            j.state.status(),
            j.state.final_verdict().map(|v| v.as_str()),
            decided_by,
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        cx.progress(&Progress::Ended { state: &j.state });
        result
    }
}

/// The loop: the workflow's own steps (parallel, debate, tournament) while it is under way,
/// then decisions due (a suggestion, the consensus), the formatter before Verify, the stage
/// in progress, the reconciliation, and the end.
fn run_loop(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<(), RunError> {
    cx.env
        .client
        .set_budget_after(j.state.budget_usd(), j.state.spend().cost_usd);
    j.state.set_running();
    loop {
        let flow = if cx.env.workflows.due(j) {
            cx.env.workflows.step(cx, j)?
        } else if let Some(i) = suggest::due(j) {
            suggest::step(cx, j, i)?
        } else if consensus::due(j) {
            consensus::step(cx, j)?
        } else if format::due(cx, j) {
            format::step(cx, j)?
        } else if let Some(stage) = j.state.current_stage() {
            stage_step(cx, j, stage)?
        } else if j.state.reconcile().is_some_and(|r| !r.done) {
            reconcile::step(cx, j, true)?
        } else {
            return act::finish(cx, j);
        };
        if flow == Flow::Stop {
            return Ok(());
        }
    }
}

/// One step at `stage`: the review of an attempt a killed run left committed, else
/// escalate when its retries are used up (see [`transition::due`]), else skip it when the
/// task leaves it nothing to do ([`idle`]), else run the verify command first (verify
/// stage, unless it ran at the tip already), then one attempt.
fn stage_step(cx: &Cx<'_>, j: &mut Journal<'_>, stage: Stage) -> Result<Flow, RunError> {
    if j.state.under_review().is_some() {
        return review::resume(cx, j);
    }
    let tries = j.state.stages()[j.state.current()].attempts_in_epoch();
    let earlier = transition::earlier(j.state.stages(), j.state.current());
    match transition::due(Policy::at(&j.state, j.state.current()), tries, earlier) {
        Due::Attempt => {}
        Due::Rewind(to) => return act::rewind(cx, j, to),
        Due::Stop(stop) => return act::exhausted(cx, j, stop),
    }
    if let Some(why) = idle::why_idle(cx, j, stage)? {
        cx.progress(&Progress::StageSkipped { stage, why: &why });
        j.state.skip(why);
        j.event(&format!("{stage} skipped: nothing to do"))?;
        return Ok(Flow::Continue);
    }
    if stage == Stage::Verify {
        // At the tip: not again if it ran there, again if a rejected fix moved it.
        let tip = j.state.tip().clone();
        if j.state.verify().is_none() || j.state.verify_at() != Some(&tip) {
            verify::run(cx, j, tip)?;
        }
    }
    attempt::attempt(cx, j)
}
