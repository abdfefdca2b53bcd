//! The stable patch id of a commit: how a verdict is found again after squash or cherry-pick.

use git2::{Oid, Repository, Tree};

use super::NotesError;

/// The stable patch id of `commit`'s diff against its first parent (the empty tree for a root
/// commit), or `None` when that diff is empty.
///
/// This is libgit2's `git_diff_patchid` over a tree-to-tree diff without rename detection,
/// which equals `git diff-tree -p --no-renames <parent> <commit> | git patch-id --stable`
/// (the tests check that). Whitespace and line numbers do not matter, so the same change
/// applied elsewhere (squash merge, cherry-pick, rebase) gets the same id.
pub fn patch_id(repo: &Repository, commit: Oid) -> Result<Option<String>, NotesError> {
    let ctx = |what: &str| format!("cannot compute the patch id of {commit}: {what}");
    let c = repo
        .find_commit(commit)
        .map_err(|e| NotesError::git(ctx("not a commit"), e))?;
    let tree = c.tree().map_err(|e| NotesError::git(ctx("no tree"), e))?;
    let parent_tree = match c.parent_count() {
        0 => None,
        _ => Some(
            c.parent(0)
                .and_then(|p| p.tree())
                .map_err(|e| NotesError::git(ctx("parent missing"), e))?,
        ),
    };
    of_trees(repo, parent_tree.as_ref(), &tree, &ctx)
}

/// The stable patch id of the change from commit `from` to commit `to` (several commits'
/// combined change, as a squash makes it), or `None` when it is empty.
pub fn patch_id_between(
    repo: &Repository,
    from: Oid,
    to: Oid,
) -> Result<Option<String>, NotesError> {
    let ctx = |what: &str| format!("cannot compute the patch id of {from}..{to}: {what}");
    let tree = |c: Oid| {
        repo.find_commit(c)
            .and_then(|c| c.tree())
            .map_err(|e| NotesError::git(ctx("no tree"), e))
    };
    of_trees(repo, Some(&tree(from)?), &tree(to)?, &ctx)
}

fn of_trees(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: &Tree<'_>,
    ctx: &dyn Fn(&str) -> String,
) -> Result<Option<String>, NotesError> {
    let diff = repo
        .diff_tree_to_tree(old, Some(new), None)
        .map_err(|e| NotesError::git(ctx("diff failed"), e))?;
    if diff.deltas().len() == 0 {
        return Ok(None);
    }
    let id = diff
        .patchid(None)
        .map_err(|e| NotesError::git(ctx("patch id failed"), e))?;
    Ok(Some(id.to_string()))
}
