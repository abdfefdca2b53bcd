//! Temporary `git worktree`s for running the verify command without touching the user's tree,
//! and the commands run in them, which never outlive git triad ([`crate::process`]; what a
//! killed run leaves is cleaned by [`super::leftover`]).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::leftover::{self, Record};
use super::GitError;
use crate::process::{self, Group};

/// A detached worktree that removes itself when dropped. Its record
/// ([`leftover::Record`]) says it is in use for as long as it exists.
pub struct TempWorktree {
    repo_dir: PathBuf,
    path: PathBuf,
    _dir: tempfile::TempDir,
    // Dropped last: the worktree and its directory are gone by then.
    record: Record,
}

impl TempWorktree {
    /// Checks out `commit` into a new temporary worktree of the repository at `repo_dir`.
    pub fn add(repo_dir: &Path, commit: &str) -> Result<TempWorktree, GitError> {
        let dir = tempfile::Builder::new()
            .prefix(leftover::PREFIX)
            .tempdir()
            .map_err(|e| GitError::Command(format!("cannot create a temporary directory: {e}")))?;
        let path = dir.path().join("wt");
        // Recorded before it exists, so a kill at any point leaves a record to clean by.
        let common = git2::Repository::open(repo_dir)
            .map(|r| r.commondir().to_path_buf())
            .map_err(|e| GitError::Command(format!("cannot open the repository: {e}")))?;
        let record = Record::create(&common, dir.path(), &path)
            .map_err(|e| GitError::Command(format!("cannot record the temporary worktree: {e}")))?;
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
            record,
        })
    }

    /// Where the files are.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `command` in the worktree as [`run_command`] does, its process group recorded
    /// with the worktree so that a later cleanup can kill what a killed run left running.
    pub fn run(&self, command: &str, timeout: Duration, tail_lines: usize) -> CommandOutcome {
        run_in(&self.path, command, timeout, tail_lines, &|group| {
            self.record.add_group(group)
        })
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

/// Environment variables the verify command gets, when they are set: enough for a build or a
/// test run to find programs (rustup's toolchain included), a home, a temporary directory, a
/// locale and a terminal. (`LC_*` are passed too.) Whatever else the user needs is written
/// into the command itself.
pub const PASSED_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "TMPDIR",
    "LANG",
    "TERM",
    "USER",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "CARGO_HOME",
];

/// Most bytes of the command's output kept while it runs; older output is dropped.
pub const KEPT_OUTPUT_BYTES: usize = 128 * 1024;

/// The environment for a command that runs code a model wrote: the [`PASSED_ENV`] names and
/// `LC_*` from `vars`, and never a name that looks like it holds a secret (`*KEY*`,
/// `*TOKEN*`, `*SECRET*`, `*PASSWORD*`, `*CREDENTIAL*`), whatever the list says.
pub fn command_env(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(name, _)| {
            let Some(name) = name.to_str() else {
                return false;
            };
            let upper = name.to_ascii_uppercase();
            let secret = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL"]
                .iter()
                .any(|s| upper.contains(s));
            !secret && (PASSED_ENV.contains(&name) || name.starts_with("LC_"))
        })
        .collect()
}

/// The last [`KEPT_OUTPUT_BYTES`] of a command's output, filled as it arrives.
#[derive(Default)]
struct Tail {
    bytes: Vec<u8>,
    dropped: u64,
}

impl Tail {
    fn push(&mut self, chunk: &[u8]) {
        self.bytes.extend_from_slice(chunk);
        // Trim in batches so a stream of small chunks costs amortized constant time.
        if self.bytes.len() > 2 * KEPT_OUTPUT_BYTES {
            let cut = self.bytes.len() - KEPT_OUTPUT_BYTES;
            self.bytes.drain(..cut);
            self.dropped += cut as u64;
        }
    }

    /// The last `lines` lines of at most [`KEPT_OUTPUT_BYTES`], saying when older output
    /// was dropped.
    fn render(&self, lines: usize) -> String {
        let start = self.bytes.len().saturating_sub(KEPT_OUTPUT_BYTES);
        let dropped = self.dropped + start as u64;
        let text = String::from_utf8_lossy(&self.bytes[start..]);
        let all: Vec<&str> = text.lines().collect();
        let mut kept = all[all.len().saturating_sub(lines)..].join("\n");
        if dropped > 0 && all.len() <= lines {
            kept = format!("… ({dropped} earlier bytes of output not kept)\n{kept}");
        }
        kept
    }
}

/// Runs `sh -c command` in `dir` with a timeout, keeping the last `tail_lines` of output.
///
/// The command runs code a model wrote, so it gets a minimal environment
/// ([`command_env`]: no API key or token of the user's), its output is read as it comes and
/// only the last [`KEPT_OUTPUT_BYTES`] are held, and whatever it started is killed with it
/// (its own process group) when it exits or times out.
pub fn run_command(
    dir: &Path,
    command: &str,
    timeout: Duration,
    tail_lines: usize,
) -> CommandOutcome {
    run_in(dir, command, timeout, tail_lines, &|_| {})
}

/// [`run_command`], telling `started_in` the command's process group once it runs (to record
/// it: [`super::leftover::Record::add_group`]).
pub fn run_in(
    dir: &Path,
    command: &str,
    timeout: Duration,
    tail_lines: usize,
    started_in: &dyn Fn(Group),
) -> CommandOutcome {
    let started = Instant::now();
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .env_clear()
        .envs(command_env(std::env::vars_os()))
        .stdin(Stdio::null());
    let mut streams: Vec<Box<dyn Read + Send>> = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Own process group, so a timeout kills the command's children too.
        cmd.process_group(0);
        process::die_with_parent(&mut cmd);
        // One pipe for both streams keeps their lines in the order they were written.
        match shared_pipe() {
            Ok((read, out, err)) => {
                cmd.stdout(out).stderr(err);
                streams.push(Box::new(read));
            }
            Err(e) => return not_started(command, &e),
        }
    }
    #[cfg(not(unix))]
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let spawned = cmd.spawn();
    // Our copies of the pipe's write end must go, or the reader never sees its end.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return not_started(command, &e),
    };
    // Killed with git triad, whatever kills it; recorded for a cleanup after a SIGKILL.
    let group = Group::of_child(child.id());
    let _registered = group.as_ref().map(process::register);
    if let Some(g) = group {
        started_in(g);
    }
    if let Some(out) = child.stdout.take() {
        streams.push(Box::new(out));
    }
    if let Some(err) = child.stderr.take() {
        streams.push(Box::new(err));
    }
    let tail = Arc::new(Mutex::new(Tail::default()));
    let (done, finished) = mpsc::channel::<()>();
    let mut readers = 0;
    for mut stream in streams {
        let (tail, done) = (Arc::clone(&tail), done.clone());
        readers += 1;
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            while let Ok(n @ 1..) = stream.read(&mut buf) {
                if let Ok(mut t) = tail.lock() {
                    t.push(&buf[..n]);
                }
            }
            let _ = done.send(());
        });
    }
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    // Nothing the command started outlives it (the worktree is about to go away).
    kill_group(&child);
    // The pipes close when the last process holding them ends; one that left the process
    // group may keep them open, so the readers get a short grace and no more.
    let grace = Instant::now() + Duration::from_secs(2);
    for _ in 0..readers {
        if finished
            .recv_timeout(grace.saturating_duration_since(Instant::now()))
            .is_err()
        {
            break;
        }
    }
    let tail = tail
        .lock()
        .map(|t| t.render(tail_lines))
        .unwrap_or_default();
    CommandOutcome {
        command: command.into(),
        exit_code: status.and_then(|s| s.code()),
        timed_out,
        tail,
        duration_ms: started.elapsed().as_millis() as u64,
    }
}

/// The outcome of a command that could not be started.
fn not_started(command: &str, e: &std::io::Error) -> CommandOutcome {
    CommandOutcome {
        command: command.into(),
        exit_code: None,
        timed_out: false,
        tail: format!("cannot start `sh -c {command}`: {e}"),
        duration_ms: 0,
    }
}

/// A pipe whose write end is both the child's stdout and its stderr; every end is
/// close-on-exec in this process, so no other child inherits it.
#[cfg(unix)]
fn shared_pipe() -> std::io::Result<(std::fs::File, Stdio, Stdio)> {
    use std::os::fd::FromRawFd;
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: pipe(2) writes two new descriptors into `fds`, which we own from here on.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    for fd in fds {
        // SAFETY: fcntl(2) on descriptors we own; it touches no memory.
        unsafe {
            libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    // SAFETY: both descriptors were just created by pipe(2) and are owned by nothing else.
    let (read, write) = unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    };
    // try_clone duplicates with close-on-exec set.
    let write2 = write.try_clone()?;
    Ok((read, Stdio::from(write), Stdio::from(write2)))
}

/// Kills the process group the command leads (no-op where there are none).
fn kill_group(child: &std::process::Child) {
    #[cfg(unix)]
    if let Ok(pgid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) with a negative pid signals exactly the process group we created
        // for this child (process_group(0) above); no memory is shared.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child;
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

    #[test]
    fn secrets_never_reach_the_command_environment() {
        let vars = [
            ("PATH", "/bin"),
            ("HOME", "/h"),
            ("LC_ALL", "C"),
            ("RUSTUP_HOME", "/r"),
            ("OPENAI_API_KEY", "sk-1"),
            ("LC_API_KEY", "sk-2"),
            ("GITHUB_TOKEN", "t"),
            ("AWS_SECRET_ACCESS_KEY", "s"),
            ("PGPASSWORD", "p"),
            ("GIT_DIR", "/elsewhere"),
            ("SSH_AUTH_SOCK", "/tmp/agent"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let kept: Vec<String> = command_env(vars)
            .into_iter()
            .map(|(k, _)| k.into_string().unwrap())
            .collect();
        assert_eq!(kept, ["PATH", "HOME", "LC_ALL", "RUSTUP_HOME"]);
    }

    #[test]
    fn output_is_streamed_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let o = run_command(
            dir.path(),
            "yes 0123456789 | head -c 5000000; echo; echo last line >&2",
            Duration::from_secs(30),
            3,
        );
        assert_eq!(o.exit_code, Some(0));
        assert!(
            o.tail.ends_with("last line"),
            "{}",
            &o.tail[o.tail.len() - 50..]
        );
        assert!(o.tail.len() < 100, "{}", o.tail.len());
        let o = run_command(
            dir.path(),
            "head -c 1000000 /dev/zero | tr '\\0' x",
            Duration::from_secs(30),
            3,
        );
        assert!(o.tail.len() <= KEPT_OUTPUT_BYTES + 100, "{}", o.tail.len());
        assert!(o.tail.starts_with("… ("), "{}", &o.tail[..60]);
        // Whatever the command left running is killed with it.
        let started = Instant::now();
        let o = run_command(
            dir.path(),
            "sleep 30 & echo started",
            Duration::from_secs(30),
            3,
        );
        assert_eq!(o.tail, "started");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
