//! What the review buys: the same task run as the plain test loop and as the pipeline under
//! each arbiter mode, each outcome judged by facts (a non-empty change on which the task's
//! verify command passes), with cost and wall time per configuration.

use std::time::Duration;

use git2::Repository;
use serde::Serialize;

use crate::git::export::run_boxed;
use crate::git::GitError;

/// One configuration compared: `loop` or a pipeline arbiter mode (`off`, `final`, `bookend`,
/// `full`).
pub const CONFIGS: &[&str] = &["loop", "off", "final", "bookend", "full"];

/// One run of one configuration on one task.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRun {
    /// The task's id.
    pub task: String,
    /// `loop`, or the arbiter mode.
    pub config: String,
    /// How the run ended (`approved`, `flagged`, `halted`, … for the pipeline; `passed` or
    /// `failed` for the loop).
    pub status: String,
    /// The branch with its result, when it made one.
    pub branch: Option<String>,
    /// Files its result changes.
    pub changed: usize,
    /// The verify command passes on its result.
    pub verify_passes: bool,
    /// It completed: it claims success (APPROVE/FLAG, or the loop's passing command), its
    /// change is not empty, and the verify command passes on it.
    pub completed: bool,
    /// It claimed success on an empty or failing change (a pipeline must never do this).
    pub false_success: bool,
    /// USD spent.
    pub cost_usd: f64,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl CompareRun {
    /// Judges a run by facts: `claimed` is its own word (APPROVE/FLAG, or the loop's
    /// passing command).
    #[allow(clippy::too_many_arguments)]
    pub fn judged(
        task: &str,
        config: &str,
        status: &str,
        claimed: bool,
        branch: Option<String>,
        changed: usize,
        verify_passes: bool,
        cost_usd: f64,
        seconds: f64,
    ) -> CompareRun {
        let real = changed > 0 && verify_passes;
        CompareRun {
            task: task.into(),
            config: config.into(),
            status: status.into(),
            branch,
            changed,
            verify_passes,
            completed: claimed && real,
            false_success: claimed && !real,
            cost_usd,
            seconds,
        }
    }
}

/// One line of the comparison: a configuration over all its runs.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// The configuration.
    pub config: String,
    /// Runs.
    pub runs: usize,
    /// Runs completed (see [`CompareRun::completed`]).
    pub completed: usize,
    /// Runs that claimed success on an empty or failing change.
    pub false_success: usize,
    /// Mean USD a run.
    pub cost_usd: f64,
    /// Mean wall seconds a run.
    pub seconds: f64,
}

/// The rows of `runs`, in the order of [`CONFIGS`].
pub fn rows(runs: &[CompareRun]) -> Vec<CompareRow> {
    CONFIGS
        .iter()
        .filter_map(|c| {
            let of: Vec<&CompareRun> = runs.iter().filter(|r| r.config == *c).collect();
            if of.is_empty() {
                return None;
            }
            let n = of.len() as f64;
            Some(CompareRow {
                config: c.to_string(),
                runs: of.len(),
                completed: of.iter().filter(|r| r.completed).count(),
                false_success: of.iter().filter(|r| r.false_success).count(),
                cost_usd: of.iter().map(|r| r.cost_usd).sum::<f64>() / n,
                seconds: of.iter().map(|r| r.seconds).sum::<f64>() / n,
            })
        })
        .collect()
}

/// What `branch` changes against `base` (files), and whether `command` passes on it, run in
/// the box (`policy`) on a scratch copy of the branch, as the verify command runs.
pub fn check_branch(
    repo: &Repository,
    base: git2::Oid,
    branch: &str,
    command: &str,
    timeout: Duration,
    policy: &crate::sandbox::Policy,
) -> Result<(usize, bool), GitError> {
    use crate::git::Context as _;
    let tip = repo
        .revparse_single(branch)
        .and_then(|o| o.peel_to_commit())
        .ctx("reading a compared run's branch")?;
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .ctx("reading the base")?;
    let tree = tip.tree().ctx("reading a compared run's tree")?;
    let changed = crate::git::diff_trees(repo, Some(&base_tree), &tree)
        .ctx("diffing a compared run")?
        .iter()
        .filter(|f| !f.path.starts_with(".triad/"))
        .count();
    let (_, outcome) = run_boxed(repo, &tree, command, timeout, 5, policy);
    Ok((changed, outcome.exit_code == Some(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_completes_only_on_a_real_change_its_command_passes() {
        let ok = CompareRun::judged("t", "bookend", "flagged", true, None, 2, true, 0.1, 3.0);
        assert!(ok.completed && !ok.false_success);
        let empty = CompareRun::judged("t", "bookend", "approved", true, None, 0, true, 0.1, 3.0);
        assert!(!empty.completed && empty.false_success);
        let failing = CompareRun::judged("t", "loop", "failed", false, None, 1, false, 0.0, 1.0);
        assert!(!failing.completed && !failing.false_success);
        let rows = rows(&[ok, empty, failing]);
        assert_eq!(rows[0].config, "loop");
        assert_eq!(
            (rows[1].runs, rows[1].completed, rows[1].false_success),
            (2, 1, 1)
        );
    }
}
