//! The plain test loop: the baseline a run must beat.
//!
//! One model (the one a run's implement stage uses), the task, the files in scope and the
//! verify command's output: at the base before the first try (a bug fix's failing test, as a
//! run's building stages are shown it), and after each failing try; as many tries as the
//! caller allows (one model call each); no other stage, no arbiter, no facts beyond the
//! command's exit code. This is the generate → test → fix loop peer tools lead with, and
//! `git triad bench --compare` runs it beside the pipeline on the same task, model and number
//! of calls so a user can see what the review buys before paying for it.
//!
//! It reads and applies answers through the one stage service ([`super::answer`]) and
//! asks exactly as a run asks its implement stage ([`super::context::stage_request`]); its
//! result is a commit on its own branch, `triad/<task>/loop-<id>`, and the user's tree is
//! never touched.

use std::time::{Duration, Instant};

use git2::{Oid, Repository};

use super::answer::{apply_answer, read_answer, writes_whole_files, ReadAnswer};
use super::context::{file_char_budget, stage_request, OutlineCache, StageContext};
use super::run::BlockOn;
use super::Stage;
use crate::config::{Config, Role};
use crate::edit::render_failures;
use crate::git::export::run_boxed;
use crate::git::{self, Context as _, GitError, TreeFiles};
use crate::model::{ModelClient, ModelError, Spend};
use crate::privacy::{mask_key_shaped, Privacy};
use crate::sandbox::CommandOutcome;
use crate::task::outcome::Outcome;
use crate::task::TaskSpec;

/// Lines of the verify command's output a try is shown.
const TAIL_LINES: usize = 30;

/// What the loop works with.
pub struct LoopRequest<'a> {
    /// The repository (its HEAD is the base).
    pub repo: &'a Repository,
    /// The effective configuration (prompts, edit formats).
    pub config: &'a Config,
    /// The model client (with the ledger and the budget).
    pub client: &'a ModelClient,
    /// The task.
    pub spec: &'a TaskSpec,
    /// The model that writes the code.
    pub model: &'a str,
    /// The verify command and its timeout: the loop's only judge.
    pub verify: (&'a str, Duration),
    /// Tries at most: each is one model call.
    pub tries: u32,
    /// A progress line for each try.
    pub say: &'a dyn Fn(&str),
}

/// How the loop ended.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LoopOutcome {
    /// The verify command passed on the last commit.
    pub passed: bool,
    /// Tries used.
    pub tries: u32,
    /// The branch holding the last commit (`None` when no try produced one).
    pub branch: Option<String>,
    /// Files the result changes against the base.
    pub changed: usize,
    /// What the calls cost.
    pub spend: Spend,
    /// Wall time.
    pub seconds: f64,
    /// How it ended, in one line.
    pub detail: String,
}

/// Why the loop could not run at all.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// Git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A model call failed beyond its retries, or a cap was reached.
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// Runs the plain loop on `req`'s task from HEAD.
pub fn plain_loop(req: &LoopRequest<'_>) -> Result<LoopOutcome, LoopError> {
    let started = Instant::now();
    let repo = req.repo;
    let base = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .ctx("reading HEAD")?;
    let base_tree = base.tree().ctx("reading HEAD's tree")?;
    let privacy = Privacy::from_config(req.config);
    let outlines = OutlineCache::default();
    let whole = writes_whole_files(req.config, req.model);
    let root = repo.workdir().map(|p| p.to_path_buf());
    let mut parent: Oid = base.id();
    let (_, at_base) = run_boxed(
        repo,
        &base_tree,
        req.verify.0,
        req.verify.1,
        TAIL_LINES,
        &req.config.sandbox,
    );
    let base_failure = base_failure(&at_base);
    let mut feedback = String::new();
    let mut spend = Spend::default();
    let mut passed = false;
    let mut detail = String::from("no try produced a change");
    let mut tries = 0;
    while tries < req.tries.max(1) && !passed {
        tries += 1;
        let tree = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading the loop's tree")?;
        let files = TreeFiles::new(repo, tree.clone());
        let changed: Vec<String> = git::diff_trees(repo, Some(&base_tree), &tree)
            .ctx("diffing the loop")?
            .into_iter()
            .map(|f| f.path)
            .collect();
        let budget = file_char_budget(req.config, req.model);
        let ctx = StageContext {
            changed_so_far: &changed,
            feedback: &feedback,
            facts: &base_failure,
            ..StageContext::new(
                Stage::Implement,
                req.spec,
                &files,
                budget,
                &outlines,
                &privacy,
            )
        };
        let request = stage_request(req.config, root.as_deref(), req.model, &ctx);
        let completion = req
            .client
            .chat(Role::Implementer, &[req.model.to_string()], &request)
            .await_blocking()?;
        spend += completion.spend();
        let ReadAnswer { meta, blocks } = match read_answer(&completion.response.text, whole) {
            Ok(a) => a,
            Err(why) => {
                (req.say)(&format!(
                    "loop: try {tries}: the answer does not read: {why}"
                ));
                feedback = format!("## YOUR ANSWER COULD NOT BE USED\n\n{why}\n");
                continue;
            }
        };
        if meta.outcome != Outcome::Approve {
            (req.say)(&format!(
                "loop: try {tries}: answered {}",
                meta.outcome.as_str()
            ));
            feedback = "## DO THE TASK\n\nAnswer with the change the task asks for.\n".into();
            continue;
        }
        let applied = match apply_answer(&files, &privacy, req.spec, &blocks, &[]) {
            Ok(a) => a,
            Err(failures) => {
                let ok = blocks.len().saturating_sub(failures.len());
                (req.say)(&format!("loop: try {tries}: edits refused"));
                feedback = render_failures(&failures, ok);
                continue;
            }
        };
        let new_tree = match git::build_tree(repo, &tree, &applied.files) {
            Ok(t) => t,
            Err(e) => {
                feedback = format!("## YOUR FILES COULD NOT BE STORED\n\n{e}\n");
                continue;
            }
        };
        let summary = crate::pipeline::record::one_line(&meta.summary, "plain loop");
        let message = format!(
            "triad(loop): {summary}\n\nTriad-Stage: loop\nTriad-Model: {}\nTriad-Attempt: {tries}\n",
            req.model
        );
        parent = git::commit(repo, new_tree, &[parent], &message)?;
        let committed = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading the loop's tree")?;
        let (_, outcome) = run_boxed(
            repo,
            &committed,
            req.verify.0,
            req.verify.1,
            TAIL_LINES,
            &req.config.sandbox,
        );
        passed = outcome.exit_code == Some(0);
        let status = outcome
            .exit_code
            .map_or("killed".to_string(), |c| format!("exit {c}"));
        (req.say)(&format!("loop: try {tries}: the verify command: {status}"));
        detail = format!("try {tries}: the verify command {status}");
        if !passed {
            feedback = format!(
                "## THE VERIFY COMMAND FAILS\n\nThe files below hold your change so far. With them, `{}` ends with {status}. The end of its output:\n```\n{}\n```\nFix it.\n",
                req.verify.0,
                mask_key_shaped(&outcome.tail)
            );
        }
    }
    let (branch, changed) = if parent == base.id() {
        (None, 0)
    } else {
        let name = format!(
            "refs/heads/triad/{}/loop-{}",
            req.spec.id,
            crate::clock::new_run_id()
        );
        repo.reference(&name, parent, false, "git triad: the plain loop's result")
            .ctx("creating the loop's branch")?;
        let tree = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading the loop's tree")?;
        let changed = git::diff_trees(repo, Some(&base_tree), &tree)
            .ctx("diffing the loop")?
            .len();
        (Some(name), changed)
    };
    Ok(LoopOutcome {
        passed,
        tries,
        branch: branch.map(|b| b.trim_start_matches("refs/heads/").to_string()),
        changed,
        spend,
        seconds: started.elapsed().as_secs_f64(),
        detail,
    })
}

/// What every try is told when the verify command already fails at the base (a bug fix's
/// failing test): the command and the end of its output, as a fact, as a run's building
/// stages are told it; empty when it passes. Without it the loop's first try guesses at what
/// the pipeline's implement stage is shown.
fn base_failure(outcome: &CommandOutcome) -> String {
    if outcome.exit_code == Some(0) {
        return String::new();
    }
    let status = outcome
        .exit_code
        .map_or("is killed".to_string(), |c| format!("exits with {c}"));
    format!(
        "## The verify command fails before any change (a fact)\n`{}` {status} at the base. The end of its output:\n```\n{}\n```\n",
        crate::redact::redact(&outcome.command),
        mask_key_shaped(&outcome.tail)
    )
}
