//! Picking a role's models from measured fitness under a [`RoutingMode`].
//!
//! Only fresh measurements of the whole task set count (see [`super::store`]); a hand-typed
//! number never does, nor a bench on some tasks only, nor a model that passed none of its
//! tasks. The candidates are the role's listed models (a plain `auto` lists none: then every
//! model that can be called): the measured ones are ranked by the mode, and the listed ones
//! follow as fallbacks. When no candidate has a usable measurement, the listed order is used
//! as it is and the route says so: a missing figure is reported, never guessed.
//!
//! Whatever the ranking, the cross-model rule is applied after it, on the ranked lists:
//! the arbiter of a stage is the first ranked arbiter that is not the stage's model on the
//! wire ([`crate::pipeline::plan::assign_models`]).

use serde::{Deserialize, Serialize};

use super::store::{FitnessEntry, FitnessStore, Freshness};
use crate::config::{LoadedConfig, Role, RoutingMode};

/// `cost` and `speed` choose among the models scoring at least this share of the best
/// score: the cheapest model is no bargain if it fails the tasks the best one passes.
pub const QUALITY_BAND: f64 = 0.9;

/// The weights of `hybrid`: score, cost, latency (cost and latency relative to the most
/// expensive and the slowest candidate).
pub const HYBRID_WEIGHTS: (f64, f64, f64) = (0.6, 0.2, 0.2);

/// A measured candidate, as a route records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Registry name.
    pub model: String,
    /// Score in [0, 1] for the role.
    pub score: f64,
    /// Answers the score rests on.
    pub attempts: u32,
    /// Mean USD an answer.
    pub cost_per_task: f64,
    /// Mean model latency an answer, in milliseconds.
    pub latency_ms_per_task: f64,
    /// When it was measured (UTC date).
    pub date: String,
}

/// How one role's models were chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoleRoute {
    /// The role.
    pub role: Role,
    /// Its models in order of preference: the first answers, the rest are fallbacks.
    pub models: Vec<String>,
    /// The fresh measurements it was chosen from, in ranked order.
    pub measured: Vec<Measured>,
    /// Why, in one sentence a person can check against `git triad bench --report`.
    pub reason: String,
    /// Nothing usable was measured: the listed order was used as it is.
    pub fell_back: bool,
}

/// The routes of a run's routed roles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Routing {
    /// The mode.
    pub mode: RoutingMode,
    /// One route per routed role.
    pub roles: Vec<RoleRoute>,
}

impl Routing {
    /// One line per routed role: the model it got and why (`implementer -> m: …`).
    pub fn said(&self) -> Vec<String> {
        self.roles
            .iter()
            .map(|r| {
                format!(
                    "{} -> {}: {}",
                    r.role,
                    r.models.first().map_or("(none)", String::as_str),
                    r.reason
                )
            })
            .collect()
    }

    /// The routed models of a role, if the role was routed.
    pub fn models(&self, role: Role) -> Option<&[String]> {
        self.roles
            .iter()
            .find(|r| r.role == role)
            .map(|r| r.models.as_slice())
    }
}

/// What routing needs to know.
pub struct RouteInput<'a> {
    /// The configuration (registry, roles, profiles).
    pub loaded: &'a LoadedConfig,
    /// The active profile.
    pub profile: Option<&'a str>,
    /// What was measured.
    pub store: &'a FitnessStore,
    /// The mode.
    pub mode: RoutingMode,
    /// Route every role (`--routing`), not only those whose list starts with `auto`.
    pub every_role: bool,
    /// Whether a model can be called now (its key is set, or it needs none).
    pub usable: &'a dyn Fn(&str) -> bool,
    /// Unix time, for freshness.
    pub now: u64,
}

/// The routes of every role to route; `None` when no role is routed.
pub fn route(input: &RouteInput<'_>) -> Option<Routing> {
    let roles: Vec<RoleRoute> = Role::PIPELINE
        .into_iter()
        // The tiebreaker is chosen per deliberation as a model that did not vote; it is
        // routed only when its list asks for "auto".
        .filter(|r| {
            (input.every_role && *r != Role::Tiebreaker)
                || input.loaded.role_is_auto(*r, input.profile)
        })
        .map(|role| {
            let listed = input.loaded.role_models(role, input.profile);
            // A plain `auto` names no models: any model that can be called competes, and
            // the built-in order is the fallback.
            let (candidates, fallback) = if listed.is_empty() {
                (None, LoadedConfig::builtin_role_models(role))
            } else {
                (Some(listed.clone()), listed)
            };
            route_role(input, role, candidates.as_deref(), &fallback)
        })
        .collect();
    (!roles.is_empty()).then_some(Routing {
        mode: input.mode,
        roles,
    })
}

/// The route of one role: the usable measured `candidates` (every registered model when
/// `None`) ranked under the mode, then the `fallback` models not already ranked.
fn route_role(
    input: &RouteInput<'_>,
    role: Role,
    candidates: Option<&[String]>,
    fallback: &[String],
) -> RoleRoute {
    let c = &input.loaded.config;
    let mut fresh = Vec::new();
    let mut not_used = Vec::new();
    let competes = |name: &str| candidates.is_none_or(|list| list.iter().any(|m| m == name));
    for (name, _) in c
        .models
        .iter()
        .filter(|(n, _)| (input.usable)(n) && competes(n))
    {
        match input.store.freshness(c, name, role, input.now) {
            Freshness::Fresh(e) => match unusable(e, role) {
                Some(why) => not_used.push(format!("{name} ({why})")),
                None => fresh.push(Measured {
                    model: name.clone(),
                    score: e.figures.score,
                    attempts: e.figures.attempts,
                    cost_per_task: e.figures.cost_per_task(),
                    latency_ms_per_task: e.figures.latency_per_task_ms(),
                    date: e.date.clone(),
                }),
            },
            Freshness::Stale(_, why) => not_used.push(format!("{name} ({why})")),
            Freshness::Missing => {}
        }
    }
    if fresh.is_empty() {
        let stale = if not_used.is_empty() {
            String::new()
        } else {
            format!(" ({})", not_used.join("; "))
        };
        return RoleRoute {
            role,
            models: fallback.to_vec(),
            measured: Vec::new(),
            reason: format!(
                "no model that can be called now has a fresh measurement as {role}{stale}, so the listed order is used: {} (`git triad bench --roles {role}` measures)",
                fallback.join(", ")
            ),
            fell_back: true,
        };
    }
    let (ranked, why) = rank(input.mode, fresh);
    let mut models: Vec<String> = ranked.iter().map(|m| m.model.clone()).collect();
    for m in fallback {
        if !models.contains(m) {
            models.push(m.clone());
        }
    }
    let mut reason = format!("{}: {why}", input.mode);
    if !not_used.is_empty() {
        reason.push_str(&format!("; not used: {}", not_used.join("; ")));
    }
    RoleRoute {
        role,
        models,
        measured: ranked,
        reason,
        fell_back: false,
    }
}

/// Why a fresh measurement is still no ground to route on: it is not a full score, or the
/// model passed none of its answers (a score of 0 says it cannot do the role's tasks).
fn unusable(e: &FitnessEntry, role: Role) -> Option<String> {
    if let Some(why) = e.partial() {
        return Some(why);
    }
    (!e.passed_any() || e.figures.score <= 0.0).then(|| {
        format!(
            "passed none of its {} answer(s) as {role}",
            e.figures.attempts
        )
    })
}

fn describe(m: &Measured) -> String {
    format!(
        "score {:.2} over {} answer(s), ${:.4} and {:.1} s a task, measured {}",
        m.score,
        m.attempts,
        m.cost_per_task,
        m.latency_ms_per_task / 1000.0,
        m.date
    )
}

/// Ranks measured models under `mode` (ties: higher score, lower cost, lower latency, name)
/// and says why the first one leads.
pub fn rank(mode: RoutingMode, mut ms: Vec<Measured>) -> (Vec<Measured>, String) {
    let by_quality = |a: &Measured, b: &Measured| {
        b.score
            .total_cmp(&a.score)
            .then(a.cost_per_task.total_cmp(&b.cost_per_task))
            .then(a.latency_ms_per_task.total_cmp(&b.latency_ms_per_task))
            .then(a.model.cmp(&b.model))
    };
    ms.sort_by(by_quality);
    let best = ms.first().map_or(0.0, |m| m.score);
    let band = best * QUALITY_BAND;
    let why = match mode {
        RoutingMode::Quality | RoutingMode::Tournament => {
            format!("{} has the best score ({})", ms[0].model, describe(&ms[0]))
        }
        RoutingMode::Cost | RoutingMode::Speed => {
            let key = |m: &Measured| match mode {
                RoutingMode::Cost => m.cost_per_task,
                _ => m.latency_ms_per_task,
            };
            ms.sort_by(|a, b| {
                let (ia, ib) = (a.score >= band, b.score >= band);
                ib.cmp(&ia)
                    .then(if ia && ib {
                        key(a).total_cmp(&key(b))
                    } else {
                        std::cmp::Ordering::Equal
                    })
                    .then(by_quality(a, b))
            });
            format!(
                "{} is the {} of the models scoring at least {:.0} % of the best score {best:.2} ({})",
                ms[0].model,
                if mode == RoutingMode::Cost { "cheapest" } else { "fastest" },
                QUALITY_BAND * 100.0,
                describe(&ms[0])
            )
        }
        RoutingMode::Hybrid => {
            let max_cost = ms.iter().map(|m| m.cost_per_task).fold(0.0, f64::max);
            let max_latency = ms.iter().map(|m| m.latency_ms_per_task).fold(0.0, f64::max);
            let rel = |v: f64, max: f64| if max > 0.0 { v / max } else { 0.0 };
            let (ws, wc, wl) = HYBRID_WEIGHTS;
            let value = |m: &Measured| {
                ws * m.score
                    + wc * (1.0 - rel(m.cost_per_task, max_cost))
                    + wl * (1.0 - rel(m.latency_ms_per_task, max_latency))
            };
            ms.sort_by(|a, b| value(b).total_cmp(&value(a)).then(by_quality(a, b)));
            format!(
                "{} has the best balance of score, cost and latency ({:.0}/{:.0}/{:.0}: {:.2}; {})",
                ms[0].model,
                ws * 100.0,
                wc * 100.0,
                wl * 100.0,
                value(&ms[0]),
                describe(&ms[0])
            )
        }
    };
    (ms, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(model: &str, score: f64, cost: f64, latency: f64) -> Measured {
        Measured {
            model: model.into(),
            score,
            attempts: 7,
            cost_per_task: cost,
            latency_ms_per_task: latency,
            date: "2026-01-02".into(),
        }
    }

    fn order(mode: RoutingMode) -> Vec<String> {
        let ms = vec![
            m("strong", 0.90, 0.050, 9000.0),
            m("cheap", 0.85, 0.001, 4000.0),
            m("fast", 0.82, 0.010, 800.0),
            m("tiny", 0.20, 0.0, 300.0),
        ];
        rank(mode, ms).0.into_iter().map(|m| m.model).collect()
    }

    #[test]
    fn each_mode_ranks_by_its_own_measure_within_the_quality_band() {
        let want = [
            (RoutingMode::Quality, ["strong", "cheap", "fast", "tiny"]),
            // 90 % of 0.90 is 0.81: tiny is free and fastest but outside the band.
            (RoutingMode::Cost, ["cheap", "fast", "strong", "tiny"]),
            (RoutingMode::Speed, ["fast", "cheap", "strong", "tiny"]),
            // 60/20/20: fast 0.83, cheap 0.82, strong 0.54 (the dearest and slowest), tiny 0.51.
            (RoutingMode::Hybrid, ["fast", "cheap", "strong", "tiny"]),
        ];
        for (mode, ranked) in want {
            assert_eq!(order(mode), ranked, "{mode:?}");
        }
    }

    #[test]
    fn the_reason_names_the_choice_and_its_figures() {
        let (_, why) = rank(
            RoutingMode::Cost,
            vec![m("a", 0.9, 0.002, 1000.0), m("b", 0.9, 0.001, 2000.0)],
        );
        assert!(
            why.starts_with("b is the cheapest of the models scoring at least 90 %"),
            "{why}"
        );
        assert!(
            why.contains("$0.0010 and 2.0 s a task, measured 2026-01-02"),
            "{why}"
        );
    }
}
