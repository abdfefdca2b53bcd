//! Routing by measured fitness on the command line: which roles are routed, from the
//! user's measurements, and saying how each was chosen.

use super::{say, CommandResult, Context};
use crate::config::{LoadedConfig, Role, RoutingMode};
use crate::routing::route::{route, RouteInput, Routing};

/// Whether `model` can be called now: registered, its provider known, and its key set
/// (a keyless provider, like a local server, always counts; it is not probed).
pub fn usable_now(loaded: &LoadedConfig, env: &[(String, String)], model: &str) -> bool {
    let c = &loaded.config;
    let Some(p) = c
        .models
        .get(model)
        .and_then(|m| c.providers.get(&m.provider))
    else {
        return false;
    };
    match &p.api_key_env {
        None => true,
        Some(var) => env.iter().any(|(k, v)| k == var && !v.is_empty()),
    }
}

/// The routes of the roles to route: every role with `forced` (`--routing`), else the
/// roles whose list starts with `auto`; `None` when there are none. Reads the user's
/// measurements only when something is routed.
pub fn routes(
    ctx: &Context,
    loaded: &LoadedConfig,
    profile: Option<&str>,
    forced: Option<RoutingMode>,
) -> CommandResult<Option<Routing>> {
    let any_auto = Role::ALL.iter().any(|r| loaded.role_is_auto(*r, profile));
    if forced.is_none() && !any_auto {
        return Ok(None);
    }
    let store = super::bench::load_store(ctx)?;
    let usable = |m: &str| usable_now(loaded, &ctx.env, m);
    Ok(route(&RouteInput {
        loaded,
        profile,
        store: &store,
        mode: forced.unwrap_or(loaded.config.routing),
        every_role: forced.is_some(),
        usable: &usable,
        now: crate::clock::now_unix(),
    }))
}

/// Says on stderr which model each routed role got and why.
pub fn say_routes(routing: &Routing) {
    for r in &routing.roles {
        say(&format!(
            "triad: {} -> {}: {}",
            r.role,
            r.models.first().map_or("(none)", String::as_str),
            r.reason
        ));
    }
}

/// Under tournament routing, the workflow is a tournament (unless another one was asked
/// for) and its candidates, unless named, are the best [`crate::config::TOURNAMENT_K`]
/// routed implementers; otherwise `workflow` and `candidates` as given.
pub fn tournament(
    routes: Option<&Routing>,
    workflow: crate::pipeline::Workflow,
    candidates: &[String],
) -> (crate::pipeline::Workflow, Vec<String>) {
    use crate::pipeline::Workflow;
    let Some(r) = routes.filter(|r| r.mode == crate::config::RoutingMode::Tournament) else {
        return (workflow, candidates.to_vec());
    };
    let workflow = match workflow {
        Workflow::Sequential => Workflow::Tournament,
        w => w,
    };
    if !candidates.is_empty() {
        return (workflow, candidates.to_vec());
    }
    let best = r
        .models(crate::config::Role::Implementer)
        .unwrap_or_default()
        .iter()
        .take(crate::config::TOURNAMENT_K)
        .cloned()
        .collect();
    (workflow, best)
}
