//! A tree written out for the box: a scratch copy of one commit's files where the verify
//! and format commands, probes and examples run, never the user's repository or a worktree
//! of it.
//!
//! A linked worktree's `.git` points into the user's repository, so a command run there can
//! rewrite its refs, plant hooks that run on the user's next checkout, or read its config.
//! A scratch copy has none of that: with [`ExportKind::WithGit`] it gets a fresh repository
//! of its own holding one commit of the tree (so `git status` and `git diff` work and show
//! a clean tree), whose objects, refs, hooks and config are not the user's.
//!
//! Nothing the tree carries runs while the copy is made. A tree is anyone's: a commit built
//! with `git mktree` may hold `.git/config` (with a `core.fsmonitor` command) and
//! `.git/hooks/post-commit`, which git itself refuses to check out. The copy refuses every
//! name git refuses ([`crate::edit::check_path`]: `.git` in any case, `git~1`, trailing dots
//! and spaces, the code points HFS+ ignores), recreates a link only when it resolves inside
//! the copy (following the tree's own links, so `d/up -> ..` and `x -> d/up/../..` are
//! judged where they really lead), and builds its repository with libgit2, which runs no
//! hook, monitor or filter. What was left out is said ([`ExportedTree::left_out`]). Files
//! git triad writes into or reads from a copy after a command ran there never go through
//! a link the command made ([`write_inside`], [`read_inside`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

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
    /// Paths of the tree left out, each with why.
    left_out: Vec<String>,
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
        let written = write_tree(repo, tree, &root).map_err(|e| fail("writing its files", &e))?;
        if kind == ExportKind::WithGit {
            commit_fresh(repo, &root, &written.entries)
                .map_err(|e| fail("its own repository", &e))?;
        }
        Ok(ExportedTree {
            dir,
            left_out: written.left_out,
            record,
        })
    }

    /// The paths of the tree left out of the copy, each with why (`.git/config: a name git
    /// refuses to check out`).
    pub fn left_out(&self) -> &[String] {
        &self.left_out
    }

    /// One line saying what was left out, for a command's output (`None` when nothing was).
    pub fn left_out_line(&self) -> Option<String> {
        (!self.left_out.is_empty()).then(|| {
            format!(
                "git triad left out of the scratch copy (never written, never run): {}",
                self.left_out.join("; ")
            )
        })
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
    let mut outcome = sandbox::run(&job, policy, &|g| copy.record().add_group(g));
    if let Some(line) = copy.left_out_line() {
        outcome.tail = format!("{line}\n{}", outcome.tail);
    }
    outcome.left_out = copy.left_out().to_vec();
    (Some(copy), outcome)
}

/// What of the user's repository the box may read: the project's virtualenv (`.venv`,
/// `venv`), where its test runner and dependencies are installed; nothing else of the work
/// tree or of `.git`. A virtualenv that is a link (a clone may commit `.venv -> ~`) is not
/// one.
pub fn project_reads(repo: &Repository) -> Vec<PathBuf> {
    repo.workdir()
        .map(|w| {
            [".venv", "venv"]
                .iter()
                .map(|v| w.join(v))
                .filter(|p| crate::fsguard::inside_repo(w, p.strip_prefix(w).unwrap_or(p)).is_ok())
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
                .filter(|p| p.join("bin").is_dir() && p.join("pyvenv.cfg").is_file())
                .collect()
        })
        .unwrap_or_default()
}

/// Writes `bytes` to the file at `rel` under `root` (a directory a boxed command may have
/// written), never through a link: every component is checked and the file is opened
/// without following one (a link there is refused, never written through).
pub fn write_inside(root: &Path, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let path = crate::fsguard::inside_repo(root, rel).map_err(|e| e.into_io())?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
        // A directory may have been made a link since the check.
        crate::fsguard::inside_repo(root, rel).map_err(|e| e.into_io())?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(&path)?.write_all(bytes)
}

/// The bytes of the file at `rel` under `root`, never read through a link (and never a
/// FIFO or device a command left there).
pub fn read_inside(root: &Path, rel: &str) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let path = crate::fsguard::inside_repo(root, rel).map_err(|e| e.into_io())?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let mut file = options.open(&path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What writing a tree out did: the entries written (for the copy's own repository) and
/// the paths left out, each with why.
struct Written {
    /// (path, mode, object id) of every entry in the copy.
    entries: Vec<(String, u32, git2::Oid)>,
    left_out: Vec<String>,
}

/// Writes the files of `tree` under `root`: regular files first, then the links that
/// resolve inside the copy; names git refuses and links that lead out are left out.
fn write_tree(repo: &Repository, tree: &Tree<'_>, root: &Path) -> Result<Written, String> {
    let mut failed = None;
    let mut bytes = 0u64;
    let mut written = Written {
        entries: Vec::new(),
        left_out: Vec::new(),
    };
    let mut links: BTreeMap<String, (String, git2::Oid)> = BTreeMap::new();
    tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
        let Ok(name) = entry.name() else {
            return TreeWalkResult::Ok;
        };
        let relative = format!("{parent}{name}");
        if let Err(e) = crate::edit::check_path(&relative) {
            written.left_out.push(format!(
                "{}: {}",
                crate::edit::path::shown(&relative),
                e.why()
            ));
            return TreeWalkResult::Skip;
        }
        let mode = entry.filemode() as u32;
        match entry.kind() {
            Some(ObjectType::Commit) => {
                written.entries.push((relative, mode, entry.id()));
                return TreeWalkResult::Ok;
            }
            Some(ObjectType::Blob) => {}
            _ => return TreeWalkResult::Ok,
        }
        let path = root.join(&relative);
        let done = repo
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
                if mode == 0o120000 {
                    let target = String::from_utf8_lossy(b.content()).into_owned();
                    links.insert(relative.clone(), (target, entry.id()));
                    return Ok(());
                }
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
                }
                std::fs::write(&path, b.content()).map_err(|e| format!("{relative}: {e}"))?;
                set_executable(&path, mode == 0o100755);
                written.entries.push((relative.clone(), mode, entry.id()));
                Ok(())
            });
        match done {
            Ok(()) => TreeWalkResult::Ok,
            Err(e) => {
                failed = Some(e);
                TreeWalkResult::Abort
            }
        }
    })
    .ok();
    if let Some(e) = failed {
        return Err(e);
    }
    let targets: BTreeMap<&str, &str> = links
        .iter()
        .map(|(p, (t, _))| (p.as_str(), t.as_str()))
        .collect();
    for (relative, (target, id)) in &links {
        if resolves_inside(relative, &targets).is_none() {
            written.left_out.push(format!(
                "{}: a link that leads out of the copy (to `{}`)",
                crate::edit::path::shown(relative),
                crate::edit::path::shown(target)
            ));
            continue;
        }
        let path = root.join(relative);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
        }
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, &path).map_err(|e| format!("{relative}: {e}"))?;
        written.entries.push((relative.clone(), 0o120000, *id));
    }
    Ok(written)
}

/// Where the link at `relative` leads, as a path inside the tree (`None`: out of it, or
/// through too many links), following the tree's own `links` (path → target) on the way.
fn resolves_inside(relative: &str, links: &BTreeMap<&str, &str>) -> Option<Vec<String>> {
    let mut at: Vec<String> = relative.split('/').map(str::to_string).collect();
    at.pop();
    let target = links.get(relative)?;
    let mut hops = 0;
    follow(&mut at, target, links, &mut hops)?;
    Some(at)
}

/// Walks `target` (a link's text) from the directory `at`, resolving the tree's links met
/// on the way; `None` when it leaves the tree.
fn follow(
    at: &mut Vec<String>,
    target: &str,
    links: &BTreeMap<&str, &str>,
    hops: &mut u32,
) -> Option<()> {
    for c in Path::new(target).components() {
        match c {
            Component::RootDir | Component::Prefix(_) => return None,
            Component::CurDir => {}
            Component::ParentDir => {
                at.pop()?;
            }
            Component::Normal(part) => {
                at.push(part.to_string_lossy().into_owned());
                let here = at.join("/");
                if let Some(next) = links.get(here.as_str()) {
                    *hops += 1;
                    if *hops > 40 {
                        return None;
                    }
                    at.pop();
                    follow(at, next, links, hops)?;
                }
            }
        }
    }
    Some(())
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
/// of what was written there (`entries`): built with libgit2, so nothing of the tree (no
/// config, hook, monitor or filter) runs, and no config, hook or object of the user's is
/// in it.
fn commit_fresh(
    repo: &Repository,
    root: &Path,
    entries: &[(String, u32, git2::Oid)],
) -> Result<(), String> {
    let e = |e: git2::Error| e.message().to_string();
    let mut options = git2::RepositoryInitOptions::new();
    options
        .object_format(repo.object_format())
        .no_reinit(true)
        .external_template(false)
        .initial_head("main");
    let own = Repository::init_opts(root, &options).map_err(e)?;
    let (from, to) = (repo.odb().map_err(e)?, own.odb().map_err(e)?);
    let mut index = own.index().map_err(e)?;
    for (path, mode, id) in entries {
        if *mode != 0o160000 {
            let object = from.read(*id).map_err(e)?;
            to.write(object.kind(), object.data()).map_err(e)?;
        }
        index
            .add(&git2::IndexEntry {
                ctime: git2::IndexTime::new(0, 0),
                mtime: git2::IndexTime::new(0, 0),
                dev: 0,
                ino: 0,
                mode: *mode,
                uid: 0,
                gid: 0,
                file_size: 0,
                id: *id,
                flags: 0,
                flags_extended: 0,
                path: path.as_bytes().to_vec(),
            })
            .map_err(e)?;
    }
    index.write().map_err(e)?;
    let tree_id = index.write_tree().map_err(e)?;
    let tree = own.find_tree(tree_id).map_err(e)?;
    let who =
        git2::Signature::new("git triad", "triad@localhost", &git2::Time::new(0, 0)).map_err(e)?;
    own.commit(
        Some("HEAD"),
        &who,
        &who,
        "the tree git triad checks",
        &tree,
        &[],
    )
    .map_err(e)?;
    Ok(())
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
    fn a_link_is_judged_where_it_really_leads() {
        let links: BTreeMap<&str, &str> = [
            ("a/link", "../b"),
            ("a/out", "../../etc/passwd"),
            ("abs", "/etc/passwd"),
            ("d/up", ".."),
            ("x", "d/up/../.."),
            ("y", "d/up/d/up/b"),
            ("loop", "loop"),
        ]
        .into_iter()
        .collect();
        for (link, inside) in [
            ("a/link", true),
            ("a/out", false),
            ("abs", false),
            ("d/up", true),
            ("x", false),
            ("y", true),
            ("loop", false),
        ] {
            assert_eq!(resolves_inside(link, &links).is_some(), inside, "{link}");
        }
    }

    #[test]
    fn names_git_refuses_are_left_out_and_said() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Repository::init(tmp.path()).unwrap();
        let blob = repo
            .blob(b"[core]\n\tfsmonitor = touch /tmp/pwned\n")
            .unwrap();
        // libgit2's tree builder refuses these names, as git does: the tree is written
        // raw, as `git mktree` would.
        let raw = |entries: &[(&str, &str, git2::Oid)]| {
            let mut bytes = Vec::new();
            for (mode, name, id) in entries {
                bytes.extend_from_slice(format!("{mode} {name}\0").as_bytes());
                bytes.extend_from_slice(id.as_bytes());
            }
            repo.odb().unwrap().write(ObjectType::Tree, &bytes).unwrap()
        };
        let dotgit = raw(&[("100644", "config", blob)]);
        let ok = repo.blob(b"x = 1\n").unwrap();
        let top = raw(&[
            ("40000", ".git", dotgit),
            ("40000", "GIT~1", dotgit),
            ("100644", "a.py", ok),
        ]);
        let tree = repo.find_tree(top).unwrap();
        let copy = ExportedTree::new(&repo, &tree, ExportKind::WithGit).unwrap();
        let root = copy.root();
        assert!(root.join("a.py").is_file());
        assert!(!root.join("GIT~1").exists());
        let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
        assert!(!config.contains("fsmonitor"), "{config}");
        assert_eq!(copy.left_out().len(), 2, "{:?}", copy.left_out());
        assert!(copy.left_out_line().unwrap().contains(".git"));
        let own = Repository::open(&root).unwrap();
        let files: Vec<String> = own
            .index()
            .unwrap()
            .iter()
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        assert_eq!(files, ["a.py"]);
    }

    #[test]
    fn git_triad_never_writes_or_reads_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), tmp.path().join("tests")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), tmp.path().join("f")).unwrap();
        assert!(write_inside(tmp.path(), "tests/p.rs", b"x").is_err());
        assert!(!outside.path().join("p.rs").exists());
        assert!(read_inside(tmp.path(), "f").is_err());
        assert!(write_inside(tmp.path(), "f", b"mine").is_err());
        assert_eq!(std::fs::read(outside.path().join("secret")).unwrap(), b"s");
        write_inside(tmp.path(), "g", b"mine").unwrap();
        assert_eq!(read_inside(tmp.path(), "g").unwrap(), b"mine");
    }
}
