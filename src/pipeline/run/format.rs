//! The formatter (seed 001 §9): after the refactor stage and the consensus, before Verify,
//! the configured `format.command` (a trusted command, like the verify command: a committed
//! repository config may not set it) runs in the box on a scratch copy of the result. What it
//! changes in the files the run changed becomes its own commit on the scratch branch, so
//! style never depends on the models agreeing, and Verify, the arbiter and the
//! reconciliation see the formatted result.
//!
//! A formatter that fails (non-zero exit, killed at its timeout, not startable) is recorded
//! and its files are not committed: a killed formatter may have left a file half-written,
//! and a failing one has said its output is not to be trusted. The run goes on with the
//! unformatted result, and the verifier is told: style is not worth stopping a run that
//! works, and what the formatter said is in the record for the developer.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::branch::move_branch;
use super::step::{Cx, Flow, Journal, RunError};
use crate::git::export::run_boxed;
use crate::git::{self, Context as _, FileStat};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::FormatRecord;
use crate::pipeline::record::RunState;
use crate::pipeline::stage::Stage;
use crate::privacy::mask_key_shaped;
use crate::redact::redact;

/// Lines of the formatter's output kept for the record.
const TAIL_LINES: usize = 40;

/// Whether the formatter is due: one is configured, the stages before Verify are done
/// (and the consensus, when held), Verify has not begun, and their result is not
/// formatted yet.
pub(super) fn due(cx: &Cx<'_>, j: &Journal<'_>) -> bool {
    !cx.env.config.config.format.command.trim().is_empty()
        && j.state.current_stage() == Some(Stage::Verify)
        && j.state.stages()[Stage::Verify.index()].attempts_in_epoch() == 0
        && j.state.under_review().is_none()
        && j.state.format().last().map(|f| &f.input) != Some(j.state.stage_tip())
}

/// Runs the formatter on the last stage commit and commits what it changed in the
/// run's files on top of it; records the outcome before the branch moves.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let cfg = &cx.env.config.config.format;
    let command = cfg.command.trim().to_string();
    let timeout = Duration::from_secs(cfg.timeout_secs);
    let repo = cx.repo();
    let input = j.state.stage_tip().clone();
    let input_oid = input.oid()?;
    let tree_of = |o: git2::Oid| {
        repo.find_commit(o)
            .and_then(|c| c.tree())
            .ctx("reading a tree for the formatter")
    };
    let base_tree = cx.base_tree()?;
    let input_tree = tree_of(input_oid)?;
    // The run's own files: what the formatter may change.
    let ours: Vec<String> = git::diff_trees(repo, Some(&base_tree), &input_tree)
        .ctx("diffing the run")?
        .into_iter()
        .filter(|f| f.status != "deleted" && !f.binary && !f.withheld)
        .map(|f| f.path)
        .collect();

    let policy = &cx.env.config.config.sandbox;
    let (copy, mut outcome) = run_boxed(repo, &input_tree, &command, timeout, TAIL_LINES, policy);
    let (edits, left_out) = match copy {
        Some(copy) if outcome.exit_code == Some(0) => {
            formatted(repo, &copy.root(), &input_tree, &ours)
        }
        _ => (BTreeMap::new(), Vec::new()),
    };
    j.state.set_sandbox(outcome.layers.clone());
    // Its output goes into the record: it ran over code a model wrote.
    outcome.tail = mask_key_shaped(&outcome.tail).into_owned();
    outcome.command = redact(&outcome.command).into_owned();

    let mut record = FormatRecord {
        input: input.clone(),
        outcome,
        commit: None,
        changed: Vec::new(),
        left_out,
        detail: String::new(),
    };
    if record.failed() {
        let how = if record.outcome.timed_out {
            format!("timed out after {} s", timeout.as_secs())
        } else {
            match record.outcome.exit_code {
                Some(c) => format!("exited {c}"),
                None => "was killed or could not start".into(),
            }
        };
        record.detail = format!(
            "the formatter {how}: nothing of it is committed, and the run goes on unformatted"
        );
    } else if edits.is_empty() {
        record.detail = "the formatter changed none of the run's files".into();
    } else {
        let tree = git::build_tree(repo, &input_tree, &edits)?;
        let new_tree = repo.find_tree(tree).ctx("reading the formatted tree")?;
        let changed =
            FileStat::of(&git::diff_trees(repo, Some(&input_tree), &new_tree).ctx("diffing")?);
        if changed.is_empty() {
            record.detail = "the formatter changed none of the run's files".into();
        } else {
            let message = format!(
                "triad(format): `{command}` formatted {} file(s)\n\nThe configured formatter's change (format.command), not a model's: style is applied after consensus, before Verify.\n\nTriad-Run: {}\nTriad-Stage: format\n",
                changed.len(),
                j.state.run_id()
            );
            let commit = git::commit(repo, tree, &[input_oid], &message)?;
            j.keep(commit);
            record.detail = format!("formatted {}", FileStat::describe(&changed));
            record.commit = Some(commit.into());
            record.changed = changed;
        }
    }
    if !record.left_out.is_empty() {
        record.detail.push_str(&format!(
            "; left out its changes to files the run did not change: {}",
            record.left_out.join(", ")
        ));
    }
    cx.progress(&Progress::Formatted {
        command: &record.outcome.command,
        detail: &record.detail,
    });
    let event = format!("format: {}", record.detail);
    let commit = record.commit.clone();
    j.state.push_format(record);
    j.event(&event)?;
    if let Some(c) = commit {
        move_branch(cx, j, c.oid()?, Some(input_oid), "formatter")?;
    }
    Ok(Flow::Continue)
}

/// What the verifier is told about the formatter of its input, if one ran.
pub(super) fn shown(state: &RunState) -> String {
    match state.format().last() {
        Some(f) => format!(
            "## Formatter (a fact)\ncommand: {}\n{}\n",
            f.outcome.command, f.detail
        ),
        None => String::new(),
    }
}

/// The run's files as the formatter left them in the scratch copy at `dir` (those that
/// differ from `tree`), and the other files of `tree` it changed (left out). Files are read
/// without following a symbolic link; a file it made unreadable or not UTF-8 is left as it
/// was. Nothing runs in the copy to find them (not even git: the boxed command could have
/// written a git config there that runs a program).
fn formatted(
    repo: &git2::Repository,
    dir: &Path,
    tree: &git2::Tree<'_>,
    ours: &[String],
) -> (BTreeMap<String, String>, Vec<String>) {
    let mut edits = BTreeMap::new();
    for path in ours {
        let Ok(now) = crate::fsguard::read_to_string(dir, path) else {
            continue;
        };
        let before = tree
            .get_path(Path::new(path))
            .ok()
            .and_then(|e| repo.find_blob(e.id()).ok())
            .map(|b| b.content().to_vec());
        if before.as_deref() != Some(now.as_bytes()) {
            edits.insert(path.clone(), now);
        }
    }
    let mut left_out = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
        let (Ok(name), Some(git2::ObjectType::Blob)) = (entry.name(), entry.kind()) else {
            return git2::TreeWalkResult::Ok;
        };
        let path = format!("{parent}{name}");
        if entry.filemode() == 0o120000 || ours.contains(&path) {
            return git2::TreeWalkResult::Ok;
        }
        let Ok(now) = crate::fsguard::read_to_string(dir, &path) else {
            return git2::TreeWalkResult::Ok;
        };
        let before = repo.find_blob(entry.id()).ok();
        if before.is_some_and(|b| b.content() != now.as_bytes()) {
            left_out.push(path);
        }
        git2::TreeWalkResult::Ok
    })
    .ok();
    (edits, left_out)
}
