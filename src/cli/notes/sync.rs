//! `git triad notes push|fetch|sync`: exchange `refs/notes/triad` with a remote.
//!
//! The exchange itself, and its retries, are [`crate::notes::sync`]'s; this says what it did.

use clap::Args;

use crate::cli::helper::{need_repo, note_trust};
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::notes::merge::MergeOutcome;
use crate::notes::source::tracking_ref;
use crate::notes::sync::{self, Fetched, SyncError};
use crate::notes::NOTES_REF;

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
    let trust = note_trust(ctx);
    if mode != Mode::Push {
        let fetched = sync::fetch(repo, &remote, &trust).map_err(|e| sync_error(e, &remote))?;
        out(&fetched_text(&fetched, &remote))?;
    }
    if mode != Mode::Fetch {
        match sync::push(repo, &remote, &trust).map_err(|e| sync_error(e, &remote))? {
            None => out("There are no local verdicts to push.\n")?,
            Some(merged_first) => {
                let mut s = String::new();
                for fetched in &merged_first {
                    s.push_str(&format!(
                        "{remote} has verdicts you do not have yet; fetching them first and pushing the union of both.\n"
                    ));
                    s.push_str(&fetched_text(fetched, &remote));
                }
                s.push_str(&format!("Pushed {NOTES_REF} to {remote}.\n"));
                out(&s)?;
            }
        }
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

/// What a fetch brought, in a sentence.
fn fetched_text(fetched: &Fetched, remote: &str) -> String {
    match fetched {
        Fetched::Nothing => format!("{remote} has no verdicts yet.\n"),
        Fetched::Merged(MergeOutcome::UpToDate) => {
            format!("You already have every verdict {remote} has.\n")
        }
        Fetched::Merged(MergeOutcome::Created | MergeOutcome::FastForward) => {
            format!("Took the verdicts of {remote} (fast-forward).\n")
        }
        Fetched::Merged(MergeOutcome::Merged { combined, added }) => format!(
            "Merged the verdicts of {remote}: {added} new notes, {combined} notes combined line by line.\n"
        ),
        Fetched::Tracked { changed } => format!(
            "{} the verdicts of {remote} in {}. Your config does not trust {remote}, so they only add verdicts: \
             its HALTs count, its overrides do not, and they stay out of {NOTES_REF}. \
             To let its overrides count, add it to `notes.trusted_remotes` in your own config \
             (`git config triad.notes.trusted-remotes '[\"{remote}\"]'`).\n",
            if *changed { "Fetched" } else { "Already had" },
            tracking_ref(remote)
        ),
    }
}

/// A failed exchange, with what to check.
fn sync_error(e: SyncError, remote: &str) -> CommandError {
    let hint = match &e {
        SyncError::Fetch { .. } => format!("check that `git fetch {remote}` works"),
        SyncError::Push { .. } => format!("check that `git push {remote}` works"),
        SyncError::Contended { .. } => "run `git triad notes sync` again".into(),
        SyncError::NoGit(_) | SyncError::Notes(_) => return CommandError::failure(e),
    };
    CommandError::failure(e).hint(hint)
}
