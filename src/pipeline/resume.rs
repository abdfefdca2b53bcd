//! Taking up a run that stopped: what its record needs before it goes on.
//!
//! A run stops for the budget, a failed provider, a kill, the user's answers or a chamber
//! session it opened. Resuming it is one decision made here, once, for every command that
//! resumes (`git triad resume`): whether it may go on at all, its cap (the recorded one,
//! carried over with what was spent; `--budget` raises it explicitly), and what the stage it
//! stopped at is told when it goes on (the chamber's decision; a stage outcome's wait is
//! lifted by [`super::waiting::take_up`]).

use git2::Repository;

use super::record::{RunState, RunStatus, StopReason};
use crate::chamber::{FounderAction, Status};

/// Why a stopped run cannot go on yet, or at all.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The run ended (approved, flagged, halted, out of retries): there is nothing to resume.
    #[error("run {run_id} already ended ({})", status.as_str())]
    Ended {
        /// The run.
        run_id: String,
        /// How it ended.
        status: RunStatus,
    },
    /// The run waits for the founder to act on the chamber session it opened.
    #[error("run {run_id} waits on your action on chamber session {session} ({status})")]
    ChamberUndecided {
        /// The run.
        run_id: String,
        /// The session.
        session: String,
        /// The session's status, in words.
        status: String,
    },
    /// `--rewind` asks for what the run cannot do.
    #[error("run {run_id}: {why}")]
    CannotRewind {
        /// The run.
        run_id: String,
        /// Why.
        why: String,
    },
    /// The chamber session the run stopped on cannot be read.
    #[error("chamber session {session} of run {run_id} cannot be read: {why}")]
    ChamberUnreadable {
        /// The run.
        run_id: String,
        /// The session.
        session: String,
        /// Why.
        why: String,
    },
}

/// Prepares `state` to go on: refuses a run that ended or still waits on a chamber session;
/// carries its cap over, raised to what was spent plus `more_usd` when given
/// (`resume --budget`); and gives the stage a chamber session stopped a fresh retry budget
/// with the session's decision as its feedback.
///
/// Nothing else changes: an answer the run received before it stopped stays recorded (under
/// review, or accepted), so the resumed run never asks for it again.
pub fn prepare(
    repo: &Repository,
    state: &mut RunState,
    more_usd: Option<f64>,
    rewind: Option<Rewind<'_>>,
) -> Result<(), ResumeError> {
    if let Some(r) = rewind {
        return rewind_halted(state, more_usd, r);
    }
    if !state.status().resumable() {
        return Err(ResumeError::Ended {
            run_id: state.run_id().to_string(),
            status: state.status(),
        });
    }
    if let Some(more) = more_usd {
        state.raise_budget(more);
    }
    // A stage outcome's wait (answers, dependencies, a reassignment) is the task record's to
    // lift: see `pipeline::waiting::take_up`.
    if let Some(StopReason::Chamber { session, .. }) = state.stop_reason().cloned() {
        let feedback = chamber_decision(repo, state, &session)?;
        // The stage starts a fresh retry budget with what it waited for in its prompt.
        state.fresh_budget(feedback);
    }
    Ok(())
}

/// A person's answer to a halted run: go back `stages` stages, the first of them on `model`.
#[derive(Debug, Clone, Copy)]
pub struct Rewind<'a> {
    /// How many stages to redo, counting the one the run stopped at.
    pub stages: usize,
    /// The model the first of them is redone with.
    pub model: Option<&'a str>,
}

/// Takes up a halted run (HALT, or retries out) by rewinding it (see
/// [`RunState::rewind_by_you`]): the stage it goes back to is told why the run stopped.
fn rewind_halted(
    state: &mut RunState,
    more_usd: Option<f64>,
    r: Rewind<'_>,
) -> Result<(), ResumeError> {
    let run_id = state.run_id().to_string();
    if !matches!(
        state.status(),
        RunStatus::Halted | RunStatus::RetriesExhausted
    ) {
        return Err(ResumeError::CannotRewind {
            run_id,
            why: format!(
                "--rewind takes up a halted run; this one is {} ({})",
                state.status().as_str(),
                if state.status().resumable() {
                    "resume it without --rewind"
                } else {
                    "it ended"
                }
            ),
        });
    }
    let why = state
        .stop_reason()
        .map(|s| s.describe())
        .unwrap_or_else(|| "it halted".into());
    let feedback = format!(
        "## THE RUN HALTED, AND YOU ARE ASKED AGAIN\n\nThe run stopped: {why}\nA person sent it back to this stage to do it differently.\n"
    );
    state
        .rewind_by_you(r.stages, r.model, feedback)
        .map_err(|why| ResumeError::CannotRewind { run_id, why })?;
    if let Some(more) = more_usd {
        state.raise_budget(more);
    }
    Ok(())
}

/// The feedback a run stopped on chamber session `id` goes on with: the session's answer
/// once the founder accepted or revised it, the stage's own feedback when they rejected it.
/// The run's link to the session records which.
fn chamber_decision(
    repo: &Repository,
    state: &mut RunState,
    id: &str,
) -> Result<String, ResumeError> {
    let run_id = state.run_id().to_string();
    let unreadable = |why: String| ResumeError::ChamberUnreadable {
        run_id: run_id.clone(),
        session: id.to_string(),
        why,
    };
    let session = crate::chamber::store::load(repo, id)
        .map_err(|e| unreadable(e.to_string()))?
        .ok_or_else(|| unreadable("it is missing".into()))?;
    let link = state
        .chamber_mut()
        .and_then(|c| c.sessions.iter_mut().find(|l| l.session == id));
    let note = session.actions.last().and_then(|a| a.note.clone());
    let (outcome, feedback) = match (session.status, session.founder_action) {
        (Status::Closed, Some(FounderAction::Accepted | FounderAction::Revised)) => (
            "applied: the founder took it".to_string(),
            crate::chamber::open::answer_block(&session),
        ),
        (Status::Closed, Some(FounderAction::Rejected)) => (
            "rejected by the founder".to_string(),
            format!(
                "{}{}",
                link.as_ref()
                    .map(|l| l.fallback.clone())
                    .unwrap_or_default(),
                note.map(|n| format!("\nThe founder's note: {n}\n"))
                    .unwrap_or_default()
            ),
        ),
        _ => {
            return Err(ResumeError::ChamberUndecided {
                run_id,
                session: id.to_string(),
                status: session.status.as_str().to_string(),
            })
        }
    };
    if let Some(l) = link {
        l.outcome = outcome;
    }
    Ok(feedback)
}
