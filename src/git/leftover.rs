//! What a killed run leaves behind, and its cleanup.
//!
//! Every scratch copy of a tree the box runs commands in (`git-triad-verify-*` for the verify
//! and format commands, `git-triad-probe-*` for probes; [`super::export`]) has a record under
//! `$GIT_COMMON_DIR/triad/sandboxes/`: where it is and the process groups of the commands run
//! in it. Its owner holds an operating-system lock on the record for as long as the copy
//! exists, so a record whose lock can be taken belongs to a process that died without
//! cleaning up (a SIGKILL, a power cut). [`clean`] kills what such a record's commands left
//! running (with the box's PID namespace, nothing is), removes the copy and prunes git's list
//! of worktrees; `resume`, `local stop` and `init --uninstall` call it. A temporary worktree
//! git lists without any record (left by an older build, which ran commands in linked
//! worktrees) is removed too.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use super::paths::sandbox_records;
use crate::process::Group;

/// How the directories of temporary worktrees are named.
pub const PREFIX: &str = "git-triad-verify-";

/// How the scratch copies probes run in are named.
pub const PROBE_PREFIX: &str = "git-triad-probe-";

/// Whether `dir` is named as a directory of ours is: only such a one is ever removed.
fn ours(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| {
        let n = n.to_string_lossy();
        n.starts_with(PREFIX) || n.starts_with(PROBE_PREFIX)
    })
}

/// Records younger than this that cannot be read yet are left alone: their owner may be
/// between creating and writing them.
const GRACE: Duration = Duration::from_secs(60);

/// What one temporary worktree's record says.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Entry {
    /// The temporary directory holding the worktree.
    dir: PathBuf,
    /// The worktree.
    worktree: PathBuf,
    /// The process that made it.
    owner: u32,
    /// The process groups of the commands run in it.
    #[serde(default)]
    groups: Vec<Group>,
}

/// The record of one live temporary worktree, locked by this process while it lives and
/// deleted when dropped (its worktree is gone by then).
#[derive(Debug)]
pub struct Record {
    inner: Mutex<Held>,
    path: PathBuf,
}

/// The locked file and what it says.
#[derive(Debug)]
struct Held {
    file: File,
    entry: Entry,
}

impl Held {
    fn save(&mut self) -> std::io::Result<()> {
        let text = serde_json::to_vec(&self.entry).map_err(std::io::Error::other)?;
        self.file.set_len(0)?;
        self.file.rewind()?;
        self.file.write_all(&text)?;
        self.file.flush()
    }
}

impl Record {
    /// Records (and locks) the temporary worktree `worktree` in `dir`, before it is made.
    pub fn create(git_common_dir: &Path, dir: &Path, worktree: &Path) -> std::io::Result<Record> {
        let records = sandbox_records(git_common_dir);
        std::fs::create_dir_all(&records)?;
        let name = dir
            .file_name()
            .map_or_else(|| "worktree".into(), |n| n.to_string_lossy().into_owned());
        let path = records.join(format!("{name}.json"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        file.try_lock().map_err(std::io::Error::other)?;
        let mut held = Held {
            file,
            entry: Entry {
                dir: dir.to_path_buf(),
                worktree: worktree.to_path_buf(),
                owner: std::process::id(),
                groups: Vec::new(),
            },
        };
        held.save()?;
        Ok(Record {
            inner: Mutex::new(held),
            path,
        })
    }

    /// Adds the process group of a command started in the worktree.
    pub fn add_group(&self, group: Group) {
        let mut held = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        held.entry.groups.push(group);
        if let Err(e) = held.save() {
            tracing::warn!(
                "cannot record process group {} in {}: {e}",
                group.pgid,
                self.path.display()
            );
        }
    }
}

impl Drop for Record {
    fn drop(&mut self) {
        // The lock goes with the file handle, after the file is gone.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Kills what commands of dead git triad processes left running in this repository's
/// temporary worktrees, removes those worktrees and prunes git's list of them. Says what it
/// did, one sentence each; a worktree a live process is using is left alone.
pub fn clean(git_common_dir: &Path) -> Vec<String> {
    let mut said = Vec::new();
    let mut live: Vec<PathBuf> = Vec::new();
    let records = std::fs::read_dir(sandbox_records(git_common_dir))
        .map(|d| d.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default();
    for path in records
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
    {
        let Ok(mut file) = OpenOptions::new().read(true).write(true).open(path) else {
            continue;
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                if let Some(e) = read_entry(&mut file) {
                    live.push(e.worktree);
                }
                continue;
            }
            Err(TryLockError::Error(_)) => continue,
        }
        let Some(entry) = read_entry(&mut file) else {
            let young = std::fs::metadata(path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| SystemTime::now().duration_since(t).ok())
                .is_none_or(|age| age < GRACE);
            if !young {
                let _ = std::fs::remove_file(path);
            }
            continue;
        };
        for g in &entry.groups {
            if g.kill() {
                said.push(format!(
                    "killed what a verify or format command of a killed run (pid {}) left running (process group {})",
                    entry.owner, g.pgid
                ));
            }
        }
        if remove_worktree(git_common_dir, &entry.worktree, &entry.dir) {
            said.push(format!(
                "removed the scratch copy {} left by a killed run (pid {})",
                entry.worktree.display(),
                entry.owner
            ));
        }
        let _ = std::fs::remove_file(path);
    }
    // Temporary worktrees git still lists that no record accounts for.
    for wt in listed(git_common_dir) {
        let Some(dir) = wt.parent() else { continue };
        let verify = dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with(PREFIX));
        if verify && !live.contains(&wt) && remove_worktree(git_common_dir, &wt, dir) {
            said.push(format!(
                "removed the temporary worktree {} left by a killed run",
                wt.display()
            ));
        }
    }
    git(git_common_dir, &["worktree", "prune"]);
    said
}

fn read_entry(file: &mut File) -> Option<Entry> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// Removes a temporary worktree and its directory; says whether there was one.
fn remove_worktree(git_common_dir: &Path, worktree: &Path, dir: &Path) -> bool {
    let existed = worktree.exists() || dir.exists();
    let path = worktree.to_string_lossy();
    git(git_common_dir, &["worktree", "remove", "--force", &path]);
    // Only ever a directory named like ours.
    if ours(dir) {
        let _ = std::fs::remove_dir_all(dir);
    }
    existed
}

/// The worktrees git lists for the repository.
fn listed(git_common_dir: &Path) -> Vec<PathBuf> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_common_dir)
        .args(["worktree", "list", "--porcelain"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let Ok(out) = out else { return Vec::new() };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(PathBuf::from)
        .collect()
}

fn git(git_common_dir: &Path, args: &[&str]) {
    let _ = Command::new("git")
        .arg("--git-dir")
        .arg(git_common_dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_in_use_is_left_alone_and_one_whose_owner_died_is_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let git_dir = tmp.path().join("repo.git");
        git2::Repository::init_bare(&git_dir).unwrap();
        let dir = tmp.path().join(format!("{PREFIX}abc"));
        std::fs::create_dir_all(dir.join("wt")).unwrap();
        let record = Record::create(&git_dir, &dir, &dir.join("wt")).unwrap();
        record.add_group(crate::process::Group {
            pgid: i32::MAX - 7,
            start: None,
        });
        assert!(clean(&git_dir).is_empty(), "its owner holds it");
        assert!(dir.exists());
        // What an owner that died leaves: the record, unlocked.
        let text =
            std::fs::read_to_string(sandbox_records(&git_dir).join(format!("{PREFIX}abc.json")))
                .unwrap();
        assert!(
            text.contains(&format!("\"pgid\":{}", i32::MAX - 7)),
            "{text}"
        );
        drop(record);
        assert_eq!(
            std::fs::read_dir(sandbox_records(&git_dir))
                .unwrap()
                .count(),
            0
        );
        std::fs::write(sandbox_records(&git_dir).join("dead.json"), &text).unwrap();
        let said = clean(&git_dir);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with("removed the scratch copy"), "{said:?}");
        assert!(!dir.exists());
        assert_eq!(
            std::fs::read_dir(sandbox_records(&git_dir))
                .unwrap()
                .count(),
            0
        );
        assert!(clean(&git_dir).is_empty(), "nothing left");
    }
}
