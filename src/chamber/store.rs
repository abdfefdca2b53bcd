//! Sessions in git: `refs/triad/chamber/<id>`, one commit per phase, whose tree holds
//! `session.json` (the whole session) and `trace.md` (the same, for people), so
//! `git log refs/triad/chamber/<id>` lists the phases and `git show <ref>:trace.md` reads
//! the trace with plain git.

use std::collections::BTreeMap;

use git2::Repository;

use super::Session;
use crate::git::record::Chain;
use crate::git::{self, GitError};

/// Where sessions live.
pub const PREFIX: &str = "refs/triad/chamber/";

/// Reads and writes one session's record.
pub struct Store<'r> {
    chain: Chain<'r>,
}

impl<'r> Store<'r> {
    /// The record of session `id` (new or existing).
    pub fn open(repo: &'r Repository, id: &str) -> Self {
        Store {
            chain: Chain::open(repo, format!("{PREFIX}{id}")),
        }
    }

    /// The session's ref.
    pub fn refname(&self) -> &str {
        self.chain.refname()
    }

    /// Writes one phase: a commit with the session as it now is.
    pub fn phase(&mut self, session: &Session, what: &str) -> Result<(), GitError> {
        let json = serde_json::to_vec_pretty(session)
            .map_err(|e| GitError::Command(format!("cannot serialize the session: {e}")))?;
        let files = BTreeMap::from([
            ("session.json".to_string(), json),
            (
                "trace.md".to_string(),
                super::trace::markdown(session).into_bytes(),
            ),
        ]);
        let msg = format!("triad chamber {}: {what}\n", session.id);
        self.chain.append(files, &msg)?;
        Ok(())
    }
}

/// Loads session `id`, if it exists.
pub fn load(repo: &Repository, id: &str) -> Result<Option<Session>, GitError> {
    let refname = format!("{PREFIX}{id}");
    let Some(bytes) = git::record::read_file(repo, &refname, "session.json")? else {
        return Ok(None);
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| GitError::Command(format!("session.json of {refname} is unreadable: {e}")))
}

/// Every readable session, newest first.
pub fn list(repo: &Repository) -> Vec<Session> {
    let mut out = Vec::new();
    if let Ok(refs) = repo.references_glob(&format!("{PREFIX}*")) {
        for name in refs
            .flatten()
            .filter_map(|r| r.name().ok().map(str::to_string))
        {
            if let Ok(Some(s)) = load(repo, &name[PREFIX.len()..]) {
                out.push(s);
            }
        }
    }
    out.sort_by(|a, b| b.created.cmp(&a.created).then(b.id.cmp(&a.id)));
    out
}

/// The session whose id is `id`, or the only one starting with it.
pub fn resolve(repo: &Repository, id: &str) -> Result<Session, String> {
    if let Ok(Some(s)) = load(repo, id) {
        return Ok(s);
    }
    let matches: Vec<Session> = list(repo)
        .into_iter()
        .filter(|s| s.id.starts_with(id))
        .collect();
    match matches.len() {
        1 => Ok(matches.into_iter().next().expect("one match")),
        0 => Err(format!("no chamber session `{id}`")),
        n => Err(format!(
            "`{id}` names {n} chamber sessions; give more of the id"
        )),
    }
}
