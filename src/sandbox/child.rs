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
    /// The box's own root ([`super::view`]).
    View,
    /// Joining the box's control groups (its totals).
    Cgroup,
    /// The system-call filter that closes the network without a namespace.
    Seccomp,
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
    const ALL: [Step; 15] = [
        Step::DeathSignal,
        Step::Cgroup,
        Step::Unshare,
        Step::IdMaps,
        Step::Fork,
        Step::PrivateMounts,
        Step::Proc,
        Step::Shm,
        Step::View,
        Step::Loopback,
        Step::Limits,
        Step::Capabilities,
        Step::NoNewPrivs,
        Step::Landlock,
        Step::Seccomp,
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
            Step::View => "building the box's own root",
            Step::Cgroup => "joining the box's control groups",
            Step::Seccomp => "installing the network filter (seccomp)",
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
    /// Whether the maps are written as a user other than root: the files of a
    /// non-dumpable process are root's, so the child is dumpable for the few calls that
    /// write them (with its copy of git triad's environment wiped first, [`Setup::env`]).
    pub maps_as_user: bool,
    /// Where the child's copy of git triad's initial environment lies (start, end), wiped
    /// before it is dumpable for a moment.
    pub env: Option<(usize, usize)>,
    /// `cgroup.procs` files of the box's control groups, opened by the parent: the child
    /// joins them first, so all it starts is counted.
    pub cgroups: Vec<RawFd>,
    /// The box's own root, when it has a mount namespace to build one in.
    pub view: Option<super::view::View>,
    /// The Landlock access rights a writable place gets (for the mounts made in the
    /// child).
    pub write_access: u64,
    /// The system-call filter, where the network has no namespace.
    pub seccomp: Option<super::seccomp::Program>,
    /// The socket the box's tmpfs is handed to git triad on.
    pub share: Option<RawFd>,
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
        for (n, fd) in self.cgroups.iter().enumerate() {
            self.step_at(Step::Cgroup, n, || {
                let me = b"0";
                if libc::write(*fd, me.as_ptr().cast(), me.len()) != me.len() as isize {
                    return Err(errno());
                }
                Ok(())
            })?;
        }
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
                if !self.maps_as_user {
                    write_file(SETGROUPS, setgroups)?;
                    write_file(UID_MAP, uid)?;
                    return write_file(GID_MAP, gid);
                }
                // Nothing of git triad's environment is there to read in the moment this
                // process is dumpable (its memory still is: the moment is a few calls).
                if let Some((start, end)) = self.env {
                    if end > start {
                        std::ptr::write_bytes(start as *mut u8, 0, end - start);
                    }
                }
                check(libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0))?;
                let written = write_file(SETGROUPS, setgroups)
                    .and_then(|()| write_file(UID_MAP, uid))
                    .and_then(|()| write_file(GID_MAP, gid));
                check(libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0))?;
                written
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
        if let Some(view) = &self.view {
            self.build_view(view)?;
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
        if let Some(program) = &self.seccomp {
            self.step(Step::Seccomp, || {
                let prog = libc::sock_fprog {
                    len: program.len() as libc::c_ushort,
                    filter: program.as_ptr() as *mut libc::sock_filter,
                };
                check(libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0,
                    &prog as *const libc::sock_fprog,
                ) as libc::c_int)
            })?;
        }
        Ok(())
    }

    /// Builds the box's own root ([`super::view`]) and moves into it.
    unsafe fn build_view(&self, view: &super::view::View) -> io::Result<()> {
        use super::view::Op;
        let none = std::ptr::null::<libc::c_char>();
        self.step_at(Step::View, usize::MAX, || {
            check(libc::mount(
                c"tmpfs".as_ptr(),
                view.root.as_ptr(),
                c"tmpfs".as_ptr(),
                libc::MS_NOSUID | libc::MS_NODEV,
                c"mode=0755,size=1m".as_ptr().cast(),
            ))
        })?;
        for (n, op) in view.ops.iter().enumerate() {
            self.step_at(Step::View, n, || match op {
                Op::Mkdir(at) => {
                    if libc::mkdir(at.as_ptr(), 0o755) != 0 && errno() != libc::EEXIST {
                        return Err(errno());
                    }
                    Ok(())
                }
                Op::Touch(at) => {
                    let fd = libc::open(
                        at.as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
                        0o644,
                    );
                    if fd < 0 {
                        return Err(errno());
                    }
                    libc::close(fd);
                    Ok(())
                }
                Op::Symlink { target, at } => check(libc::symlink(target.as_ptr(), at.as_ptr())),
                Op::Bind {
                    from,
                    to,
                    recursive,
                } => {
                    let rec = if *recursive { libc::MS_REC } else { 0 };
                    check(libc::mount(
                        from.as_ptr(),
                        to.as_ptr(),
                        none,
                        libc::MS_BIND | rec,
                        std::ptr::null(),
                    ))
                }
                Op::ReadOnly { at, flags } => check(libc::mount(
                    none,
                    at.as_ptr(),
                    none,
                    libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | flags,
                    std::ptr::null(),
                )),
                Op::Tmpfs { at, options } => check(libc::mount(
                    c"tmpfs".as_ptr(),
                    at.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    options.as_ptr().cast(),
                )),
                Op::Proc(at) => check(libc::mount(
                    c"proc".as_ptr(),
                    at.as_ptr(),
                    c"proc".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    std::ptr::null(),
                )),
                Op::Allow { at, write } => match self.landlock {
                    Some(ruleset) => {
                        let access = if *write {
                            self.write_access
                        } else {
                            READ_ACCESS
                        };
                        allow_beneath(ruleset, at, access)
                    }
                    None => Ok(()),
                },
                Op::Share(at) => match self.share {
                    Some(socket) => send_fd(socket, at),
                    None => Ok(()),
                },
                Op::SealRoot => check(libc::mount(
                    none,
                    view.root.as_ptr(),
                    none,
                    libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
                    std::ptr::null(),
                )),
            })?;
        }
        self.step_at(Step::View, usize::MAX - 1, || {
            check(libc::chdir(view.root.as_ptr()))?;
            let dot = c".".as_ptr();
            check(libc::syscall(libc::SYS_pivot_root, dot, dot) as libc::c_int)?;
            check(libc::umount2(dot, libc::MNT_DETACH))?;
            check(libc::chdir(view.cwd.as_ptr()))
        })
    }

    /// Runs one step; on failure reports it and turns it into the spawn's error.
    unsafe fn step(
        &self,
        step: Step,
        f: impl FnOnce() -> Result<(), libc::c_int>,
    ) -> io::Result<()> {
        self.step_at(step, usize::MAX, f)
    }

    /// Runs part `n` of a step; on failure reports it (its number, errno and `n`:
    /// [`REPORT_BYTES`] bytes) and turns it into the spawn's error.
    unsafe fn step_at(
        &self,
        step: Step,
        n: usize,
        f: impl FnOnce() -> Result<(), libc::c_int>,
    ) -> io::Result<()> {
        match f() {
            Ok(()) => Ok(()),
            Err(e) => {
                let mut msg = [0u8; REPORT_BYTES];
                msg[0] = step as u8;
                msg[1..5].copy_from_slice(&e.to_ne_bytes());
                msg[5..].copy_from_slice(&(n as u32).to_ne_bytes());
                libc::write(self.report, msg.as_ptr().cast(), msg.len());
                Err(io::Error::from_raw_os_error(e))
            }
        }
    }
}

/// The size of a failure report: the step, `errno`, and which part of the step.
pub(super) const REPORT_BYTES: usize = 9;

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
    allow_beneath(ruleset, path, READ_ACCESS)
}

/// Adds a rule to `ruleset` giving the box `access` beneath `path`.
unsafe fn allow_beneath(ruleset: RawFd, path: &CString, access: u64) -> Result<(), libc::c_int> {
    let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(errno());
    }
    let attr = PathBeneath {
        allowed_access: access,
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

/// Opens `path` (`O_PATH`) and sends the descriptor over `socket`.
unsafe fn send_fd(socket: RawFd, path: &CString) -> Result<(), libc::c_int> {
    let fd = libc::open(
        path.as_ptr(),
        libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
    );
    if fd < 0 {
        return Err(errno());
    }
    let mut byte = [0u8; 1];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut space = [0u64; 8];
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = space.as_mut_ptr().cast();
    msg.msg_controllen = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as _;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
    std::ptr::write_unaligned(libc::CMSG_DATA(cmsg) as *mut libc::c_int, fd);
    let r = libc::sendmsg(socket, &msg, libc::MSG_DONTWAIT);
    let e = errno();
    libc::close(fd);
    if r < 0 {
        return Err(e);
    }
    Ok(())
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
///
/// Setting the secure bits needs `CAP_SETPCAP`; a root that has already lost it (a
/// container's root with its capabilities dropped) is refused with `EPERM`, and goes on:
/// its sets are emptied all the same, and `no_new_privs`, set next, keeps an `exec` from
/// granting more than the (empty) permitted set.
unsafe fn drop_capabilities() -> Result<(), libc::c_int> {
    let bits = libc::SECBIT_NOROOT
        | libc::SECBIT_NOROOT_LOCKED
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    match check(libc::prctl(
        libc::PR_SET_SECUREBITS,
        bits as libc::c_ulong,
        0,
        0,
        0,
    )) {
        Ok(()) | Err(libc::EPERM) => {}
        Err(e) => return Err(e),
    }
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
