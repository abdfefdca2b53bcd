//! Writing verdict lines: appended to the JSON note tools read, then the line people read
//! in `git log` brought in step.

use git2::{Oid, Repository};
use serde_json::Value;

use super::NotesError;

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
