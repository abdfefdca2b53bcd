//! The plan of layers for one command on this machine: the box's private directories,
//! which layers it gets and how the record says each, and what the child is handed to set
//! them up.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use super::allow::{self, AllowList};
use super::fd::{pipe, socket_pair};
use super::layers::{self, Found, Layer, Layers};
use super::totals;
use super::{Job, Limits, Policy};

/// The box's own directories for one command: a home, a temporary directory and a
/// `/dev/shm`, and the empty directory its own root is built on; removed with it.
pub(super) struct Private {
    dir: tempfile::TempDir,
}

impl Private {
    pub(super) fn new(within: Option<&Path>) -> std::io::Result<Private> {
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
pub(super) struct Planned {
    pub(super) layers: Layers,
    pub(super) setup: Option<Setup>,
    /// The Landlock ruleset the child restricts itself with: open until it has.
    pub(super) ruleset: Option<OwnedFd>,
    /// The pipe the child reports a failing set-up step on: (read, write).
    pub(super) report: Option<(OwnedFd, OwnedFd)>,
    /// The socket pair the child hands its tmpfs over on: (read, write).
    pub(super) share: Option<(OwnedFd, OwnedFd)>,
    /// The box's control groups, when its totals are kept by them.
    pub(super) cgroups: Option<totals::Cgroups>,
    /// The directories on disk whose growth counts toward the disk total.
    pub(super) watched: Vec<std::path::PathBuf>,
    /// What each step of building its root is about (for an error).
    pub(super) view_about: Option<Vec<String>>,
    /// Its home and temporary directory, as it sees them.
    pub(super) home: std::path::PathBuf,
    pub(super) tmp: std::path::PathBuf,
}

/// What the child does: [`super::child::Setup`] on Linux, nothing elsewhere.
#[cfg(target_os = "linux")]
pub(super) type Setup = super::child::Setup;
#[cfg(not(target_os = "linux"))]
pub(super) type Setup = ();

/// The plan for `job` on this machine.
pub(super) fn plan(job: &Job<'_>, policy: &Policy, found: &Found, private: &Private) -> Planned {
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
