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
use super::totals;
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
    let vars = env::boxed(&planned.home, &planned.tmp, &job.env);
    // Each part is moved out when it is used up: the seccomp ruleset is dropped once the
    // command ran, the cgroups once their totals were read.
    let mut planned = planned;
    let watch = WatchPlan {
        limits: &policy.limits,
        memory: !found.totals.memory_by_cgroup(),
        dirs: planned.watched,
        share: planned.share.as_ref().map(|(read, _)| read),
    };
    let ran = execute(
        job,
        &vars,
        planned.setup,
        planned.report.as_ref(),
        Some(watch),
        started_in,
    );
    drop(planned.ruleset);
    let mut out = ran.outcome;
    #[cfg(target_os = "linux")]
    if let (Some(step), Some(about)) = (ran.failed_step, &planned.view_about) {
        if step == super::child::Step::View {
            let what = ran
                .failed_part
                .and_then(|n| about.get(n))
                .map_or("building it", String::as_str);
            out.tail = format!("{} ({what})", out.tail);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = &planned.view_about;
    let by_cgroup = planned
        .cgroups
        .as_ref()
        .and_then(|c| c.stopped(&policy.limits));
    drop(planned.cgroups);
    out.stopped_by = ran
        .stopped
        .or(by_cgroup)
        .or_else(|| stopped_by(&out, ran.signal, &policy.limits, job.timeout))
        .or_else(|| {
            let refused = [
                "Resource temporarily unavailable",
                "BlockingIOError",
                "Cannot fork",
            ]
            .iter()
            .any(|s| out.tail.contains(s));
            let counted = found.user || found.totals.pids_by_cgroup();
            (out.exit_code != Some(0)
                && counted
                && (ran.peak >= policy.limits.processes as usize || refused))
                .then(|| totals::process_stop(&policy.limits, "a fork past it was refused"))
        });
    if let Some(by) = &out.stopped_by {
        if by.starts_with("memory total")
            || by.starts_with("disk total")
            || by.starts_with("process total")
        {
            planned.layers.totals.detail =
                format!("{}; it stopped this command", planned.layers.totals.detail);
        }
    }
    out.layers = Some(planned.layers);
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
    execute(job, &vars, None, None, None, &|_| {}).outcome
}

/// The box's own directories for one command: a home, a temporary directory and a
/// `/dev/shm`, and the empty directory its own root is built on; removed with it.
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
        for sub in ["home", "tmp", "shm", "root"] {
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
    /// Where the box's own root is built (an empty directory).
    #[cfg(target_os = "linux")]
    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("root")
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
    /// The socket pair the child hands its tmpfs over on: (read, write).
    share: Option<(OwnedFd, OwnedFd)>,
    /// The box's control groups, when its totals are kept by them.
    cgroups: Option<totals::Cgroups>,
    /// The directories on disk whose growth counts toward the disk total.
    watched: Vec<std::path::PathBuf>,
    /// What each step of building its root is about (for an error).
    view_about: Option<Vec<String>>,
    /// Its home and temporary directory, as it sees them.
    home: std::path::PathBuf,
    tmp: std::path::PathBuf,
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
    let view_wanted = found.view && mount;
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
        Ok(Some(fd)) if view_wanted => (
            Some(fd),
            Layer::held(format!(
                "Landlock ABI {} and a root of its own: reads and writes by allow-list, everything else of the machine absent or read-only (no mode, time or attribute changes outside its writable places)",
                found.landlock_abi
            )),
        ),
        Ok(Some(fd)) => (
            Some(fd),
            Layer::held_but(
                format!(
                    "Landlock ABI {}: reads and writes by allow-list",
                    found.landlock_abi
                ),
                format!(
                    "no root of its own ({}): it can change the mode, times and extended attributes of files it may read",
                    why_not("view")
                ),
            ),
        ),
        Ok(None) => (None, Layer::missing(why_not("filesystem"))),
        Err(e) => (None, Layer::missing(format!("no Landlock ruleset: {e}"))),
    };
    #[cfg(target_os = "linux")]
    let seccomp = (!net && found.seccomp)
        .then(|| super::seccomp::network(view_wanted).ok())
        .flatten();
    #[cfg(not(target_os = "linux"))]
    let seccomp: Option<()> = None;
    let network = if net {
        Layer::held(
            "own network namespace: only its own loopback; no socket of the machine's in reach",
        )
    } else if seccomp.is_some() {
        let unix = if view_wanted {
            "unix sockets only within its own root"
        } else {
            "no unix socket but socketpairs"
        };
        Layer::held(format!(
            "no network namespace here ({}): sockets of every other family refused by a seccomp filter, {unix}{}",
            why_not("network"),
            if tcp_by_landlock && ruleset.is_some() { ", TCP refused by Landlock too" } else { "" }
        ))
    } else if tcp_by_landlock && ruleset.is_some() {
        Layer::missing(format!(
            "{}: only TCP is refused (Landlock); UDP, netlink and unix sockets reach out",
            why_not("network")
        ))
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
    let limits = Layer::held(describe_limits(&policy.limits));
    let cgroups = (found.totals.pids_by_cgroup() || found.totals.memory_by_cgroup())
        .then(|| totals::Cgroups::new(&found.totals, &policy.limits))
        .and_then(|r| {
            r.map_err(|e| tracing::debug!("no control group for this command: {e}"))
                .ok()
        });
    let totals = describe_totals(&policy.limits, found, cgroups.is_some(), view_wanted, root);
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
        totals,
        environment,
    };
    let report = pipe().ok();
    let share = view_wanted.then(|| socket_pair().ok()).flatten();
    let mut watched: Vec<std::path::PathBuf> = job.write.clone();
    if !view_wanted {
        watched.push(private.dir.path().to_path_buf());
    }
    #[cfg(target_os = "linux")]
    let view = if view_wanted {
        let p = super::view::Private {
            dir: private.dir.path(),
            root: &private.root(),
            size: policy.limits.disk_mb.saturating_mul(1024 * 1024),
        };
        match super::view::plan(&allow, &p, pid, job.dir) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::debug!("no root of its own for this command: {e}");
                None
            }
        }
    } else {
        None
    };
    #[cfg(target_os = "linux")]
    let view_about = view.as_ref().map(|v| v.about.clone());
    #[cfg(not(target_os = "linux"))]
    let view_about = None;
    #[cfg(target_os = "linux")]
    let setup = report.as_ref().map(|(_, write)| {
        let mut s = setup_for(
            found,
            &policy.limits,
            ruleset.as_ref().map(AsRawFd::as_raw_fd),
            write.as_raw_fd(),
            &private.shm(),
            root,
            cgroups.is_some(),
        );
        s.cgroups = cgroups
            .as_ref()
            .map(|c| c.procs.iter().map(AsRawFd::as_raw_fd).collect())
            .unwrap_or_default();
        s.seccomp = seccomp;
        s.share = share.as_ref().map(|(_, w)| w.as_raw_fd());
        if view.is_some() {
            s.proc_mount = None;
            s.shm = None;
        }
        s.view = view;
        s
    });
    #[cfg(not(target_os = "linux"))]
    let setup = None;
    #[cfg(target_os = "linux")]
    let (home, tmp) = if view_about.is_some() {
        (super::view::BOX_HOME.into(), super::view::BOX_TMP.into())
    } else {
        (private.home(), private.tmp())
    };
    #[cfg(not(target_os = "linux"))]
    let (home, tmp) = (private.home(), private.tmp());
    Planned {
        layers,
        setup,
        ruleset,
        report,
        share,
        cgroups,
        watched,
        view_about,
        home,
        tmp,
    }
}

/// The per-process limits as the record says them.
fn describe_limits(l: &Limits) -> String {
    format!(
        "CPU {} s, memory {} MiB and files up to {} MiB, each process",
        l.cpu_secs, l.memory_mb, l.file_mb
    )
}

/// The totals as the record says them: how each is kept here, or why it is not.
fn describe_totals(l: &Limits, found: &Found, cgroup: bool, view: bool, root: bool) -> Layer {
    let processes = if cgroup && found.totals.pids_by_cgroup() {
        Some("a control group")
    } else if found.user && !root {
        Some("RLIMIT_NPROC in its own user namespace")
    } else {
        None
    };
    let memory = if cgroup && found.totals.memory_by_cgroup() {
        "a control group"
    } else {
        "watched by git triad, which stops it past the total"
    };
    let disk = if view {
        "its home and temporary directory a tmpfs of that size, its scratch copy and build cache watched by git triad"
    } else {
        "watched by git triad, which stops it past the total"
    };
    let said = format!(
        "{} processes at once ({}), {} MiB of memory ({memory}), {} MiB of disk ({disk})",
        l.processes,
        processes.unwrap_or("not kept"),
        l.memory_mb,
        l.disk_mb
    );
    match processes {
        Some(_) => Layer::held(said),
        None => Layer::missing(format!(
            "{said}: no control group here ({}) and {}",
            found
                .totals
                .why_not
                .as_deref()
                .unwrap_or("none could be made"),
            if root {
                "the per-user process limit does not bind root"
            } else {
                "no user namespace in which the per-user process limit counts only the box"
            }
        )),
    }
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
    cgroup: bool,
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
    // Counted per user: only in a namespace of its own does the count start at the box
    // (and root is never held by it). A control group counts it otherwise.
    if found.user && !root && !cgroup {
        rl.push(Limit {
            resource: libc::RLIMIT_NPROC,
            value: limits.processes,
        });
    }
    let abi = landlock::ABI::from(found.landlock_abi as i32);
    Setup {
        parent,
        unshare: ns,
        id_maps,
        maps_as_user: !root,
        env: environment_region(),
        cgroups: Vec::new(),
        pid_namespace: pid,
        proc_mount: (pid && mount).then(|| (c("/proc"), c("proc"))),
        shm,
        view: None,
        loopback: ns & libc::CLONE_NEWNET != 0,
        limits: rl,
        drop_capabilities: found.user || root,
        landlock: ruleset,
        write_access: {
            use landlock::Access;
            landlock::AccessFs::from_all(abi).bits()
        },
        seccomp: None,
        share: None,
        report,
    }
}

/// Where this process's initial environment lies in its memory (`/proc/self/stat`'s
/// `env_start` and `env_end`), read once.
#[cfg(target_os = "linux")]
fn environment_region() -> Option<(usize, usize)> {
    static REGION: std::sync::OnceLock<Option<(usize, usize)>> = std::sync::OnceLock::new();
    *REGION.get_or_init(|| {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        let (_, rest) = stat.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // Fields 50 and 51 of proc(5), counted from the state (field 3).
        let start = fields.get(47)?.parse().ok()?;
        let end = fields.get(48)?.parse().ok()?;
        Some((start, end))
    })
}

/// A close-on-exec unix socket pair: (one end, the other).
fn socket_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds: [libc::c_int; 2] = [0; 2];
    // SAFETY: socketpair(2) writes two new descriptors into `fds`, owned from here on.
    let r = unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_DGRAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The descriptor the child handed over on `socket`, if it did (non-blocking).
fn received_fd(socket: &OwnedFd) -> Option<std::fs::File> {
    use std::os::fd::FromRawFd;
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut space = [0u64; 8];
    // SAFETY: msghdr points at buffers we own for the duration of the call; CMSG_* walk
    // the control buffer the kernel filled.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = space.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&space) as _;
        if libc::recvmsg(
            socket.as_raw_fd(),
            &mut msg,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC,
        ) < 0
        {
            return None;
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if cmsg.is_null()
            || (*cmsg).cmsg_level != libc::SOL_SOCKET
            || (*cmsg).cmsg_type != libc::SCM_RIGHTS
        {
            return None;
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg) as *const libc::c_int);
        Some(std::fs::File::from_raw_fd(fd))
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
/// prints when it sees one of its commands killed by it), or the box's tmpfs full.
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
    if out.exit_code != Some(0) && out.tail.contains("No space left on device") {
        return Some(totals::disk_stop(
            limits,
            "a write was refused: its own home and temporary directory are full",
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
        let totals = totals::find();
        let all = libc::CLONE_NEWPID | libc::CLONE_NEWNET | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        // SAFETY: geteuid(2) reads nothing of ours.
        let root = unsafe { libc::geteuid() } == 0;
        // An explicit user namespace even for root (its capabilities stay outside), a root
        // of its own where a mount namespace allows one.
        let mut tries = vec![
            (libc::CLONE_NEWUSER | all, true, true),
            (libc::CLONE_NEWUSER | all, true, false),
        ];
        if root {
            tries.push((all, false, true));
            tries.push((all, false, false));
        }
        tries.push((
            libc::CLONE_NEWUSER | libc::CLONE_NEWNET | libc::CLONE_NEWIPC,
            true,
            false,
        ));
        tries.push((0, false, false));
        let mut landlock_abi = abi;
        let mut seccomp = true;
        let mut first_failure: Option<String> = None;
        let mut last_failure: Option<String> = None;
        for (ns, user, view) in tries {
            loop {
                let found = Found {
                    namespaces: ns,
                    user,
                    view,
                    seccomp,
                    landlock_abi,
                    totals: totals.clone(),
                    why_not: why_not.clone(),
                };
                match try_layers(&found) {
                    Ok(()) => {
                        let mut found = found;
                        let why = first_failure
                            .clone()
                            .unwrap_or_else(|| "the kernel refused it".into());
                        if ns & libc::CLONE_NEWPID == 0 {
                            why_not.push(("processes", format!("no PID namespace here ({why})")));
                        }
                        if ns & libc::CLONE_NEWNET == 0 {
                            why_not.push(("network", format!("no network namespace ({why})")));
                        }
                        if !user {
                            why_not.push(("privileges", format!("no user namespace here ({why})")));
                        }
                        if !view {
                            why_not.push((
                                "view",
                                format!("no mount namespace to build it in ({why})"),
                            ));
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
                    Err((Some(super::child::Step::Seccomp), e)) if seccomp => {
                        tracing::debug!("no seccomp filter here: {e}");
                        seccomp = false;
                    }
                    Err((step, e)) => {
                        tracing::debug!(
                            ?step,
                            "box layers {ns:#x} (view {view}) not available: {e}"
                        );
                        first_failure.get_or_insert(e.clone());
                        last_failure = Some(e);
                        break;
                    }
                }
            }
        }
        // Not even a bare start worked: every layer says why, not "not available".
        let why = format!(
            "no command could start in the box here ({})",
            last_failure.unwrap_or_else(|| "no reason given".into())
        );
        for layer in ["filesystem", "network", "processes", "privileges", "view"] {
            if !why_not.iter().any(|(l, _)| *l == layer) {
                why_not.push((layer, why.clone()));
            }
        }
        Found {
            namespaces: 0,
            user: false,
            view: false,
            seccomp: false,
            landlock_abi: 0,
            totals,
            why_not,
        }
    }
    #[cfg(not(target_os = "linux"))]
    Found {
        namespaces: 0,
        user: false,
        view: false,
        seccomp: false,
        landlock_abi: abi,
        totals: Default::default(),
        why_not: vec![
            ("filesystem", "the box's layers are Linux features".into()),
            ("network", "the box's layers are Linux features".into()),
            ("processes", "the box's layers are Linux features".into()),
            ("privileges", "the box's layers are Linux features".into()),
            ("view", "the box's layers are Linux features".into()),
        ],
    }
}

/// Starts `sh -c true` with the layers of `found`; the step that failed, and why, if one
/// did.
#[cfg(target_os = "linux")]
fn try_layers(found: &Found) -> Result<(), (Option<super::child::Step>, String)> {
    let private = Private::new(None).map_err(|e| (None, e.to_string()))?;
    let dir = tempfile::tempdir().map_err(|e| (None, e.to_string()))?;
    let job = Job::new("true", dir.path(), Duration::from_secs(30));
    let planned = plan(&job, &Policy::default(), found, &private);
    if found.landlock_abi > 0 && planned.ruleset.is_none() {
        return Err((
            Some(super::child::Step::Landlock),
            planned.layers.filesystem.detail.clone(),
        ));
    }
    if found.view && found.namespaces & libc::CLONE_NEWNS != 0 && planned.view_about.is_none() {
        return Err((
            Some(super::child::Step::View),
            "its root could not be planned".into(),
        ));
    }
    let vars = env::boxed(&planned.home, &planned.tmp, &[]);
    let ran = execute(
        &job,
        &vars,
        planned.setup,
        planned.report.as_ref(),
        None,
        &|_| {},
    );
    match ran.outcome.exit_code {
        Some(0) => Ok(()),
        _ => {
            let what = ran
                .failed_part
                .zip(planned.view_about.as_ref())
                .and_then(|(n, about)| about.get(n))
                .map(|w| format!(" ({w})"))
                .unwrap_or_default();
            Err((ran.failed_step, format!("{}{what}", ran.outcome.tail)))
        }
    }
}

/// What the watch of a running box needs.
struct WatchPlan<'a> {
    limits: &'a Limits,
    /// Whether memory is watched here (no control group limits it).
    memory: bool,
    /// The directories whose growth counts toward the disk total.
    dirs: Vec<std::path::PathBuf>,
    /// Where the child hands over its tmpfs.
    share: Option<&'a OwnedFd>,
}

/// What [`execute`] saw of a command beyond its outcome.
struct Executed {
    outcome: CommandOutcome,
    /// The signal that ended it, if one did.
    signal: Option<i32>,
    /// The total the watch stopped it for, if it did.
    stopped: Option<String>,
    /// Most of its processes seen at once.
    peak: usize,
    /// The step of the box's set-up that failed, if one did, and which part of it.
    #[cfg(target_os = "linux")]
    failed_step: Option<super::child::Step>,
    #[cfg(target_os = "linux")]
    failed_part: Option<usize>,
}

/// Starts `sh -c command` in `job.dir` with `vars` and, with a `setup`, the box's layers
/// (a failing step is read from `report`); streams its output, watches its totals
/// (`watch`), kills it (and all it started) at its timeout.
fn execute(
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
