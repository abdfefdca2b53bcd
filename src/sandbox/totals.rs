//! Totals: what the box as a whole may use (processes at once, memory, disk), not only each
//! of its processes.
//!
//! Per-process limits (`setrlimit`) let a box run 700 processes as root (the process count
//! never binds uid 0), four processes of 2 GB each under a "16 GiB" memory limit, and any
//! number of files as large as the file limit. A total is kept, for each resource, by the
//! strongest means this machine gives, found by trying ([`TotalsFound`]):
//!
//! - a control group of the box's own (cgroup v2 where this process may make one with the
//!   `pids` and `memory` controllers, else cgroup v1's `pids` and `memory` hierarchies,
//!   which root has): the kernel refuses the fork past the count and kills past the memory;
//! - without one, processes are counted by `RLIMIT_NPROC` in the box's own user namespace
//!   (where the count starts at the box), and memory is watched: git triad sums the
//!   resident memory of the box's processes a few times a second and stops the box past the
//!   total;
//! - disk: the box's home and temporary directories are a tmpfs of the total (the kernel
//!   refuses a write past it), and the scratch copy, the caller's directories and the build
//!   cache are watched the same way.
//!
//! A total that cannot be kept here says so in the record; a command one of them stopped
//! says which.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::Limits;

/// Where this machine lets the box have a control group of its own.
#[derive(Debug, Clone, Default)]
pub struct TotalsFound {
    /// A cgroup v2 directory in which a child with `pids` and `memory` can be made.
    pub v2: Option<PathBuf>,
    /// A cgroup v1 `pids` directory in which a child can be made.
    pub v1_pids: Option<PathBuf>,
    /// A cgroup v1 `memory` directory in which a child can be made.
    pub v1_memory: Option<PathBuf>,
    /// Why there is no control group, when there is none.
    pub why_not: Option<String>,
}

impl TotalsFound {
    /// Whether processes are counted by a control group.
    pub fn pids_by_cgroup(&self) -> bool {
        self.v2.is_some() || self.v1_pids.is_some()
    }

    /// Whether memory is limited by a control group.
    pub fn memory_by_cgroup(&self) -> bool {
        self.v2.is_some() || self.v1_memory.is_some()
    }
}

/// Finds where this process may make control groups: tries making one in each place.
pub fn find() -> TotalsFound {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut found = TotalsFound::default();
    let mut why = Vec::new();
    // cgroup v2: the unified hierarchy, at "0::<path>".
    if let (Some(mount), Some(own)) = (
        mount_of(&mountinfo, |fs, _| fs == "cgroup2"),
        cgroups
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .map(str::to_string),
    ) {
        let dir = mount.join(own.trim_start_matches('/'));
        match try_v2(&dir) {
            Ok(()) => found.v2 = Some(dir),
            Err(e) => why.push(format!("cgroup v2 ({}): {e}", dir.display())),
        }
    } else {
        why.push("no cgroup v2 hierarchy".into());
    }
    if found.v2.is_none() {
        for controller in ["pids", "memory"] {
            let own = cgroups.lines().find_map(|l| {
                let mut parts = l.splitn(3, ':');
                let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
                names
                    .split(',')
                    .any(|n| n == controller)
                    .then(|| path.to_string())
            });
            let mount = mount_of(&mountinfo, |fs, options| {
                fs == "cgroup" && options.split(',').any(|o| o == controller)
            });
            let (Some(mount), Some(own)) = (mount, own) else {
                why.push(format!("no cgroup v1 {controller} hierarchy"));
                continue;
            };
            let dir = mount.join(own.trim_start_matches('/'));
            match try_v1(&dir, controller) {
                Ok(()) if controller == "pids" => found.v1_pids = Some(dir),
                Ok(()) => found.v1_memory = Some(dir),
                Err(e) => why.push(format!("cgroup v1 {controller} ({}): {e}", dir.display())),
            }
        }
    }
    if !found.pids_by_cgroup() || !found.memory_by_cgroup() {
        found.why_not = Some(why.join("; "));
    }
    found
}

/// The mount point of the first mount whose file system type and super options `pick`
/// accepts.
fn mount_of(mountinfo: &str, pick: impl Fn(&str, &str) -> bool) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split(' ');
        let (fs, _source, options) = (r.next()?, r.next()?, r.next().unwrap_or(""));
        let at = left.split(' ').nth(4)?;
        pick(fs, options).then(|| PathBuf::from(at))
    })
}

/// A name for a control group of this process's, unique in it.
fn fresh_name(kind: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!(
        "git-triad-{kind}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Whether a child with `pids` and `memory` can be made in the v2 directory `dir`.
fn try_v2(dir: &Path) -> Result<(), String> {
    let probe = dir.join(fresh_name("probe"));
    std::fs::create_dir(&probe).map_err(|e| format!("cannot make a control group: {e}"))?;
    let has = |p: &Path| {
        let c = std::fs::read_to_string(p.join("cgroup.controllers")).unwrap_or_default();
        let names: Vec<&str> = c.split_whitespace().collect();
        names.contains(&"pids") && names.contains(&"memory")
    };
    let mut ok = has(&probe);
    if !ok {
        // Enabling them for the children works where this directory holds no process
        // (or is the root).
        let _ = std::fs::write(dir.join("cgroup.subtree_control"), "+pids +memory");
        ok = has(&probe);
    }
    let _ = std::fs::remove_dir(&probe);
    if ok {
        Ok(())
    } else {
        Err("the pids and memory controllers are not delegated here".into())
    }
}

/// Whether a child can be made in the v1 directory `dir` and given a limit.
fn try_v1(dir: &Path, controller: &str) -> Result<(), String> {
    let probe = dir.join(fresh_name("probe"));
    std::fs::create_dir(&probe).map_err(|e| format!("cannot make a control group: {e}"))?;
    let (file, value) = match controller {
        "pids" => ("pids.max", "max"),
        _ => ("memory.limit_in_bytes", "-1"),
    };
    let written = std::fs::write(probe.join(file), value);
    let _ = std::fs::remove_dir(&probe);
    written.map_err(|e| format!("cannot set {file}: {e}"))
}

/// The control groups of one boxed command, removed (with anything left in them) when
/// dropped.
pub(super) struct Cgroups {
    /// (directory, version, what it limits).
    dirs: Vec<(PathBuf, Version)>,
    /// The `cgroup.procs` files the child joins.
    pub procs: Vec<File>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Version {
    V2,
    V1Pids,
    V1Memory,
}

impl Cgroups {
    /// Makes the box's control groups with `limits`, where `found` says it can.
    pub fn new(found: &TotalsFound, limits: &Limits) -> Result<Cgroups, String> {
        let mut groups = Cgroups {
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        let memory = limits.memory_mb.saturating_mul(1024 * 1024).to_string();
        let pids = limits.processes.to_string();
        let make = |parent: &Path| -> Result<PathBuf, String> {
            let dir = parent.join(fresh_name("box"));
            std::fs::create_dir(&dir).map_err(|e| format!("cannot make {}: {e}", dir.display()))?;
            Ok(dir)
        };
        let set = |dir: &Path, file: &str, value: &str| {
            std::fs::write(dir.join(file), value)
                .map_err(|e| format!("cannot set {file} in {}: {e}", dir.display()))
        };
        if let Some(parent) = &found.v2 {
            let dir = make(parent)?;
            groups.dirs.push((dir.clone(), Version::V2));
            set(&dir, "pids.max", &pids)?;
            set(&dir, "memory.max", &memory)?;
            // Swap counts too where it is accounted; a machine without swap has no file.
            let _ = std::fs::write(dir.join("memory.swap.max"), "0");
        }
        if let Some(parent) = &found.v1_pids {
            let dir = make(parent)?;
            groups.dirs.push((dir.clone(), Version::V1Pids));
            set(&dir, "pids.max", &pids)?;
        }
        if let Some(parent) = &found.v1_memory {
            let dir = make(parent)?;
            groups.dirs.push((dir.clone(), Version::V1Memory));
            set(&dir, "memory.limit_in_bytes", &memory)?;
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), &memory);
            }
        }
        for (dir, _) in &groups.dirs {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(dir.join("cgroup.procs"))
                .map_err(|e| format!("cannot open {}/cgroup.procs: {e}", dir.display()))?;
            groups.procs.push(f);
        }
        Ok(groups)
    }

    /// Which total stopped something, as the record says it: a fork refused past the
    /// process count, a process killed past the memory total.
    pub fn stopped(&self, limits: &Limits) -> Option<String> {
        let count = |dir: &Path, file: &str, key: &str| -> u64 {
            std::fs::read_to_string(dir.join(file))
                .unwrap_or_default()
                .lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse().ok())
                .unwrap_or(0)
        };
        let mut oom = 0;
        let mut forks = 0;
        for (dir, version) in &self.dirs {
            match version {
                Version::V2 => {
                    oom += count(dir, "memory.events", "oom_kill ");
                    forks += count(dir, "pids.events", "max ");
                }
                Version::V1Pids => forks += count(dir, "pids.events", "max "),
                Version::V1Memory => oom += count(dir, "memory.oom_control", "oom_kill "),
            }
        }
        if oom > 0 {
            return Some(memory_stop(limits, "a process was killed (control group)"));
        }
        (forks > 0)
            .then(|| process_stop(limits, &format!("{forks} fork(s) refused (control group)")))
    }

    /// Kills whatever is still in the box's control groups.
    pub fn kill_all(&self) {
        for (dir, version) in &self.dirs {
            if *version == Version::V2 && std::fs::write(dir.join("cgroup.kill"), "1").is_ok() {
                continue;
            }
            let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
            for pid in procs.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                // SAFETY: kill(2) touches no memory of ours.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        self.kill_all();
        for (dir, _) in &self.dirs {
            // The killed processes leave the group as they are reaped: a few tries.
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// What the record says of a command the memory total stopped.
pub(super) fn memory_stop(limits: &Limits, how: &str) -> String {
    format!(
        "memory total ({} MiB for the whole box): {how}",
        limits.memory_mb
    )
}

/// What the record says of a command the process total stopped.
pub(super) fn process_stop(limits: &Limits, how: &str) -> String {
    format!(
        "process total ({} at once for the whole box): {how}",
        limits.processes
    )
}

/// What the record says of a command the disk total stopped.
pub(super) fn disk_stop(limits: &Limits, how: &str) -> String {
    format!(
        "disk total ({} MiB for the whole box): {how}",
        limits.disk_mb
    )
}

/// Watches a running box from outside: the resident memory of its processes (where no
/// control group limits it), how many of them run at once, and what it wrote to disk.
pub(super) struct Watch {
    /// The box's first process (the waiter whose descendants are the box).
    root: i32,
    /// Bytes of resident memory the box may hold, when watched here.
    memory: Option<u64>,
    /// Bytes the box may add to `dirs` and its tmpfs.
    disk: u64,
    /// The directories it writes on disk, and what they held at the start.
    dirs: Vec<PathBuf>,
    start: u64,
    /// The box's own tmpfs (home, temporary directory), whose use counts too.
    pub tmpfs: Option<File>,
    /// When the disk is looked at next, and how long a look took.
    next_disk: Instant,
    /// Most processes seen at once.
    pub peak: usize,
    /// When memory and processes are looked at next.
    next: Instant,
}

impl Watch {
    /// A watch on the box whose first process is `root`, writing `dirs`.
    pub fn new(root: i32, limits: &Limits, memory_watched: bool, dirs: Vec<PathBuf>) -> Watch {
        let start = dirs.iter().map(|d| du(d)).sum();
        Watch {
            root,
            memory: memory_watched.then(|| limits.memory_mb.saturating_mul(1024 * 1024)),
            disk: limits.disk_mb.saturating_mul(1024 * 1024),
            dirs,
            start,
            tmpfs: None,
            next_disk: Instant::now(),
            peak: 0,
            next: Instant::now(),
        }
    }

    /// Looks when it is time to; the total the box went past, if it did.
    pub fn look(&mut self, limits: &Limits) -> Option<String> {
        let now = Instant::now();
        if now >= self.next {
            self.next = now + Duration::from_millis(50);
            let pids = descendants(self.root);
            self.peak = self.peak.max(pids.len());
            if let Some(max) = self.memory {
                let used: u64 = pids.iter().map(|p| resident(*p)).sum();
                if used > max {
                    return Some(memory_stop(
                        limits,
                        &format!(
                            "its processes held {} MiB; git triad stopped it",
                            used / (1024 * 1024)
                        ),
                    ));
                }
            }
        }
        if now >= self.next_disk {
            let took = Instant::now();
            let used = self.disk_used();
            self.next_disk = Instant::now() + (took.elapsed() * 20).max(Duration::from_millis(200));
            if used > self.disk {
                return Some(disk_stop(
                    limits,
                    &format!(
                        "it wrote {} MiB; git triad stopped it",
                        used / (1024 * 1024)
                    ),
                ));
            }
        }
        None
    }

    /// What the box has added to disk: its directories' growth and its tmpfs's use.
    fn disk_used(&self) -> u64 {
        let now: u64 = self.dirs.iter().map(|d| du(d)).sum();
        let tmpfs = self.tmpfs.as_ref().map_or(0, |f| {
            use std::os::fd::AsRawFd;
            // SAFETY: fstatfs(2) writes into the zeroed struct we own.
            let mut s: libc::statfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::fstatfs(f.as_raw_fd(), &mut s) } != 0 {
                return 0;
            }
            (s.f_blocks.saturating_sub(s.f_bfree)).saturating_mul(s.f_bsize as u64)
        });
        now.saturating_sub(self.start) + tmpfs
    }
}

/// The bytes the files under `dir` take on disk (allocated blocks; links not followed).
pub(super) fn du(dir: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(m) = e.metadata() else { continue };
            total += m.blocks() * 512;
            if m.is_dir() {
                stack.push(e.path());
            }
        }
    }
    total
}

/// The processes descending from `root`, `root` included (from every process's parent in
/// `/proc/<pid>/stat`, which anyone may read).
fn descendants(root: i32) -> Vec<i32> {
    let mut parents: Vec<(i32, i32)> = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // The parent is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
        if let Some(ppid) = ppid {
            parents.push((pid, ppid));
        }
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let p = found[i];
        found.extend(parents.iter().filter(|(_, pp)| *pp == p).map(|(c, _)| *c));
        i += 1;
    }
    found
}

/// The resident memory of process `pid`, in bytes (`/proc/<pid>/statm`; 0 if it is gone).
fn resident(pid: i32) -> u64 {
    let pages: u64 = std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf(3) reads a constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    pages * page
}

/// Empties `cache` when it holds more than `limit` bytes: a build cache the box wrote is
/// kept between commands, never beyond the disk total. Says whether it did.
pub fn cap_cache(cache: &Path, limit: u64) -> bool {
    if du(cache) <= limit {
        return false;
    }
    let _ = std::fs::remove_dir_all(cache);
    let _ = std::fs::create_dir_all(cache);
    let _ = File::create(cache.join(".capped")).and_then(|mut f| {
        f.write_all(b"emptied by git triad: it held more than the box's disk total\n")
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_cache_past_the_total_is_emptied_and_one_within_it_kept() {
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(cache.path().join("small"), vec![0u8; 1000]).unwrap();
        assert!(!cap_cache(cache.path(), 1 << 20));
        assert!(cache.path().join("small").is_file());
        std::fs::write(cache.path().join("big"), vec![0u8; 2 << 20]).unwrap();
        assert!(cap_cache(cache.path(), 1 << 20));
        assert!(!cache.path().join("big").exists());
        assert!(cache.path().join(".capped").is_file());
    }
}
