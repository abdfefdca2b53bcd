//! Starting a run: the committed TaskSpec ([`task`]), the base, what the request resolves
//! to, the models of every stage under the cross-model rule (both in [`super::start`]) and
//! the workflow's own plan ([`super::workflow`]), all checked before any model is called.

mod task;

pub use super::start::{
    assign_models, choose, routes, same_wire_model, Choice, Planned, RunRequest, StartError,
};
pub use task::committed_task;

use git2::Repository;

use super::record::{ChamberRun, ConsensusState, ReconcileState, RunState, Start};
use super::stage::Stage;
use super::start::callable_of;
use crate::config::{LoadedConfig, Role};

/// Plans a run: resolves the request ([`choose`]), reads the committed TaskSpec, and
/// checks every model and rule before any call; returns the run's first state (nothing is
/// written yet).
pub fn plan(
    repo: &Repository,
    loaded: &LoadedConfig,
    env: &[(String, String)],
    req: &RunRequest,
) -> Result<Planned, StartError> {
    let choice = choose(loaded, env, req)?;
    let profile = choice.profile.as_deref();
    let (spec, blob, head) = committed_task(repo, &req.task)?;
    let c = &loaded.config;
    let mode = req.mode.unwrap_or(c.arbiter.mode);
    let stages = assign_models(loaded, req, &choice, mode)?;
    if let Some(m) = &req.reconcile_model {
        if !c.models.contains_key(m) {
            return Err(StartError::UnknownModel(m.clone()));
        }
        callable_of(loaded, Role::Arbiter, std::slice::from_ref(m))?;
        let verifier = stages[Stage::Verify.index()].models.first();
        if verifier.is_some_and(|v| v == m || same_wire_model(loaded, v, m)) {
            return Err(StartError::ReconcilerIsVerifier(m.clone()));
        }
    }

    let workflow = super::workflow::plan(loaded, &choice)?;
    // The consensus sends the refactor stage back; a workflow that chooses its solution by
    // its own vote or reviews has none to send back. Asked for, it is refused; enabled by
    // configuration, it applies where it can (below).
    if req.consensus && workflow.chooses_solution() {
        return Err(StartError::ConsensusWithoutRefactor(workflow.kind()));
    }

    let chamber = chamber_plan(loaded, profile, req.chamber)?;
    let run_id = crate::clock::new_run_id();
    let budget = req.budget.or(c.budget.run_usd).filter(|b| *b > 0.0);
    let state = RunState::new(Start {
        run_id,
        task: req.task.clone(),
        task_blob: blob.into(),
        base: head.into(),
        mode,
        max_retries: req.max_retries.unwrap_or(c.arbiter.max_retries),
        on_exhausted: c.arbiter.on_exhausted,
        stages,
        budget_usd: budget,
        config: serde_json::to_value(c).unwrap_or_default(),
        reconcile: req.reconcile.then(|| ReconcileState {
            model: req.reconcile_model.clone(),
            ..Default::default()
        }),
        // A parallel run's solution is chosen by its own vote; the consensus stage, which
        // sends the refactor stage back, has nothing to send back to.
        consensus: (!workflow.chooses_solution() && (req.consensus || c.consensus.enabled))
            .then(ConsensusState::default),
        workflow,
        chamber,
        routing: choice.routes.clone(),
        profile: profile.map(str::to_string),
    });
    Ok(Planned {
        state,
        spec,
        choice,
    })
}

/// The chamber a run may ask: on when asked for, or when a panel is configured.
fn chamber_plan(
    loaded: &LoadedConfig,
    profile: Option<&str>,
    wanted: Option<bool>,
) -> Result<Option<ChamberRun>, StartError> {
    let configured = loaded.chamber_defaults(profile);
    let on = wanted.unwrap_or(!configured.0.is_empty());
    if !on {
        return Ok(None);
    }
    let roles = |r| loaded.role_models(r, profile);
    let (panel, arbiter) =
        crate::chamber::founder::panel(&loaded.config, &roles, &configured, &[], None)
            .map_err(StartError::Chamber)?;
    Ok(Some(ChamberRun {
        panel,
        arbiter,
        sessions: Vec::new(),
    }))
}
