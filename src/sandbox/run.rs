//! Running one command in the box: the plan of layers for it, the spawn, its output as it
//! comes, its timeout, and nothing of it left running after.

use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::allow::{self, AllowList};
use super::layers::{self, Found, Layer, Layers};
use super::{env, CommandOutcome, Job, Limits, Policy, REFUSED};
use crate::process::{self, Group};

/// Most bytes of the command's output kept while it runs; older output is dropped.
pub const KEPT_OUTPUT_BYTES: usize = 128 * 1024;

/// Runs `job` in the box `policy` asks for, telling `started_in` the command's process
/// group once it runs (to record it for a cleanup after a kill).
///
/// The command gets the layers this machine gives ([`found`]); they are in the
/// outcome. Without the filesystem layer it runs only when `policy.require` is off, and
/// otherwise is refused with the reason.
pub fn run(job: &Job<'_>, policy: &Policy, started_in: &dyn Fn(Group)) -> CommandOutcome {
    run_with(job, policy, found(), started_in)
}

/// [`run`] with the layers `found` (what this machine gives, or less, in tests).
pub(super) fn run_with(
    job: &Job<'_>,
    policy: &Policy,
    found: &Found,
    started_in: &dyn Fn(Group),
) -> CommandOutcome {
    layers::harden_self();
    let private = match Private::new(job.private_in.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            return CommandOutcome::not_run(
                job.command,
                format!("the box has no private directory: {e}"),
            )
        }
    };
    let planned = plan(job, policy, found, &private);
    if !planned.layers.filesystem.held && policy.require {
        let mut out = CommandOutcome::not_run(
            job.command,
            format!(
                "not run: the box has no filesystem layer here ({}), and model-written code runs only inside it; your own configuration may allow it with `sandbox.require = false` (git triad doctor shows the layers)",
                planned.layers.filesystem.detail
            ),
        );
        out.layers = Some(planned.layers);
        out.stopped_by = Some(REFUSED.into());
        return out;
    }
    let vars = env::boxed(&private.home(), &private.tmp(), &job.env);
    let Planned {
        layers,
        setup,
        ruleset,
        report,
    } = planned;
    let ran = execute(job, &vars, setup, report.as_ref(), started_in);
    drop(ruleset);
    let mut out = ran.outcome;
    out.stopped_by = stopped_by(&out, ran.signal, &policy.limits, job.timeout);
    out.layers = Some(layers);
    out
}

/// Runs `job` with none of the box's layers: git triad's scrubbed environment and the
/// caller's directory only. For measuring what the box costs (`benches/`), never for code a
/// model wrote.
pub fn run_bare(job: &Job<'_>) -> CommandOutcome {
    let vars: Vec<(String, String)> = env::command_env(std::env::vars_os())
        .into_iter()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .chain(job.env.iter().cloned())
        .collect();
    execute(job, &vars, None, None, &|_| {}).outcome
}

/// The box's own directories for one command: a home, a temporary directory and a
/// `/dev/shm`, removed with it.
struct Private {
    dir: tempfile::TempDir,
}

impl Private {
    fn new(within: Option<&Path>) -> std::io::Result<Private> {
        let mut builder = tempfile::Builder::new();
        builder.prefix("git-triad-box-");
        let dir = match within {
            Some(d) => builder.tempdir_in(d)?,
            None => builder.tempdir()?,
        };
        for sub in ["home", "tmp", "shm"] {
            std::fs::create_dir(dir.path().join(sub))?;
        }
        Ok(Private { dir })
    }
    fn home(&self) -> std::path::PathBuf {
        self.dir.path().join("home")
    }
    fn tmp(&self) -> std::path::PathBuf {
        self.dir.path().join("tmp")
    }
    fn shm(&self) -> std::path::PathBuf {
        self.dir.path().join("shm")
    }
}

/// The layers planned for one command, and what the child needs to set them up.
struct Planned {
    layers: Layers,
    setup: Option<Setup>,
    /// The Landlock ruleset the child restricts itself with: open until it has.
    ruleset: Option<OwnedFd>,
    /// The pipe the child reports a failing set-up step on: (read, write).
    report: Option<(OwnedFd, OwnedFd)>,
}

/// What the child does: [`super::child::Setup`] on Linux, nothing elsewhere.
#[cfg(target_os = "linux")]
type Setup = super::child::Setup;
#[cfg(not(target_os = "linux"))]
type Setup = ();

/// The plan for `job` on this machine.
fn plan(job: &Job<'_>, policy: &Policy, found: &Found, private: &Private) -> Planned {
    let ns = found.namespaces;
    #[cfg(target_os = "linux")]
    let (pid, net, mount) = (
        ns & libc::CLONE_NEWPID != 0,
        ns & libc::CLONE_NEWNET != 0,
        ns & libc::CLONE_NEWNS != 0,
    );
    #[cfg(not(target_os = "linux"))]
    let (pid, net, mount) = (false, false, false);
    let vars: Vec<(String, String)> = std::env::vars().collect();
    let mut allow = AllowList::system(&vars, &policy.read, pid && mount);
    allow.read.extend(job.read.iter().cloned());
    allow.write.extend(job.write.iter().cloned());
    allow
        .write
        .extend([private.home(), private.tmp(), private.shm()]);
    let tcp_by_landlock = !net && found.landlock_abi >= 4;
    let ruleset = (found.landlock_abi > 0)
        .then(|| allow::ruleset(&allow, tcp_by_landlock))
        .transpose();
    let why_not = |layer: &str| {
        found
            .why_not
            .iter()
            .find(|(l, _)| *l == layer)
            .map_or_else(|| "not available here".to_string(), |(_, w)| w.clone())
    };
    let (ruleset, filesystem) = match ruleset {
        Ok(Some(fd)) => (
            Some(fd),
            Layer::held(format!(
                "Landlock ABI {}: reads and writes by allow-list",
                found.landlock_abi
            )),
        ),
        Ok(None) => (None, Layer::missing(why_not("filesystem"))),
        Err(e) => (None, Layer::missing(format!("no Landlock ruleset: {e}"))),
    };
    let network = if net {
        Layer::held("own network namespace: only its own loopback")
    } else if tcp_by_landlock && ruleset.is_some() {
        Layer::held("TCP bind and connect refused by Landlock (no network namespace here)")
    } else {
        Layer::missing(why_not("network"))
    };
    let processes = if pid {
        Layer::held("own PID namespace and /proc: it sees no process of git triad's, and all it starts dies with it")
    } else {
        Layer::missing(format!(
            "{}: a process that leaves the process group can outlive the command",
            why_not("processes")
        ))
    };
    // SAFETY: geteuid(2) reads nothing of ours.
    let root = unsafe { libc::geteuid() } == 0;
    let privileges = if found.user {
        Layer::held("own user namespace, no capabilities, no new privileges")
    } else if root {
        Layer::held("no capabilities, no new privileges (no user namespace here)")
    } else {
        Layer::missing(format!(
            "{}: it runs as you, with no new privileges",
            why_not("privileges")
        ))
    };
    let limits = Layer::held(describe_limits(&policy.limits, found.user));
    let environment = if layers::harden_self() {
        Layer::held("scrubbed environment; git triad is non-dumpable")
    } else {
        Layer::missing("git triad could not make itself non-dumpable")
    };
    let layers = Layers {
        filesystem,
        network,
        processes,
        privileges,
        limits,
        environment,
    };
    let report = pipe().ok();
    #[cfg(target_os = "linux")]
    let setup = report.as_ref().map(|(_, write)| {
        setup_for(
            found,
            &policy.limits,
            ruleset.as_ref().map(AsRawFd::as_raw_fd),
            write.as_raw_fd(),
            &private.shm(),
            root,
        )
    });
    #[cfg(not(target_os = "linux"))]
    let setup = None;
    Planned {
        layers,
        setup,
        ruleset,
        report,
    }
}

/// The limits as the record says them.
fn describe_limits(l: &Limits, user_namespace: bool) -> String {
    let processes = if user_namespace {
        format!(", {} processes", l.processes)
    } else {
        String::new()
    };
    format!(
        "CPU {} s a process, memory {} MiB, files up to {} MiB{processes}",
        l.cpu_secs, l.memory_mb, l.file_mb
    )
}

/// What the child does for the layers `found` gives.
#[cfg(target_os = "linux")]
fn setup_for(
    found: &Found,
    limits: &Limits,
    ruleset: Option<std::os::fd::RawFd>,
    report: std::os::fd::RawFd,
    shm: &Path,
    root: bool,
) -> super::child::Setup {
    use super::child::{Limit, Setup};
    use std::ffi::CString;
    let ns = found.namespaces;
    // SAFETY: getuid(2)/getgid(2)/getpid(2) read nothing of ours.
    let (uid, gid, parent) = unsafe { (libc::getuid(), libc::getgid(), libc::getpid()) };
    let c = |s: &str| CString::new(s).expect("no NUL in a fixed string");
    let id_maps = found.user.then(|| {
        [
            c("deny"),
            c(&format!("{uid} {uid} 1\n")),
            c(&format!("{gid} {gid} 1\n")),
        ]
    });
    let pid = ns & libc::CLONE_NEWPID != 0;
    let mount = ns & libc::CLONE_NEWNS != 0;
    let shm = (mount && Path::new("/dev/shm").is_dir())
        .then(|| CString::new(shm.as_os_str().as_encoded_bytes()).ok())
        .flatten()
        .map(|s| (s, c("/dev/shm")));
    let mib = 1024 * 1024;
    let mut rl = vec![
        Limit {
            resource: libc::RLIMIT_CPU,
            value: limits.cpu_secs,
        },
        Limit {
            resource: libc::RLIMIT_AS,
            value: limits.memory_mb.saturating_mul(mib),
        },
        Limit {
            resource: libc::RLIMIT_FSIZE,
            value: limits.file_mb.saturating_mul(mib),
        },
        Limit {
            resource: libc::RLIMIT_CORE,
            value: 0,
        },
    ];
    // Counted per user: only in a namespace of its own does the count start at the box.
    if found.user {
        rl.push(Limit {
            resource: libc::RLIMIT_NPROC,
            value: limits.processes,
        });
    }
    Setup {
        parent,
        unshare: ns,
        id_maps,
        pid_namespace: pid,
        proc_mount: (pid && mount).then(|| (c("/proc"), c("proc"))),
        shm,
        loopback: ns & libc::CLONE_NEWNET != 0,
        limits: rl,
        drop_capabilities: found.user || root,
        landlock: ruleset,
        report,
    }
}

/// A close-on-exec pipe: (read, write).
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: pipe2(2) writes two new descriptors into `fds`, owned from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// What stopped the command, when a limit of the box did: its wall clock, or the signal a
/// limit sends (`signal`, the shell's exit code 128 + that signal, or the line a shell
/// prints when it sees one of its commands killed by it).
fn stopped_by(
    out: &CommandOutcome,
    signal: Option<i32>,
    limits: &Limits,
    timeout: Duration,
) -> Option<String> {
    if out.timed_out {
        return Some(match timeout.as_secs() {
            0 => format!("wall clock ({} ms)", timeout.as_millis()),
            s => format!("wall clock ({s} s)"),
        });
    }
    let by = signal.or(out.exit_code.map(|c| c - 128));
    let said = |line: &str| out.tail.lines().any(|l| l.trim_end().ends_with(line));
    if by == Some(libc::SIGXFSZ) || said("File size limit exceeded") {
        return Some(format!(
            "file size limit ({} MiB): a process was stopped writing a larger file",
            limits.file_mb
        ));
    }
    if by == Some(libc::SIGXCPU) || said("CPU time limit exceeded") {
        return Some(format!(
            "CPU time limit ({} s): a process was stopped",
            limits.cpu_secs
        ));
    }
    None
}

/// What this machine gives, tried once per process.
pub fn found() -> &'static Found {
    static FOUND: std::sync::OnceLock<Found> = std::sync::OnceLock::new();
    FOUND.get_or_init(detect)
}

/// Finds what this machine gives by starting a trivial command with every layer, then with
/// fewer, and keeps the first set that works.
fn detect() -> Found {
    let abi = allow::landlock_abi();
    let mut why_not: Vec<(&'static str, String)> = Vec::new();
    if abi == 0 {
        why_not.push((
            "filesystem",
            "this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled)".into(),
        ));
    }
    #[cfg(target_os = "linux")]
    {
        let all = libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        // SAFETY: geteuid(2) reads nothing of ours.
        let root = unsafe { libc::geteuid() } == 0;
        let mut tries = vec![(libc::CLONE_NEWUSER | all, true)];
        if root {
            tries.push((all, false));
        }
        tries.push((
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWIPC,
            true,
        ));
        tries.push((0, false));
        let mut landlock_abi = abi;
        for (ns, user) in tries {
            loop {
                let found = Found {
                    namespaces: ns,
                    user,
                    landlock_abi,
                    why_not: Vec::new(),
                };
                match try_layers(&found) {
                    Ok(()) => {
                        let mut found = found;
                        if ns & libc::CLONE_NEWPID == 0 {
                            why_not.push(("processes", "no PID namespace here".into()));
                        }
                        if ns & libc::CLONE_NEWNET == 0 {
                            why_not.push(("network", "no network namespace here".into()));
                        }
                        if !user {
                            why_not.push(("privileges", "no user namespace here".into()));
                        }
                        found.why_not = why_not;
                        return found;
                    }
                    Err((Some(super::child::Step::Landlock), e)) if landlock_abi > 0 => {
                        why_not.push((
                            "filesystem",
                            format!("Landlock is present but refused the rules: {e}"),
                        ));
                        landlock_abi = 0;
                    }
                    Err((step, e)) => {
                        tracing::debug!(?step, "box layers {ns:#x} not available: {e}");
                        break;
                    }
                }
            }
        }
        Found {
            namespaces: 0,
            user: false,
            landlock_abi: 0,
            why_not,
        }
    }
    #[cfg(not(target_os = "linux"))]
    Found {
        namespaces: 0,
        user: false,
        landlock_abi: abi,
        why_not: vec![
            ("filesystem", "the box's layers are Linux features".into()),
            ("network", "the box's layers are Linux features".into()),
            ("processes", "the box's layers are Linux features".into()),
            ("privileges", "the box's layers are Linux features".into()),
        ],
    }
}

/// Starts `sh -c true` with the layers of `found`; the step that failed, and why, if one
/// did.
#[cfg(target_os = "linux")]
fn try_layers(found: &Found) -> Result<(), (Option<super::child::Step>, String)> {
    let private = Private::new(None).map_err(|e| (None, e.to_string()))?;
    let dir = private.tmp();
    let job = Job::new("true", &dir, Duration::from_secs(30));
    let planned = plan(&job, &Policy::default(), found, &private);
    if found.landlock_abi > 0 && planned.ruleset.is_none() {
        return Err((
            Some(super::child::Step::Landlock),
            planned.layers.filesystem.detail.clone(),
        ));
    }
    let vars = env::boxed(&private.home(), &private.tmp(), &[]);
    let ran = execute(&job, &vars, planned.setup, planned.report.as_ref(), &|_| {});
    match ran.outcome.exit_code {
        Some(0) => Ok(()),
        _ => Err((ran.failed_step, ran.outcome.tail)),
    }
}

/// What [`execute`] saw of a command beyond its outcome.
struct Executed {
    outcome: CommandOutcome,
    /// The signal that ended it, if one did.
    signal: Option<i32>,
    /// The step of the box's set-up that failed, if one did.
    #[cfg(target_os = "linux")]
    failed_step: Option<super::child::Step>,
}

/// Starts `sh -c command` in `job.dir` with `vars` and, with a `setup`, the box's layers
/// (a failing step is read from `report`); streams its output, kills it (and all it
/// started) at its timeout.
fn execute(
    job: &Job<'_>,
    vars: &[(String, String)],
    setup: Option<Setup>,
    report: Option<&(OwnedFd, OwnedFd)>,
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
        },
        signal,
        #[cfg(target_os = "linux")]
        failed_step: None,
    }
}

/// What a command that could not be started did: when the box's set-up failed (reported
/// on `report`), the step and why.
fn not_started(command: &str, e: &std::io::Error, report: Option<&(OwnedFd, OwnedFd)>) -> Executed {
    let failed = report.and_then(|(read, _)| {
        let mut buf = [0u8; 5];
        let mut f = std::fs::File::from(read.try_clone().ok()?);
        set_nonblocking(&f);
        f.read_exact(&mut buf).ok()?;
        Some(buf[0])
    });
    #[cfg(target_os = "linux")]
    let failed_step = failed.and_then(super::child::Step::from_byte);
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
        #[cfg(target_os = "linux")]
        failed_step,
    }
}

/// Makes a reader of the report pipe return at once when the child reported nothing.
fn set_nonblocking(f: &std::fs::File) {
    // SAFETY: fcntl(2) on a descriptor we own; it touches no memory.
    unsafe {
        let fd = f.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
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
