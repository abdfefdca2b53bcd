//! Measured fitness shared through a repository: `git triad bench --share` commits the
//! user's measurements to [`FITNESS_REF`] (pushed and fetched like any ref), and
//! `git triad bench --import` takes a fetched ref's measurements into the user's own store.
//!
//! Nothing reads the ref by itself. A clone's figures would steer which of the user's models
//! run, and a cloned repository may only tighten; so only the user's `--import` lets them
//! in, each imported measurement says where it came from, and freshness still applies (a
//! figure of another wire model, or of an older task set, is never used).

use std::collections::BTreeMap;

use git2::Repository;

use super::store::FitnessStore;
use crate::git::{self, GitError};

/// The ref the measurements are shared on.
pub const FITNESS_REF: &str = "refs/triad/fitness";

/// The file in its tree.
const FILE: &str = "fitness.json";

/// Why a shared store cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ShareError {
    /// The repository could not be read or written.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The ref holds something that is not a fitness store.
    #[error("{FITNESS_REF} does not hold a fitness store: {0}")]
    Corrupt(String),
}

/// Commits `store` on [`FITNESS_REF`], on top of what it held; returns the commit id.
pub fn publish(repo: &Repository, store: &FitnessStore) -> Result<String, ShareError> {
    let text = serde_json::to_vec_pretty(store).map_err(|e| ShareError::Corrupt(e.to_string()))?;
    let tip = git::ref_target(repo, FITNESS_REF);
    let message = format!(
        "triad: fitness, {} measurement(s) shared\n",
        store.entries.len()
    );
    let commit = git::record::append(
        repo,
        FITNESS_REF,
        tip,
        BTreeMap::from([(FILE.to_string(), text)]),
        &[],
        &message,
    )?;
    Ok(commit.to_string())
}

/// The store [`FITNESS_REF`] holds, if the ref exists.
pub fn read(repo: &Repository) -> Result<Option<FitnessStore>, ShareError> {
    let Some(bytes) = git::record::read_file(repo, FITNESS_REF, FILE)? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| ShareError::Corrupt(e.to_string()))
}

/// Takes `shared`'s measurements into `mine` where they are newer than mine of the same
/// model, role and task set; each taken one names `origin`. Returns how many were taken.
pub fn import(mine: &mut FitnessStore, shared: FitnessStore, origin: &str) -> usize {
    let mut taken = 0;
    for mut e in shared.entries {
        let newer = mine
            .entries
            .iter()
            .filter(|m| m.model == e.model && m.role == e.role && m.task_set == e.task_set)
            .all(|m| m.measured_at < e.measured_at);
        if newer {
            e.tasks = format!("{} (imported from {origin})", e.tasks);
            mine.record(e);
            taken += 1;
        }
    }
    taken
}
