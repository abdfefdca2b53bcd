//! What the boxed command's process does between `fork` and `exec`: its own namespaces, a
//! fresh `/proc`, limits, no capabilities, then the filesystem rules.
//!
//! This code runs in the child of a multi-threaded process, where only async-signal-safe
//! calls are allowed: no allocation, no lock. So everything it needs (paths as C strings,
//! the maps to write, the Landlock ruleset's descriptor) is prepared by the parent in a
//! [`Setup`], and the child makes raw system calls only. A step that fails writes its
//! [`Step`] and `errno` to the report pipe and fails the spawn: a layer that was planned and
//! does not hold stops the command, it never runs with less than the record says.

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// A step of the set-up, as the report pipe names it when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Step {
    /// Dying with the parent (`PR_SET_PDEATHSIG`).
    DeathSignal = 1,
    /// New namespaces (`unshare`).
    Unshare,
    /// The user namespace's id maps.
    IdMaps,
    /// The process that becomes the PID namespace's first process (`fork`).
    Fork,
    /// Mounts kept from propagating back (`MS_PRIVATE`).
    PrivateMounts,
    /// A `/proc` that shows only the box's processes.
    Proc,
    /// A private `/dev/shm`.
    Shm,
    /// The loopback interface of the new network namespace.
    Loopback,
    /// Resource limits (`setrlimit`).
    Limits,
    /// Dropping every capability.
    Capabilities,
    /// `PR_SET_NO_NEW_PRIVS`.
    NoNewPrivs,
    /// The Landlock ruleset (`landlock_restrict_self`).
    Landlock,
}

impl Step {
    /// Every step, in the order the child takes them.
    const ALL: [Step; 12] = [
        Step::DeathSignal,
        Step::Unshare,
        Step::IdMaps,
        Step::Fork,
        Step::PrivateMounts,
        Step::Proc,
        Step::Shm,
        Step::Loopback,
        Step::Limits,
        Step::Capabilities,
        Step::NoNewPrivs,
        Step::Landlock,
    ];

    /// The step a report byte names.
    pub(super) fn from_byte(b: u8) -> Option<Step> {
        Step::ALL.into_iter().find(|s| *s as u8 == b)
    }

    /// What the step sets up, for an error sentence.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Step::DeathSignal => "tying the command's life to git triad's",
            Step::Unshare => "creating the box's namespaces",
            Step::IdMaps => "mapping the user namespace's ids",
            Step::Fork => "starting the box's first process",
            Step::PrivateMounts => "making the box's mounts private",
            Step::Proc => "mounting the box's own /proc",
            Step::Shm => "mounting the box's own /dev/shm",
            Step::Loopback => "bringing up the box's loopback interface",
            Step::Limits => "setting the resource limits",
            Step::Capabilities => "dropping capabilities",
            Step::NoNewPrivs => "forbidding new privileges",
            Step::Landlock => "applying the filesystem rules (Landlock)",
        }
    }
}

/// A resource limit to set (soft and hard alike).
#[derive(Debug, Clone, Copy)]
pub(super) struct Limit {
    /// `RLIMIT_*`.
    pub resource: libc::__rlimit_resource_t,
    /// The value.
    pub value: u64,
}

/// Everything the child does, prepared by the parent.
#[derive(Debug)]
pub(super) struct Setup {
    /// The parent's pid: a child whose parent is already gone stops.
    pub parent: libc::pid_t,
    /// `CLONE_NEW*` flags for `unshare` (0: none).
    pub unshare: libc::c_int,
    /// The user namespace's maps, when one is made: `setgroups`, `uid_map`, `gid_map`
    /// contents.
    pub id_maps: Option<[CString; 3]>,
    /// Whether a PID namespace is made, so the command runs as its first process under a
    /// waiting parent.
    pub pid_namespace: bool,
    /// `/proc` and `proc`, for a fresh `/proc` mount (with a PID namespace).
    pub proc_mount: Option<(CString, CString)>,
    /// A private directory bound over `/dev/shm`.
    pub shm: Option<(CString, CString)>,
    /// Whether to bring up `lo` (a new network namespace has it down).
    pub loopback: bool,
    /// The limits.
    pub limits: Vec<Limit>,
    /// Whether to drop every capability (in a user namespace, or as root).
    pub drop_capabilities: bool,
    /// The Landlock ruleset to restrict to.
    pub landlock: Option<RawFd>,
    /// Where a failing step is reported.
    pub report: RawFd,
}

/// The paths of the id-map files, as C strings.
const SETGROUPS: &std::ffi::CStr = c"/proc/self/setgroups";
const UID_MAP: &std::ffi::CStr = c"/proc/self/uid_map";
const GID_MAP: &std::ffi::CStr = c"/proc/self/gid_map";

impl Setup {
    /// Runs every step in the child. Only async-signal-safe calls from here on.
    ///
    /// # Safety
    /// Must be called only in a child between `fork` and `exec` (a `pre_exec` closure).
    pub(super) unsafe fn apply(&self) -> io::Result<()> {
        self.step(Step::DeathSignal, || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(errno());
            }
            // The parent may have died before the prctl: nobody would kill us then.
            if libc::getppid() != self.parent {
                return Err(libc::ESRCH);
            }
            Ok(())
        })?;
        if self.unshare != 0 {
            self.step(Step::Unshare, || check(libc::unshare(self.unshare)))?;
            // New credentials (a user namespace's) clear the parent-death signal: set it
            // again, and make sure the parent did not die in between.
            self.step(Step::DeathSignal, || {
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
                if libc::getppid() != self.parent {
                    return Err(libc::ESRCH);
                }
                Ok(())
            })?;
        }
        if let Some([setgroups, uid, gid]) = &self.id_maps {
            self.step(Step::IdMaps, || {
                write_file(SETGROUPS, setgroups)?;
                write_file(UID_MAP, uid)?;
                write_file(GID_MAP, gid)
            })?;
        }
        if self.pid_namespace {
            self.step(Step::Fork, || {
                let pid = libc::fork();
                if pid < 0 {
                    return Err(errno());
                }
                if pid > 0 {
                    wait_and_exit_like(pid);
                }
                // The first process of the namespace: when its parent (the waiter) dies,
                // it dies, and every process of the namespace with it.
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))
            })?;
        }
        if self.unshare & libc::CLONE_NEWNS != 0 {
            self.step(Step::PrivateMounts, || {
                check(libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ))
            })?;
        }
        if let Some((target, fstype)) = &self.proc_mount {
            self.step(Step::Proc, || {
                check(libc::mount(
                    fstype.as_ptr(),
                    target.as_ptr(),
                    fstype.as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                ))?;
                // The ruleset was built before this /proc existed: its read rule can only
                // be added here, on the new mount.
                match self.landlock {
                    Some(ruleset) => allow_read(ruleset, target),
                    None => Ok(()),
                }
            })?;
        }
        if let Some((source, target)) = &self.shm {
            self.step(Step::Shm, || {
                check(libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))
            })?;
        }
        if self.loopback {
            self.step(Step::Loopback, || loopback_up())?;
        }
        self.step(Step::Limits, || {
            for l in &self.limits {
                let value = libc::rlimit {
                    rlim_cur: l.value,
                    rlim_max: l.value,
                };
                check(libc::setrlimit(l.resource, &value))?;
            }
            Ok(())
        })?;
        if self.drop_capabilities {
            self.step(Step::Capabilities, || drop_capabilities())?;
        }
        self.step(Step::NoNewPrivs, || {
            check(libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        })?;
        if let Some(fd) = self.landlock {
            self.step(Step::Landlock, || {
                check(libc::syscall(libc::SYS_landlock_restrict_self, fd, 0) as libc::c_int)
            })?;
        }
        Ok(())
    }

    /// Runs one step; on failure reports it (its number and errno, five bytes) and turns it
    /// into the spawn's error.
    unsafe fn step(
        &self,
        step: Step,
        f: impl FnOnce() -> Result<(), libc::c_int>,
    ) -> io::Result<()> {
        match f() {
            Ok(()) => Ok(()),
            Err(e) => {
                let mut msg = [0u8; 5];
                msg[0] = step as u8;
                msg[1..].copy_from_slice(&e.to_ne_bytes());
                libc::write(self.report, msg.as_ptr().cast(), msg.len());
                Err(io::Error::from_raw_os_error(e))
            }
        }
    }
}

/// The current `errno`.
fn errno() -> libc::c_int {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `Ok` for a zero return, else `errno`.
fn check(r: libc::c_int) -> Result<(), libc::c_int> {
    if r == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

/// Writes `text` into the file at `path` (open, one write, close).
unsafe fn write_file(path: &std::ffi::CStr, text: &CString) -> Result<(), libc::c_int> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(errno());
    }
    let bytes = text.as_bytes();
    let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
    let e = errno();
    libc::close(fd);
    if n != bytes.len() as isize {
        return Err(e);
    }
    Ok(())
}

/// `struct landlock_path_beneath_attr` (packed, as the kernel declares it).
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// `LANDLOCK_RULE_PATH_BENEATH`.
const RULE_PATH_BENEATH: libc::c_int = 1;

/// Landlock's read rights: run a file, read a file, read a directory.
const READ_ACCESS: u64 = 1 | (1 << 2) | (1 << 3);

/// Adds a rule to `ruleset` letting the box read beneath `path`.
unsafe fn allow_read(ruleset: RawFd, path: &CString) -> Result<(), libc::c_int> {
    let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(errno());
    }
    let attr = PathBeneath {
        allowed_access: READ_ACCESS,
        parent_fd: fd,
    };
    let r = libc::syscall(
        libc::SYS_landlock_add_rule,
        ruleset,
        RULE_PATH_BENEATH,
        &attr as *const PathBeneath,
        0u32,
    );
    let e = errno();
    libc::close(fd);
    if r == 0 {
        Ok(())
    } else {
        Err(e)
    }
}

/// The waiter between git triad and the namespace's first process: holds no descriptor
/// but its standard streams (so git triad's spawn sees the command's `exec`, not this
/// process's end), waits for the child, and ends as it ended (its exit code, or its
/// signal).
unsafe fn wait_and_exit_like(child: libc::pid_t) -> ! {
    if libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) != 0 {
        for fd in 3..4096 {
            libc::close(fd);
        }
    }
    let mut status = 0;
    loop {
        let r = libc::waitpid(child, &mut status, 0);
        if r == child {
            break;
        }
        if r < 0 && errno() != libc::EINTR {
            libc::_exit(127);
        }
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(libc::WEXITSTATUS(status))
}

/// `struct ifreq` with the flags member (the only one used), padded to the kernel's size.
#[repr(C)]
struct IfreqFlags {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Brings up `lo` in the new network namespace, so tests that talk to themselves on
/// 127.0.0.1 still work, with nothing outside to reach.
unsafe fn loopback_up() -> Result<(), libc::c_int> {
    let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if sock < 0 {
        return Err(errno());
    }
    let mut req = IfreqFlags {
        name: [0; 16],
        flags: 0,
        _pad: [0; 22],
    };
    req.name[..2].copy_from_slice(b"lo");
    let mut r = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut req);
    if r == 0 {
        req.flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        r = libc::ioctl(sock, libc::SIOCSIFFLAGS, &req);
    }
    let e = errno();
    libc::close(sock);
    if r == 0 {
        Ok(())
    } else {
        Err(e)
    }
}

/// `struct __user_cap_header_struct`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct`.
#[repr(C)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3`: 64-bit capability sets, in two data structs.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Drops every capability for good: root (in the box's user namespace, or for real) gets
/// none back at `exec` (`SECBIT_NOROOT`, locked), none can be raised as ambient, and the
/// sets are emptied now.
unsafe fn drop_capabilities() -> Result<(), libc::c_int> {
    let bits = libc::SECBIT_NOROOT
        | libc::SECBIT_NOROOT_LOCKED
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    check(libc::prctl(
        libc::PR_SET_SECUREBITS,
        bits as libc::c_ulong,
        0,
        0,
        0,
    ))?;
    check(libc::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
        0,
        0,
        0,
    ))?;
    let header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [
        CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
        CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        },
    ];
    check(libc::syscall(libc::SYS_capset, &header, data.as_ptr()) as libc::c_int)
}
