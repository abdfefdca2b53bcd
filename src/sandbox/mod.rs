//! The box: the one place code a model wrote or chose is run (the verify and format
//! commands, probes, acceptance examples, bench tasks), with the least it needs.
//!
//! A boxed command runs as `sh -c <command>` in a directory the caller prepared (a scratch
//! copy of a tree, never the user's repository or a worktree of it) with:
//!
//! - **filesystem** by allow-list (Landlock): it reads the system and the toolchains
//!   ([`allow`]) and writes only the caller's directories, a private temporary directory and
//!   a private home; the rest of the home (`~/.ssh`, `~/.config`, other repositories), the
//!   user's repository and its `.git` are out of reach;
//! - **network**: its own network namespace (only its own loopback), else TCP refused by
//!   Landlock;
//! - **processes**: its own PID namespace with its own `/proc`: git triad's processes are
//!   not there to read, and when the command ends, times out or git triad dies, every
//!   process it started dies with it (`setsid` or not);
//! - **privileges**: its own user namespace, every capability dropped, no new privileges;
//! - **limits**: CPU time, memory, file size and process count ([`Limits`]), and the
//!   caller's wall clock;
//! - **environment**: a scrubbed environment (no key, no token) and git triad
//!   non-dumpable, so no process reads git triad's environment through `/proc`.
//!
//! Each layer is found by trying it once per process ([`found`]), never assumed,
//! and every outcome records the layers that held ([`Layers`]). Without the filesystem
//! layer a command does not run unless the user's own configuration allows it
//! (`sandbox.require = false`); its outcome then says so.

mod allow;
#[cfg(target_os = "linux")]
mod child;
mod detect;
mod env;
mod fd;
mod layers;
mod plan;
mod run;
#[cfg(target_os = "linux")]
mod seccomp;
mod spawn;
mod totals;
#[cfg(target_os = "linux")]
mod view;

pub use allow::{landlock_abi, AllowList};
pub use detect::found;
pub use env::{command_env, PASSED_ENV};
pub use layers::{harden_self, Found, Layer, Layers};
pub use run::run;
pub use spawn::{run_bare, KEPT_OUTPUT_BYTES};
pub use totals::{cap_cache, TotalsFound};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a command did.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CommandOutcome {
    /// The command line.
    pub command: String,
    /// Exit code; `None` if killed (timeout or signal) or never started.
    pub exit_code: Option<i32>,
    /// Whether it was killed for taking too long.
    pub timed_out: bool,
    /// The last lines of stdout+stderr.
    pub tail: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// The layers of the box around it (`None`: a record older than the box).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<Layers>,
    /// What stopped it, when a limit of the box did (`file size limit`, `CPU time limit`,
    /// `wall clock`), or why it was not run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// Paths of the tree it ran on that were left out of its scratch copy (names git
    /// refuses to check out, links that lead out), each with why: never written there,
    /// so nothing of them ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

impl CommandOutcome {
    /// An outcome of a command that did not run, and why.
    pub fn not_run(command: &str, why: impl Into<String>) -> CommandOutcome {
        CommandOutcome::ended(command, None, why)
    }

    /// An outcome of `command` that ended with `exit_code` (`None`: killed or never
    /// started) and printed `tail`, in no time, with nothing else known of it (no box
    /// recorded, no limit hit, nothing left out).
    pub fn ended(command: &str, exit_code: Option<i32>, tail: impl Into<String>) -> CommandOutcome {
        CommandOutcome {
            command: command.into(),
            exit_code,
            timed_out: false,
            tail: tail.into(),
            duration_ms: 0,
            layers: None,
            stopped_by: None,
            left_out: Vec::new(),
        }
    }

    /// Why model-written code ran with less than the whole box around it (no filesystem
    /// layer), or was refused for that: a fact that keeps a verdict from APPROVE.
    pub fn unguarded(&self) -> Option<String> {
        let fs = &self.layers.as_ref()?.filesystem;
        let how = if self.refused() {
            "was not run: the box has no filesystem layer here"
        } else {
            "ran without the filesystem layer of the box"
        };
        (!fs.held).then(|| format!("{how} ({})", fs.detail))
    }

    /// Whether the box refused to run the command (its filesystem layer is missing and the
    /// user's configuration requires it).
    pub fn refused(&self) -> bool {
        self.stopped_by.as_deref() == Some(REFUSED)
    }
}

/// What [`CommandOutcome::stopped_by`] says of a command the box refused to run.
const REFUSED: &str = "the box: no filesystem layer";

/// Limits on what one boxed command may use: each process of it (CPU time, memory, file
/// size), and the box as a whole (processes at once, memory, disk).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// CPU seconds per process.
    #[serde(default = "default_cpu")]
    pub cpu_secs: u64,
    /// Memory in MiB: the address space of each process, and the memory of the whole box.
    #[serde(default = "default_memory")]
    pub memory_mb: u64,
    /// Largest file a process may write, in MiB.
    #[serde(default = "default_file")]
    pub file_mb: u64,
    /// Processes at once, for the whole box.
    #[serde(default = "default_processes")]
    pub processes: u64,
    /// What the box may write in all (its scratch copy, home, temporary directory and
    /// build cache), in MiB.
    #[serde(default = "default_disk")]
    pub disk_mb: u64,
}

fn default_cpu() -> u64 {
    1800
}
fn default_memory() -> u64 {
    16384
}
fn default_file() -> u64 {
    1024
}
fn default_processes() -> u64 {
    512
}
fn default_disk() -> u64 {
    16384
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_secs: default_cpu(),
            memory_mb: default_memory(),
            file_mb: default_file(),
            processes: default_processes(),
            disk_mb: default_disk(),
        }
    }
}

/// How the box runs commands: the user's configuration (`[sandbox]`; a repository's may only
/// tighten it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Whether model-written code runs only with the filesystem layer (the default). Only
    /// the user's own configuration may set it `false`.
    #[serde(default = "yes")]
    pub require: bool,
    /// The limits.
    #[serde(flatten)]
    pub limits: Limits,
    /// More directories the box may read (a toolchain in an unusual place). Only the
    /// user's own configuration may name them.
    #[serde(default)]
    pub read: Vec<PathBuf>,
}

fn yes() -> bool {
    true
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            require: true,
            limits: Limits::default(),
            read: Vec::new(),
        }
    }
}

/// One command to run in the box.
#[derive(Debug, Clone)]
pub struct Job<'a> {
    /// The shell command line.
    pub command: &'a str,
    /// Where it runs (inside one of [`Job::write`]).
    pub dir: &'a Path,
    /// When it is killed.
    pub timeout: Duration,
    /// Lines of its output kept.
    pub tail_lines: usize,
    /// Directories it may write (and read): the scratch tree, a build cache.
    pub write: Vec<PathBuf>,
    /// More directories it may read: the project's virtualenv, the probe runner's files.
    pub read: Vec<PathBuf>,
    /// Variables set on top of the box's environment.
    pub env: Vec<(String, String)>,
    /// Where the box's own directories (its home, temporary directory) are made: beside
    /// the caller's scratch files, so whoever cleans those after a kill cleans these too
    /// (`None`: the system's temporary directory).
    pub private_in: Option<PathBuf>,
}

impl<'a> Job<'a> {
    /// A job running `command` in `dir`, which it may write, for at most `timeout`.
    pub fn new(command: &'a str, dir: &'a Path, timeout: Duration) -> Job<'a> {
        Job {
            command,
            dir,
            timeout,
            tail_lines: 60,
            write: vec![dir.to_path_buf()],
            read: Vec::new(),
            env: Vec::new(),
            private_in: None,
        }
    }
}

/// The build cache of the repository whose common git directory is `common_dir`: a
/// directory the box may write (a cargo target dir), kept between commands so only the
/// first compiles everything, and outside the repository and its `.git`
/// (`$XDG_CACHE_HOME/git-triad/build/<hash of the directory>`).
pub fn build_cache(common_dir: &Path) -> PathBuf {
    let vars: Vec<(String, String)> = std::env::vars().collect();
    let get = |k: &str| {
        vars.iter()
            .find(|(n, v)| n == k && !v.is_empty())
            .map(|(_, v)| PathBuf::from(v))
    };
    let base = get("XDG_CACHE_HOME")
        .or_else(|| get("HOME").map(|h| h.join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let key = common_dir
        .canonicalize()
        .unwrap_or_else(|_| common_dir.to_path_buf());
    // FNV-1a: a stable name per repository, not a secret.
    let hash = key
        .to_string_lossy()
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    base.join("git-triad")
        .join("build")
        .join(format!("{hash:016x}"))
}

#[cfg(test)]
mod tests;
