//! Progress of a run as it happens: the library reports events, a renderer (the command
//! line's plain lines today, a live terminal view later) decides what people see.

use crate::arbiter::{ArbiterReview, Verdict};
use crate::git::ObjectId;
use crate::model::Spend;
use crate::sandbox::CommandOutcome;

use super::record::{AttemptResult, RunState};
use super::stage::Stage;
use super::VerifySkip;

/// One thing that happened in a run.
#[derive(Debug, Clone, Copy)]
pub enum Progress<'a> {
    /// A stage attempt starts: the model is being asked.
    StageStarted {
        /// The stage.
        stage: Stage,
        /// Its position (0-based) and the number of stages.
        position: (usize, usize),
        /// The model asked first.
        model: &'a str,
        /// The attempt in the current retry budget (1-based) and the budget's size.
        attempt: (u32, u32),
    },
    /// The stage model answered.
    Answered {
        /// The stage.
        stage: Stage,
        /// Wall time of the call, in seconds.
        seconds: f64,
        /// What it cost.
        spend: Spend,
    },
    /// An attempt could not be used and the stage is tried again.
    AttemptRefused {
        /// The stage.
        stage: Stage,
        /// The attempt number.
        n: u32,
        /// Why.
        result: AttemptResult,
        /// The first line of the reason.
        detail: &'a str,
    },
    /// The arbiter is asked to review a stage.
    ReviewStarted {
        /// The stage.
        stage: Stage,
        /// The arbiter asked first.
        arbiter: &'a str,
    },
    /// The arbiter's verdict on a stage, after the deterministic floor.
    Reviewed {
        /// The stage.
        stage: Stage,
        /// The review.
        review: &'a ArbiterReview,
    },
    /// The verify command starts in the box, on a scratch copy of a commit.
    VerifyStarted {
        /// The command.
        command: &'a str,
        /// The commit it runs at.
        at: &'a ObjectId,
    },
    /// The verify command ended.
    VerifyFinished {
        /// How.
        outcome: &'a CommandOutcome,
    },
    /// The verify command is not run.
    VerifySkipped {
        /// Why.
        why: VerifySkip,
    },
    /// A stage the task leaves nothing to do is skipped (see `run_idle_stages`).
    StageSkipped {
        /// The stage.
        stage: Stage,
        /// Why it has nothing to do.
        why: &'a str,
    },
    /// Retries were used up and the run went back to an earlier stage with another model.
    Rewound {
        /// The stage redone.
        to: Stage,
        /// Its new model.
        model: &'a str,
    },
    /// A stage's work was dropped and the run went back to its best evidenced commit.
    Dropped {
        /// The stage dropped.
        stage: Stage,
        /// Why.
        why: &'a str,
        /// The commit the run goes on from.
        best: &'a crate::git::ObjectId,
    },
    /// A stage called its work out of its scope and the arbiter gave it to another stage.
    Reassigned {
        /// The stage that answered OUT_OF_SCOPE.
        from: Stage,
        /// The stage that takes the work over.
        to: Stage,
        /// Its model.
        model: &'a str,
    },
    /// The reconciliation starts.
    ReconcileStarted {
        /// The reconciliation arbiter asked first, if any is left.
        model: Option<&'a str>,
    },
    /// The reconciliation's verdict.
    Reconciled {
        /// Who judged.
        model: &'a str,
        /// The verdict in force.
        verdict: Verdict,
        /// What the model said, and the facts that raised it when they did.
        raised: Option<(Verdict, &'a [String])>,
    },
    /// A reconciliation REJECT sends the run back once.
    ReconcileRewind {
        /// The stage redone.
        to: Stage,
    },
    /// The consensus stage calls its panel.
    ConsensusStarted {
        /// The voting models.
        voters: &'a [String],
        /// Who breaks ties, if any model did not vote.
        tiebreaker: Option<&'a str>,
    },
    /// One step of a deliberation: a ballot, a rebuttal, a ruling, a paper, a selection.
    Deliberated {
        /// Who spoke (a model).
        who: &'a str,
        /// What it did, in a few words ("votes amend", "rebuts", ...).
        what: &'a str,
    },
    /// The deliberation decided.
    ConsensusDecided {
        /// The decision ("approve", "amend", "reject").
        choice: &'a str,
        /// How ("unanimous", "majority", "tiebreaker", "unilateral").
        by: &'a str,
        /// The arbiter's observation (APPROVE or FLAG).
        observed: Option<Verdict>,
        /// Whether fewer agents voted than were called.
        degraded: bool,
    },
    /// One step of a parallel exploration: a candidate built, rated, voted, won, synthesized.
    Explored {
        /// Who (a model; `orchestrator` for the tally).
        who: &'a str,
        /// What, in a few words.
        what: &'a str,
    },
    /// One step of a debate: a debater spoke or left, the tiebreaker judged.
    Debated {
        /// Who (a model; `orchestrator` for a phase starting).
        who: &'a str,
        /// What, in a few words.
        what: &'a str,
    },
    /// The chamber deliberates a stage's decision (a session opened, a phase, its end).
    Chamber {
        /// The stage whose decision it is.
        stage: Stage,
        /// What happened, in a few words.
        line: &'a str,
    },
    /// The formatter ran on the result.
    Formatted {
        /// The command.
        command: &'a str,
        /// What became of it, in a sentence.
        detail: &'a str,
    },
    /// Under cost routing and budget pressure, an unreviewed stage takes a cheaper model.
    Economized {
        /// The stage.
        stage: Stage,
        /// The model it would have asked.
        from: &'a str,
        /// The cheaper model it asks.
        to: &'a str,
        /// USD spent so far.
        spent: f64,
        /// The run's budget.
        budget: f64,
    },
    /// A run that ended well after a stop of its own superseded the run-outcome mark that
    /// stop left on a commit (see `resume --rewind`).
    Superseded {
        /// What it superseded, in a sentence.
        line: &'a str,
    },
    /// The run stopped or finished; its state says why.
    Ended {
        /// The final state.
        state: &'a RunState,
    },
}

/// Receives a run's progress.
pub trait Observer {
    /// Called for every event, in order, from the thread that runs the pipeline.
    fn progress(&self, event: &Progress<'_>);
}

/// An observer that shows nothing (`--quiet`, library use).
pub struct Silent;

impl Observer for Silent {
    fn progress(&self, _event: &Progress<'_>) {}
}
