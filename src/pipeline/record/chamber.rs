//! A run's use of the deliberation chamber (seed 003): the panel it may ask, and every
//! Level 2 session it opened on a decision, with what became of it.

use serde::{Deserialize, Serialize};

use crate::pipeline::stage::Stage;

/// The chamber of a run with `--chamber auto`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChamberRun {
    /// The panel (2-3 distinct models).
    pub panel: Vec<String>,
    /// The arbiter who synthesizes.
    pub arbiter: String,
    /// Every session the run opened, in order.
    #[serde(default)]
    pub sessions: Vec<ChamberLink>,
}

impl ChamberRun {
    /// Whether the stage already had a session in its current retry budget (one is enough:
    /// a second would ask the same panel the same question).
    pub fn asked(&self, stage: Stage, epoch: usize) -> bool {
        self.sessions
            .iter()
            .any(|l| l.stage == stage && l.epoch == epoch)
    }
}

/// One session the run opened, and its effect on the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChamberLink {
    /// The session (`git triad chamber show <id>`).
    pub session: String,
    /// The stage whose decision it was.
    pub stage: Stage,
    /// The stage's retry budget it belongs to (its first attempt's index).
    pub epoch: usize,
    /// What opened it: `LOW_CONFIDENCE`, `TOO_COSTLY`, `POLICY_VIOLATION`, or `arbiter
    /// REJECT at 0.65`.
    pub trigger: String,
    /// `auto-accepted`, `escalated`, `applied` (after the founder accepted or revised),
    /// `rejected by the founder`, or why it gave no answer.
    pub outcome: String,
    /// The synthesized answer given to the stage, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The feedback the stage gets when the chamber's answer is not used.
    #[serde(default)]
    pub fallback: String,
}
