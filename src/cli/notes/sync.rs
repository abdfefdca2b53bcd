//! `git triad notes push|fetch|sync`: exchange `refs/notes/triad` with a remote.
//!
//! The exchange itself is [`crate::ops::notes`]'s (and its retries [`crate::notes::sync`]'s);
//! this says what it did.

use clap::Args;

use crate::cli::helper::{need_repo, note_trust, ops, Terminal};
use crate::cli::{ok, out, CommandError, CommandResult, Context};
use crate::notes::merge::MergeOutcome;
use crate::notes::source::tracking_ref;
use crate::notes::sync::{Fetched, SyncError};
use crate::notes::NOTES_REF;
use crate::ops::notes::{NotesSyncError, Pushed};

/// Which remote to exchange verdicts with.
#[derive(Debug, Args)]
pub struct RemoteArgs {
    /// The remote (default: `origin`, or the only remote).
    pub remote: Option<String>,
}

pub use crate::ops::notes::Mode;

/// Runs `git triad notes push|fetch|sync`: the operation exchanges the verdicts
/// ([`crate::ops::Ops::notes_sync`]); this says what each side did.
pub fn run(ctx: &Context, args: &RemoteArgs, mode: Mode) -> CommandResult {
    let repo = need_repo(ctx)?;
    let trust = note_trust(ctx);
    let host = Terminal { ctx };
    match ops(ctx, repo, &host).notes_sync(args.remote.as_deref(), mode, &trust) {
        Ok(synced) => {
            if let Some(fetched) = &synced.fetched {
                out(&fetched_text(fetched, &synced.remote))?;
            }
            if let Some(pushed) = &synced.pushed {
                out(&pushed_text(pushed, &synced.remote))?;
            }
            ok()
        }
        Err(NotesSyncError::Exchange {
            error,
            remote,
            fetched,
        }) => {
            // What the fetch brought stays fetched, and is said before the push's failure.
            if let Some(fetched) = &fetched {
                out(&fetched_text(fetched, &remote))?;
            }
            Err(sync_error(error, &remote))
        }
        Err(e) => Err(remote_error(e)),
    }
}

/// What a push did, in sentences.
fn pushed_text(pushed: &Pushed, remote: &str) -> String {
    match pushed {
        Pushed::Nothing => "There are no local verdicts to push.\n".into(),
        Pushed::Pushed(merged_first) => {
            let mut s = String::new();
            for fetched in merged_first {
                s.push_str(&format!(
                    "{remote} has verdicts you do not have yet; fetching them first and pushing the union of both.\n"
                ));
                s.push_str(&fetched_text(fetched, remote));
            }
            s.push_str(&format!("Pushed {NOTES_REF} to {remote}.\n"));
            s
        }
    }
}

/// A remote that cannot be picked, with how to name one.
fn remote_error(e: NotesSyncError) -> CommandError {
    match &e {
        NotesSyncError::NoSuchRemote { remotes, .. } => CommandError::usage(e.to_string())
            .hint(format!("remotes here: {}", list_or_none(remotes))),
        NotesSyncError::NoRemote => {
            CommandError::usage(e.to_string()).hint("add one with `git remote add origin <url>`")
        }
        NotesSyncError::Ambiguous { remotes } => {
            CommandError::usage(e.to_string()).hint(format!("remotes here: {}", remotes.join(", ")))
        }
        NotesSyncError::Git(_) | NotesSyncError::Exchange { .. } => CommandError::failure(e),
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
