//! `git triad run --estimate`: what a run would cost in each arbiter mode, worked out from
//! measured figures before any call is made.
//!
//! Each planned call takes the mean of that model's successful calls in that role from the
//! ledger; without any, the tokens an answer took in `git triad bench`; without either it
//! is reported as not measured and left out of the totals, which then say so. A figure is
//! never made up.

use serde::Serialize;

use super::plan::{assign_models, same_wire_model, Choice, RunRequest, StartError};
use super::stage::Stage;
use crate::config::{ArbiterMode, LoadedConfig, Role};
use crate::model::budget::CallRecord;
use crate::model::usage::mean_call;
use crate::routing::FitnessStore;

/// The arbiter modes, from the least review to the most.
pub const MODES: [ArbiterMode; 4] = [
    ArbiterMode::Off,
    ArbiterMode::Final,
    ArbiterMode::Bookend,
    ArbiterMode::Full,
];

/// What a call is expected to take, and where the figure comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Basis {
    /// Expected prompt tokens.
    pub input_tokens: f64,
    /// Expected completion tokens.
    pub output_tokens: f64,
    /// `ledger: 12 calls`, or `bench: 2026-01-02`.
    pub source: String,
}

/// One call the run would make.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedCall {
    /// `architect stage`, `verify review`, `reconciliation`.
    pub what: String,
    /// The role the call serves.
    pub role: Role,
    /// The model that would answer.
    pub model: String,
    /// The figure it is estimated from; `None`: not measured.
    pub basis: Option<Basis>,
    /// Expected USD at the registry's prices; `None`: not measured.
    pub cost_usd: Option<f64>,
}

/// The calls of a run in one arbiter mode (one attempt per stage, no retry).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModeEstimate {
    /// The mode.
    pub mode: ArbiterMode,
    /// Its calls.
    pub calls: Vec<PlannedCall>,
}

impl ModeEstimate {
    /// (input tokens, output tokens, USD) of the measured calls.
    pub fn totals(&self) -> (f64, f64, f64) {
        self.calls
            .iter()
            .filter_map(|c| c.basis.as_ref().zip(c.cost_usd))
            .fold((0.0, 0.0, 0.0), |(i, o, u), (b, c)| {
                (i + b.input_tokens, o + b.output_tokens, u + c)
            })
    }

    /// Calls without a figure.
    pub fn unmeasured(&self) -> usize {
        self.calls.iter().filter(|c| c.basis.is_none()).count()
    }
}

/// What a call of `model` in `role` is expected to take: the ledger's mean, else the
/// bench's tokens an answer.
fn basis(ledger: &[CallRecord], store: &FitnessStore, model: &str, role: Role) -> Option<Basis> {
    if let Some((i, o, n)) = mean_call(ledger, model, role.as_str()) {
        return Some(Basis {
            input_tokens: i,
            output_tokens: o,
            source: format!("ledger: {n} call(s)"),
        });
    }
    let e = store.latest(model, role)?;
    let (i, o) = e.figures.tokens_per_task();
    (e.figures.attempts > 0).then(|| Basis {
        input_tokens: i,
        output_tokens: o,
        source: format!("bench: {}", e.date),
    })
}

/// The run `req` describes in every arbiter mode, with each call's expected tokens and cost.
pub fn estimate(
    loaded: &LoadedConfig,
    req: &RunRequest,
    choice: &Choice,
    ledger: &[CallRecord],
    store: &FitnessStore,
) -> Result<Vec<ModeEstimate>, StartError> {
    let call = |what: String, role: Role, model: &str| {
        let basis = basis(ledger, store, model, role);
        let cost_usd = basis.as_ref().map(|b| {
            loaded.config.models.get(model).map_or(0.0, |m| {
                let (price_in, price_out) = m.prices();
                (b.input_tokens * price_in + b.output_tokens * price_out) / 1_000_000.0
            })
        });
        PlannedCall {
            what,
            role,
            model: model.to_string(),
            basis,
            cost_usd,
        }
    };
    let mut out = Vec::new();
    for mode in MODES {
        let stages = assign_models(loaded, req, choice, mode)?;
        let mut calls = Vec::new();
        for s in &stages {
            calls.push(call(
                format!("{} stage", s.stage),
                s.stage.role(),
                s.model(),
            ));
        }
        for s in stages.iter().filter(|s| s.reviewed) {
            if let Some(a) = &s.arbiter_model {
                calls.push(call(format!("{} review", s.stage), Role::Arbiter, a));
            }
        }
        if req.reconcile {
            let verifier = stages[Stage::Verify.index()].model().to_string();
            let pool = choice
                .routes
                .as_ref()
                .and_then(|r| r.models(Role::Arbiter))
                .map_or_else(
                    || loaded.role_models(Role::Arbiter, choice.profile.as_deref()),
                    <[String]>::to_vec,
                );
            let judge = req.reconcile_model.clone().or_else(|| {
                pool.into_iter()
                    .find(|m| *m != verifier && !same_wire_model(loaded, m, &verifier))
            });
            if let Some(j) = judge {
                calls.push(call("reconciliation".into(), Role::Arbiter, &j));
            }
        }
        out.push(ModeEstimate { mode, calls });
    }
    Ok(out)
}
