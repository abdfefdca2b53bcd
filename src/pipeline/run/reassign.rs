//! Work moving to another stage (seed 004's REASSIGNED): a stage that calls its work out of
//! its scope hands it to the stage the arbiter routed it to, and a run that waited on you
//! takes up what the task record now says.

use super::branch::move_branch;
use super::step::{Cx, Flow, Journal, RunError};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{AttemptResult, RunState};
use crate::pipeline::stage::Stage;
use crate::pipeline::waiting::TakeUp;
use crate::task::outcome::Outcome;

/// How many times one run hands work to another stage before it asks you instead: two
/// stages pointing at each other must not loop.
pub const MAX_HANDOVERS: usize = 2;

/// Goes on with what a waiting run may now do (see [`crate::pipeline::waiting`]): the
/// stopped stage again with `block` in its prompt and a fresh retry budget, or another
/// stage taking the work over.
pub(super) fn take_up(cx: &Cx<'_>, j: &mut Journal<'_>, what: TakeUp) -> Result<(), RunError> {
    match what {
        TakeUp::Nothing => Ok(()),
        TakeUp::Continue(block) => {
            j.state.taken_up(block);
            j.event("taken up again")?;
            Ok(())
        }
        TakeUp::MoveTo(to, block) => hand_over(cx, j, to, block).map(|_| ()),
    }
}

/// How many times this run handed work to another stage (every OUT_OF_SCOPE answer
/// that was routed to one).
pub(super) fn handovers(state: &RunState) -> usize {
    state
        .stages()
        .iter()
        .flat_map(|s| &s.attempts)
        .filter(|a| a.result == AttemptResult::Outcome && a.detail == Outcome::OutOfScope.as_str())
        .count()
}

/// Gives the current stage's work to `to`, which works with `block` in its prompt and a
/// fresh retry budget. An earlier stage redoes its work and the stages after it follow
/// again (their commits stay reachable from the record); a later stage takes it over
/// from where the run stands, and the stages in between are left out.
pub(super) fn hand_over(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    to: Stage,
    block: String,
) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let target = to.index();
    let from = j.state.stages()[idx].stage;
    let old_tip = j.state.tip().oid()?;
    j.state.hand_over(to, block);
    let new_tip = j.state.tip().oid()?;
    j.keep(old_tip);
    j.event(&format!("{from} reassigned its work to {to}"))?;
    if new_tip != old_tip {
        move_branch(cx, j, new_tip, Some(old_tip), "reassigned")?;
    }
    cx.progress(&Progress::Reassigned {
        from,
        to,
        model: j.state.stages()[target].model(),
    });
    Ok(Flow::Continue)
}
