//! What the facts make of a building stage's change (implement, refactor): the TaskSpec's
//! requirements it leaves undone, and the verify command it breaks. A change that made
//! progress is kept, and the next attempt builds on it; one that made none is asked again
//! from the stage's start; the last attempt goes on with the facts on its record.

use git2::{Oid, Tree};

use super::checks::{advanced, unmet_feedback, Unmet};
use super::verify::failing_feedback;
use super::{Run, RunError};
use crate::code::Finding;
use crate::git::ObjectId;
use crate::pipeline::record::AttemptResult;
use crate::pipeline::stage::Stage;

/// What becomes of a building stage's attempt.
pub(super) enum Held {
    /// It goes on: `notes` go on its record, `findings` travel as flags to later stages.
    GoesOn {
        /// What the facts say it leaves undone or breaks (empty when nothing).
        notes: String,
        /// The requirements it leaves undone, as findings.
        findings: Vec<Finding>,
    },
    /// It is asked again.
    Again {
        /// How the attempt is recorded.
        result: AttemptResult,
        /// Its record's detail.
        detail: String,
        /// What the next attempt is told.
        feedback: String,
        /// Whether the next attempt builds on this change (it made progress, or only
        /// broke the command) rather than on the stage's start.
        keep: bool,
    },
}

impl Run<'_> {
    /// Holds the building stage's attempt `epoch_n`, committed as `commit` with `new_tree`,
    /// to the facts. `whole`: the model writes whole files (the feedback says how to answer).
    pub(super) fn hold_building(
        &mut self,
        stage: Stage,
        commit: Oid,
        new_tree: &Tree<'_>,
        whole: bool,
        epoch_n: u32,
    ) -> Result<Held, RunError> {
        let unmet = self.unmet(new_tree)?;
        let gaps = unmet
            .iter()
            .map(|u| u.why.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let retries_left = epoch_n <= self.state.max_retries;
        let progressed = stage == Stage::Implement && advanced(&self.spec, &unmet);
        if !unmet.is_empty() && !progressed && retries_left {
            return Ok(Held::Again {
                result: AttemptResult::Incomplete,
                detail: gaps,
                feedback: unmet_feedback(&unmet, &self.spec, whole, false),
                keep: false,
            });
        }
        let broken = self.breaks_verify(&ObjectId::from(commit))?;
        let status = broken.as_ref().map(|b| {
            b.exit_code
                .map_or("killed".to_string(), |c| format!("exit {c}"))
        });
        if retries_left && (!unmet.is_empty() || broken.is_some()) {
            let mut feedback = String::new();
            let mut detail = Vec::new();
            let mut result = AttemptResult::Failing;
            if !unmet.is_empty() {
                feedback.push_str(&unmet_feedback(&unmet, &self.spec, whole, true));
                detail.push(gaps.clone());
                result = AttemptResult::Incomplete;
            }
            if let (Some(b), Some(status)) = (&broken, &status) {
                feedback.push_str(&failing_feedback(b, &self.spec));
                detail.push(format!("the verify command fails with it ({status})"));
            }
            detail.push("kept for the next attempt".into());
            return Ok(Held::Again {
                result,
                detail: detail.join("; "),
                feedback,
                keep: true,
            });
        }
        let mut notes = String::new();
        if !unmet.is_empty() {
            notes.push_str(&format!(" (facts: {gaps})"));
        }
        if let Some(status) = status {
            notes.push_str(&format!(
                " (facts: the verify command fails with this change, {status})"
            ));
        }
        Ok(Held::GoesOn {
            notes,
            findings: unmet.iter().map(Unmet::finding).collect(),
        })
    }
}
