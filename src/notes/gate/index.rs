//! What the gate reads besides a commit's own note: teammates' notes refs, and the verdict
//! lines of every note indexed by patch id, for commits that were cherry-picked or squashed
//! away from their note.

use std::collections::HashMap;

use git2::Repository;
use serde_json::Value;

use crate::notes::format::{parse_note, str_field};
use crate::notes::{NotesError, NOTES_REF};

/// Whether `name` is a notes ref the gate reads: [`NOTES_REF`], or a teammate's copy fetched
/// into `refs/notes/remotes/<remote>/triad`.
pub(crate) fn is_gate_notes_ref(name: &str) -> bool {
    name == NOTES_REF
        || name
            .strip_prefix("refs/notes/remotes/")
            .and_then(|rest| rest.strip_suffix("/triad"))
            .is_some_and(|remote| !remote.is_empty() && !remote.contains('/'))
}

/// The notes refs of `repo` the gate reads, local first; empty when none exists.
pub(crate) fn notes_refs(repo: &Repository) -> Result<Vec<String>, NotesError> {
    let refs = repo
        .references_glob("refs/notes/*")
        .map_err(|e| NotesError::git("cannot list the notes refs", e))?;
    let mut names: Vec<String> = refs
        .flatten()
        .filter_map(|r| r.name().ok().map(str::to_string))
        .filter(|n| is_gate_notes_ref(n))
        .collect();
    // Local first, then the remotes in name order: the order notes are merged in.
    names.sort_by_key(|n| (n != NOTES_REF, n.clone()));
    Ok(names)
}

/// Whether a note text may hold a verdict line, decided without parsing: a verdict is one of
/// four words (in any case), spelled literally or with a JSON escape, so a note with none of them and no
/// backslash holds none (a superset of what parsing finds).
pub(crate) fn may_carry_verdict(text: &str) -> bool {
    text.contains('\\')
        || ["APPROVE", "FLAG", "REJECT", "HALT"]
            .iter()
            .any(|v| crate::notes::contains_word(text, v))
}

/// Patch id → the verdict lines carrying it, from every note the gate reads.
///
/// A commit without a note whose stable patch id equals the `patch_id` of some verdict line
/// carries that line (and every other line with that patch id: the reviews of the original,
/// its reconciliation, the overrides written on it), exactly as `git triad notes reattach`
/// would copy them.
#[derive(Debug, Default)]
pub(crate) struct PatchIndex(HashMap<String, Vec<Value>>);

impl PatchIndex {
    /// Adds the known lines of one note that carry a patch id.
    pub fn add_note(&mut self, text: &str) {
        for line in parse_note(text) {
            if let Some(pid) = str_field(&line, "patch_id") {
                self.0.entry(pid.to_string()).or_default().push(line);
            }
        }
    }

    /// Whether no line carries a patch id (then no commit needs one computed).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The lines carrying `patch_id`, if any.
    pub fn lines(&self, patch_id: &str) -> Option<&[Value]> {
        self.0.get(patch_id).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_local_and_remote_triad_notes_only() {
        assert!(is_gate_notes_ref("refs/notes/triad"));
        assert!(is_gate_notes_ref("refs/notes/remotes/origin/triad"));
        assert!(!is_gate_notes_ref("refs/notes/remotes/triad"));
        assert!(!is_gate_notes_ref("refs/notes/remotes/a/b/triad"));
        assert!(!is_gate_notes_ref("refs/notes/commits"));
    }

    #[test]
    fn indexes_lines_by_patch_id() {
        let mut i = PatchIndex::default();
        i.add_note(
            "{\"v\":1,\"kind\":\"review\",\"patch_id\":\"p\",\"verdict\":\"HALT\"}\n\
             {\"v\":1,\"kind\":\"review\",\"verdict\":\"APPROVE\"}\n",
        );
        assert_eq!(i.lines("p").map(<[Value]>::len), Some(1));
        assert!(i.lines("q").is_none());
        assert!(!may_carry_verdict("looks fine to me"));
        assert!(may_carry_verdict("{\"verdict\":\"\\u0048ALT\"}"));
    }
}
