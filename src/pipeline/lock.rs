//! One process per run: an exclusive lock on `$GIT_COMMON_DIR/triad/locks/<run-id>.lock`,
//! held while a command works on the run.
//!
//! The lock is the operating system's (`flock` on Unix), not the file's existence: a process
//! that dies, however it dies, releases it, so a killed run never leaves a stale lock behind
//! and `resume` needs no cleanup. The holder writes its pid into the file so that a second
//! process can say who holds it. Lock files are never deleted (deleting a lock file that
//! another process is about to lock lets two processes hold "the" lock at once); each is a
//! few bytes.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use git2::Repository;

/// Why a run could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the run.
    #[error("run {run_id} is being worked on by another git triad process{}", pid.map_or(String::new(), |p| format!(" (pid {p})")))]
    Held {
        /// The run.
        run_id: String,
        /// The holder, when it could be read and is alive.
        pid: Option<u32>,
    },
    /// The id cannot name a file (it was not made by `git triad run`).
    #[error("`{0}` is not a run id")]
    BadId(String),
    /// The lock file could not be created or locked.
    #[error("cannot lock run {run_id} ({}): {source}", path.display())]
    Io {
        /// The run.
        run_id: String,
        /// The lock file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// This process's hold on one run; dropping it (or dying) releases the run.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Takes the run `run_id` of `repo` for this process, or says which process has it.
    /// Never waits.
    pub fn acquire(repo: &Repository, run_id: &str) -> Result<RunLock, LockError> {
        if !valid_id(run_id) {
            return Err(LockError::BadId(crate::bounded::clip(run_id, 80)));
        }
        let dir = crate::git::paths::run_locks(repo);
        let path = crate::git::paths::run_lock(repo, run_id);
        let io = |source| LockError::Io {
            run_id: run_id.to_string(),
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(&dir).map_err(io)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(LockError::Held {
                    run_id: run_id.to_string(),
                    pid: holder(&mut file),
                })
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        // Who holds it, for the next process that asks; the lock is held either way.
        let me = format!("{}\n", std::process::id());
        let _ = file
            .set_len(0)
            .and_then(|()| file.rewind())
            .and_then(|()| file.write_all(me.as_bytes()));
        Ok(RunLock { _file: file })
    }
}

/// Whether a git triad process works on run `run_id` now, as far as this machine can tell:
/// the pid its last holder wrote into the lock file is a live git triad process. Reading
/// never takes the lock, so it never makes a process that starts the run meanwhile fail.
/// Without `/proc` nothing can be told and the answer is yes.
pub fn run_alive(repo: &Repository, run_id: &str) -> bool {
    if !valid_id(run_id) {
        return false;
    }
    let path = crate::git::paths::run_lock(repo, run_id);
    let Ok(mut file) = File::open(&path) else {
        return false;
    };
    if !cfg!(target_os = "linux") {
        return true;
    }
    let Some(pid) = holder(&mut file) else {
        return false;
    };
    // A pid handed to another program since is not the run's process.
    let comm = |p: &str| std::fs::read_to_string(format!("/proc/{p}/comm")).ok();
    let state_of = |p: u32| {
        std::fs::read_to_string(format!("/proc/{p}/stat"))
            .ok()
            .and_then(|s| s[s.rfind(')')? + 2..].chars().next())
    };
    comm(&pid.to_string()) == comm("self") && state_of(pid) != Some('Z')
}

/// The pid written by the holder, when it is a live process (the holder may not have
/// written its own yet, leaving an earlier holder's).
fn holder(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    if cfg!(target_os = "linux") && !Path::new(&format!("/proc/{pid}")).exists() {
        return None;
    }
    Some(pid)
}

/// Run ids are `YYYYMMDD-HHMMSS-xxxx`; anything that could leave the locks directory is
/// refused.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_pid_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let first = RunLock::acquire(&repo, "20260101-000000-abcd").unwrap();
        match RunLock::acquire(&repo, "20260101-000000-abcd") {
            Err(LockError::Held { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        // Another run is another lock.
        let other = RunLock::acquire(&repo, "20260101-000000-beef").unwrap();
        drop(first);
        RunLock::acquire(&repo, "20260101-000000-abcd").unwrap();
        assert!(
            run_alive(&repo, "20260101-000000-beef"),
            "held by this process"
        );
        drop(other);
        assert!(
            run_alive(&repo, "20260101-000000-beef"),
            "the pid left in the file is still this live process"
        );
        assert!(!run_alive(&repo, "20260101-000000-0000"), "never locked");
        // A holder that is gone.
        let path = repo
            .commondir()
            .join("triad/locks/20260101-000000-beef.lock");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        std::fs::write(&path, format!("{dead}\n")).unwrap();
        assert!(!run_alive(&repo, "20260101-000000-beef"));
        for bad in ["../x", "a/b", ".hidden", ""] {
            assert!(
                matches!(RunLock::acquire(&repo, bad), Err(LockError::BadId(_))),
                "{bad}"
            );
        }
    }
}
