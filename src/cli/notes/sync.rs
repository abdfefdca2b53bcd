//! `git triad notes push|fetch|sync`: exchange `refs/notes/triad` with a remote.
//!
//! Transfers use the git command line (so credential helpers, SSH config and proxies work);
//! the merge uses libgit2. Nothing is ever force-pushed: a rejected push means the remote has
//! verdicts we lack, so we fetch, merge by union and try again.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Args;

use crate::cli::helper::need_repo;
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::notes::merge::{merge_notes, MergeOutcome};
use crate::notes::NOTES_REF;

/// How often a rejected push is retried after fetching and merging again.
const PUSH_RETRIES: usize = 3;

/// Which remote to exchange verdicts with.
#[derive(Debug, Args)]
pub struct RemoteArgs {
    /// The remote (default: `origin`, or the only remote).
    pub remote: Option<String>,
}

/// What `run` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Push only (fetching and merging only when the push is rejected).
    Push,
    /// Fetch and merge.
    Fetch,
    /// Fetch, merge, push.
    Sync,
}

/// Runs `git triad notes push|fetch|sync`.
pub fn run(ctx: &Context, args: &RemoteArgs, mode: Mode) -> CommandResult {
    let repo = need_repo(ctx)?;
    let remote = pick_remote(repo, args.remote.as_deref())?;
    let dir = git_dir_for_cli(repo);
    if mode != Mode::Push {
        fetch_and_merge(repo, &dir, &remote)?;
    }
    if mode != Mode::Fetch {
        push(repo, &dir, &remote)?;
    }
    ok()
}

/// The named remote, else `origin`, else the only remote.
fn pick_remote(repo: &git2::Repository, named: Option<&str>) -> CommandResult<String> {
    let remotes: Vec<String> = repo
        .remotes()?
        .iter()
        .flatten()
        .flatten()
        .map(String::from)
        .collect();
    if let Some(name) = named {
        return if remotes.iter().any(|r| r == name) {
            Ok(name.to_string())
        } else {
            Err(
                CommandError::usage(format!("there is no remote named `{name}`"))
                    .hint(format!("remotes here: {}", list_or_none(&remotes))),
            )
        };
    }
    if remotes.iter().any(|r| r == "origin") {
        return Ok("origin".into());
    }
    match remotes.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(
            CommandError::usage("this repository has no remote to share verdicts with")
                .hint("add one with `git remote add origin <url>`"),
        ),
        _ => Err(
            CommandError::usage("there is no `origin` and several remotes; say which one")
                .hint(format!("remotes here: {}", remotes.join(", "))),
        ),
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "none".into()
    } else {
        items.join(", ")
    }
}

/// Where git commands run: the work tree, or the git dir of a bare repository.
fn git_dir_for_cli(repo: &git2::Repository) -> PathBuf {
    repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf()
}

/// The ref holding the remote's verdicts as last fetched.
pub fn tracking_ref(remote: &str) -> String {
    format!("refs/notes/remotes/{remote}/triad")
}

struct GitRun {
    success: bool,
    stderr: String,
}

fn git(dir: &Path, args: &[&str]) -> CommandResult<GitRun> {
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| CommandError::failure(format!("cannot run git: {e}")))?;
    Ok(GitRun {
        success: output.status.success(),
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    })
}

/// Fetches the remote's notes into the tracking ref and merges them into ours.
fn fetch_and_merge(repo: &git2::Repository, dir: &Path, remote: &str) -> CommandResult<()> {
    let tracking = tracking_ref(remote);
    // Forced, because the tracking ref is ours alone; refs/notes/triad itself only ever
    // moves by our merge.
    let spec = format!("+{NOTES_REF}:{tracking}");
    let run = git(
        dir,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote,
            &spec,
        ],
    )?;
    if !run.success {
        if run.stderr.contains("couldn't find remote ref") {
            out(&format!("{remote} has no verdicts yet.\n"))?;
            return Ok(());
        }
        return Err(CommandError::failure(format!(
            "fetching verdicts from {remote} failed: {}",
            run.stderr
        ))
        .hint(format!("check that `git fetch {remote}` works")));
    }
    let message = match merge_notes(repo, NOTES_REF, &tracking)? {
        MergeOutcome::UpToDate => format!("You already have every verdict {remote} has.\n"),
        MergeOutcome::Created | MergeOutcome::FastForward => {
            format!("Took the verdicts of {remote} (fast-forward).\n")
        }
        MergeOutcome::Merged { combined, added } => format!(
            "Merged the verdicts of {remote}: {added} new notes, {combined} notes combined line by line.\n"
        ),
    };
    out(&message)?;
    Ok(())
}

/// Pushes `refs/notes/triad` without force; on a rejection, fetches, merges and retries.
fn push(repo: &git2::Repository, dir: &Path, remote: &str) -> CommandResult<()> {
    if repo.refname_to_id(NOTES_REF).is_err() {
        out("There are no local verdicts to push.\n")?;
        return Ok(());
    }
    let spec = format!("{NOTES_REF}:{NOTES_REF}");
    for attempt in 0..=PUSH_RETRIES {
        let run = git(dir, &["push", "--quiet", remote, &spec])?;
        if run.success {
            out(&format!("Pushed {NOTES_REF} to {remote}.\n"))?;
            return Ok(());
        }
        let rejected = [
            "[rejected]",
            "non-fast-forward",
            "fetch first",
            "stale info",
        ]
        .iter()
        .any(|m| run.stderr.contains(m));
        if !rejected {
            return Err(CommandError::failure(format!(
                "pushing verdicts to {remote} failed: {}",
                run.stderr
            ))
            .hint(format!("check that `git push {remote}` works")));
        }
        if attempt < PUSH_RETRIES {
            out(&format!(
                "{remote} has verdicts you do not have yet; fetching and merging them first.\n"
            ))?;
            fetch_and_merge(repo, dir, remote)?;
        }
    }
    Err(CommandError::failure(format!(
        "{remote} kept receiving new verdicts while pushing; gave up after {} tries",
        PUSH_RETRIES + 1
    ))
    .hint("run `git triad notes sync` again"))
}
