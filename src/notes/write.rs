//! Writing verdict lines: a line built from its record ([`NoteLine::written`]) appended to
//! the JSON note tools read, then the line people read in `git log` brought in step.

use git2::{Oid, Repository};
use serde_json::Value;

use super::line::{Head, NoteLine, Record};
use super::NotesError;
use crate::verdict::Verdict;

/// Appends records to the note on `commit` ([`super::store::append_json`]: existing lines are
/// never rewritten, lines already there are skipped), then refreshes its display note
/// ([`super::display::refresh`]).
///
/// The display note is derived: a failure to refresh it is logged and mended by the next
/// write or `git triad init`, and never undoes the verdict just written.
pub fn append(repo: &Repository, commit: Oid, lines: &[Value]) -> Result<(), NotesError> {
    super::store::append_json(repo, commit, lines)?;
    if let Err(e) = super::display::refresh(repo, &[commit]) {
        tracing::warn!("the display note on {commit} is not up to date: {e}");
    }
    Ok(())
}

/// Writes `record` on `commit`: the one writer of verdict lines. Returns the line written.
pub fn record(repo: &Repository, commit: Oid, record: Record) -> Result<NoteLine, NotesError> {
    written(repo, commit, Head::now(repo, commit)?, &record)
}

/// Writes `record` on `commit`, the tip of a run's change from `base`, with the patch id of
/// that whole change (`change_patch_id`): the outcome of a run, which the pre-push gate finds
/// on a squash of the run and on a rebase of that squash as on the tip itself.
pub fn record_change(
    repo: &Repository,
    base: Oid,
    commit: Oid,
    record: Record,
) -> Result<NoteLine, NotesError> {
    let mut head = Head::now(repo, commit)?;
    head.change_patch_id = super::patch_id_between(repo, base, commit)?;
    written(repo, commit, head, &record)
}

/// Builds the line `head` and `record` make and appends it to the note on `commit`.
fn written(
    repo: &Repository,
    commit: Oid,
    head: Head,
    record: &Record,
) -> Result<NoteLine, NotesError> {
    let line = NoteLine::written(&head, record).map_err(NotesError::Unwritable)?;
    // A line built from a record is valid, so it has a stored value.
    if let Some(value) = line.value() {
        append(repo, commit, std::slice::from_ref(value))?;
    }
    Ok(line)
}

/// Whether `tip` already carries the outcome `verdict` of a run from `base`: a line with
/// that verdict and the patch id of the run's whole change (with no base known, the verdict
/// in force being that one), so a stopped run marked again writes nothing new.
pub fn outcome_recorded(
    repo: &Repository,
    base: Option<Oid>,
    tip: Oid,
    verdict: Verdict,
) -> Result<bool, NotesError> {
    let lines = super::read(repo, tip)?;
    let Some(base) = base else {
        return Ok(super::effective(&lines).is_some_and(|e| e.verdict == verdict));
    };
    let change = super::patch_id_between(repo, base, tip)?;
    Ok(lines.iter().any(|l| {
        l.line.verdict() == Some(verdict)
            && l.line.value().and_then(|v| v.get("change_patch_id"))
                == change.as_ref().map(|c| Value::String(c.clone())).as_ref()
    }))
}
