//! Where probes run: a scratch copy of the reviewed tree ([`ExportedTree`]), a directory
//! beside it for the probe's own files, and every command in the box ([`crate::sandbox`]),
//! which records the layers that held.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use git2::{Repository, Tree};

use super::ProbeSettings;
use crate::git::export::{project_reads, ExportKind, ExportedTree};
use crate::sandbox::{self, CommandOutcome, Job, Layers};

/// A scratch copy of a tree and the box its probes run in, removed when dropped.
pub(super) struct Sandbox {
    copy: ExportedTree,
    /// What the box may read of the user's repository (its virtualenv).
    reads: Vec<PathBuf>,
    /// The layers around the last command, for the record.
    layers: RefCell<Option<Layers>>,
}

impl Sandbox {
    /// Writes `tree` into a new scratch directory. The error is a sentence for the probe's
    /// record.
    pub fn export(repo: &Repository, tree: &Tree<'_>) -> Result<Sandbox, String> {
        let copy = ExportedTree::new(repo, tree, ExportKind::Files).map_err(|e| e.to_string())?;
        Ok(Sandbox {
            copy,
            reads: project_reads(repo),
            layers: RefCell::new(None),
        })
    }

    /// The copy of the tree (the probes' working directory).
    pub fn root(&self) -> PathBuf {
        self.copy.root()
    }

    /// The directory for the probes' own files, outside the tree.
    pub fn scratch(&self) -> PathBuf {
        self.copy.work()
    }

    /// The paths of the tree left out of the copy, each with why.
    pub fn left_out(&self) -> &[String] {
        self.copy.left_out()
    }

    /// The layers of the box around the last command run here.
    pub fn layers(&self) -> Option<Layers> {
        self.layers.borrow().clone()
    }

    /// Runs `command` (a shell command line) in `dir` in the box, with `env` set; it may
    /// write the copy, the scratch directory and the settings' build cache.
    pub fn command(
        &self,
        settings: &ProbeSettings,
        dir: &Path,
        command: &str,
        timeout: Duration,
        env: &[(String, String)],
    ) -> CommandOutcome {
        let mut job = Job::new(command, dir, timeout);
        // A test runner's per-test lines are read from it (within the box's byte bound).
        job.tail_lines = 5000;
        job.write = vec![self.root(), self.scratch()];
        job.write.extend(settings.cargo_target.iter().cloned());
        job.read = self.reads.clone();
        job.env = env.to_vec();
        job.private_in = Some(self.copy.work());
        if let Some(t) = &settings.cargo_target {
            let _ = std::fs::create_dir_all(t);
            cap_cache_once(t, settings.policy.limits.disk_mb);
        }
        let mut out = sandbox::run(&job, &settings.policy, &|g| self.copy.record().add_group(g));
        out.tail = out.tail.replace(&format!("{}/", self.root().display()), "");
        *self.layers.borrow_mut() = out.layers.clone();
        out
    }
}

/// Empties the build cache `t` once per process when it holds more than the box's disk
/// total: what the box wrote there stays between commands, never beyond the total.
fn cap_cache_once(t: &Path, disk_mb: u64) {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static SEEN: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let first = SEEN
        .get_or_init(Default::default)
        .lock()
        .map(|mut s| s.insert(t.to_path_buf()))
        .unwrap_or(false);
    if first && sandbox::cap_cache(t, disk_mb.saturating_mul(1024 * 1024)) {
        tracing::info!(
            "emptied the build cache {}: it held more than the box's disk total",
            t.display()
        );
    }
}

/// `text` as one single-quoted shell word.
pub(super) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
