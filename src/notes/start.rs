//! The empty start of the notes ref: `git triad init` creates `refs/notes/triad` as one
//! parentless commit with an empty tree, so `git log` (which reads it through
//! `notes.displayRef`) and `git log --notes=triad` have a valid ref before the first verdict
//! and stay silent. It holds nothing, so merges step over it and uninstall removes it.

use git2::{Oid, Repository};

use super::store::{compare_and_swap, ref_target};
use super::{NotesError, NOTES_REF};

/// The message of the empty start commit.
const MESSAGE: &str = "Notes ref created by 'git triad init' (no verdicts yet)\n";

/// Creates the empty start when `refs/notes/triad` does not exist; returns whether it did.
pub fn create_empty(repo: &Repository) -> Result<bool, NotesError> {
    if ref_target(repo, NOTES_REF)?.is_some() {
        return Ok(false);
    }
    let tree = repo
        .treebuilder(None)
        .and_then(|b| b.write())
        .map_err(|e| NotesError::git("cannot write an empty tree", e))?;
    let commit = crate::git::commit(repo, tree, &[], MESSAGE)?;
    compare_and_swap(repo, NOTES_REF, None, commit, "git-triad: init")
}

/// Whether `commit` is an empty start: no parent and an empty tree (it holds no note).
pub fn is_empty_start(repo: &Repository, commit: Oid) -> bool {
    repo.find_commit(commit)
        .is_ok_and(|c| c.parent_count() == 0 && c.tree().is_ok_and(|t| t.is_empty()))
}

/// Deletes `refs/notes/triad` if it is still the empty start (no verdict was ever recorded);
/// returns whether it did.
pub fn remove_empty(repo: &Repository) -> Result<bool, NotesError> {
    let Some(tip) = ref_target(repo, NOTES_REF)? else {
        return Ok(false);
    };
    if !is_empty_start(repo, tip) {
        return Ok(false);
    }
    let mut r = repo
        .find_reference(NOTES_REF)
        .map_err(|e| NotesError::git("cannot read refs/notes/triad", e))?;
    r.delete()
        .map_err(|e| NotesError::git("cannot delete refs/notes/triad", e))?;
    Ok(true)
}
