//! The pre-push gate: which pushed commits carry a verdict the policy blocks on.
//!
//! Two ways to look: libgit2 ([`libgit2`]: SHA-1 and SHA-256 repositories), and the git CLI
//! for repositories libgit2 cannot open ([`cli`]: reftable refs). Both start from the same
//! [`check`], which picks the updates to look at, and feed the same [`Policy`]
//! ([`policy`]); [`index`] finds verdicts by patch id and in teammates' notes refs, and
//! [`cache`] keeps what cannot change (a commit's patch id, a note's [`summary`]).

mod cache;
mod cli;
mod idhash;
mod index;
mod libgit2;
mod policy;
mod summary;

use std::path::Path;

use git2::Repository;

pub use cli::{git_output, object_format};
pub use policy::{is_zero_id, parse_updates, Blocked, Finding, Policy, RefUpdate};
use policy::{Push, Scope};

use super::{NotesError, Trust};

/// Where the gate reads commits and notes.
#[derive(Clone, Copy)]
pub enum Backend<'a> {
    /// libgit2 (SHA-1 and SHA-256 repositories).
    Git2(&'a Repository),
    /// The git command line, in this directory (repositories libgit2 cannot open).
    Cli(&'a Path),
}

/// Checks the pushed commits; the findings are those whose verdict `policy` blocks on.
///
/// Only updates that push commits are looked at ([`RefUpdate::needs_check`]), and nothing
/// is when the policy blocks nothing; `backend` then reads the commits and their notes, the
/// local ones and every remote's, with `trust` saying which remotes' lines may relax.
pub fn check(
    backend: Backend<'_>,
    remote: &str,
    updates: &[RefUpdate],
    policy: &Policy,
    trust: &Trust,
) -> Result<Vec<Finding>, NotesError> {
    let (ours, theirs): (Vec<&RefUpdate>, Vec<&RefUpdate>) = updates
        .iter()
        .filter(|u| u.needs_check())
        .partition(|u| u.is_triad_ref());
    let mut findings = Vec::new();
    // Ordinary refs: every verdict, found by note or else by patch id. Triad's own refs:
    // their commits' own verdicts only (see [`RefUpdate::is_triad_ref`]).
    let groups = [
        (theirs, policy.clone(), Scope { by_patch_id: true }),
        (ours, policy.without_missing(), Scope { by_patch_id: false }),
    ];
    for (pushed, policy, scope) in groups {
        if pushed.is_empty() || policy.is_open() {
            continue;
        }
        let push = Push {
            remote,
            pushed: &pushed,
            policy: &policy,
            trust,
            scope,
        };
        findings.extend(match backend {
            Backend::Git2(repo) => libgit2::check(repo, push)?,
            Backend::Cli(dir) => cli::check(dir, push)?,
        });
    }
    Ok(findings)
}
