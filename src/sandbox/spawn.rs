//! Starting a command and seeing it through: `sh -c` in its own process group with the
//! child's set-up, its output streamed and bounded, its totals watched, its timeout, and
//! nothing it started left running after.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::fd::{pipe, received_fd, set_nonblocking};
use super::plan::Setup;
use super::totals;
use super::{env, CommandOutcome, Job, Limits};
use crate::process::{self, Group};

/// Most bytes of the command's output kept while it runs; older output is dropped.
pub const KEPT_OUTPUT_BYTES: usize = 128 * 1024;

/// Runs `job` with none of the box's layers: git triad's scrubbed environment and the
/// caller's directory only. For measuring what the box costs (`benches/`), never for code a
/// model wrote.
pub fn run_bare(job: &Job<'_>) -> CommandOutcome {
    let vars: Vec<(String, String)> = env::command_env(std::env::vars_os())
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .chain(job.env.iter().cloned())
        .collect();
    execute(job, &vars, None, None, None, &|_| {}).outcome
}

/// What the watch of a running box needs.
pub(super) struct WatchPlan<'a> {
    pub(super) limits: &'a Limits,
    /// Whether memory is watched here (no control group limits it).
    pub(super) memory: bool,
    /// The directories whose growth counts toward the disk total.
    pub(super) dirs: Vec<std::path::PathBuf>,
    /// Where the child hands over its tmpfs.
    pub(super) share: Option<&'a OwnedFd>,
}

/// What [`execute`] saw of a command beyond its outcome.
pub(super) struct Executed {
    pub(super) outcome: CommandOutcome,
    /// The signal that ended it, if one did.
    pub(super) signal: Option<i32>,
    /// The total the watch stopped it for, if it did.
    pub(super) stopped: Option<String>,
    /// Most of its processes seen at once.
    pub(super) peak: usize,
    /// The step of the box's set-up that failed, if one did, and which part of it.
    #[cfg(target_os = "linux")]
    pub(super) failed_step: Option<super::child::Step>,
    #[cfg(target_os = "linux")]
    pub(super) failed_part: Option<usize>,
}

/// Starts `sh -c command` in `job.dir` with `vars` and, with a `setup`, the box's layers
/// (a failing step is read from `report`); streams its output, watches its totals
/// (`watch`), kills it (and all it started) at its timeout.
pub(super) fn execute(
    job: &Job<'_>,
    vars: &[(String, String)],
    setup: Option<Setup>,
    report: Option<&(OwnedFd, OwnedFd)>,
    watch: Option<WatchPlan<'_>>,
    started_in: &dyn Fn(Group),
) -> Executed {
    let started = Instant::now();
    let command = job.command;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(job.dir)
        .env_clear()
        .envs(vars.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    let mut streams: Vec<Box<dyn Read + Send>> = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Own process group, so a timeout kills the command's children too.
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        match setup {
            // SAFETY: `apply` makes only async-signal-safe calls on data prepared before
            // the fork; the descriptors it names (`report`, the ruleset) outlive the spawn.
            Some(setup) => unsafe {
                cmd.pre_exec(move || setup.apply());
            },
            None => process::die_with_parent(&mut cmd),
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = setup;
            process::die_with_parent(&mut cmd);
        }
        // One pipe for both streams keeps their lines in the order they were written.
        match shared_pipe() {
            Ok((read, out, err)) => {
                cmd.stdout(out).stderr(err);
                streams.push(Box::new(read));
            }
            Err(e) => return not_started(command, &e, None),
        }
    }
    #[cfg(not(unix))]
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let spawned = cmd.spawn();
    // Our copies of the pipe's write end must go, or the reader never sees its end.
    drop(cmd);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return not_started(command, &e, report),
    };
    // Killed with git triad, whatever kills it; recorded for a cleanup after a SIGKILL.
    let group = Group::of_child(child.id());
    let _registered = group.as_ref().map(process::register);
    if let Some(g) = group {
        started_in(g);
    }
    let mut watch = watch.map(|w| {
        let mut watch = totals::Watch::new(child.id() as i32, w.limits, w.memory, w.dirs);
        watch.tmpfs = w.share.and_then(received_fd);
        (watch, w.limits)
    });
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
    let mut stopped = None;
    let mut wait = Duration::from_millis(1);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) if started.elapsed() >= job.timeout => {
                timed_out = true;
                kill_group(&child);
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => {
                if let Some(stop) = watch.as_mut().and_then(|(w, l)| w.look(l)) {
                    stopped = Some(stop);
                    kill_group(&child);
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_millis(20));
            }
            Err(_) => break None,
        }
    };
    // Nothing the command started outlives it (its directory is about to go away).
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
        .map(|t| t.render(job.tail_lines))
        .unwrap_or_default();
    let signal = {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            status.and_then(|s| s.signal())
        }
        #[cfg(not(unix))]
        None::<i32>
    };
    Executed {
        outcome: CommandOutcome {
            command: command.into(),
            exit_code: status.and_then(|s| s.code()),
            timed_out,
            tail,
            duration_ms: started.elapsed().as_millis() as u64,
            layers: None,
            stopped_by: None,
            left_out: Vec::new(),
        },
        signal,
        stopped,
        peak: watch.map_or(0, |(w, _)| w.peak),
        #[cfg(target_os = "linux")]
        failed_step: None,
        #[cfg(target_os = "linux")]
        failed_part: None,
    }
}

/// What a command that could not be started did: when the box's set-up failed (reported
/// on `report`), the step and why.
fn not_started(command: &str, e: &std::io::Error, report: Option<&(OwnedFd, OwnedFd)>) -> Executed {
    #[cfg(target_os = "linux")]
    const BYTES: usize = super::child::REPORT_BYTES;
    #[cfg(not(target_os = "linux"))]
    const BYTES: usize = 9;
    let failed = report.and_then(|(read, _)| {
        let mut buf = [0u8; BYTES];
        let mut f = std::fs::File::from(read.try_clone().ok()?);
        set_nonblocking(&f);
        f.read_exact(&mut buf).ok()?;
        let part = u32::from_ne_bytes([buf[5], buf[6], buf[7], buf[8]]) as usize;
        Some((buf[0], part))
    });
    #[cfg(target_os = "linux")]
    let failed_step = failed.and_then(|(b, _)| super::child::Step::from_byte(b));
    #[cfg(target_os = "linux")]
    let failed_part = failed.map(|(_, p)| p);
    #[cfg(not(target_os = "linux"))]
    let _ = failed;
    #[cfg(target_os = "linux")]
    let tail = match failed_step {
        Some(step) => format!("the box could not be set up ({}): {e}", step.describe()),
        None => format!("cannot start `sh -c {command}`: {e}"),
    };
    #[cfg(not(target_os = "linux"))]
    let tail = format!("cannot start `sh -c {command}`: {e}");
    Executed {
        outcome: CommandOutcome::not_run(command, tail),
        signal: None,
        stopped: None,
        peak: 0,
        #[cfg(target_os = "linux")]
        failed_step,
        #[cfg(target_os = "linux")]
        failed_part,
    }
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

/// A pipe whose write end is both the child's stdout and its stderr; every end is
/// close-on-exec in this process, so no other child inherits it.
#[cfg(unix)]
fn shared_pipe() -> std::io::Result<(std::fs::File, Stdio, Stdio)> {
    let (read, write) = pipe()?;
    let write = std::fs::File::from(write);
    // try_clone duplicates with close-on-exec set.
    let write2 = write.try_clone()?;
    Ok((
        std::fs::File::from(read),
        Stdio::from(write),
        Stdio::from(write2),
    ))
}

/// Kills the process group the command leads (no-op where there are none).
pub(super) fn kill_group(child: &std::process::Child) {
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

    fn bare(command: &str, timeout: Duration, lines: usize) -> CommandOutcome {
        let dir = tempfile::tempdir().unwrap();
        let mut job = Job::new(command, dir.path(), timeout);
        job.tail_lines = lines;
        run_bare(&job)
    }

    #[test]
    fn commands_report_exit_tail_and_timeout() {
        let o = bare("echo one; echo two >&2; exit 3", Duration::from_secs(5), 1);
        assert_eq!(o.exit_code, Some(3));
        assert_eq!(o.tail, "two");
        let o = bare("sleep 5", Duration::from_millis(200), 5);
        assert!(o.timed_out);
        assert!(o.duration_ms < 3000);
    }

    #[test]
    fn output_is_streamed_and_bounded() {
        let o = bare(
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
        let o = bare(
            "head -c 1000000 /dev/zero | tr '\\0' x",
            Duration::from_secs(30),
            3,
        );
        assert!(o.tail.len() <= KEPT_OUTPUT_BYTES + 100, "{}", o.tail.len());
        assert!(o.tail.starts_with("… ("), "{}", &o.tail[..60]);
        // Whatever the command left running is killed with it.
        let started = Instant::now();
        let o = bare("sleep 30 & echo started", Duration::from_secs(30), 3);
        assert_eq!(o.tail, "started");
        assert!(started.elapsed() < Duration::from_secs(10));
    }
}
