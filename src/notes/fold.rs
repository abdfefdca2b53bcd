//! Folding what landed from a remote into the ref git triad keeps for it, so a fetch only
//! ever adds.
//!
//! A fetch, by `git fetch` with the refspec `init` adds or by `git triad notes fetch`, lands
//! a remote's notes in its landing ref ([`landing_ref`]), forced: the remote may have
//! rewritten them, and a fetch must never fail on that. Each value the landing ref held is in
//! its reflog (git logs every update of `refs/notes/` in a work tree's repository). Folding
//! merges every one of them not yet held into the tracking ref ([`tracking_ref`]) by the
//! union of lines, so a remote that rewrites its notes without a HALT, fetched twice before
//! git triad looks, still leaves the HALT here. Readers read both refs; the tracking ref only
//! grows.

use git2::{Oid, Repository};

use super::merge::merge_commit;
use super::source::{landing_ref, remote_of, tracking_ref};
use super::store::ref_target;
use super::NotesError;

/// Folds what landed from `remote` into its tracking ref; returns whether the tracking ref
/// moved.
///
/// The values the landing ref held are merged oldest first, each by union, from the newest
/// one the tracking ref already descends from: a remote's history may remove a line in a
/// later commit, so a later value's descending from an earlier one says nothing about
/// holding its lines, and only merging in order keeps them all.
pub fn fold(repo: &Repository, remote: &str) -> Result<bool, NotesError> {
    let landing = landing_ref(remote);
    let tracking = tracking_ref(remote);
    // Newest first: the tip, then what the reflog says it held before.
    let mut landed: Vec<Oid> = ref_target(repo, &landing)?.into_iter().collect();
    if let Ok(log) = repo.reflog(&landing) {
        landed.extend(log.iter().map(|e| e.id_new()));
    }
    let odb = repo
        .odb()
        .map_err(|e| NotesError::git("cannot open the object database", e))?;
    let mut pending = Vec::new();
    let held = ref_target(repo, &tracking)?;
    for commit in landed {
        if commit.is_zero() || pending.contains(&commit) {
            continue;
        }
        if let Some(held) = held {
            let folded = held == commit
                || repo
                    .graph_descendant_of(held, commit)
                    .map_err(|e| NotesError::git("cannot compare notes histories", e))?;
            // Every fold takes all values older than the newest, in order.
            if folded {
                break;
            }
        }
        // A value the reflog names whose commit is gone (expired) holds nothing to fold.
        if odb.exists(commit) && repo.find_commit(commit).is_ok() {
            pending.push(commit);
        }
    }
    let moved = !pending.is_empty();
    for commit in pending.into_iter().rev() {
        merge_commit(repo, &tracking, commit, &landing)?;
    }
    Ok(moved)
}

/// Folds every remote's landing ref there is (see [`fold`]).
pub fn fold_all(repo: &Repository) -> Result<(), NotesError> {
    let refs = repo
        .references_glob("refs/notes/remotes/*")
        .map_err(|e| NotesError::git("cannot list the notes refs", e))?;
    let mut remotes: Vec<String> = refs
        .flatten()
        .filter_map(|r| r.name().map(str::to_string).ok())
        .filter_map(|name| {
            let remote = remote_of(&name)?;
            (landing_ref(&remote) == name).then_some(remote)
        })
        .collect();
    remotes.sort();
    for remote in remotes {
        fold(repo, &remote)?;
    }
    Ok(())
}
