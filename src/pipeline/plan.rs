//! Starting a run: the committed TaskSpec, the base, the models of every stage and the
//! cross-model rule, all checked before any model is called.

use std::collections::BTreeMap;

use git2::{Repository, Status};
use rand::Rng;

use super::record::{RunState, RunStatus, StageRecord};
use super::stage::Stage;
use crate::config::{ArbiterMode, LoadedConfig, Role};
use crate::task::{spec, TaskSpec};

/// What the user asked for on the command line.
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
}

/// Why a run cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The command line or configuration is not usable (exit 2).
    #[error("{message}")]
    Usage {
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
    /// The repository is not in a state to run (exit 1).
    #[error("{message}")]
    Repo {
        /// What is wrong.
        message: String,
        /// What to do.
        hint: String,
    },
}

fn usage(message: impl Into<String>, hint: impl Into<String>) -> StartError {
    StartError::Usage {
        message: message.into(),
        hint: hint.into(),
    }
}

fn repo_err(message: impl Into<String>, hint: impl Into<String>) -> StartError {
    StartError::Repo {
        message: message.into(),
        hint: hint.into(),
    }
}

/// A fresh run id: `YYYYMMDD-HHMMSS-xxxx` (UTC, plus randomness against collisions).
pub fn new_run_id() -> String {
    let ts = crate::notes::now_ts(); // 2026-11-22T02:54:30.123Z
    let digits: String = ts.chars().filter(|c| c.is_ascii_digit()).collect();
    let (date, time) = (
        &digits[..8.min(digits.len())],
        &digits[8.min(digits.len())..14.min(digits.len())],
    );
    let suffix: u16 = rand::rng().random();
    format!("{date}-{time}-{suffix:04x}")
}

/// Loads the TaskSpec as committed at HEAD, refusing an untracked or modified one; returns
/// the spec, its blob id and HEAD (the run's base).
pub fn committed_task(
    repo: &Repository,
    slug: &str,
) -> Result<(TaskSpec, git2::Oid, git2::Oid), StartError> {
    if !spec::valid_slug(slug) {
        return Err(usage(
            format!("`{slug}` is not a valid task slug"),
            "slugs use lowercase letters, digits and dashes; `git triad task list` shows the tasks",
        ));
    }
    let path = spec::spec_path(slug);
    let head = repo
        .head()
        .ok()
        .and_then(|h| h.peel_to_commit().ok())
        .ok_or_else(|| {
            repo_err(
                "this repository has no commits yet",
                "commit your project first: a run starts from HEAD",
            )
        })?;
    let status = repo.status_file(std::path::Path::new(&path)).ok();
    let tree = head.tree().map_err(|e| repo_err(e.to_string(), ""))?;
    let entry = tree.get_path(std::path::Path::new(&path));
    match (entry, status) {
        (Err(_), Some(s)) if s.contains(Status::WT_NEW) || s.contains(Status::INDEX_NEW) => {
            Err(repo_err(
                format!("{path} is not committed"),
                format!("commit it first (`git add {path} && git commit`): the run is reconciled against what is in the repository"),
            ))
        }
        (Err(_), _) => {
            Err(usage(
                format!("there is no task `{slug}` ({path} does not exist at HEAD)"),
                format!("create it with `git triad task new {slug} --title \"...\"`, edit it, and commit it"),
            ))
        }
        (Ok(_), Some(s)) if !s.is_empty() && s != Status::CURRENT => {
            Err(repo_err(
                format!("{path} has uncommitted changes"),
                format!("commit it first (`git commit {path}`): the run is reconciled against what is in the repository"),
            ))
        }
        (Ok(entry), _) => {
            let blob = repo
                .find_blob(entry.id())
                .map_err(|e| repo_err(format!("cannot read {path}: {e}"), ""))?;
            let text = std::str::from_utf8(blob.content())
                .map_err(|_| usage(format!("{path} is not UTF-8 text"), "save it as UTF-8"))?;
            let spec = TaskSpec::parse(text, &path, slug)
                .map_err(|e| usage(e.to_string(), "fix the TaskSpec, commit it, and run again"))?;
            Ok((spec, entry.id(), head.id()))
        }
    }
}

/// Chooses the models of every stage and every reviewed stage's arbiter, enforcing
/// arbiter ≠ stage model before any call.
pub fn assign_models(
    loaded: &LoadedConfig,
    profile: Option<&str>,
    req: &RunRequest,
    mode: ArbiterMode,
) -> Result<Vec<StageRecord>, StartError> {
    let c = &loaded.config;
    let known = |m: &str| -> Result<(), StartError> {
        if c.models.contains_key(m) {
            Ok(())
        } else {
            Err(usage(
                format!("model `{m}` is not registered"),
                "`git triad models list` shows the registered models",
            ))
        }
    };
    let arbiter_list = loaded.role_models(Role::Arbiter, profile);
    let mut stages = Vec::new();
    for stage in Stage::ALL {
        let role = stage.role();
        let models = match req.stage_models.get(&role) {
            Some(m) => {
                known(m)?;
                vec![m.clone()]
            }
            None => loaded.role_models(role, profile),
        };
        let primary = models.first().cloned().ok_or_else(|| {
            usage(
                format!("no model is configured for the {role} role"),
                format!(
                    "set one with --{role} <model> or `-c roles.{role}.models='[\"<model>\"]'`"
                ),
            )
        })?;
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
            known(&a)?;
            if a == primary {
                return Err(usage(
                    format!(
                        "the {stage} stage would be reviewed by its own model: stage model `{primary}`, arbiter model `{a}`"
                    ),
                    format!("the arbiter must be a different model; choose another with --arbiter-{stage} <model> or --{role} <model>"),
                ));
            }
            Some(a)
        } else {
            Some(arbiter_list.iter().find(|a| **a != primary).cloned().ok_or_else(|| {
                usage(
                    format!(
                        "no arbiter model differs from the {stage} stage's model `{primary}` (arbiter models: {})",
                        arbiter_list.join(", ")
                    ),
                    "add another model to roles.arbiter.models or pass --arbiter-model <model>",
                )
            })?)
        };
        stages.push(StageRecord {
            stage,
            commit: None,
            verdict: None,
            models,
            model_index: 0,
            arbiter_model,
            attempts: Vec::new(),
            reviewed,
            epoch_start: 0,
        });
    }
    Ok(stages)
}

/// Plans a run and returns its initial state and the committed TaskSpec (nothing is
/// written yet).
pub fn plan(
    repo: &Repository,
    loaded: &LoadedConfig,
    profile: Option<&str>,
    req: &RunRequest,
) -> Result<(RunState, TaskSpec), StartError> {
    let (spec, blob, head) = committed_task(repo, &req.task)?;
    let c = &loaded.config;
    let mode = req.mode.unwrap_or(c.arbiter.mode);
    let stages = assign_models(loaded, profile, req, mode)?;
    if let Some(m) = &req.reconcile_model {
        if !c.models.contains_key(m) {
            return Err(usage(
                format!("model `{m}` is not registered"),
                "`git triad models list` shows the registered models",
            ));
        }
        if stages[3].models.first() == Some(m) {
            return Err(usage(
                format!("the reconciliation would be judged by the verifier's own model `{m}`"),
                "the reconciliation arbiter must differ from the verifier: choose another --reconcile-model",
            ));
        }
    }

    let run_id = new_run_id();
    let budget = req.budget.or(c.budget.run_usd).filter(|b| *b > 0.0);
    let state = RunState {
        v: 1,
        branch: format!("triad/{}/{run_id}", req.task),
        run_id,
        task: req.task.clone(),
        task_blob: blob.to_string(),
        base: head.to_string(),
        status: RunStatus::Running,
        message: "started".into(),
        mode: serde_json::to_value(mode)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        max_retries: req.max_retries.unwrap_or(c.arbiter.max_retries),
        on_exhausted: serde_json::to_value(c.arbiter.on_exhausted)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "halt".into()),
        current: 0,
        stages,
        pending_flags: Vec::new(),
        all_flags: Vec::new(),
        feedback: String::new(),
        verify: None,
        implementation_summary: None,
        outcome: None,
        cost_usd: 0.0,
        tokens: [0, 0],
        budget_usd: budget,
        transcripts: 0,
        config: serde_json::to_value(c).unwrap_or_default(),
        reconcile: req.reconcile.then(|| super::record::ReconcileState {
            model: req.reconcile_model.clone(),
            ..Default::default()
        }),
        started: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    Ok((state, spec))
}
