//! The models of a run: every stage's and its arbiter's, under the cross-model rule, and
//! the panel of a workflow several models take part in.

use super::error::StartError;
use super::request::{Choice, RunRequest};
use crate::config::{ArbiterMode, LoadedConfig, Role};
use crate::pipeline::record::StageRecord;
use crate::pipeline::stage::Stage;

/// Whether registry names `a` and `b` send the same model id to the same provider.
pub fn same_wire_model(loaded: &LoadedConfig, a: &str, b: &str) -> bool {
    let models = &loaded.config.models;
    match (models.get(a), models.get(b)) {
        (Some(x), Some(y)) => x.provider == y.provider && x.wire_id(a) == y.wire_id(b),
        _ => false,
    }
}

/// Chooses the models of every stage and every reviewed stage's arbiter, enforcing
/// arbiter ≠ stage model before any call.
pub fn assign_models(
    loaded: &LoadedConfig,
    req: &RunRequest,
    choice: &Choice,
    mode: ArbiterMode,
) -> Result<Vec<StageRecord>, StartError> {
    let profile = choice.profile.as_deref();
    let c = &loaded.config;
    let known = |m: &str| -> Result<(), StartError> {
        if c.models.contains_key(m) {
            Ok(())
        } else {
            Err(StartError::UnknownModel(m.to_string()))
        }
    };
    // A model named on the command line must be one this user can call.
    let named = |m: &str, role: Role| -> Result<(), StartError> {
        known(m)?;
        callable_of(loaded, role, &[m.to_string()]).map(drop)
    };
    // A routed role's ranked models stand in for its list.
    let list_of = |role: Role| -> Vec<String> {
        choice
            .routes
            .as_ref()
            .and_then(|r| r.models(role))
            .map_or_else(|| loaded.role_models(role, profile), <[String]>::to_vec)
    };
    let arbiter_list = list_of(Role::Arbiter);
    // Two registry names can be one model on the wire (same provider, same id): the rule is
    // about models, not names.
    let same = |a: &str, b: &str| a == b || same_wire_model(loaded, a, b);
    let mut stages: Vec<StageRecord> = Vec::new();
    for stage in Stage::ALL {
        let role = stage.role();
        let models = match req.stage_models.get(&role) {
            Some(m) => {
                named(m, role)?;
                vec![m.clone()]
            }
            None => {
                let listed = list_of(role);
                if listed.is_empty() {
                    return Err(StartError::NoModel(role));
                }
                let callable = callable_of(loaded, role, &listed)?;
                spread(callable, &stages, c.max_stages_per_model, &same)
            }
        };
        let primary = models.first().cloned().ok_or(StartError::NoModel(role))?;
        let reviewed = stage.reviewed(mode);
        let explicit = req
            .arbiter_stage
            .get(&stage)
            .cloned()
            .or_else(|| req.arbiter_model.clone())
            .or_else(|| match stage {
                Stage::Architect => c.arbiter.architect.clone(),
                Stage::Implement => c.arbiter.implement.clone(),
                Stage::Refactor => c.arbiter.refactor.clone(),
                Stage::Verify => c.arbiter.verify.clone(),
            });
        let arbiter_model = if !reviewed {
            None
        } else if let Some(a) = explicit {
            named(&a, Role::Arbiter)?;
            if same(&a, &primary) {
                return Err(StartError::SelfReview {
                    stage,
                    model: primary,
                });
            }
            Some(a)
        } else {
            let others: Vec<String> = arbiter_list
                .iter()
                .filter(|a| !same(a, &primary))
                .cloned()
                .collect();
            if others.is_empty() {
                return Err(StartError::NoOtherArbiter {
                    stage,
                    model: primary.clone(),
                    arbiters: arbiter_list.clone(),
                    own_provider: loaded
                        .declared_models()
                        .contains(&primary)
                        .then(|| c.models.get(&primary).map(|m| m.provider.clone()))
                        .flatten(),
                });
            }
            callable_of(loaded, Role::Arbiter, &others)?
                .into_iter()
                .next()
        };
        stages.push(StageRecord::planned(stage, models, arbiter_model, reviewed));
    }
    Ok(stages)
}

/// The models of `models` this user can call, in order; an error naming each model and why
/// when there is none.
pub(in crate::pipeline) fn callable_of(
    loaded: &LoadedConfig,
    role: Role,
    models: &[String],
) -> Result<Vec<String>, StartError> {
    let callable: Vec<String> = models
        .iter()
        .filter(|m| loaded.callable(m))
        .cloned()
        .collect();
    if callable.is_empty() {
        return Err(StartError::Uncallable {
            role,
            models: models
                .iter()
                .filter_map(|m| Some((m.clone(), loaded.uncallable_reason(m)?)))
                .collect(),
        });
    }
    Ok(callable)
}

/// `models` with its first model that holds fewer than `max` of the stages planned so far
/// moved to the front (`max_stages_per_model`); unchanged with no limit, or when every model
/// of the list is at it. A model named for a stage on the command line is never moved.
fn spread(
    mut models: Vec<String>,
    planned: &[StageRecord],
    max: u32,
    same: &dyn Fn(&str, &str) -> bool,
) -> Vec<String> {
    if max == 0 {
        return models;
    }
    let held = |m: &str| {
        planned
            .iter()
            .filter(|s| s.models.first().is_some_and(|p| same(p, m)))
            .count() as u32
    };
    if let Some(i) = models.iter().position(|m| held(m) < max) {
        let free = models.remove(i);
        models.insert(0, free);
    }
    models
}

/// The candidates of a parallel exploration or the debaters of a debate (distinct models,
/// on the wire too, in the order given) and the model that breaks a tied vote or judges the
/// debate: the tiebreaker role's, else the arbiter role's first model that is not one of
/// them.
pub(in crate::pipeline) fn panel(
    loaded: &LoadedConfig,
    choice: &Choice,
) -> Result<(Vec<String>, Option<String>), StartError> {
    let profile = choice.profile.as_deref();
    let asked = if choice.candidates.is_empty() {
        // The implementer role's models; where it lists only one (a profile of small local
        // models), the other models the profile's roles name join it, so `--workflow
        // parallel` or `debate` needs no `--candidates` to have two.
        let mut listed: Vec<String> = Vec::new();
        for role in [
            Role::Implementer,
            Role::Arbiter,
            Role::Refactorer,
            Role::Architect,
            Role::Verifier,
        ] {
            for m in loaded.role_models(role, profile) {
                let distinct = !listed
                    .iter()
                    .any(|k| *k == m || same_wire_model(loaded, k, &m));
                if distinct && loaded.callable(&m) {
                    listed.push(m);
                }
            }
            if listed.len() >= 2 {
                break;
            }
        }
        listed
    } else {
        choice.candidates.clone()
    };
    let mut models: Vec<String> = Vec::new();
    for m in asked {
        if !loaded.config.models.contains_key(&m) {
            return Err(StartError::UnknownModel(m));
        }
        callable_of(loaded, Role::Implementer, std::slice::from_ref(&m))?;
        if !models
            .iter()
            .any(|k| *k == m || same_wire_model(loaded, k, &m))
        {
            models.push(m);
        }
    }
    if models.len() < 2 {
        return Err(StartError::TooFewCandidates(choice.workflow, models));
    }
    let candidate = |m: &str| {
        models
            .iter()
            .any(|k| k == m || same_wire_model(loaded, k, m))
    };
    let tiebreaker = loaded
        .role_models(Role::Tiebreaker, profile)
        .into_iter()
        .chain(loaded.role_models(Role::Arbiter, profile))
        .find(|m| !candidate(m) && loaded.callable(m));
    Ok((models, tiebreaker))
}
