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
    let mut seen = Vec::new();
    let mut moved = false;
    for commit in landed {
        if commit.is_zero() || seen.contains(&commit) {
            continue;
        }
        seen.push(commit);
        if let Some(held) = ref_target(repo, &tracking)? {
            let contains = held == commit
                || repo
                    .graph_descendant_of(held, commit)
                    .map_err(|e| NotesError::git("cannot compare notes histories", e))?;
            // Every fold takes all it finds, so what is older than a folded value is in too.
            if contains {
                break;
            }
        }
        // A value the reflog names whose commit is gone (expired) holds nothing to fold.
        if !odb.exists(commit) || repo.find_commit(commit).is_err() {
            continue;
        }
        merge_commit(repo, &tracking, commit, &landing)?;
        moved = true;
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
