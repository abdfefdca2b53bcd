//! Exchanging `refs/notes/triad` with a remote.
//!
//! Transfers use the git command line (so credential helpers, SSH config and proxies work);
//! the merge uses libgit2. A remote's notes land in its landing ref and are folded, by the
//! union of lines, into its tracking ref (`refs/notes/remotes/<remote>/triad`, see
//! [`super::fold`]), where every reader finds them: a fetch only adds, whatever the remote
//! did to its notes. They are merged into ours only when the user's own config trusts that
//! remote, since a line in our ref counts as ours (see [`super::source`]), and that merge
//! only adds too. Nothing is ever force-pushed: a rejected push means the remote has verdicts
//! we lack, so we fetch and push the union of both sides, a bounded number of times; our ref
//! moves to that union only for a trusted remote.

use std::path::{Path, PathBuf};
use std::process::Command;

use git2::Repository;

use super::merge::{merge_notes, write_union, MergeOutcome};
use super::source::{landing_ref, tracking_ref, Trust};
use super::store::{ref_target, ScratchRef};
use super::{NotesError, NOTES_REF};

/// Rejected pushes answered by a fetch and merge before giving up.
pub const PUSH_RETRIES: usize = 3;

/// Why an exchange with a remote failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// git could not be started.
    #[error("cannot run git: {0}")]
    NoGit(String),
    /// `git fetch` failed.
    #[error("fetching verdicts from {remote} failed: {stderr}")]
    Fetch {
        /// The remote.
        remote: String,
        /// What git said.
        stderr: String,
    },
    /// `git push` failed for another reason than the remote having moved.
    #[error("pushing verdicts to {remote} failed: {stderr}")]
    Push {
        /// The remote.
        remote: String,
        /// What git said.
        stderr: String,
    },
    /// The remote kept receiving verdicts while we pushed.
    #[error("{remote} kept receiving new verdicts while pushing; gave up after {tries} tries")]
    Contended {
        /// The remote.
        remote: String,
        /// Pushes tried.
        tries: usize,
    },
    /// Merging the fetched notes failed.
    #[error(transparent)]
    Notes(#[from] NotesError),
}

/// What a fetch brought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// The remote has no verdicts yet.
    Nothing,
    /// Its verdicts, merged into ours (a trusted remote).
    Merged(MergeOutcome),
    /// Its verdicts, kept in its tracking ref only (a remote the user does not trust): they
    /// count there, but only to tighten.
    Tracked {
        /// Whether the tracking ref moved.
        changed: bool,
    },
}

/// Fetches `remote`'s notes into its landing ref and folds them into its tracking ref by
/// union ([`super::fold::fold`]); merges that into ours, by union too, when `trust` trusts
/// the remote.
pub fn fetch(repo: &Repository, remote: &str, trust: &Trust) -> Result<Fetched, SyncError> {
    let tracking = tracking_ref(remote);
    // Forced, because the landing ref is ours alone and only fed to the fold: a remote that
    // rewrote its notes takes nothing away here.
    let spec = format!("+{NOTES_REF}:{}", landing_ref(remote));
    let before = ref_target(repo, &tracking)?;
    let run = git(
        repo,
        &[
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote,
            &spec,
        ],
    )?;
    let nothing = !run.success && run.stderr.contains("couldn't find remote ref");
    if !run.success && !nothing {
        return Err(SyncError::Fetch {
            remote: remote.into(),
            stderr: run.stderr,
        });
    }
    // What `git fetch` landed earlier is folded in even when the remote has nothing now.
    super::fold::fold(repo, remote)?;
    if nothing && before.is_none() {
        return Ok(Fetched::Nothing);
    }
    if !trust.trusts(remote) {
        return Ok(Fetched::Tracked {
            changed: ref_target(repo, &tracking)? != before,
        });
    }
    let merged = merge_notes(repo, NOTES_REF, &tracking)?;
    if merged != MergeOutcome::UpToDate {
        if let Err(e) = super::display::rebuild(repo) {
            tracing::warn!("the display notes are not up to date: {e}");
        }
    }
    Ok(Fetched::Merged(merged))
}

/// Pushes `refs/notes/triad` to `remote` without force; a rejection is answered by a fetch
/// (and, for a trusted remote, a merge into ours), then a push of the union of both sides.
/// `None` when there are no local verdicts; else what each fetch before the successful push
/// brought, in order.
pub fn push(
    repo: &Repository,
    remote: &str,
    trust: &Trust,
) -> Result<Option<Vec<Fetched>>, SyncError> {
    if repo.refname_to_id(NOTES_REF).is_err() {
        return Ok(None);
    }
    let mut spec = format!("{NOTES_REF}:{NOTES_REF}");
    let mut fetched = Vec::new();
    // The union pushed to a remote we do not merge: a ref of triad's own, so the pre-push
    // gate checks it as the notes push it is.
    let union = ScratchRef::new(repo, "notes-push");
    for attempt in 0..=PUSH_RETRIES {
        let run = git(repo, &["push", "--quiet", remote, &spec])?;
        if run.success {
            return Ok(Some(fetched));
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
            return Err(SyncError::Push {
                remote: remote.into(),
                stderr: run.stderr,
            });
        }
        if attempt < PUSH_RETRIES {
            fetched.push(fetch(repo, remote, trust)?);
            spec = match union_to_push(repo, remote)? {
                None => format!("{NOTES_REF}:{NOTES_REF}"),
                Some(commit) => {
                    union.set(Some(commit))?;
                    format!("{}:{NOTES_REF}", union.name)
                }
            };
        }
    }
    Err(SyncError::Contended {
        remote: remote.into(),
        tries: PUSH_RETRIES + 1,
    })
}

/// What to push after `remote`'s notes were fetched: `None` for our ref, when it already
/// holds theirs (a trusted remote was merged in, or nothing came); else a commit holding the
/// union of both, written without moving our ref, so the remote keeps every line and ours
/// keeps only what counts as ours.
fn union_to_push(repo: &Repository, remote: &str) -> Result<Option<git2::Oid>, SyncError> {
    let tracking = tracking_ref(remote);
    let (Some(ours), Some(theirs)) = (ref_target(repo, NOTES_REF)?, ref_target(repo, &tracking)?)
    else {
        return Ok(None);
    };
    let holds_theirs = ours == theirs
        || repo
            .graph_descendant_of(ours, theirs)
            .map_err(|e| NotesError::git("cannot compare notes histories", e))?;
    if holds_theirs {
        return Ok(None);
    }
    Ok(Some(write_union(repo, [ours, theirs], &tracking)?.commit))
}

struct GitRun {
    success: bool,
    stderr: String,
}

/// Where git commands run: the work tree, or the git dir of a bare repository.
fn git_dir_for_cli(repo: &Repository) -> PathBuf {
    repo.workdir().unwrap_or_else(|| repo.path()).to_path_buf()
}

fn git(repo: &Repository, args: &[&str]) -> Result<GitRun, SyncError> {
    let dir: &Path = &git_dir_for_cli(repo);
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| SyncError::NoGit(e.to_string()))?;
    Ok(GitRun {
        success: output.status.success(),
        stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    })
}
