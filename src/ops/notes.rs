//! `notes push|fetch|sync` as an operation: which remote verdicts are exchanged with, and
//! the exchange in the order the mode asks (fetch and merge first, then push). The exchange
//! itself, and its retries, are [`crate::notes::sync`]'s; the outcome says what each side
//! did, for the caller to tell.

use super::Ops;
use crate::notes::sync::{self, Fetched, SyncError};
use crate::notes::Trust;

/// Which way verdicts go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Push only (fetching and merging only when the push is rejected).
    Push,
    /// Fetch and merge.
    Fetch,
    /// Fetch, merge, push.
    Sync,
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// There were no local verdicts to push.
    Nothing,
    /// Pushed, after fetching and merging what the remote had first (each rejected try's
    /// fetch, in order).
    Pushed(Vec<Fetched>),
}

/// How an exchange ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    /// The remote.
    pub remote: String,
    /// What the fetch brought, when the mode fetches.
    pub fetched: Option<Fetched>,
    /// What the push did, when the mode pushes.
    pub pushed: Option<Pushed>,
}

/// Why an exchange could not be made, or stopped half way.
#[derive(Debug, thiserror::Error)]
pub enum NotesSyncError {
    /// The remote named does not exist.
    #[error("there is no remote named `{name}`")]
    NoSuchRemote {
        /// The name given.
        name: String,
        /// The remotes there are.
        remotes: Vec<String>,
    },
    /// The repository has no remote.
    #[error("this repository has no remote to share verdicts with")]
    NoRemote,
    /// No remote was named, none is `origin`, and there are several.
    #[error("there is no `origin` and several remotes; say which one")]
    Ambiguous {
        /// The remotes there are.
        remotes: Vec<String>,
    },
    /// The remotes could not be read.
    #[error(transparent)]
    Git(#[from] git2::Error),
    /// The exchange failed; what was fetched before it, if anything, stays fetched.
    #[error("{error}")]
    Exchange {
        /// Why.
        error: SyncError,
        /// The remote.
        remote: String,
        /// What the fetch brought before the push failed.
        fetched: Option<Fetched>,
    },
}

impl Ops<'_> {
    /// Exchanges `refs/notes/triad` with remote `named` (else `origin`, else the only
    /// remote) as `mode` says, under the user's `trust` of remotes.
    pub fn notes_sync(
        &self,
        named: Option<&str>,
        mode: Mode,
        trust: &Trust,
    ) -> Result<Synced, NotesSyncError> {
        let remote = self.notes_remote(named)?;
        let failed = |error, fetched: &Option<Fetched>| NotesSyncError::Exchange {
            error,
            remote: remote.clone(),
            fetched: fetched.clone(),
        };
        let fetched = match mode {
            Mode::Push => None,
            Mode::Fetch | Mode::Sync => {
                Some(sync::fetch(self.repo, &remote, trust).map_err(|e| failed(e, &None))?)
            }
        };
        let pushed = match mode {
            Mode::Fetch => None,
            Mode::Push | Mode::Sync => Some(
                match sync::push(self.repo, &remote, trust).map_err(|e| failed(e, &fetched))? {
                    None => Pushed::Nothing,
                    Some(merged_first) => Pushed::Pushed(merged_first),
                },
            ),
        };
        Ok(Synced {
            remote,
            fetched,
            pushed,
        })
    }

    /// The remote named, else `origin`, else the only remote.
    fn notes_remote(&self, named: Option<&str>) -> Result<String, NotesSyncError> {
        let remotes: Vec<String> = self
            .repo
            .remotes()?
            .iter()
            .flatten()
            .flatten()
            .map(String::from)
            .collect();
        if let Some(name) = named {
            return match remotes.iter().any(|r| r == name) {
                true => Ok(name.to_string()),
                false => Err(NotesSyncError::NoSuchRemote {
                    name: name.to_string(),
                    remotes,
                }),
            };
        }
        if remotes.iter().any(|r| r == "origin") {
            return Ok("origin".into());
        }
        match remotes.as_slice() {
            [only] => Ok(only.clone()),
            [] => Err(NotesSyncError::NoRemote),
            _ => Err(NotesSyncError::Ambiguous { remotes }),
        }
    }
}
