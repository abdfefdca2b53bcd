//! Records kept as commit chains under a ref (runs, chamber sessions): each event is a commit
//! whose tree is the previous one with some files replaced, and the ref moves by
//! compare-and-swap so a second writer is refused, never overwritten.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use super::{Context as _, GitError};
use crate::redact::Redactor;

/// Appends one event to the record at `refname`, whose tip is `tip` (`None`: a new record):
/// the files are upserted into the tip's tree (every byte through the redactor, since records
/// are read back into prompts and shared), `extra_parents` keep other commits reachable, and
/// the ref moves only if it still points at `tip`. Returns the new tip.
pub fn append(
    repo: &Repository,
    refname: &str,
    tip: Option<Oid>,
    files: BTreeMap<String, Vec<u8>>,
    extra_parents: &[Oid],
    message: &str,
) -> Result<Oid, GitError> {
    let redactor = Redactor::global();
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, bytes) in files {
        let blob = repo
            .blob(&redactor.redact_bytes(&bytes))
            .ctx(format!("writing {path}"))?;
        update.upsert(path, blob, git2::FileMode::Blob);
    }
    let base_tree = match tip {
        Some(t) => repo
            .find_commit(t)
            .and_then(|c| c.tree())
            .ctx(format!("reading {refname}"))?,
        None => {
            let empty = repo
                .treebuilder(None)
                .and_then(|b| b.write())
                .ctx("writing an empty tree")?;
            repo.find_tree(empty).ctx("reading the empty tree")?
        }
    };
    let tree = update
        .create_updated(repo, &base_tree)
        .ctx(format!("building the tree of {refname}"))?;
    let mut parents: Vec<Oid> = tip.into_iter().collect();
    parents.extend_from_slice(extra_parents);
    let commit = super::commit(repo, tree, &parents, message)?;
    super::cas_ref(repo, refname, commit, tip, message)?;
    Ok(commit)
}

/// One record as its writer holds it: the ref, and the tip the writer last saw or wrote, so
/// each [`Chain::append`] builds on it and a second writer is refused.
pub struct Chain<'r> {
    repo: &'r Repository,
    refname: String,
    tip: Option<Oid>,
}

impl<'r> Chain<'r> {
    /// The record at `refname`, new or existing.
    pub fn open(repo: &'r Repository, refname: String) -> Self {
        let tip = super::ref_target(repo, &refname);
        Chain { repo, refname, tip }
    }

    /// The record's ref.
    pub fn refname(&self) -> &str {
        &self.refname
    }

    /// Whether the record has any commit yet.
    pub fn exists(&self) -> bool {
        self.tip.is_some()
    }

    /// Appends one event with `files` (see [`append`]).
    pub fn append(
        &mut self,
        files: BTreeMap<String, Vec<u8>>,
        message: &str,
    ) -> Result<Oid, GitError> {
        let tip = append(self.repo, &self.refname, self.tip, files, &[], message)?;
        self.tip = Some(tip);
        Ok(tip)
    }
}

/// The bytes of `path` in the tree of `refname`'s tip, if both exist.
pub fn read_file(
    repo: &Repository,
    refname: &str,
    path: &str,
) -> Result<Option<Vec<u8>>, GitError> {
    let Some(tip) = super::ref_target(repo, refname) else {
        return Ok(None);
    };
    let tree = repo
        .find_commit(tip)
        .and_then(|c| c.tree())
        .ctx(format!("reading {refname}"))?;
    let Ok(entry) = tree.get_path(std::path::Path::new(path)) else {
        return Ok(None);
    };
    let blob = repo.find_blob(entry.id()).ctx(format!("reading {path}"))?;
    Ok(Some(blob.content().to_vec()))
}
