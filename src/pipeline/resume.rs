//! Taking up a run that stopped: what its record needs before it goes on.
//!
//! A run stops for the budget, a failed provider, a kill, the user's answers or a chamber
//! session it opened. Resuming it is one decision made here, once, for every command that
//! resumes (`git triad resume`): whether it may go on at all, its cap (the recorded one,
//! carried over with what was spent; `--budget` raises it explicitly), and what the stage it
//! stopped at is told when it goes on (the chamber's decision; a stage outcome's wait is
//! lifted by [`super::waiting::take_up`]).

use git2::Repository;

use super::plan::same_wire_model;
use super::record::{RunState, RunStatus, StopReason};
use super::stage::Stage;
use crate::chamber::{FounderAction, Status};
use crate::config::LoadedConfig;

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
        /// For a halted run, a rewind of it that can run, when there is one.
        instead: Option<Rescue>,
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
        /// A rewind of the run that can run, when there is one.
        instead: Option<Rescue>,
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
            instead: None,
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
            instead: None,
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
        .map_err(|why| ResumeError::CannotRewind {
            run_id,
            why,
            instead: None,
        })?;
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

/// A way to take up a halted run that can run: redo `stages` stages, the first (`stage`)
/// on `model`, which this user can call and which `arbiter`, a different model, reviews
/// when the run's mode reviews that stage: `git triad resume <run> --rewind N --model M`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rescue {
    /// How many stages are redone, counting the one the run stopped at.
    pub stages: usize,
    /// The first stage redone.
    pub stage: Stage,
    /// The model it is redone with.
    pub model: String,
    /// Its arbiter; `None` when the run's mode does not review that stage.
    pub arbiter: Option<String>,
}

/// The profile `state` was planned with (an older record: the one in effect now).
fn profile_of(loaded: &LoadedConfig, env: &[(String, String)], state: &RunState) -> Option<String> {
    state
        .profile()
        .map(|p| p.map(str::to_string))
        .unwrap_or_else(|| loaded.active_profile(env))
}

/// The index of the first stage a rewind of `n` redoes, if the run can go back that far.
fn first_redone(state: &RunState, n: usize) -> Option<usize> {
    let at = state.current().min(state.stages().len().saturating_sub(1));
    (n >= 1 && n <= at + 1).then(|| at + 1 - n)
}

/// The arbiter stage `idx` would get redone on `model` (as the review picks it: the stage's
/// own arbiter, else the arbiter role's models, never `model` itself or the same model on
/// the wire, and only one this user can call); `Some(None)` when the stage is not reviewed,
/// `None` when no arbiter differs.
fn arbiter_for(
    loaded: &LoadedConfig,
    profile: Option<&str>,
    state: &RunState,
    idx: usize,
    model: &str,
) -> Option<Option<String>> {
    let st = &state.stages()[idx];
    if !st.reviewed {
        return Some(None);
    }
    let pool = state.arbiter_pool(loaded, profile);
    st.arbiter_model
        .iter()
        .chain(pool.iter())
        .find(|a| a.as_str() != model && !same_wire_model(loaded, a, model) && loaded.callable(a))
        .map(|a| Some(a.clone()))
}

/// The rewind of `n` stages that `state` (halted, or out of retries) can take up: the first
/// stage redone on a model this user can call, one its arbiter differs from, preferring
/// models that stage has not tried yet — the stage's own list, then its role's, then the
/// user's declared models and every other registered model this user can call. `None` when
/// the run is not halted or no model fits.
pub fn rescue(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    state: &RunState,
    n: usize,
) -> Option<Rescue> {
    if !matches!(
        state.status(),
        RunStatus::Halted | RunStatus::RetriesExhausted
    ) {
        return None;
    }
    let idx = first_redone(state, n)?;
    let profile = profile_of(loaded, env, state);
    let st = &state.stages()[idx];
    let tried: Vec<&str> = st.attempts.iter().map(|a| a.model.as_str()).collect();
    let mut candidates: Vec<String> = st.models.clone();
    candidates.extend(loaded.role_models(st.stage.role(), profile.as_deref()));
    candidates.extend(loaded.declared_models());
    candidates.extend(loaded.config.models.keys().cloned());
    let mut seen = std::collections::BTreeSet::new();
    candidates.retain(|m| seen.insert(m.clone()) && m != crate::config::AUTO);
    let fits = |m: &String| {
        loaded.callable(m) && arbiter_for(loaded, profile.as_deref(), state, idx, m).is_some()
    };
    let untried = candidates
        .iter()
        .filter(|m| {
            !tried
                .iter()
                .any(|t| *t == m.as_str() || same_wire_model(loaded, t, m))
        })
        .find(|m| fits(m));
    let model = untried
        .or_else(|| candidates.iter().find(|m| fits(m)))?
        .clone();
    let arbiter = arbiter_for(loaded, profile.as_deref(), state, idx, &model)?;
    Some(Rescue {
        stages: n,
        stage: st.stage,
        model,
        arbiter,
    })
}

/// Checks, before anything is recorded or called, that a rewind of `state` can run: the
/// model named exists and can be called, and the first stage redone has an arbiter that
/// differs from the model it is redone with. What cannot run is refused with a rewind that
/// can ([`rescue`]), if there is one.
pub fn check_rewind(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    state: &RunState,
    r: Rewind<'_>,
) -> Result<(), ResumeError> {
    let Some(idx) = first_redone(state, r.stages) else {
        // rewind_by_you says how far it can go.
        return Ok(());
    };
    if !matches!(
        state.status(),
        RunStatus::Halted | RunStatus::RetriesExhausted
    ) {
        return Ok(());
    }
    let st = &state.stages()[idx];
    let model = r
        .model
        .map(str::to_string)
        .unwrap_or_else(|| st.model().to_string());
    let refuse = |why: String| ResumeError::CannotRewind {
        run_id: state.run_id().to_string(),
        why,
        instead: rescue(loaded, env, state, r.stages),
    };
    if let Some(why) = loaded.uncallable_reason(&model) {
        return Err(refuse(format!(
            "--model {model} cannot be called ({why}); nothing was called"
        )));
    }
    let profile = profile_of(loaded, env, state);
    if arbiter_for(loaded, profile.as_deref(), state, idx, &model).is_none() {
        let pool = state.arbiter_pool(loaded, profile.as_deref());
        return Err(refuse(format!(
            "the {} stage redone on {model} would have no arbiter: every arbiter model ({}) is {model} or cannot be called, and an arbiter is always a different model; nothing was called",
            st.stage,
            pool.join(", ")
        )));
    }
    Ok(())
}
