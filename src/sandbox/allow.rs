//! What the box may read and write: the allow-lists, and the Landlock ruleset that holds
//! them.
//!
//! Reads: the system (`/usr`, `/bin`, `/lib*`, `/opt`, `/etc` but its secrets, `/sys`, a few
//! devices), the toolchains wherever they live (every directory of `PATH` that is not the
//! home itself, `~/.cargo`, `~/.rustup`, a pyenv, `~/.local/lib`…, and what the caller
//! adds: the project's virtualenv), `/proc` only where it shows the box's own processes.
//! Nothing else of the home (`~/.ssh`, `~/.config`, other repositories) and nothing of the
//! user's repository or its `.git`. Writes: the caller's directories (the scratch tree, a
//! build cache), the box's private temporary directory and home, `/dev/null` and its kin.
//! Everything else is refused by the kernel, for the command and all it starts.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Entries of `/etc` never readable in the box: password hashes, sudo rules, host keys,
/// private TLS keys.
pub(super) const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssh",
    "ssl",
    "security",
    "krb5.keytab",
    "libvirt",
    "wireguard",
    "NetworkManager",
];

/// System directories the box reads and runs programs from.
const SYSTEM: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/nix/store",
    "/sys",
];

/// Device files the box may read and write.
const DEVICES_RW: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];

/// Device files the box may read.
const DEVICES_R: &[&str] = &["/dev/random", "/dev/urandom"];

/// Toolchain directories under the home, read (and run) where they exist: language
/// installers put compilers, interpreters and package caches there. Each by its own
/// directory: `~/.cargo`'s programs and package sources, never its `credentials.toml`;
/// `~/go`'s module cache and programs, never the repositories in its `src`.
const HOME_TOOLCHAINS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".pyenv",
    ".local/lib",
    ".nvm",
    ".volta",
    ".deno",
    ".bun",
    ".rbenv",
    ".asdf",
    ".sdkman",
    "go/bin",
    "go/pkg/mod",
];

/// Version managers whose `PATH` entries (`<root>/shims`, `<root>/bin`) run the manager's
/// own scripts from elsewhere in its root (a pyenv shim execs `<root>/libexec/pyenv`): a
/// `PATH` entry beneath a directory of one of these names grants that directory, wherever
/// it was installed and whatever `HOME` says now (never its parent).
const VERSION_MANAGERS: &[&str] = &[".pyenv", ".rbenv", ".asdf", ".nvm", ".volta", ".sdkman"];

/// Environment variables naming a toolchain's own directory, read whole where set.
const TOOLCHAIN_VARS: &[&str] = &["RUSTUP_HOME", "PYENV_ROOT", "VIRTUAL_ENV"];

/// What of `CARGO_HOME` is read: its programs and package sources.
const CARGO_PARTS: &[&str] = &["bin", "registry", "git"];

/// The paths a box reads and writes.
#[derive(Debug, Clone, Default)]
pub struct AllowList {
    /// Read (and run programs from) these, and what is beneath them.
    pub read: Vec<PathBuf>,
    /// Read and write these, and what is beneath them.
    pub write: Vec<PathBuf>,
}

impl AllowList {
    /// The system's and the toolchains' paths for reading, for a process whose environment
    /// is `vars`, plus `extra` reads; `proc` when `/proc` shows only the box's processes.
    ///
    /// A `PATH` directory grants itself, never its parent; a link in it grants the file it
    /// leads to, and the toolchain that file belongs to only when that is an installed
    /// prefix (`<prefix>/bin/<program>` beside `<prefix>/lib`) outside any repository and
    /// outside the home's top.
    pub fn system(vars: &[(String, String)], extra: &[PathBuf], proc: bool) -> AllowList {
        let get = |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let home = get("HOME").map(PathBuf::from);
        let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
        read.extend(DEVICES_R.iter().map(PathBuf::from));
        read.extend(etc_entries());
        if proc {
            read.push("/proc".into());
        }
        if let Some(h) = &home {
            read.extend(HOME_TOOLCHAINS.iter().map(|t| h.join(t)));
        }
        if let Some(cargo) = get("CARGO_HOME") {
            read.extend(CARGO_PARTS.iter().map(|p| Path::new(cargo).join(p)));
        }
        read.extend(
            TOOLCHAIN_VARS
                .iter()
                .filter_map(|v| get(v))
                .map(PathBuf::from),
        );
        for dir in get("PATH").unwrap_or_default().split(':') {
            let dir = Path::new(dir);
            if too_wide(dir, home.as_deref()) {
                continue;
            }
            read.extend(linked_toolchains(dir, home.as_deref()));
            read.extend(version_manager(dir, home.as_deref()));
            read.push(dir.to_path_buf());
            // A directory that is itself a link grants where it leads, and no more.
            if let Ok(real) = dir.canonicalize() {
                if real != dir && !too_wide(&real, home.as_deref()) {
                    read.push(real);
                }
            }
        }
        read.extend(extra.iter().cloned());
        read.sort();
        read.dedup();
        AllowList {
            read,
            write: DEVICES_RW.iter().map(PathBuf::from).collect(),
        }
    }
}

/// Whether reading all of `dir` would open too much: a relative path, the root, the home or
/// an ancestor of it.
fn too_wide(dir: &Path, home: Option<&Path>) -> bool {
    !dir.is_absolute() || dir == Path::new("/") || home.is_some_and(|h| h.starts_with(dir))
}

/// What the links of a `PATH` directory grant: each the file it leads to; for a file in a
/// version manager's root ([`VERSION_MANAGERS`]), that root; for a file at
/// `<prefix>/bin/<program>` of an installed toolchain (`<prefix>/lib` beside it, no
/// repository around it, not the home or above), `<prefix>/bin` and `<prefix>/lib` (an
/// interpreter needs its library). Read once per directory and process.
fn linked_toolchains(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, Vec<PathBuf>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(found) = seen.lock().ok().and_then(|m| m.get(dir).cloned()) {
        return found;
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut add = |p: PathBuf| {
        if !found.contains(&p) {
            found.push(p);
        }
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
        let Some(target) = is_link.then(|| entry.path().canonicalize().ok()).flatten() else {
            continue;
        };
        if let Some(root) = version_manager(&target, home) {
            // A link into a version manager's root (`python3 -> ~/.pyenv/versions/…`) may
            // lead on through its other links: the root, as its own `PATH` entries get.
            add(root);
            continue;
        }
        let prefix = target
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "bin"))
            .and_then(Path::parent)
            .filter(|p| installed_prefix(p, home));
        match prefix {
            Some(p) => {
                add(p.join("bin"));
                add(p.join("lib"));
            }
            None => add(target),
        }
    }
    if let Ok(mut m) = seen.lock() {
        m.insert(dir.to_path_buf(), found.clone());
    }
    found
}

/// The version manager's root a `PATH` directory lies in ([`VERSION_MANAGERS`]), when
/// reading all of it would not open the home or above.
fn version_manager(dir: &Path, home: Option<&Path>) -> Option<PathBuf> {
    dir.ancestors()
        .find(|a| {
            a.file_name()
                .is_some_and(|n| VERSION_MANAGERS.iter().any(|m| n == *m))
        })
        .filter(|root| !too_wide(root, home))
        .map(Path::to_path_buf)
}

/// Whether `prefix` is an installed toolchain's own directory: it has a `lib`, is not the
/// root, the home or above it, and no directory from it up holds a `.git` (a link into
/// another repository grants that file, never the repository).
fn installed_prefix(prefix: &Path, home: Option<&Path>) -> bool {
    if too_wide(prefix, home) || !prefix.join("lib").is_dir() {
        return false;
    }
    !prefix
        .ancestors()
        .take_while(|a| *a != Path::new("/"))
        .any(|a| a.join(".git").exists())
}

/// Every entry of `/etc` but its secrets ([`ETC_SECRETS`]): `/etc` holds what programs
/// need (the resolver's files, `passwd`, `alternatives`), and beside it what no test needs.
fn etc_entries() -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/etc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            !ETC_SECRETS.contains(&name.as_ref())
        })
        .map(|e| e.path())
        .collect()
}

/// The Landlock ABI this kernel speaks (0: none), asked once.
pub fn landlock_abi() -> u32 {
    #[cfg(target_os = "linux")]
    {
        const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
        // SAFETY: landlock_create_ruleset(2) with a null attribute and the VERSION flag
        // only returns the ABI version; no memory is read or written.
        let v = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        };
        u32::try_from(v).unwrap_or(0)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// A Landlock ruleset enforcing `allow`: every filesystem access right the kernel knows is
/// handled (refused unless a rule allows it), and when `tcp` is set TCP `bind` and
/// `connect` too (refused everywhere: there is no network rule). Built in the parent, as a
/// descriptor the child restricts itself with; the error is a sentence.
#[cfg(target_os = "linux")]
pub fn ruleset(allow: &AllowList, tcp: bool) -> Result<OwnedFd, String> {
    use landlock::{
        path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
        Scope, ABI,
    };
    let abi = ABI::V9;
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| e.to_string())?;
    if tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| e.to_string())?;
    }
    let created = ruleset
        .scope(Scope::from_all(abi))
        .map_err(|e| e.to_string())?
        .create()
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(&allow.read, AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(&allow.write, AccessFs::from_all(abi)))
        .map_err(|e| e.to_string())?;
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "this kernel has no Landlock".to_string())
}

/// Without Linux there is no Landlock.
#[cfg(not(target_os = "linux"))]
pub fn ruleset(_: &AllowList, _: bool) -> Result<OwnedFd, String> {
    Err("Landlock is a Linux feature".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_and_its_secrets_are_never_read() {
        let vars = [
            ("HOME".to_string(), "/home/u".to_string()),
            (
                "PATH".to_string(),
                "/home/u/.cargo/bin:/usr/bin:/home/u:/home:.:/".to_string(),
            ),
        ];
        let a = AllowList::system(&vars, &[], false);
        assert!(a.read.contains(&PathBuf::from("/home/u/.cargo/bin")));
        assert!(a.read.contains(&PathBuf::from("/home/u/.cargo/registry")));
        for wide in [
            "/home/u",
            "/home",
            ".",
            "/",
            "/proc",
            "/home/u/.cargo",
            "/home/u/go",
        ] {
            assert!(!a.read.contains(&PathBuf::from(wide)), "{wide}");
        }
        assert!(!a.read.iter().any(|p| p.ends_with("shadow")));
        assert!(!a.read.iter().any(|p| p.starts_with("/home/u/.ssh")));
    }

    #[test]
    fn a_version_managers_shims_grant_its_root_and_no_more() {
        let vars = [
            ("HOME".to_string(), "/tmp/elsewhere".to_string()),
            (
                "PATH".to_string(),
                "/home/u/.pyenv/plugins/pyenv-virtualenv/shims:/home/u/.pyenv/shims:/home/u/.local/bin"
                    .to_string(),
            ),
        ];
        let a = AllowList::system(&vars, &[], false);
        assert!(a.read.contains(&PathBuf::from("/home/u/.pyenv")));
        assert!(a.read.contains(&PathBuf::from("/home/u/.local/bin")));
        for wide in ["/home/u", "/home/u/.local", "/home"] {
            assert!(!a.read.contains(&PathBuf::from(wide)), "{wide}");
        }
    }
}
