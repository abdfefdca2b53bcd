//! Temporary `git worktree`s for running the verify command without touching the user's tree.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::GitError;

/// A detached worktree that removes itself when dropped.
pub struct TempWorktree {
    repo_dir: PathBuf,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TempWorktree {
    /// Checks out `commit` into a new temporary worktree of the repository at `repo_dir`.
    pub fn add(repo_dir: &Path, commit: &str) -> Result<TempWorktree, GitError> {
        let dir = tempfile::Builder::new()
            .prefix("git-triad-verify-")
            .tempdir()
            .map_err(|e| GitError::Command(format!("cannot create a temporary directory: {e}")))?;
        let path = dir.path().join("wt");
        let out = Command::new("git")
            .arg("-C")
            .arg(repo_dir)
            .args(["worktree", "add", "--detach", "--quiet"])
            .arg(&path)
            .arg(commit)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| GitError::Command(format!("cannot run git: {e}")))?;
        if !out.status.success() {
            return Err(GitError::Command(format!(
                "git worktree add failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        Ok(TempWorktree {
            repo_dir: repo_dir.to_path_buf(),
            path,
            _dir: dir,
        })
    }

    /// Where the files are.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempWorktree {
    fn drop(&mut self) {
        let _ = Command::new("git")
            .arg("-C")
            .arg(&self.repo_dir)
            .args(["worktree", "remove", "--force"])
            .arg(&self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("git")
            .arg("-C")
            .arg(&self.repo_dir)
            .args(["worktree", "prune"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// What a command did.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct CommandOutcome {
    /// The command line.
    pub command: String,
    /// Exit code; `None` if killed (timeout or signal).
    pub exit_code: Option<i32>,
    /// Whether it was killed for taking too long.
    pub timed_out: bool,
    /// The last lines of stdout+stderr.
    pub tail: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// Runs `sh -c command` in `dir` with a timeout, keeping the last `tail_lines` of output.
pub fn run_command(
    dir: &Path,
    command: &str,
    timeout: Duration,
    tail_lines: usize,
) -> CommandOutcome {
    let started = Instant::now();
    let log = match tempfile::NamedTempFile::new() {
        Ok(f) => f,
        Err(e) => {
            return CommandOutcome {
                command: command.into(),
                exit_code: None,
                timed_out: false,
                tail: format!("cannot create a log file: {e}"),
                duration_ms: 0,
            }
        }
    };
    let spawn = (|| {
        let out = log.reopen()?;
        let err = log.reopen()?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Own process group, so a timeout kills the command's children too.
            cmd.process_group(0);
        }
        cmd.spawn()
    })();
    let mut child = match spawn {
        Ok(c) => c,
        Err(e) => {
            return CommandOutcome {
                command: command.into(),
                exit_code: None,
                timed_out: false,
                tail: format!("cannot start `sh -c {command}`: {e}"),
                duration_ms: 0,
            }
        }
    };
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                #[cfg(unix)]
                if let Ok(pgid) = i32::try_from(child.id()) {
                    // SAFETY: kill(2) with a negative pid signals exactly the process group
                    // we created for this child (process_group(0) above); no memory is shared.
                    unsafe {
                        libc::kill(-pgid, libc::SIGKILL);
                    }
                }
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let text = std::fs::read(log.path())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(tail_lines)..].join("\n");
    CommandOutcome {
        command: command.into(),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        tail,
        duration_ms: started.elapsed().as_millis() as u64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_report_exit_tail_and_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let o = run_command(
            dir.path(),
            "echo one; echo two >&2; exit 3",
            Duration::from_secs(5),
            1,
        );
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.tail, "two");
        let o = run_command(dir.path(), "sleep 5", Duration::from_millis(200), 5);
        assert!(o.timed_out);
        assert!(o.duration_ms < 3000);
    }
}
