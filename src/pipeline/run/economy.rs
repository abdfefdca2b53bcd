//! Seed 001 §9's answer to cost spiralling, under `routing = "cost"`: once a run has spent
//! [`PRESSURE`] of its budget, a stage the arbiter does not review (a non-critical pass)
//! switches to the cheapest model its role lists. A reviewed stage keeps its model: the
//! arbiter's pairing was checked when the run started, and saving money is no reason to
//! weaken what is reviewed. The switch is recorded before the call, and said.

use super::step::{Cx, Journal, RunError};
use crate::config::RoutingMode;
use crate::pipeline::observer::Progress;

/// The share of the run's budget past which non-critical passes take the cheapest model.
pub const PRESSURE: f64 = 0.8;

/// Before stage `idx` asks its model: under cost routing and budget pressure, an
/// unreviewed stage's cheapest remaining model moves to the front of its list.
pub(super) fn economize(cx: &Cx<'_>, j: &mut Journal<'_>, idx: usize) -> Result<(), RunError> {
    let mode = j
        .state
        .routing()
        .as_ref()
        .map_or(cx.env.config.config.routing, |r| r.mode);
    let Some(budget) = j.state.budget_usd() else {
        return Ok(());
    };
    let spent = j.state.spend().cost_usd;
    let s = &j.state.stages()[idx];
    if mode != RoutingMode::Cost || s.reviewed || spent < PRESSURE * budget {
        return Ok(());
    }
    let models = &cx.env.config.config.models;
    // A model without prices is not known to be cheap.
    let price = |m: &str| {
        models
            .get(m)
            .and_then(|c| Some(c.price_in? + c.price_out?))
            .unwrap_or(f64::INFINITY)
    };
    let from = s.model_index.min(s.models.len());
    let Some(cheapest) =
        (from..s.models.len()).min_by(|&a, &b| price(&s.models[a]).total_cmp(&price(&s.models[b])))
    else {
        return Ok(());
    };
    if price(&s.models[cheapest]) >= price(&s.models[from]) {
        return Ok(());
    }
    let stage = s.stage;
    let was = s.models[from].clone();
    let now = s.models[cheapest].clone();
    j.state.put_model_next(idx, cheapest);
    let what = format!(
        "cost routing: ${spent:.4} of the ${budget:.2} budget spent ({:.0} %), so the {stage} stage, which the arbiter does not review, switches from {was} to the cheaper {now}",
        spent / budget * 100.0
    );
    j.event(&what)?;
    cx.progress(&Progress::Economized {
        stage,
        from: &was,
        to: &now,
        spent,
        budget,
    });
    Ok(())
}
