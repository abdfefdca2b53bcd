//! What a run does next, decided from typed values alone: after the arbiter's verdict on an
//! attempt (seed 000 §B3.3), before another attempt at a stage whose retry budget may be used
//! up (§B7.4), after the consensus on the refactored result (§B9 row 4), and after the
//! reconciliation (§B11.5). Nothing here reads git or asks a model: each function answers
//! a typed action, and the run carries it out and records it.

use super::record::{NoRewind, RunState, RunStatus, StageRecord};
use super::stage::Stage;
use crate::arbiter::Verdict;
use crate::config::OnExhausted;

/// A stage's retry budget and what happens when it is used up (seed 000 §B7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Retries a stage gets after its first attempt (`arbiter.max_retries`).
    pub max_retries: u32,
    /// What a stage whose retries are used up does (`arbiter.on_exhausted`).
    pub on_exhausted: OnExhausted,
}

impl Policy {
    /// The policy a run was started with.
    pub fn of(state: &RunState) -> Policy {
        Policy {
            max_retries: state.max_retries(),
            on_exhausted: state.on_exhausted(),
        }
    }

    /// The policy of the stage at `idx` (its retries: [`RunState::retries_at`]).
    pub fn at(state: &RunState, idx: usize) -> Policy {
        Policy {
            max_retries: state.retries_at(idx),
            on_exhausted: state.on_exhausted(),
        }
    }
}

/// What the chamber made of a doubtful REJECT or HALT (seed 003), as far as the run's next
/// step goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deliberated {
    /// No session answered (none was opened, or it could not answer): the verdict stands.
    Nothing,
    /// A session answered: its answer goes into the stage's retry.
    Answered,
    /// A session escalated the decision to the founder.
    Escalated,
}

/// Why a run stops, as the transition decides it (the run adds the details it recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The arbiter halted the run (HALT).
    Halted,
    /// A stage used up its retries, and the policy is to stop for a person.
    RetriesHalt,
    /// A stage used up its retries, and the stage before it cannot be redone.
    Exhausted(NoRewind),
    /// The chamber escalated a doubtful REJECT to the founder.
    Chamber,
    /// The consensus would not let the refactored result proceed, after as many redos as a
    /// stage gets retries.
    Consensus,
    /// The reconciliation halted, or rejected where it may not send the work back
    /// (`after_retry`: a REJECT, after its one rewind or in `git triad reconcile`).
    Reconciliation {
        /// Whether the stop is a REJECT (a HALT stops at once).
        after_retry: bool,
    },
}

impl Stop {
    /// The status the run stops with.
    pub fn status(self) -> RunStatus {
        match self {
            Stop::Halted | Stop::RetriesHalt | Stop::Consensus | Stop::Reconciliation { .. } => {
                RunStatus::Halted
            }
            Stop::Exhausted(_) => RunStatus::RetriesExhausted,
            Stop::Chamber => RunStatus::WaitingOnUser,
        }
    }
}

/// What the run does with a reviewed attempt (seed 000 §B3.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterReview {
    /// Accept it and go to the next stage. `carry_flags`: the verdict's issues go to the
    /// next stage's prompt and to every later review (FLAG); else the flags waiting for this
    /// stage are cleared (APPROVE: warnings are logged in the note, never passed on).
    Accept {
        /// Whether the verdict's issues travel on.
        carry_flags: bool,
    },
    /// Try the stage again with the verdict's feedback (and the chamber's answer, if any).
    Retry,
    /// Stop the run.
    Stop(Stop),
}

/// The arbiter's `verdict` on an attempt, with what the chamber made of it when it was
/// doubtful.
pub fn after_review(verdict: Verdict, chamber: Deliberated) -> AfterReview {
    match verdict {
        Verdict::Approve => AfterReview::Accept { carry_flags: false },
        Verdict::Flag => AfterReview::Accept { carry_flags: true },
        Verdict::Reject if chamber == Deliberated::Escalated => AfterReview::Stop(Stop::Chamber),
        Verdict::Reject => AfterReview::Retry,
        // A model's synthesis does not lift a HALT: the person who decides reads it.
        Verdict::Halt => AfterReview::Stop(Stop::Halted),
    }
}

/// What the run does at a stage that is due for an attempt (seed 000 §B7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Attempt it: retries are left.
    Attempt,
    /// Its retries are used up: redo this earlier stage with its next model, with the
    /// feedback so far.
    Rewind(Stage),
    /// Its retries are used up and the run stops.
    Stop(Stop),
}

/// Whether the stage's retry budget is used up and what then: `tries` attempts were made in
/// it; `earlier` is the stage before it when that one has another model to redo it with,
/// else why it cannot be redone.
pub fn due(policy: Policy, tries: u32, earlier: Result<Stage, NoRewind>) -> Due {
    if tries <= policy.max_retries {
        return Due::Attempt;
    }
    match (policy.on_exhausted, earlier) {
        (OnExhausted::Halt, _) => Due::Stop(Stop::RetriesHalt),
        (OnExhausted::Rewind, Ok(stage)) => Due::Rewind(stage),
        (OnExhausted::Rewind, Err(why)) => Due::Stop(Stop::Exhausted(why)),
    }
}

/// The stage before `stages[current]` when its role has another model to redo it with,
/// else why it cannot be redone (the `earlier` of [`due`]).
pub fn earlier(stages: &[StageRecord], current: usize) -> Result<Stage, NoRewind> {
    let prev = current.checked_sub(1).ok_or(NoRewind::NoEarlierStage)?;
    let p = stages.get(prev).ok_or(NoRewind::NoEarlierStage)?;
    if p.model_index + 1 >= p.models.len() {
        return Err(NoRewind::NoOtherModel {
            role: p.stage.role(),
        });
    }
    Ok(p.stage)
}

/// What the run does once the consensus decided on the refactored result (seed 000 §B9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterConsensus {
    /// On to verification.
    Proceed,
    /// The refactor stage reworks its result, told what the agents decided.
    BackToRefactor,
    /// The run stops with the deliberation for a person.
    Stop(Stop),
}

/// The consensus decided (`proceed`: it approved the result); it sent the refactor stage
/// back `sent_back` times before.
pub fn after_consensus(policy: Policy, proceed: bool, sent_back: u32) -> AfterConsensus {
    if proceed {
        AfterConsensus::Proceed
    } else if sent_back >= policy.max_retries {
        AfterConsensus::Stop(Stop::Consensus)
    } else {
        AfterConsensus::BackToRefactor
    }
}

/// What the run does after the reconciliation (seed 000 §B11.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterReconciliation {
    /// The run completes (APPROVE; FLAG with its gaps in the report).
    Complete,
    /// The work goes back to this stage, with the gaps as its feedback.
    Rewind(Stage),
    /// The run stops.
    Stop(Stop),
}

/// The reconciliation's `verdict`; `rewind_to` is the stage its REJECT names; `may_rewind`:
/// this reconciliation may send the work back (not `git triad reconcile`); `rewound`: the one
/// REJECT rewind is used.
pub fn after_reconciliation(
    verdict: Verdict,
    rewind_to: &str,
    may_rewind: bool,
    rewound: bool,
) -> AfterReconciliation {
    match verdict {
        Verdict::Approve | Verdict::Flag => AfterReconciliation::Complete,
        Verdict::Reject if may_rewind && !rewound => AfterReconciliation::Rewind(
            // Implement or Refactor, the seed says; anything else is the implementation's.
            if rewind_to == Stage::Refactor.as_str() {
                Stage::Refactor
            } else {
                Stage::Implement
            },
        ),
        Verdict::Reject | Verdict::Halt => AfterReconciliation::Stop(Stop::Reconciliation {
            after_retry: verdict == Verdict::Reject,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Role;

    /// The seed's budget: two retries, then the policy.
    fn policy(on_exhausted: OnExhausted) -> Policy {
        Policy {
            max_retries: 2,
            on_exhausted,
        }
    }

    // Seed 000 §B3.3, one test per verdict.

    #[test]
    fn approve_goes_to_the_next_stage_and_passes_no_flags_on() {
        assert_eq!(
            after_review(Verdict::Approve, Deliberated::Nothing),
            AfterReview::Accept { carry_flags: false }
        );
    }

    #[test]
    fn flag_goes_to_the_next_stage_with_its_issues() {
        assert_eq!(
            after_review(Verdict::Flag, Deliberated::Nothing),
            AfterReview::Accept { carry_flags: true }
        );
    }

    #[test]
    fn reject_runs_the_stage_again_with_the_feedback() {
        assert_eq!(
            after_review(Verdict::Reject, Deliberated::Nothing),
            AfterReview::Retry
        );
        // A chamber's answer goes into that retry; an escalation waits for the founder.
        assert_eq!(
            after_review(Verdict::Reject, Deliberated::Answered),
            AfterReview::Retry
        );
        let waits = after_review(Verdict::Reject, Deliberated::Escalated);
        assert_eq!(waits, AfterReview::Stop(Stop::Chamber));
        assert_eq!(Stop::Chamber.status(), RunStatus::WaitingOnUser);
    }

    #[test]
    fn halt_stops_the_run_for_a_person_whatever_the_chamber_said() {
        for chamber in [
            Deliberated::Nothing,
            Deliberated::Answered,
            Deliberated::Escalated,
        ] {
            assert_eq!(
                after_review(Verdict::Halt, chamber),
                AfterReview::Stop(Stop::Halted)
            );
        }
        assert_eq!(Stop::Halted.status(), RunStatus::Halted);
    }

    // Seed 000 §B7.4: two retries, then HALT for a person or a rewind with another model.

    #[test]
    fn a_stage_is_attempted_while_its_two_retries_are_left() {
        for tries in 0..=2 {
            assert_eq!(
                due(policy(OnExhausted::Halt), tries, Ok(Stage::Architect)),
                Due::Attempt,
                "after {tries} attempt(s)"
            );
        }
    }

    #[test]
    fn used_up_retries_stop_for_a_person_when_the_policy_is_halt() {
        let d = due(policy(OnExhausted::Halt), 3, Ok(Stage::Architect));
        assert_eq!(d, Due::Stop(Stop::RetriesHalt));
        assert_eq!(Stop::RetriesHalt.status(), RunStatus::Halted);
    }

    #[test]
    fn used_up_retries_redo_the_stage_before_with_its_next_model() {
        assert_eq!(
            due(policy(OnExhausted::Rewind), 3, Ok(Stage::Implement)),
            Due::Rewind(Stage::Implement)
        );
    }

    #[test]
    fn used_up_retries_with_nothing_to_rewind_end_the_run_as_exhausted() {
        for why in [
            NoRewind::NoEarlierStage,
            NoRewind::NoOtherModel {
                role: Role::Architect,
            },
        ] {
            let d = due(policy(OnExhausted::Rewind), 3, Err(why));
            assert_eq!(d, Due::Stop(Stop::Exhausted(why)));
        }
        assert_eq!(
            Stop::Exhausted(NoRewind::NoEarlierStage).status(),
            RunStatus::RetriesExhausted
        );
    }

    #[test]
    fn the_stage_before_is_redone_only_with_a_model_it_has_not_used() {
        let stage = |stage: Stage, models: &[&str], model_index: usize| StageRecord {
            model_index,
            ..StageRecord::planned(
                stage,
                models.iter().map(|m| m.to_string()).collect(),
                None,
                false,
            )
        };
        let stages = [
            stage(Stage::Architect, &["a", "b"], 0),
            stage(Stage::Implement, &["c"], 0),
            stage(Stage::Refactor, &["d"], 0),
        ];
        assert_eq!(earlier(&stages, 0), Err(NoRewind::NoEarlierStage));
        assert_eq!(earlier(&stages, 1), Ok(Stage::Architect));
        assert_eq!(
            earlier(&stages, 2),
            Err(NoRewind::NoOtherModel {
                role: Role::Implementer
            })
        );
        let used = [stage(Stage::Architect, &["a", "b"], 1), stages[1].clone()];
        assert_eq!(
            earlier(&used, 1),
            Err(NoRewind::NoOtherModel {
                role: Role::Architect
            })
        );
    }

    // Seed 000 §B9 row 4: the consensus sends the refactor stage back as often as a stage
    // is retried.

    #[test]
    fn the_consensus_proceeds_sends_back_or_stops() {
        let p = policy(OnExhausted::Halt);
        assert_eq!(after_consensus(p, true, 2), AfterConsensus::Proceed);
        assert_eq!(after_consensus(p, false, 1), AfterConsensus::BackToRefactor);
        let stops = after_consensus(p, false, 2);
        assert_eq!(stops, AfterConsensus::Stop(Stop::Consensus));
        assert_eq!(Stop::Consensus.status(), RunStatus::Halted);
    }

    // Seed 000 §B11.5, one test per verdict.

    #[test]
    fn a_reconciliation_approve_completes_the_run() {
        assert_eq!(
            after_reconciliation(Verdict::Approve, "", true, false),
            AfterReconciliation::Complete
        );
    }

    #[test]
    fn a_reconciliation_flag_completes_the_run_with_its_gaps() {
        assert_eq!(
            after_reconciliation(Verdict::Flag, "implement", true, false),
            AfterReconciliation::Complete
        );
    }

    #[test]
    fn a_reconciliation_reject_rewinds_once_to_the_stage_it_names() {
        let once = |to| after_reconciliation(Verdict::Reject, to, true, false);
        assert_eq!(
            once("refactor"),
            AfterReconciliation::Rewind(Stage::Refactor)
        );
        assert_eq!(
            once("implement"),
            AfterReconciliation::Rewind(Stage::Implement)
        );
        assert_eq!(
            once("architect"),
            AfterReconciliation::Rewind(Stage::Implement)
        );
        // Max one retry: a second REJECT stops, as does one where no rewind may happen.
        let again = AfterReconciliation::Stop(Stop::Reconciliation { after_retry: true });
        assert_eq!(
            after_reconciliation(Verdict::Reject, "refactor", true, true),
            again
        );
        assert_eq!(
            after_reconciliation(Verdict::Reject, "refactor", false, false),
            again
        );
    }

    #[test]
    fn a_reconciliation_halt_stops_the_run() {
        let stop = after_reconciliation(Verdict::Halt, "implement", true, false);
        assert_eq!(
            stop,
            AfterReconciliation::Stop(Stop::Reconciliation { after_retry: false })
        );
        assert_eq!(
            Stop::Reconciliation { after_retry: false }.status(),
            RunStatus::Halted
        );
    }
}
