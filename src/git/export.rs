//! A tree written out for the box: a scratch copy of one commit's files where the verify
//! and format commands, probes and examples run, never the user's repository or a worktree
//! of it.
//!
//! A linked worktree's `.git` points into the user's repository, so a command run there can
//! rewrite its refs, plant hooks that run on the user's next checkout, or read its config.
//! A scratch copy has none of that: with [`ExportKind::WithGit`] it gets a fresh repository
//! of its own holding one commit of the tree (so `git status` and `git diff` work and show
//! a clean tree), whose objects, refs, hooks and config are not the user's.

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

use git2::{ObjectType, Repository, Tree, TreeWalkMode, TreeWalkResult};

use super::leftover::{self, Record};
use super::GitError;
use crate::sandbox;

/// Most bytes of files one scratch copy may hold: the box needs the code, not a
/// repository's media.
const MAX_EXPORT_BYTES: u64 = 512 * 1024 * 1024;

/// How a tree is copied out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportKind {
    /// The files only (probes, examples).
    Files,
    /// The files and a fresh repository with one commit of them (verify, format).
    WithGit,
}

/// A scratch copy of a tree, removed when dropped. Its record ([`leftover::Record`]) holds
/// the process groups of the commands run in it, for the cleanup after a kill.
pub struct ExportedTree {
    dir: tempfile::TempDir,
    // Dropped after the directory.
    record: Record,
}

impl ExportedTree {
    /// Writes every regular file of `tree` (and every symlink that stays inside it; no
    /// submodule) into a new scratch directory, recorded in `repo`'s common directory.
    pub fn new(
        repo: &Repository,
        tree: &Tree<'_>,
        kind: ExportKind,
    ) -> Result<ExportedTree, GitError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            GitError::Command(format!("the tree could not be copied out ({what}): {e}"))
        };
        let prefix = match kind {
            ExportKind::Files => leftover::PROBE_PREFIX,
            ExportKind::WithGit => leftover::PREFIX,
        };
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(|e| fail("no scratch directory", &e))?;
        let root = dir.path().join("tree");
        // Recorded before anything runs in it, so a kill at any point leaves a record.
        let record = Record::create(repo.commondir(), dir.path(), &root)
            .map_err(|e| fail("cannot record the scratch directory", &e))?;
        std::fs::create_dir(&root)
            .and_then(|()| std::fs::create_dir(dir.path().join("work")))
            .map_err(|e| fail("no scratch directory", &e))?;
        write_tree(repo, tree, &root).map_err(|e| fail("writing its files", &e))?;
        if kind == ExportKind::WithGit {
            commit_fresh(repo, &root).map_err(|e| fail("its own repository", &e))?;
        }
        Ok(ExportedTree { dir, record })
    }

    /// The copy of the tree (where commands run).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("tree")
    }

    /// A directory beside the tree for the caller's own files (probes, results).
    pub fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The record of the copy: give it the process groups of what runs in it.
    pub fn record(&self) -> &Record {
        &self.record
    }
}

/// Runs `command` in the box on a scratch copy of `tree` with a repository of its own, for
/// at most `timeout`, keeping `tail_lines` of its output; returns the copy (to read what
/// the command left in it; `None` when it could not be made) and the outcome.
pub fn run_boxed(
    repo: &Repository,
    tree: &Tree<'_>,
    command: &str,
    timeout: std::time::Duration,
    tail_lines: usize,
    policy: &sandbox::Policy,
) -> (Option<ExportedTree>, sandbox::CommandOutcome) {
    let copy = match ExportedTree::new(repo, tree, ExportKind::WithGit) {
        Ok(c) => c,
        Err(e) => {
            return (
                None,
                sandbox::CommandOutcome::not_run(command, e.to_string()),
            )
        }
    };
    let root = copy.root();
    let mut job = sandbox::Job::new(command, &root, timeout);
    job.tail_lines = tail_lines;
    job.read = project_reads(repo);
    job.private_in = Some(copy.dir.path().to_path_buf());
    let outcome = sandbox::run(&job, policy, &|g| copy.record().add_group(g));
    (Some(copy), outcome)
}

/// What of the user's repository the box may read: the project's virtualenv (`.venv`,
/// `venv`), where its test runner and dependencies are installed; nothing else of the work
/// tree or of `.git`.
pub fn project_reads(repo: &Repository) -> Vec<PathBuf> {
    repo.workdir()
        .map(|w| {
            [".venv", "venv"]
                .iter()
                .map(|v| w.join(v))
                .filter(|p| p.join("bin").is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the files of `tree` under `root`.
fn write_tree(repo: &Repository, tree: &Tree<'_>, root: &Path) -> Result<(), String> {
    let mut failed = None;
    let mut bytes = 0u64;
    tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        let (Ok(name), Some(ObjectType::Blob)) = (entry.name(), entry.kind()) else {
            return TreeWalkResult::Ok;
        };
        let mode = entry.filemode();
        let relative = Path::new(parent).join(name);
        let path = root.join(&relative);
        let written = repo
            .find_blob(entry.id())
            .map_err(|e| e.to_string())
            .and_then(|b| {
                bytes += b.size() as u64;
                if bytes > MAX_EXPORT_BYTES {
                    return Err(format!(
                        "the tree holds more than {} MiB",
                        MAX_EXPORT_BYTES / (1024 * 1024)
                    ));
                }
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
                }
                if mode == 0o120000 {
                    write_link(&relative, &path, b.content());
                    return Ok(());
                }
                std::fs::write(&path, b.content())
                    .map_err(|e| format!("{}: {e}", relative.display()))?;
                set_executable(&path, mode == 0o100755);
                Ok(())
            });
        match written {
            Ok(()) => TreeWalkResult::Ok,
            Err(e) => {
                failed = Some(e);
                TreeWalkResult::Abort
            }
        }
    })
    .ok();
    failed.map_or(Ok(()), Err)
}

/// Writes the symlink at `relative` (to `target`) when its target stays inside the tree;
/// one that leads out of it is left out.
fn write_link(relative: &Path, path: &Path, target: &[u8]) {
    let Ok(target) = std::str::from_utf8(target) else {
        return;
    };
    let mut depth: i64 = relative.components().count() as i64 - 1;
    for c in Path::new(target).components() {
        match c {
            Component::Normal(_) => depth += 1,
            Component::ParentDir => depth -= 1,
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return,
        }
        if depth < 0 {
            return;
        }
    }
    #[cfg(unix)]
    let _ = std::os::unix::fs::symlink(target, path);
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(unix)]
fn set_executable(path: &Path, executable: bool) {
    use std::os::unix::fs::PermissionsExt;
    if executable {
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
    }
}

#[cfg(not(unix))]
fn set_executable(_: &Path, _: bool) {}

/// Makes `root` a fresh repository of the same object format as `repo`, holding one commit
/// of its files: no config, hooks or objects of the user's.
fn commit_fresh(repo: &Repository, root: &Path) -> Result<(), String> {
    let format = repo
        .config()
        .and_then(|c| c.get_string("extensions.objectformat"))
        .unwrap_or_else(|_| "sha1".into());
    let git = |args: &[&str]| -> Result<(), String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(root)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", root)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "git triad")
            .env("GIT_AUTHOR_EMAIL", "triad@localhost")
            .env("GIT_COMMITTER_NAME", "git triad")
            .env("GIT_COMMITTER_EMAIL", "triad@localhost")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "git {} failed: {}",
                args.first().unwrap_or(&""),
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    git(&[
        "init",
        "--quiet",
        &format!("--object-format={format}"),
        "--template=",
    ])?;
    git(&["add", "--all", "--force"])?;
    git(&[
        "commit",
        "--quiet",
        "--no-verify",
        "--allow-empty",
        "-m",
        "the tree git triad checks",
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_has_the_files_and_a_repository_of_its_own() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init(tmp.path()).unwrap();
        let mut index = repo.index().unwrap();
        let files: [(&str, &[u8]); 2] = [("a.txt", b"one\n"), ("src/b.py", b"x = 1\n")];
        for (path, body) in files {
            let full = tmp.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, body).unwrap();
            index.add_path(Path::new(path)).unwrap();
        }
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let copy = ExportedTree::new(&repo, &tree, ExportKind::WithGit).unwrap();
        let root = copy.root();
        assert_eq!(std::fs::read(root.join("src/b.py")).unwrap(), b"x = 1\n");
        let own = Repository::open(&root).unwrap();
        assert_ne!(own.commondir(), repo.commondir());
        let head = own.head().unwrap().peel_to_tree().unwrap();
        assert_eq!(
            head.id(),
            tree.id(),
            "the same tree, committed in its own repository"
        );
        let dir = copy.dir.path().to_path_buf();
        drop(copy);
        assert!(!dir.exists());
    }

    #[test]
    fn a_symlink_out_of_the_tree_is_left_out() {
        let tmp = tempfile::tempdir().unwrap();
        for (rel, target, kept) in [
            ("a/link", "../b", true),
            ("a/link", "../../etc/passwd", false),
            ("link", "/etc/passwd", false),
        ] {
            let root = tmp.path().join(format!("t{}", rel.len() + target.len()));
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            write_link(Path::new(rel), &path, target.as_bytes());
            assert_eq!(path.symlink_metadata().is_ok(), kept, "{rel} -> {target}");
        }
    }
}
