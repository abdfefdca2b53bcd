//! `git triad run` and `git triad resume`: the pipeline on a committed TaskSpec.

use std::collections::BTreeMap;
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::{out, CommandError, CommandResult, Context};
use crate::config::{ArbiterMode, LoadedConfig, Role};
use crate::exit::ExitCode;
use crate::model::budget::Ledger;
use crate::model::ModelClient;
use crate::pipeline::{self, Recorder, RunRequest, RunState, RunStatus, Runner, Stage, StartError};
use crate::task::TaskSpec;

fn parse_mode(s: &str) -> Result<ArbiterMode, String> {
    match s {
        "off" => Ok(ArbiterMode::Off),
        "final" => Ok(ArbiterMode::Final),
        "bookend" => Ok(ArbiterMode::Bookend),
        "full" => Ok(ArbiterMode::Full),
        _ => Err(format!("`{s}` is not a mode (off, final, bookend, full)")),
    }
}

/// Run Architect → Implement → Refactor → Verify on a committed TaskSpec.
///
/// Each accepted stage becomes a commit on the branch `triad/<task>/<run-id>`, built in
/// memory from HEAD: your working tree, index, HEAD and stash are never touched. A different
/// model (the arbiter) reviews the stages the mode selects; its verdicts are git notes
/// (`git log --notes=triad`). Exit codes: 0 APPROVE/FLAG, 3 HALT, 4 retries exhausted,
/// 5 budget, 6 waiting on you.
///
/// Example: git triad run --task add-login --arbiter full --budget 2
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The task: `.triad/tasks/<TASK>.toml`, committed.
    #[arg(long, short = 't', value_name = "TASK")]
    pub task: String,
    /// Which stages the arbiter reviews: off, final (verify), bookend (architect + verify), full.
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub arbiter: Option<ArbiterMode>,
    /// Model for the architect stage (see `git triad models list`).
    #[arg(long, value_name = "MODEL")]
    pub architect: Option<String>,
    /// Model for the implement stage.
    #[arg(long, value_name = "MODEL")]
    pub implementer: Option<String>,
    /// Model for the refactor stage.
    #[arg(long, value_name = "MODEL")]
    pub refactorer: Option<String>,
    /// Model for the verify stage.
    #[arg(long, value_name = "MODEL")]
    pub verifier: Option<String>,
    /// Arbiter model for every reviewed stage (must differ from each stage's model).
    #[arg(long, value_name = "MODEL")]
    pub arbiter_model: Option<String>,
    /// Arbiter model for the architect stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_architect: Option<String>,
    /// Arbiter model for the implement stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_implement: Option<String>,
    /// Arbiter model for the refactor stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_refactor: Option<String>,
    /// Arbiter model for the verify stage.
    #[arg(long, value_name = "MODEL")]
    pub arbiter_verify: Option<String>,
    /// REJECTs a stage may get before escalation (default 2).
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Spending cap for this run in USD (checked before every call).
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
    /// After Verify, reconcile the result against the committed TaskSpec (seed 000 §B11).
    #[arg(long)]
    pub reconcile: bool,
    /// The reconciliation arbiter (must differ from the verifier's model).
    #[arg(long, value_name = "MODEL", requires = "reconcile")]
    pub reconcile_model: Option<String>,
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
}

/// Continue a run after a crash, a kill, a provider failure, the budget, or your answers.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run id (`git triad log` lists them).
    pub run_id: String,
    /// New spending cap for the rest of the run in USD.
    #[arg(long, value_name = "USD")]
    pub budget: Option<f64>,
    /// Print one JSON object describing the run on stdout.
    #[arg(long)]
    pub json: bool,
}

fn start_error(e: StartError) -> CommandError {
    match e {
        StartError::Usage { message, hint } => {
            let err = CommandError::usage(message);
            if hint.is_empty() {
                err
            } else {
                err.hint(hint)
            }
        }
        StartError::Repo { message, hint } => {
            let err = CommandError::failure(message);
            if hint.is_empty() {
                err
            } else {
                err.hint(hint)
            }
        }
    }
}

/// The repository, or an error that says how to get one.
pub fn need_repo(ctx: &Context) -> CommandResult<&git2::Repository> {
    ctx.repo.as_ref().ok_or_else(|| {
        CommandError::usage("not inside a git repository")
            .hint("run git triad inside a repository, or pass -C <path>")
    })
}

/// The exit code of a run status.
pub fn status_exit(status: RunStatus) -> ExitCode {
    match status {
        RunStatus::Approved | RunStatus::Flagged => ExitCode::Ok,
        RunStatus::Halted => ExitCode::Halt,
        RunStatus::RetriesExhausted => ExitCode::RetriesExhausted,
        RunStatus::BudgetExceeded => ExitCode::BudgetExceeded,
        RunStatus::WaitingOnUser => ExitCode::WaitingOnUser,
        RunStatus::Failed | RunStatus::Running => ExitCode::Error,
    }
}

fn verify_command(
    ctx: &Context,
    loaded: &LoadedConfig,
    spec: &TaskSpec,
) -> (Option<(String, Duration)>, Option<String>) {
    let default_timeout = loaded.config.verify.timeout_secs;
    if let Some(v) = &spec.verify {
        if !v.command.trim().is_empty() {
            if ctx.trusted() {
                return (
                    Some((
                        v.command.clone(),
                        Duration::from_secs(v.timeout_secs.unwrap_or(default_timeout)),
                    )),
                    None,
                );
            }
            return (
                None,
                Some("the TaskSpec's verify command was not run: this clone is not trusted (after reading it, `git config triad.trusted true`)".into()),
            );
        }
    }
    let c = loaded.config.verify.command.trim();
    if c.is_empty() {
        (None, Some("no verify command is configured".into()))
    } else {
        (
            Some((c.to_string(), Duration::from_secs(default_timeout))),
            None,
        )
    }
}

/// Starts the local llama.cpp servers the run's models need, if they are not running.
fn ensure_local_servers(
    ctx: &Context,
    loaded: &LoadedConfig,
    state: &RunState,
) -> CommandResult<()> {
    let mut models: Vec<String> = Vec::new();
    for s in &state.stages {
        models.extend(s.models.iter().cloned());
        models.extend(s.arbiter_model.iter().cloned());
    }
    let providers = crate::model::local::providers_of(&loaded.config, &models);
    if providers.is_empty() {
        return Ok(());
    }
    let cache = crate::model::local::cache_dir(&ctx.env);
    let started = crate::model::local::start(&loaded.config, &cache, &providers)
        .map_err(|e| super::local::local_error(e, &cache))?;
    for s in started {
        if !ctx.quiet {
            eprintln!("triad: started local model server {s}");
        }
    }
    Ok(())
}

fn client_for(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig) -> ModelClient {
    let ledger = Ledger::new(repo.path().join("triad").join("ledger.jsonl"));
    ModelClient::new(&loaded.config, ctx.env_lookup()).with_ledger(ledger, &loaded.config)
}

/// Runs `git triad run`.
pub fn run(ctx: &Context, args: &RunArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let profile = loaded.active_profile(&ctx.env);
    if profile.as_deref() == Some("local") && loaded.config.profile == "auto" && !ctx.quiet {
        // Said once per repository: a marker in $GIT_DIR/triad remembers it was said.
        let marker = repo.path().join("triad").join("local-profile-notice");
        if !marker.exists() {
            eprintln!("triad: no API key is set, so the built-in `local` profile is used: two small real models served by llama.cpp on 127.0.0.1 (see `git triad models list`; set a provider's key, e.g. ANTHROPIC_API_KEY, to use hosted models)");
            let _ = std::fs::create_dir_all(marker.parent().unwrap_or(repo.path()));
            let _ = std::fs::write(&marker, "shown\n");
        }
    }
    let mut stage_models = BTreeMap::new();
    for (role, m) in [
        (Role::Architect, &args.architect),
        (Role::Implementer, &args.implementer),
        (Role::Refactorer, &args.refactorer),
        (Role::Verifier, &args.verifier),
    ] {
        if let Some(m) = m {
            stage_models.insert(role, m.clone());
        }
    }
    let mut arbiter_stage = BTreeMap::new();
    for (stage, m) in [
        (Stage::Architect, &args.arbiter_architect),
        (Stage::Implement, &args.arbiter_implement),
        (Stage::Refactor, &args.arbiter_refactor),
        (Stage::Verify, &args.arbiter_verify),
    ] {
        if let Some(m) = m {
            arbiter_stage.insert(stage, m.clone());
        }
    }
    let req = RunRequest {
        task: args.task.clone(),
        mode: args.arbiter,
        stage_models,
        arbiter_model: args.arbiter_model.clone(),
        arbiter_stage,
        max_retries: args.max_retries,
        budget: args.budget,
        reconcile: args.reconcile,
        reconcile_model: args.reconcile_model.clone(),
    };
    let (mut state, spec) =
        pipeline::plan(repo, &loaded, profile.as_deref(), &req).map_err(start_error)?;
    ensure_local_servers(ctx, &loaded, &state)?;
    if let Ok(statuses) = repo.statuses(None) {
        let dirty = statuses.iter().any(|s| {
            !s.status().is_empty()
                && !s.status().contains(git2::Status::IGNORED)
                && !s.status().contains(git2::Status::WT_NEW)
        });
        if dirty && !ctx.quiet {
            eprintln!(
                "triad: note: your uncommitted changes are not part of this run; it starts from HEAD ({})",
                &state.base[..10]
            );
        }
    }
    let parts = Parts::new(ctx, repo, &loaded, spec);
    let runner = parts.runner(ctx, repo, &loaded);
    if !ctx.quiet {
        eprintln!(
            "triad: run {} of task `{}` on branch {} (arbiter: {})",
            state.run_id, state.task, state.branch, state.mode
        );
    }
    runner.start(&state).map_err(CommandError::failure)?;
    runner
        .execute(&mut state, &parts.spec)
        .map_err(CommandError::failure)?;
    report(&state, args.json)
}

/// Runs `git triad resume`.
pub fn resume(ctx: &Context, args: &ResumeArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let rec = Recorder::open(repo, &args.run_id);
    let mut state = rec.load().map_err(CommandError::failure)?.ok_or_else(|| {
        CommandError::usage(format!("there is no run `{}`", args.run_id))
            .hint("`git triad log` lists the runs of this repository")
    })?;
    if !state.status.resumable() {
        return Err(CommandError::usage(format!(
            "run {} already ended ({}): {}",
            state.run_id,
            state.status.as_str(),
            state.message
        ))
        .hint(format!(
            "start a new run with `git triad run --task {}`",
            state.task
        )));
    }
    if let Some(b) = args.budget {
        state.budget_usd = Some(state.cost_usd + b);
    }
    if state.status == RunStatus::WaitingOnUser {
        let answers = crate::task::workflow::answers_for(repo, &state.task)
            .map_err(CommandError::failure)?
            .ok_or_else(|| {
                CommandError::new(
                    ExitCode::WaitingOnUser,
                    format!("run {} is waiting for your answers", state.run_id),
                )
                .hint(format!(
                    "answer the questions with `git triad task answer {}`, then resume",
                    state.task
                ))
            })?;
        // The answered stage starts a fresh retry budget with the answers in its prompt.
        if let Some(s) = state.stages.get_mut(state.current) {
            s.epoch_start = s.attempts.len();
        }
        state.feedback = answers;
    }
    let parts = Parts::from_run(ctx, repo, &loaded, &state)?;
    let runner = parts.runner(ctx, repo, &loaded);
    if !ctx.quiet {
        eprintln!(
            "triad: resuming run {} at the {} stage ({} so far)",
            state.run_id,
            state
                .stages
                .get(state.current)
                .map_or("final", |s| s.stage.as_str()),
            state.status.as_str()
        );
    }
    runner
        .execute(&mut state, &parts.spec)
        .map_err(CommandError::failure)?;
    report(&state, args.json)
}

/// The `--json` object of a run.
pub fn run_json(state: &RunState) -> serde_json::Value {
    json!({
        "run": state.run_id,
        "task": state.task,
        "branch": state.branch,
        "base": state.base,
        "status": state.status.as_str(),
        "message": state.message,
        "stages": state.stages.iter().map(|s| json!({
            "stage": s.stage,
            "commit": s.commit,
            "model": s.attempts.last().map(|a| a.model.clone()).unwrap_or_else(|| s.model().to_string()),
            "attempts": s.attempts.len(),
            "verdict": s.verdict,
            "arbiter_model": s.arbiter_model,
        })).collect::<Vec<_>>(),
        "final_verdict": state.final_verdict(),
        "cost_usd": state.cost_usd,
        "tokens": {"input": state.tokens[0], "output": state.tokens[1]},
        "outcome": state.outcome,
    })
}

/// What a [`Runner`] borrows: the TaskSpec, a model client, and the verify command.
pub struct Parts {
    /// The TaskSpec of the run.
    pub spec: TaskSpec,
    /// The model client (with the cost ledger).
    pub client: ModelClient,
    verify_command: Option<(String, Duration)>,
    verify_skipped: Option<String>,
}

impl Parts {
    /// Parts for a run of `spec`.
    pub fn new(
        ctx: &Context,
        repo: &git2::Repository,
        loaded: &LoadedConfig,
        spec: TaskSpec,
    ) -> Parts {
        let (verify_command, verify_skipped) = verify_command(ctx, loaded, &spec);
        Parts {
            client: client_for(ctx, repo, loaded),
            spec,
            verify_command,
            verify_skipped,
        }
    }

    /// Parts for an existing run: the TaskSpec is the blob recorded at its start.
    pub fn from_run(
        ctx: &Context,
        repo: &git2::Repository,
        loaded: &LoadedConfig,
        state: &RunState,
    ) -> CommandResult<Parts> {
        let blob = git2::Oid::from_str(&state.task_blob)
            .and_then(|o| repo.find_blob(o))
            .map_err(|e| {
                CommandError::failure(format!("the run's TaskSpec blob is missing: {e}"))
            })?;
        let text = String::from_utf8_lossy(blob.content()).into_owned();
        let spec = TaskSpec::parse(
            &text,
            &crate::task::spec::spec_path(&state.task),
            &state.task,
        )
        .map_err(CommandError::failure)?;
        Ok(Parts::new(ctx, repo, loaded, spec))
    }

    /// A runner over these parts.
    pub fn runner<'a>(
        &'a self,
        ctx: &Context,
        repo: &'a git2::Repository,
        loaded: &'a LoadedConfig,
    ) -> Runner<'a> {
        Runner {
            repo,
            repo_root: repo.workdir().unwrap_or(repo.path()).to_path_buf(),
            loaded,
            client: &self.client,
            progress: !ctx.quiet,
            verify_command: self.verify_command.clone(),
            verify_skipped: self.verify_skipped.clone(),
            profile: loaded.active_profile(&ctx.env),
            outlines: Default::default(),
        }
    }
}

/// Prints a run's outcome (text or `--json`) without deciding the exit code.
pub fn report_state(state: &RunState, json: bool) -> CommandResult<()> {
    report(state, json).map(|_| ())
}

fn report(state: &RunState, json: bool) -> CommandResult {
    if json {
        out(&format!("{}\n", run_json(state)))?;
    } else {
        let mut s = format!(
            "run {}: {}\n{}\n",
            state.run_id,
            state.status.as_str(),
            state.message
        );
        for st in &state.stages {
            s.push_str(&format!(
                "  {:<10} {:<8} {} attempt(s){}{}\n",
                st.stage.as_str(),
                st.verdict.map_or("-".to_string(), |v| v.to_string()),
                st.attempts.len(),
                st.commit
                    .as_deref()
                    .map(|c| format!(", commit {}", &c[..10.min(c.len())]))
                    .unwrap_or_default(),
                st.arbiter_model
                    .as_deref()
                    .map(|a| format!(", arbiter {a}"))
                    .unwrap_or_default()
            ));
        }
        s.push_str(&format!(
            "cost ${:.4}, {} tokens in, {} out\nbranch: {}\nsee: git log --notes=triad {}   |   git triad log {}\n",
            state.cost_usd, state.tokens[0], state.tokens[1], state.branch, state.branch, state.run_id
        ));
        out(&s)?;
    }
    Ok(status_exit(state.status))
}
