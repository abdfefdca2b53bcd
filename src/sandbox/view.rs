//! What the box sees of the machine: a minimal root of its own, where a mount namespace
//! allows one.
//!
//! Landlock decides which files the box may read and write, but not who may change a
//! readable file's mode, times or extended attributes, and not which unix sockets a path
//! reaches (`/run/…`, `/tmp/.X11-unix`, a docker socket). So the box gets a root of its own,
//! as bubblewrap and hakoniwa build one: an empty tmpfs holding only what the allow-list
//! names, each bound at its own path, read-only unless it is one of the writable places;
//! `/etc` without its secrets; `/dev` with the null, zero and random devices only; its own
//! `/proc` (with a PID namespace); a private `/tmp`, `/dev/shm` and home on a tmpfs of the
//! box's disk total. The machine's runtime directories, other users' files and the rest of
//! the home are simply not there.
//!
//! Everything here is prepared in the parent as C strings ([`View`]); the child makes the
//! mounts with raw system calls ([`super::child`]).

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::allow::{AllowList, ETC_SECRETS};

/// One step of building the root, in order.
#[derive(Debug)]
pub(super) enum Op {
    /// A directory (a mount point, or a parent of one).
    Mkdir(CString),
    /// An empty file (the mount point of a file).
    Touch(CString),
    /// A symbolic link (`/bin -> usr/bin`).
    Symlink {
        /// What it points to.
        target: CString,
        /// Where it is.
        at: CString,
    },
    /// `from` bound at `to` (with what is mounted beneath it, when `recursive`).
    Bind {
        /// The machine's path.
        from: CString,
        /// Its place in the new root.
        to: CString,
        /// Whether mounts beneath `from` come along.
        recursive: bool,
    },
    /// A bind made read-only, with the flags it must keep (`MS_NOSUID` …).
    ReadOnly {
        /// The mount point in the new root.
        at: CString,
        /// `MS_*` flags of the source, kept.
        flags: libc::c_ulong,
    },
    /// A tmpfs.
    Tmpfs {
        /// Where.
        at: CString,
        /// Its mount options (`size=…,mode=…`).
        options: CString,
    },
    /// A `/proc` for the box's PID namespace.
    Proc(CString),
    /// A Landlock rule added in the child for a mount made there (its inode did not exist
    /// when the ruleset was built): read beneath it, or read and write.
    Allow {
        /// The path in the new root.
        at: CString,
        /// Whether writes are allowed too.
        write: bool,
    },
    /// The new root's own tmpfs made read-only once every mount point is in it.
    SealRoot,
    /// The box's tmpfs handed to git triad (over the setup's socket), which counts its
    /// use toward the disk total.
    Share(CString),
}

/// The root a boxed command gets: where it is built, how, and where the command starts.
#[derive(Debug)]
pub(super) struct View {
    /// The empty directory the tmpfs root is mounted on.
    pub root: CString,
    /// The steps, in order.
    pub ops: Vec<Op>,
    /// The command's working directory, inside the new root.
    pub cwd: CString,
    /// What each step is about, for an error sentence (`binding /usr`), by index.
    pub about: Vec<String>,
}

/// The box's home, inside its own root (on its /tmp tmpfs).
pub(super) const BOX_HOME: &str = "/tmp/home";

/// The box's temporary directory, inside its own root: a tmpfs of its own.
pub(super) const BOX_TMP: &str = "/tmp";

/// Devices the box gets in its `/dev`.
const DEVICES: &[&str] = &["null", "zero", "full", "random", "urandom"];

/// What [`plan`] needs to know about the box's own directories.
pub(super) struct Private<'a> {
    /// The directory git triad made for the box (its disk copy of `home` and `tmp`, not
    /// bound: inside its root the box has [`BOX_HOME`] and [`BOX_TMP`]).
    pub dir: &'a Path,
    /// The empty directory the new root is built on.
    pub root: &'a Path,
    /// The size of the box's tmpfs, in bytes.
    pub size: u64,
}

/// The view for a command whose reads and writes are `allow`, run in `cwd`; `proc` when it
/// has a PID namespace of its own. The error names a path that cannot be mounted.
pub(super) fn plan(
    allow: &AllowList,
    private: &Private<'_>,
    proc: bool,
    cwd: &Path,
) -> Result<View, String> {
    let mounts = mount_points();
    let mut b = Builder {
        root: private.root.to_path_buf(),
        ops: Vec::new(),
        about: Vec::new(),
        made: BTreeSet::new(),
        bound: Vec::new(),
    };
    // Reads: the allow-list, with `/etc` whole (its secrets hidden below) instead of its
    // entries one by one, and without what the box gets its own of (devices, /proc).
    let mut reads: Vec<PathBuf> = allow
        .read
        .iter()
        .filter(|p| !p.starts_with("/etc") && !p.starts_with("/dev") && !p.starts_with("/proc"))
        .cloned()
        .collect();
    if Path::new("/etc").is_dir() {
        reads.push("/etc".into());
    }
    let writes: Vec<PathBuf> = allow
        .write
        .iter()
        .filter(|p| !p.starts_with("/dev") && !p.starts_with(private.dir))
        .cloned()
        .collect();
    // Its own /tmp first (the places bound beneath it get their mount points in it): a
    // tmpfs of the disk total, holding its home and /dev/shm too.
    let tmp = Path::new(BOX_TMP);
    b.mkdir_all(tmp)?;
    let size = private.size.max(1024 * 1024);
    b.push(
        Op::Tmpfs {
            at: b.inside(tmp)?,
            options: c(&format!("size={size},mode=1777"))?,
        },
        "mounting its own /tmp".into(),
    );
    for dir in [BOX_HOME, "/tmp/.shm"] {
        b.push(
            Op::Mkdir(b.inside(Path::new(dir))?),
            format!("making {dir}"),
        );
    }
    b.push(
        Op::Allow {
            at: b.inside(tmp)?,
            write: true,
        },
        "letting it write its own /tmp".into(),
    );
    b.push(
        Op::Share(b.inside(tmp)?),
        "handing its /tmp to git triad".into(),
    );
    let mut wanted: Vec<(PathBuf, bool)> = reads.into_iter().map(|p| (p, false)).collect();
    wanted.extend(writes.into_iter().map(|p| (p, true)));
    // Parents before children; a write beneath a read is bound over it.
    wanted.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    wanted.dedup();
    for (path, write) in wanted {
        b.bind(&path, write, &mounts)?;
    }
    b.seal_tmp_parents()?;
    // /etc without its secrets.
    for name in ETC_SECRETS {
        let path = Path::new("/etc").join(name);
        match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => b.push(
                Op::Tmpfs {
                    at: b.inside(&path)?,
                    options: c("size=4k,mode=0755")?,
                },
                format!("hiding {}", path.display()),
            ),
            Ok(m) if m.is_file() => b.push(
                Op::Bind {
                    from: c("/dev/null")?,
                    to: b.inside(&path)?,
                    recursive: false,
                },
                format!("hiding {}", path.display()),
            ),
            _ => {}
        }
    }
    // /dev: a few devices, /dev/fd, and a private /dev/shm.
    let dev = Path::new("/dev");
    b.mkdir_all(dev)?;
    b.push(
        Op::Tmpfs {
            at: b.inside(dev)?,
            options: c("size=64k,mode=0755")?,
        },
        "mounting its /dev".into(),
    );
    for name in DEVICES {
        let device = dev.join(name);
        if device.exists() {
            let at = b.inside(&device)?;
            b.push(
                Op::Touch(at.clone()),
                format!("making {}", device.display()),
            );
            b.push(
                Op::Bind {
                    from: path_c(&device)?,
                    to: at,
                    recursive: false,
                },
                format!("binding {}", device.display()),
            );
        }
    }
    for (name, target) in [
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ] {
        b.push(
            Op::Symlink {
                target: c(target)?,
                at: b.inside(&dev.join(name))?,
            },
            format!("linking /dev/{name}"),
        );
    }
    let shm = Path::new("/dev/shm");
    b.mkdir_all(shm)?;
    b.push(
        Op::Bind {
            from: b.inside(&Path::new(BOX_TMP).join(".shm"))?,
            to: b.inside(shm)?,
            recursive: false,
        },
        "binding its own /dev/shm".into(),
    );
    if proc {
        let at = Path::new("/proc");
        b.mkdir_all(at)?;
        b.push(Op::Proc(b.inside(at)?), "mounting its own /proc".into());
        b.push(
            Op::Allow {
                at: b.inside(at)?,
                write: false,
            },
            "letting it read its own /proc".into(),
        );
    }
    b.push(Op::SealRoot, "making the new root read-only".into());
    Ok(View {
        root: path_c(private.root)?,
        ops: b.ops,
        cwd: path_c(cwd)?,
        about: b.about,
    })
}

/// Collects the steps.
struct Builder {
    root: PathBuf,
    ops: Vec<Op>,
    about: Vec<String>,
    /// Directories already made in the new root.
    made: BTreeSet<PathBuf>,
    /// What is bound so far: (path, writable).
    bound: Vec<(PathBuf, bool)>,
}

impl Builder {
    fn push(&mut self, op: Op, about: String) {
        self.ops.push(op);
        self.about.push(about);
    }

    /// `path` in the new root.
    fn inside(&self, path: &Path) -> Result<CString, String> {
        let rel = path.strip_prefix("/").unwrap_or(path);
        path_c(&self.root.join(rel))
    }

    /// Whether `path` is already visible through an earlier bind (with writes, when
    /// `write`).
    fn covered(&self, path: &Path, write: bool) -> bool {
        self.bound
            .iter()
            .any(|(p, w)| path.starts_with(p) && (*w || !write))
    }

    /// Makes `path` and its parents in the new root, unless an earlier bind shows them.
    fn mkdir_all(&mut self, path: &Path) -> Result<(), String> {
        let mut walked = PathBuf::from("/");
        for part in path.components().skip(1) {
            walked.push(part);
            if self.bound.iter().any(|(p, _)| walked.starts_with(p)) {
                // It is the machine's own directory, seen through a bind.
                return Ok(());
            }
            if self.made.insert(walked.clone()) {
                let at = self.inside(&walked)?;
                self.push(Op::Mkdir(at), format!("making {}", walked.display()));
            }
        }
        Ok(())
    }

    /// Makes read-only each directory made in the box's own /tmp only to hold a mount point
    /// (`/tmp/<someone's dir>/…` on the way to a bound toolchain or scratch copy): writable,
    /// it would let the command create files at paths of the machine's (a home under
    /// /tmp), which it would then report as written there. Each is bound onto itself with
    /// what is mounted beneath it, and only that bind is made read-only.
    fn seal_tmp_parents(&mut self) -> Result<(), String> {
        let tmp = Path::new(BOX_TMP);
        let own = [Path::new(BOX_HOME), Path::new("/tmp/.shm")];
        let tops: Vec<PathBuf> = self
            .made
            .iter()
            .filter(|p| p.parent() == Some(tmp) && !own.contains(&p.as_path()))
            .filter(|p| !self.bound.iter().any(|(b, _)| b == *p))
            .cloned()
            .collect();
        for top in tops {
            let at = self.inside(&top)?;
            self.push(
                Op::Bind {
                    from: at.clone(),
                    to: at.clone(),
                    recursive: true,
                },
                format!("binding {} onto itself", top.display()),
            );
            self.push(
                Op::ReadOnly {
                    at,
                    flags: libc::MS_NOSUID | libc::MS_NODEV,
                },
                format!("making {} read-only", top.display()),
            );
        }
        Ok(())
    }

    /// Binds `path` at its own place, read-only unless `write`; a symbolic link is bound
    /// where it leads (a top-level one, like `/bin -> usr/bin`, is made a link again).
    fn bind(&mut self, path: &Path, write: bool, mounts: &[PathBuf]) -> Result<(), String> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(());
        };
        if self.covered(path, write) {
            return Ok(());
        }
        let source = if meta.file_type().is_symlink() {
            let Ok(real) = path.canonicalize() else {
                return Ok(());
            };
            if path.parent() == Some(Path::new("/")) {
                if let Ok(target) = std::fs::read_link(path) {
                    let at = self.inside(path)?;
                    self.made.insert(path.to_path_buf());
                    self.push(
                        Op::Symlink {
                            target: path_c(&target)?,
                            at,
                        },
                        format!("linking {}", path.display()),
                    );
                    return self.bind(&real, write, mounts);
                }
            }
            real
        } else {
            path.to_path_buf()
        };
        let is_dir = source.is_dir();
        if let Some(parent) = path.parent() {
            self.mkdir_all(parent)?;
        }
        let to = self.inside(path)?;
        if !self.covered(path, false) && self.made.insert(path.to_path_buf()) {
            let op = if is_dir {
                Op::Mkdir(to.clone())
            } else {
                Op::Touch(to.clone())
            };
            self.push(op, format!("making {}", path.display()));
        }
        // Mounts beneath come along (a user namespace may not bind a mount without the
        // ones locked beneath it), each made read-only below.
        let recursive = true;
        self.push(
            Op::Bind {
                from: path_c(&source)?,
                to: to.clone(),
                recursive,
            },
            format!("binding {}", path.display()),
        );
        if !write {
            self.push(
                Op::ReadOnly {
                    at: to,
                    flags: kept_flags(&source),
                },
                format!("making {} read-only", path.display()),
            );
            if recursive {
                for below in mounts
                    .iter()
                    .filter(|m| m.starts_with(&source) && **m != source)
                {
                    let rel = below.strip_prefix(&source).unwrap_or(below);
                    let at = self.inside(&path.join(rel))?;
                    self.push(
                        Op::ReadOnly {
                            at,
                            flags: kept_flags(below),
                        },
                        format!("making {} read-only", below.display()),
                    );
                }
            }
        }
        self.bound.push((path.to_path_buf(), write));
        Ok(())
    }
}

/// The flags a read-only remount of a bind of `path` must keep: a mount made in a user
/// namespace may not drop `nosuid`, `nodev`, `noexec` or the atime mode it was bound with.
fn kept_flags(path: &Path) -> libc::c_ulong {
    let Ok(p) = path_c(path) else { return 0 };
    // SAFETY: statvfs(3) writes into the zeroed struct we own; `p` is a valid C string.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(p.as_ptr(), &mut s) } != 0 {
        return 0;
    }
    let f = s.f_flag;
    let mut flags = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st != 0 {
            flags |= ms;
        }
    }
    if f & (libc::ST_NOATIME | libc::ST_RELATIME) == 0 {
        flags |= libc::MS_STRICTATIME;
    }
    flags
}

/// The mount points of this process's namespace (`/proc/self/mountinfo`).
fn mount_points() -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string("/proc/self/mountinfo") else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape(p)))
        .collect()
}

/// A mountinfo path with its octal escapes (`\040` for a space) undone.
fn unescape(p: &str) -> String {
    let bytes = p.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 3 < bytes.len() {
            if let Ok(v) = u8::from_str_radix(&p[i + 1..i + 4], 8) {
                out.push(v);
                i += 4;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A fixed string as a C string.
fn c(s: &str) -> Result<CString, String> {
    CString::new(s).map_err(|_| format!("`{s}` holds a NUL byte"))
}

/// A path as a C string.
fn path_c(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| format!("`{}` holds a NUL byte", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_escapes_are_undone() {
        assert_eq!(unescape("/mnt/a\\040b"), "/mnt/a b");
        assert_eq!(unescape("/plain"), "/plain");
    }
}
