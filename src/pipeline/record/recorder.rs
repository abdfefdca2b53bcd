//! The run record in git: `refs/triad/runs/<run-id>`, one commit per event, whose tree holds
//! `run.json` (the whole state) and `transcript/NNN-<stage>-<role>.json`.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use super::{upgrade, RunState, Transcript, RUNS_PREFIX};
use crate::git::{self, Context as _, GitError};

/// Reads and writes one run's record.
pub struct Recorder<'r> {
    repo: &'r Repository,
    refname: String,
    tip: Option<Oid>,
    pending: BTreeMap<String, Vec<u8>>,
    keep: Vec<Oid>,
}

impl<'r> Recorder<'r> {
    /// A recorder for a new run (the ref must not exist yet) or an existing one.
    pub fn open(repo: &'r Repository, run_id: &str) -> Self {
        let refname = format!("{RUNS_PREFIX}{run_id}");
        let tip = git::ref_target(repo, &refname);
        Recorder {
            repo,
            refname,
            tip,
            pending: BTreeMap::new(),
            keep: Vec::new(),
        }
    }

    /// The record's ref (`refs/triad/runs/<run-id>`).
    pub fn refname(&self) -> &str {
        &self.refname
    }

    /// Loads `run.json` from the record's tip.
    pub fn load(&self) -> Result<Option<RunState>, GitError> {
        let Some(tip) = self.tip else { return Ok(None) };
        let commit = self.repo.find_commit(tip).ctx("reading the run record")?;
        let tree = commit.tree().ctx("reading the run record")?;
        let entry = tree
            .get_path(std::path::Path::new("run.json"))
            .ctx("run record has no run.json")?;
        let blob = self.repo.find_blob(entry.id()).ctx("reading run.json")?;
        upgrade::read(blob.content()).map(Some).map_err(|e| {
            GitError::Command(format!("run.json of {} is unreadable: {e}", self.refname))
        })
    }

    /// Queues a model call's transcript for the next event, as
    /// `transcript/NNN-<stage>-<role>.json` (`NNN` counts the run's transcripts).
    pub fn transcript(&mut self, state: &mut RunState, t: &Transcript) {
        let n = state.count_transcript();
        let name = format!("transcript/{n:03}-{}-{}.json", t.stage, t.role);
        let text = serde_json::to_vec_pretty(t).unwrap_or_default();
        self.pending.insert(name, text);
    }

    /// Keeps a commit reachable from the record (rejected attempts).
    pub fn keep(&mut self, commit: Oid) {
        self.keep.push(commit);
    }

    /// Writes one event: a commit whose tree is the previous one plus `run.json` and the
    /// queued transcripts; the ref moves by compare-and-swap.
    pub fn event(&mut self, state: &RunState, what: &str) -> Result<(), GitError> {
        let json = serde_json::to_vec_pretty(state)
            .map_err(|e| GitError::Command(format!("cannot serialize the run state: {e}")))?;
        let mut files = std::mem::take(&mut self.pending);
        files.insert("run.json".into(), json);
        let msg = format!("triad run {}: {what}\n", state.run_id());
        let keep = std::mem::take(&mut self.keep);
        let commit = git::record::append(self.repo, &self.refname, self.tip, files, &keep, &msg)?;
        self.tip = Some(commit);
        Ok(())
    }
}

/// A run record that does not load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptRun {
    /// The run id (`refs/triad/runs/<id>`).
    pub id: String,
    /// Why its `run.json` does not load.
    pub why: String,
}

impl CorruptRun {
    /// The status a run whose record does not load is listed with (`log --format json`),
    /// beside the statuses of [`super::RunStatus`]: its record cannot say one.
    pub const STATUS: &'static str = "corrupt";
}

/// Every run with a record, newest first (by start time in run.json).
pub fn list_runs(repo: &Repository) -> Vec<RunState> {
    scan_runs(repo).0
}

/// Every run record: those that load, newest first (by start time in run.json), and those
/// that do not, by id, so a listing can say so instead of leaving them out.
pub fn scan_runs(repo: &Repository) -> (Vec<RunState>, Vec<CorruptRun>) {
    let mut runs = Vec::new();
    let mut corrupt = Vec::new();
    if let Ok(refs) = repo.references_glob(&format!("{RUNS_PREFIX}*")) {
        for r in refs.flatten() {
            let Ok(name) = r.name() else { continue };
            let id = name.trim_start_matches(RUNS_PREFIX).to_string();
            match Recorder::open(repo, &id).load() {
                Ok(Some(state)) => runs.push(state),
                Ok(None) => {}
                Err(e) => corrupt.push(CorruptRun {
                    id,
                    why: e.to_string(),
                }),
            }
        }
    }
    runs.sort_by(|a, b| (b.started().cmp(&a.started())).then(b.run_id().cmp(a.run_id())));
    corrupt.sort_by(|a, b| a.id.cmp(&b.id));
    (runs, corrupt)
}
