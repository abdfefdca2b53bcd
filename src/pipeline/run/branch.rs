//! The run's scratch branch follows its record.
//!
//! The record is the truth about a run: every step writes its event first and moves the
//! branch after, so a process killed between the two leaves a branch that is behind (or,
//! after a recorded rewind, ahead of) the record, at a commit the run itself made. Before a
//! resumed run calls any model, [`sync`] puts such a branch where the record
//! says it is (creating it if the kill came before it existed), and refuses a branch that
//! points at anything else: a commit someone made on it is never overwritten.
//!
//! Runs recorded by earlier builds moved the branch first; a kill there left the branch at
//! the stage commit the record does not know yet. That commit carries this run's
//! `Triad-Run` trailer, so it is the run's own; the branch is put back to the recorded tip
//! rather than the commit adopted, because the record lacks what decided it (the attempt,
//! its spend, its verdict and flags): adopting would record a stage nobody can account for.
//! The stage is asked again, and the commit stays in the branch's reflog.

use git2::Oid;

use super::step::{Cx, Journal, RunError};
use crate::git::{self, GitError, ObjectId};
use crate::pipeline::record::RunState;

/// How far back [`is_own`] walks a chain of this run's commits.
const MAX_OWN_CHAIN: usize = 64;

/// Moves the run's scratch branch to `to` if it still points at `from` (`None`: creates
/// it); a branch moved by someone else is never overwritten.
pub(in crate::pipeline) fn move_branch(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    to: Oid,
    from: Option<Oid>,
    why: &str,
) -> Result<(), GitError> {
    let name = branch_ref(&j.state);
    git::cas_ref(cx.repo(), &name, to, from, &format!("triad: {why}"))
}

fn branch_ref(state: &RunState) -> String {
    format!("refs/heads/{}", state.branch())
}

/// Puts the branch where the record says the run stands, before any model is called;
/// says what it repaired, if anything. The caller holds the run's lock, so lock files
/// left on the run's own refs by a killed process are removed first.
pub(in crate::pipeline) fn sync(cx: &Cx<'_>, j: &Journal<'_>) -> Result<Option<String>, RunError> {
    let repo = cx.repo();
    let name = branch_ref(&j.state);
    let mut repaired = Vec::new();
    for refname in [name.as_str(), j.refname()] {
        if git::clear_stale_ref_lock(repo, refname) {
            repaired.push(format!(
                "removed the lock file a killed process left on {refname}"
            ));
        }
    }
    let want = j.state.tip().oid()?;
    let short = |o: Oid| ObjectId::from(o).short().to_string();
    match git::ref_target(repo, &name) {
        Some(have) if have == want => {}
        None => {
            move_branch(cx, j, want, None, "resume: create the run's branch")?;
            repaired.push(format!(
                "created the branch {} at the recorded tip {}",
                j.state.branch(),
                short(want)
            ));
        }
        Some(have) if is_own(cx, &j.state, have) => {
            move_branch(
                cx,
                j,
                want,
                Some(have),
                "resume: the branch follows the record",
            )?;
            repaired.push(format!(
                "moved the branch {} from {} (a commit of this run) to the recorded tip {}",
                j.state.branch(),
                short(have),
                short(want)
            ));
        }
        Some(have) => {
            return Err(RunError::BranchMoved {
                branch: j.state.branch().to_string(),
                found: have.into(),
                recorded: want.into(),
            })
        }
    }
    Ok((!repaired.is_empty()).then(|| repaired.join("; ")))
}

/// Whether `commit` is one the run made or started from: its base, a commit its record
/// names, or a chain of commits carrying this run's `Triad-Run` trailer down to one of
/// those.
fn is_own(cx: &Cx<'_>, state: &RunState, commit: Oid) -> bool {
    let known = |o: Oid| {
        let id = ObjectId::from(o);
        id == *state.base()
            || state.stages().iter().any(|s| {
                s.commit.as_ref() == Some(&id)
                    || s.attempts.iter().any(|a| a.commit.as_ref() == Some(&id))
            })
            || state
                .format()
                .iter()
                .any(|f| f.commit.as_ref() == Some(&id))
    };
    let trailer = format!("Triad-Run: {}", state.run_id());
    let mut at = commit;
    for _ in 0..MAX_OWN_CHAIN {
        if known(at) {
            return true;
        }
        let Ok(c) = cx.repo().find_commit(at) else {
            return false;
        };
        let ours = c
            .message_raw()
            .is_ok_and(|m| m.lines().any(|l| l.trim_end() == trailer));
        match (ours, c.parent_id(0)) {
            (true, Ok(parent)) => at = parent,
            _ => return false,
        }
    }
    false
}
