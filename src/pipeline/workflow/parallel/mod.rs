//! Parallel exploration (`git triad run --workflow parallel`, seed 001 §5.2): instead of
//! Architect → Implement → Refactor, every candidate model builds a complete solution from
//! the identical task prompt, alone and at the same time, each committed on its own branch;
//! each candidate then rates the others' solutions and votes for the best of them (never
//! for its own); the most votes win, a tie (or two candidates' forced votes) goes to a
//! tiebreaker outside the candidates, else to the solutions' checks and ratings; the
//! winner enhances its solution with the best of the others, and the run goes on to the
//! normal Verify stage on top of that. The losers' branches stay.
//!
//! Phases are recorded one by one in [`crate::pipeline::record::ParallelState`], like every step of a run; the
//! result stands in for the implement stage (its one accepted attempt), so Verify, the
//! arbiter and the reconciliation work as in any run.

mod build;
mod judge;
pub mod report;
mod solution;
mod synthesis;
mod text;
mod vote;

pub(in crate::pipeline) use judge::plan as plan_tournament;

use super::Followed;
use crate::config::LoadedConfig;
use crate::pipeline::record::ParallelState;
use crate::pipeline::run::step::{Cx, Flow, Journal, RunError};
use crate::pipeline::start::{Choice, StartError};
use crate::workflow_name::Workflow;

/// A parallel exploration's record, or a tournament's (it has judges).
impl Followed for ParallelState {
    const KEY: &'static str = Workflow::Parallel.as_str();

    fn workflow(&self) -> Workflow {
        if self.tournament() {
            Workflow::Tournament
        } else {
            Workflow::Parallel
        }
    }

    fn under_way(&self) -> bool {
        !self.done
    }

    fn models(&self) -> Vec<String> {
        let judges = self.judges.iter();
        self.models
            .iter()
            .chain(&self.tiebreaker)
            .chain(judges)
            .cloned()
            .collect()
    }

    fn chooses_solution(&self) -> bool {
        true
    }
}

/// Plans a parallel exploration: the candidates and the tiebreaker of a tied vote.
pub(in crate::pipeline) fn plan(
    _: &LoadedConfig,
    _: &Choice,
    models: Vec<String>,
    tiebreaker: Option<String>,
) -> Result<ParallelState, StartError> {
    Ok(ParallelState {
        models,
        tiebreaker,
        ..Default::default()
    })
}

/// One phase of the exploration: the fan-out, one reviewer's cross-review and vote, the
/// tally, the synthesis, or handing the result to Verify.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let Some(p) = j.state.parallel().cloned() else {
        return Ok(Flow::Continue);
    };
    if p.candidates.is_empty() {
        return build::fan_out(cx, j, &p.models);
    }
    if p.winner.is_none() && p.tournament() {
        return judge::step(cx, j, &p);
    }
    if p.winner.is_none() {
        let next = p.present().find(|c| {
            !p.reviews
                .iter()
                .any(|r| r.reviewer == c.model && r.settled())
        });
        return match next {
            Some(c) => vote::cross_review(cx, j, &p, &c.model),
            None => vote::tally(cx, j, &p),
        };
    }
    if p.synthesis.is_none() {
        return synthesis::synthesize(cx, j, &p);
    }
    synthesis::conclude(cx, j, &p)
}
