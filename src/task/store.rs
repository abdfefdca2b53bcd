//! Task records in git: `refs/triad/tasks/<slug>`, a commit chain with one commit per event.
//!
//! Each commit's tree holds `state.json` (the whole current [`Task`]) and `history.jsonl`
//! (append-only: the new blob is the old bytes plus new lines). The ref moves by
//! compare-and-swap; a lost race reloads and re-applies the change, a bounded number of
//! times. There is no delete.

use std::path::Path;

use git2::{Oid, Repository};

use super::error::TaskError;
use super::machine::Machine;
use super::spec::valid_slug;
use super::state::{parse_history, HistoryEntry, Task};
use crate::git::{self, Context as _, GitError};

/// Ref namespace of task records.
pub const TASKS_PREFIX: &str = "refs/triad/tasks/";

/// How many times an update re-applies itself after losing a race.
pub const MAX_TRIES: usize = 8;

/// One task's record as stored at its ref's tip.
#[derive(Debug, Clone)]
pub struct Record {
    /// The current state.
    pub task: Task,
    /// Every readable history entry, oldest first.
    pub history: Vec<HistoryEntry>,
    /// The commit the ref points to.
    pub tip: Oid,
}

/// The ref of a task's record.
pub fn refname(slug: &str) -> String {
    format!("{TASKS_PREFIX}{slug}")
}

fn check_slug(slug: &str) -> Result<(), TaskError> {
    if valid_slug(slug) {
        Ok(())
    } else {
        Err(TaskError::BadSlug(slug.to_string()))
    }
}

/// Bytes of `name` in the tree of `commit`, if present.
fn file_at(repo: &Repository, commit: Oid, name: &str) -> Result<Option<Vec<u8>>, GitError> {
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .ctx("reading a task record")?;
    let Ok(entry) = tree.get_path(Path::new(name)) else {
        return Ok(None);
    };
    let blob = repo.find_blob(entry.id()).ctx(format!("reading {name}"))?;
    Ok(Some(blob.content().to_vec()))
}

fn read_task(repo: &Repository, slug: &str, tip: Oid) -> Result<Task, TaskError> {
    let bytes = file_at(repo, tip, "state.json")?.ok_or_else(|| TaskError::Corrupt {
        slug: slug.to_string(),
        message: "the record has no state.json".into(),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| TaskError::Corrupt {
        slug: slug.to_string(),
        message: format!("state.json: {e}"),
    })
}

/// Loads a task's record; `None` when the task has none yet.
pub fn load(repo: &Repository, slug: &str) -> Result<Option<Record>, TaskError> {
    check_slug(slug)?;
    let Some(tip) = git::ref_target(repo, &refname(slug)) else {
        return Ok(None);
    };
    let task = read_task(repo, slug, tip)?;
    let text = file_at(repo, tip, "history.jsonl")?.unwrap_or_default();
    let history = parse_history(&String::from_utf8_lossy(&text));
    Ok(Some(Record { task, history, tip }))
}

/// Loads only a task's current state.
pub fn load_task(repo: &Repository, slug: &str) -> Result<Option<Task>, TaskError> {
    check_slug(slug)?;
    match git::ref_target(repo, &refname(slug)) {
        Some(tip) => read_task(repo, slug, tip).map(Some),
        None => Ok(None),
    }
}

/// The raw bytes of a task's `history.jsonl` (for audits: earlier lines never change).
pub fn history_bytes(repo: &Repository, slug: &str) -> Result<Vec<u8>, TaskError> {
    check_slug(slug)?;
    match git::ref_target(repo, &refname(slug)) {
        Some(tip) => Ok(file_at(repo, tip, "history.jsonl")?.unwrap_or_default()),
        None => Ok(Vec::new()),
    }
}

/// Slugs of every task with a record, sorted.
pub fn slugs(repo: &Repository) -> Result<Vec<String>, TaskError> {
    let mut out = Vec::new();
    let refs = repo
        .references_glob(&format!("{TASKS_PREFIX}*"))
        .ctx("listing task records")?;
    for r in refs.flatten() {
        if let Some(slug) = r.name().ok().and_then(|n| n.strip_prefix(TASKS_PREFIX)) {
            if valid_slug(slug) {
                out.push(slug.to_string());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Every task with a record, sorted by slug; unreadable records are skipped.
pub fn list(repo: &Repository) -> Result<Vec<Task>, TaskError> {
    Ok(slugs(repo)?
        .iter()
        .filter_map(|s| load_task(repo, s).ok().flatten())
        .collect())
}

/// Changes one task: `change` gets the current task (`None` if it has no record) and returns
/// a [`Machine`] holding the new state and history entries, or `None` to change nothing. The
/// result is one commit; if the ref moved meanwhile, `change` runs again on the new state.
/// Returns the task as stored afterwards.
pub fn update<F>(
    repo: &Repository,
    slug: &str,
    what: &str,
    mut change: F,
) -> Result<Option<Task>, TaskError>
where
    F: FnMut(Option<Task>) -> Result<Option<Machine>, TaskError>,
{
    check_slug(slug)?;
    let name = refname(slug);
    for _ in 0..MAX_TRIES {
        let tip = git::ref_target(repo, &name);
        let current = match tip {
            Some(t) => Some(read_task(repo, slug, t)?),
            None => None,
        };
        let Some(machine) = change(current.clone())? else {
            return Ok(current);
        };
        let (task, entries) = machine.into_parts();
        if entries.is_empty() {
            return Ok(current);
        }
        if task.slug != slug {
            return Err(TaskError::Corrupt {
                slug: slug.to_string(),
                message: format!("a change tried to store task `{}` here", task.slug),
            });
        }
        let mut history = match tip {
            Some(t) => file_at(repo, t, "history.jsonl")?.unwrap_or_default(),
            None => Vec::new(),
        };
        if !history.is_empty() && !history.ends_with(b"\n") {
            // A torn last line stays as it was (readers skip it); new lines start fresh.
            history.push(b'\n');
        }
        for e in &entries {
            history.extend_from_slice(e.to_line().as_bytes());
            history.push(b'\n');
        }
        let state = serde_json::to_vec_pretty(&task).map_err(|e| TaskError::Corrupt {
            slug: slug.to_string(),
            message: format!("cannot serialize the task: {e}"),
        })?;
        let mut files = std::collections::BTreeMap::new();
        files.insert("state.json".to_string(), state);
        files.insert("history.jsonl".to_string(), history);
        let tree = git::tree_from_entries(repo, &files)?;
        let parents: Vec<Oid> = tip.into_iter().collect();
        let msg = format!("triad task {slug}: {what} ({})\n", task.state);
        let commit = git::commit(repo, tree, &parents, &msg)?;
        match git::cas_ref(repo, &name, commit, tip, &msg) {
            Ok(()) => return Ok(Some(task)),
            Err(GitError::Raced(_)) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(TaskError::Contended(slug.to_string()))
}
