//! What a caller asks a run to be ([`RunRequest`]) and what the request resolves to before
//! any state is made ([`Choice`]): the profile, the routes of the roles chosen by measured
//! fitness, the workflow with its candidates, and the combinations refused.

use std::collections::BTreeMap;

use super::error::StartError;
use crate::config::{ArbiterMode, LoadedConfig, Role, RoutingMode};
use crate::pipeline::record::RunState;
use crate::pipeline::stage::Stage;
use crate::routing::route::{route, RouteInput, Routing};
use crate::routing::FitnessStore;
use crate::task::TaskSpec;
use crate::workflow_name::Workflow;

/// What a caller asks a run to be: the command line's `run` flags, a session's
/// `run_pipeline`. Only the asks: [`plan`] resolves the rest (the profile, the routes,
/// whether routing makes it a tournament) and refuses what it cannot honour.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// Task slug.
    pub task: String,
    /// `--arbiter`.
    pub mode: Option<ArbiterMode>,
    /// `--architect`, `--implementer`, ... (role → model).
    pub stage_models: BTreeMap<Role, String>,
    /// `--arbiter-model`.
    pub arbiter_model: Option<String>,
    /// `--arbiter-<stage>`.
    pub arbiter_stage: BTreeMap<Stage, String>,
    /// `--max-retries`.
    pub max_retries: Option<u32>,
    /// `--budget`.
    pub budget: Option<f64>,
    /// `--reconcile`.
    pub reconcile: bool,
    /// `--reconcile-model`.
    pub reconcile_model: Option<String>,
    /// `--consensus`: hold the consensus stage even when the configuration does not.
    pub consensus: bool,
    /// `--workflow`: how the solution is produced before Verify.
    pub workflow: Workflow,
    /// `--candidates`: the models of a parallel exploration or a debate (empty: the
    /// implementer role's distinct models).
    pub candidates: Vec<String>,
    /// `--chamber`: `Some(true)` auto, `Some(false)` off, `None` auto when a panel is
    /// configured (`[chamber]` or the profile's).
    pub chamber: Option<bool>,
    /// `--routing`: route every role by measured fitness in this mode (`None`: only the
    /// roles whose models start with `auto`, by the `routing` setting).
    pub routing: Option<RoutingMode>,
}

impl RunRequest {
    /// The models the request names itself: the user's own choice, which the `auto`
    /// profile never replaces.
    pub fn named_models(&self) -> Vec<String> {
        self.stage_models
            .values()
            .chain(&self.arbiter_model)
            .chain(self.arbiter_stage.values())
            .chain(&self.reconcile_model)
            .chain(&self.candidates)
            .cloned()
            .collect()
    }
}

/// What a request resolves to before any state is made: the profile, the routes of the
/// roles chosen by measured fitness, and the workflow with its candidates (tournament
/// routing makes a sequential request a tournament of the best routed implementers).
#[derive(Debug, Clone, Default)]
pub struct Choice {
    /// The profile applied to the roles the user left unset, if any.
    pub profile: Option<String>,
    /// The routes of the routed roles, computed from the user's measurements; recorded in
    /// the run.
    pub routes: Option<Routing>,
    /// The workflow the run follows.
    pub workflow: Workflow,
    /// The models of its parallel exploration, debate or tournament (empty: the profile's).
    pub candidates: Vec<String>,
}

/// A run planned: its first state, the committed TaskSpec, and what the request resolved to.
#[derive(Debug)]
pub struct Planned {
    /// The state the run starts with (nothing is written yet).
    pub state: RunState,
    /// The TaskSpec as committed at the base.
    pub spec: TaskSpec,
    /// The profile, routes and workflow chosen.
    pub choice: Choice,
}

/// What `req` resolves to: the profile (`auto` picks one unless the request names its own
/// models), the routes of the routed roles (from the user's measurements, read from the
/// data directory `env` names), and the workflow with its candidates; refuses candidates
/// for a workflow that has no panel rather than dropping them.
pub fn choose(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    req: &RunRequest,
) -> Result<Choice, StartError> {
    let profile = loaded.profile_choice(env, &req.named_models()).name;
    let routes = routes(loaded, env, profile.as_deref(), req.routing)?;
    let (workflow, candidates) = tournament(routes.as_ref(), req.workflow, &req.candidates);
    if !candidates.is_empty() && workflow == Workflow::Sequential {
        return Err(StartError::CandidatesWithoutPanel(workflow));
    }
    Ok(Choice {
        profile,
        routes,
        workflow,
        candidates,
    })
}

/// The routes of the roles to route: every role with `forced` (`--routing`), else the
/// roles whose list starts with `auto`; `None` when there are none. Reads the user's
/// measurements only when something is routed.
pub fn routes(
    loaded: &LoadedConfig,
    env: &[(String, String)],
    profile: Option<&str>,
    forced: Option<RoutingMode>,
) -> Result<Option<Routing>, StartError> {
    let any_auto = Role::PIPELINE
        .iter()
        .any(|r| loaded.role_is_auto(*r, profile));
    if forced.is_none() && !any_auto {
        return Ok(None);
    }
    let path = FitnessStore::path(env).ok_or(StartError::NoDataDir)?;
    let store = FitnessStore::load(&path).map_err(|e| StartError::Fitness {
        error: e.to_string(),
        path,
    })?;
    let usable = |m: &str| loaded.callable(m);
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

/// Under tournament routing, the workflow is a tournament (unless another one was asked
/// for) and its candidates, unless named, are the best [`crate::config::TOURNAMENT_K`]
/// routed implementers; otherwise `workflow` and `candidates` as given.
fn tournament(
    routes: Option<&Routing>,
    workflow: Workflow,
    candidates: &[String],
) -> (Workflow, Vec<String>) {
    let Some(r) = routes.filter(|r| r.mode == RoutingMode::Tournament) else {
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
        .models(Role::Implementer)
        .unwrap_or_default()
        .iter()
        .take(crate::config::TOURNAMENT_K)
        .cloned()
        .collect();
    (workflow, best)
}
