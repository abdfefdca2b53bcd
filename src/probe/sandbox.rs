//! Where probes run: a scratch copy of the reviewed tree (regular files only: no symlink
//! can lead a probe out of it), a scratch directory beside it for the probe's own files,
//! and commands run with the verify command's rules (minimal environment, timeout, bounded
//! output, their own process group) and, where the OS allows, without network.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use git2::{ObjectType, Repository, Tree, TreeWalkMode, TreeWalkResult};

use crate::git::leftover::{self, Record};
use crate::git::worktree::{run_in, CommandOutcome};

/// Most bytes of files one scratch copy may hold: a probe needs the code, not a
/// repository's media.
const MAX_EXPORT_BYTES: u64 = 512 * 1024 * 1024;

/// A scratch copy of a tree, removed when dropped. Its record ([`leftover::Record`]) holds
/// the process groups of the probes run in it, for the cleanup after a kill.
pub(super) struct Sandbox {
    dir: tempfile::TempDir,
    // Dropped after the directory.
    record: Record,
}

impl Sandbox {
    /// Writes every regular file of `tree` into a new scratch directory (symlinks and
    /// submodules are left out). The error is a sentence for the probe's record.
    pub fn export(repo: &Repository, tree: &Tree<'_>) -> Result<Sandbox, String> {
        let dir = tempfile::Builder::new()
            .prefix(leftover::PROBE_PREFIX)
            .tempdir()
            .map_err(|e| format!("no scratch directory for probes: {e}"))?;
        let record = Record::create(repo.commondir(), dir.path(), &dir.path().join("tree"))
            .map_err(|e| format!("cannot record the scratch directory for probes: {e}"))?;
        std::fs::create_dir(dir.path().join("tree"))
            .and_then(|()| std::fs::create_dir(dir.path().join("probe")))
            .map_err(|e| format!("no scratch directory for probes: {e}"))?;
        let root = dir.path().join("tree");
        let mut failed = None;
        let mut bytes = 0u64;
        tree.walk(TreeWalkMode::PreOrder, |parent, entry| {
            let (Ok(name), Some(ObjectType::Blob)) = (entry.name(), entry.kind()) else {
                return TreeWalkResult::Ok;
            };
            let mode = entry.filemode();
            if mode == 0o120000 {
                return TreeWalkResult::Ok;
            }
            let path = root.join(parent).join(name);
            let written = repo
                .find_blob(entry.id())
                .map_err(|e| e.to_string())
                .and_then(|b| {
                    bytes += b.size() as u64;
                    if bytes > MAX_EXPORT_BYTES {
                        return Err("the reviewed tree is too large to copy for probes".to_string());
                    }
                    if let Some(p) = path.parent() {
                        std::fs::create_dir_all(p).map_err(|e| e.to_string())?;
                    }
                    std::fs::write(&path, b.content()).map_err(|e| e.to_string())?;
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
        match failed {
            Some(e) => Err(format!(
                "the reviewed tree could not be copied for probes: {e}"
            )),
            None => Ok(Sandbox { dir, record }),
        }
    }

    /// The copy of the tree (the probes' working directory).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("tree")
    }

    /// The directory for the probes' own files, outside the tree.
    pub fn scratch(&self) -> PathBuf {
        self.dir.path().join("probe")
    }

    /// Runs `command` (a shell command line) in `dir` with the verify command's rules, and
    /// without network where the OS gives a process its own network namespace.
    pub fn command(&self, dir: &Path, command: &str, timeout: Duration) -> CommandOutcome {
        let line = match no_network() {
            Some(prefix) => format!("{prefix} sh -c {}", quote(command)),
            None => command.to_string(),
        };
        let mut out = run_in(dir, &line, timeout, 400, &|group| {
            self.record.add_group(group)
        });
        out.command = command.to_string();
        out.tail = out.tail.replace(&format!("{}/", self.root().display()), "");
        out
    }
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

/// The command prefix that gives a process no network (`unshare -rn`: a user and a network
/// namespace of its own), when this system allows it; checked once per process.
fn no_network() -> Option<&'static str> {
    static PREFIX: OnceLock<Option<&'static str>> = OnceLock::new();
    *PREFIX.get_or_init(|| {
        let works = std::process::Command::new("unshare")
            .args(["-rn", "true"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        works.then_some("unshare -rn")
    })
}

/// `text` as one single-quoted shell word.
pub(super) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
