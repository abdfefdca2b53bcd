//! Repository access for runs: files of a tree, in-memory trees and commits, diffs with line
//! numbers, compare-and-swap ref updates, scratch copies of trees for the box.
//!
//! Nothing here touches the user's working tree, index, HEAD or stash.

pub mod diff;
pub mod export;
mod id;
pub mod leftover;
pub mod paths;
pub mod quote;
pub mod record;

use std::collections::BTreeMap;

use git2::{FileMode, ObjectType, Oid, Repository, Signature, Tree};

pub use diff::{diff_trees, render_diff, FileDiff, FileStat, Hunk, HunkLine, WITHHELD};
pub use id::{parse_oid, ObjectId};

/// Git failures with context.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// A libgit2 call failed.
    #[error("{what}: {source}")]
    Git {
        /// What we were doing.
        what: String,
        /// The libgit2 error.
        #[source]
        source: git2::Error,
    },
    /// A ref moved under us.
    #[error("{0} was changed by someone else while this command ran; nothing was overwritten")]
    Raced(String),
    /// A command failed.
    #[error("{0}")]
    Command(String),
}

/// Adds context to a libgit2 result.
pub trait Context<T> {
    /// Wraps the error with what we were doing.
    fn ctx(self, what: impl Into<String>) -> Result<T, GitError>;
}

impl<T> Context<T> for Result<T, git2::Error> {
    fn ctx(self, what: impl Into<String>) -> Result<T, GitError> {
        self.map_err(|source| GitError::Git {
            what: what.into(),
            source,
        })
    }
}

/// The files of one tree, as a base for edits.
pub struct TreeFiles<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
}

impl<'r> TreeFiles<'r> {
    /// Files of `tree`.
    pub fn new(repo: &'r Repository, tree: Tree<'r>) -> Self {
        TreeFiles { repo, tree }
    }

    /// The tree.
    pub fn tree(&self) -> &Tree<'r> {
        &self.tree
    }

    /// Text of a file, if it exists, is a blob and is UTF-8.
    pub fn text(&self, path: &str) -> Option<String> {
        self.bytes(path).and_then(|b| String::from_utf8(b).ok())
    }

    /// Bytes of a blob at `path`.
    pub fn bytes(&self, path: &str) -> Option<Vec<u8>> {
        let entry = self.tree.get_path(std::path::Path::new(path)).ok()?;
        if entry.kind() != Some(ObjectType::Blob) || entry.filemode() == 0o120000 {
            return None;
        }
        let blob = self.repo.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// The blob id at `path`, if it is a blob.
    pub fn blob_id(&self, path: &str) -> Option<Oid> {
        let entry = self.tree.get_path(std::path::Path::new(path)).ok()?;
        (entry.kind() == Some(ObjectType::Blob)).then(|| entry.id())
    }

    /// Every blob path in the tree (recursively), sorted.
    pub fn paths(&self) -> Vec<String> {
        let mut out = Vec::new();
        let _ = self.tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                if let Ok(name) = entry.name() {
                    out.push(format!("{dir}{name}"));
                }
            }
            git2::TreeWalkResult::Ok
        });
        out.sort();
        out
    }
}

impl crate::edit::BaseFiles for TreeFiles<'_> {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.bytes(path)
    }

    fn kind(&self, path: &str) -> Option<crate::edit::EntryKind> {
        use crate::edit::EntryKind;
        let entry = self.tree.get_path(std::path::Path::new(path)).ok()?;
        Some(match (entry.kind(), entry.filemode()) {
            (_, 0o120000) => EntryKind::Other,
            (Some(ObjectType::Blob), _) => EntryKind::File,
            (Some(ObjectType::Tree), _) => EntryKind::Dir,
            _ => EntryKind::Other,
        })
    }

    fn through_symlink(&self, path: &str) -> bool {
        let mut prefix = String::new();
        for seg in path.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(seg);
            match self.tree.get_path(std::path::Path::new(&prefix)) {
                Ok(e) if e.filemode() == 0o120000 => return true,
                Ok(e) if e.kind() == Some(ObjectType::Commit) => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }
}

/// Builds a new tree from `base` with `files` written (path → full content). Existing files
/// keep their mode (an executable stays executable); contents pass the redactor.
pub fn build_tree(
    repo: &Repository,
    base: &Tree<'_>,
    files: &BTreeMap<String, String>,
) -> Result<Oid, GitError> {
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, text) in files {
        // Content written from a model's answer: a key it echoed is not committed.
        let text = crate::redact::redact(text);
        let blob = repo.blob(text.as_bytes()).ctx(format!("writing {path}"))?;
        let mode = match base.get_path(std::path::Path::new(path)) {
            Ok(e) if e.filemode() == 0o100755 => FileMode::BlobExecutable,
            _ => FileMode::Blob,
        };
        update.upsert(path, blob, mode);
    }
    update
        .create_updated(repo, base)
        .ctx("building the stage tree")
}

/// The files of `files` that git refuses to store on top of `base`, each with libgit2's
/// reason, when [`build_tree`] failed on the tree itself (an invalid entry name, a file
/// where a directory is); empty when the failure was something else (a disk, a broken
/// object database), which is then a real error. When no file fails alone, they conflict
/// with each other and every one is named with the reason.
pub fn unstorable(
    repo: &Repository,
    base: &Tree<'_>,
    files: &BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let tree_refused = |e: &GitError| matches!(e, GitError::Git { source, .. } if source.class() == git2::ErrorClass::Tree);
    let whole = match build_tree(repo, base, files) {
        Ok(_) => return Vec::new(),
        Err(e) if tree_refused(&e) => e,
        Err(_) => return Vec::new(),
    };
    let alone: Vec<(String, String)> = files
        .iter()
        .filter_map(|(path, text)| {
            let one = BTreeMap::from([(path.clone(), text.clone())]);
            match build_tree(repo, base, &one) {
                Err(GitError::Git { source, .. }) if source.class() == git2::ErrorClass::Tree => {
                    Some((path.clone(), source.message().to_string()))
                }
                _ => None,
            }
        })
        .collect();
    if !alone.is_empty() {
        return alone;
    }
    let why = match &whole {
        GitError::Git { source, .. } => source.message().to_string(),
        other => other.to_string(),
    };
    files
        .keys()
        .map(|p| {
            (
                p.clone(),
                format!("it conflicts with another file of the answer ({why})"),
            )
        })
        .collect()
}

/// The signature for triad's commits: the user's, else a neutral one.
pub fn signature(repo: &Repository) -> Signature<'static> {
    repo.signature()
        .map(|s| s.to_owned())
        .or_else(|_| Signature::now("git-triad", "git-triad@localhost"))
        .unwrap_or_else(|_| {
            // `now` only fails on invalid names; these are valid.
            Signature::new("git-triad", "git-triad@localhost", &git2::Time::new(0, 0))
                .expect("static signature")
        })
}

/// Creates a commit without moving any ref; the message passes the redactor, and whatever
/// in it a terminal would obey is written as text ([`crate::safe::text`]): `git log` prints
/// commit messages raw.
pub fn commit(
    repo: &Repository,
    tree: Oid,
    parents: &[Oid],
    message: &str,
) -> Result<Oid, GitError> {
    let tree = repo.find_tree(tree).ctx("finding the tree to commit")?;
    let parents: Vec<git2::Commit<'_>> = parents
        .iter()
        .map(|p| repo.find_commit(*p))
        .collect::<Result<_, _>>()
        .ctx("finding parent commits")?;
    let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
    let sig = signature(repo);
    // Stage summaries and run events come from models and servers.
    let message = crate::redact::redact(message);
    let message = crate::safe::text(&message);
    repo.commit(None, &sig, &sig, &message, &tree, &refs)
        .ctx("writing a commit")
}

/// Points `name` at `new` only if it still points at `expected` (`None`: must not exist).
pub fn cas_ref(
    repo: &Repository,
    name: &str,
    new: Oid,
    expected: Option<Oid>,
    log: &str,
) -> Result<(), GitError> {
    let result = match expected {
        None => repo.reference(name, new, false, log).map(|_| ()),
        Some(old) => repo
            .reference_matching(name, new, true, old, log)
            .map(|_| ()),
    };
    result.map_err(|e| match e.code() {
        git2::ErrorCode::Exists | git2::ErrorCode::Modified | git2::ErrorCode::Locked => {
            GitError::Raced(name.to_string())
        }
        _ => GitError::Git {
            what: format!("updating {name}"),
            source: e,
        },
    })
}

/// Removes the lock files a process killed while updating `name` left behind (the ref's
/// and its reflog's), which would refuse every later update; says whether there were any.
/// Only for a caller that knows no other process is updating `name` (it holds the lock of
/// the run that owns the ref).
pub fn clear_stale_ref_lock(repo: &Repository, name: &str) -> bool {
    let dir = repo.commondir();
    let mut removed = false;
    for lock in [
        dir.join(format!("{name}.lock")),
        dir.join("logs").join(format!("{name}.lock")),
    ] {
        removed |= std::fs::remove_file(lock).is_ok();
    }
    removed
}

/// The oid a ref points to, if it exists.
pub fn ref_target(repo: &Repository, name: &str) -> Option<Oid> {
    repo.find_reference(name).ok().and_then(|r| r.target())
}

/// Builds a tree from scratch out of (path, bytes) entries, each passing the redactor.
pub fn tree_from_entries(
    repo: &Repository,
    entries: &BTreeMap<String, Vec<u8>>,
) -> Result<Oid, GitError> {
    let empty = repo
        .treebuilder(None)
        .and_then(|b| b.write())
        .ctx("writing an empty tree")?;
    let empty = repo.find_tree(empty).ctx("reading the empty tree")?;
    let mut update = git2::build::TreeUpdateBuilder::new();
    for (path, bytes) in entries {
        let bytes = crate::redact::Redactor::global().redact_bytes(bytes);
        let blob = repo.blob(&bytes).ctx(format!("writing {path}"))?;
        update.upsert(path, blob, FileMode::Blob);
    }
    update.create_updated(repo, &empty).ctx("building a tree")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_git_cannot_store_are_named_with_libgit2s_reason() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let entries = BTreeMap::from([
            ("calc.py".to_string(), b"x = 1\n".to_vec()),
            ("src/a.py".to_string(), b"y = 2\n".to_vec()),
        ]);
        let base = tree_from_entries(&repo, &entries).unwrap();
        let base = repo.find_tree(base).unwrap();
        let files = |paths: &[&str]| -> BTreeMap<String, String> {
            paths
                .iter()
                .map(|p| (p.to_string(), "z\n".to_string()))
                .collect()
        };

        assert!(unstorable(&repo, &base, &files(&["new.py", "src/b.py"])).is_empty());
        let refused = unstorable(&repo, &base, &files(&["ok.py", "calc.py/x.py", "src"]));
        let paths: Vec<&str> = refused.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["calc.py/x.py", "src"], "{refused:?}");
        assert!(
            refused.iter().all(|(_, why)| !why.is_empty()),
            "{refused:?}"
        );
        // Two files of one answer that cannot both exist are both named.
        let refused = unstorable(&repo, &base, &files(&["new", "new/x.py"]));
        assert_eq!(refused.len(), 2, "{refused:?}");
        assert!(
            refused[0].1.contains("conflicts with another file"),
            "{refused:?}"
        );
    }
}
