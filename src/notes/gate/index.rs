//! What the gate reads besides a commit's own note: the verdict lines of every note the
//! gate reads (local and teammates'), indexed by patch id, for commits that were
//! cherry-picked or squashed away from their note.

use std::collections::HashMap;

use crate::notes::{read_note, Source, SourcedLine};

/// Whether a note text may hold a verdict line, decided without parsing: a verdict is one of
/// four words (in any case), spelled literally or with a JSON escape, so a note with none of them and no
/// backslash holds none (a superset of what parsing finds).
pub(crate) fn may_carry_verdict(text: &str) -> bool {
    text.contains('\\')
        || crate::verdict::Verdict::ALL
            .iter()
            .any(|v| crate::notes::contains_word(text, v.as_str()))
}

/// Patch id → the verdict lines carrying it, from every note the gate reads.
///
/// A commit without a note whose stable patch id equals the `patch_id` of some verdict line
/// carries that line (and every other line with that patch id: the reviews of the original,
/// its reconciliation, the overrides written on it), exactly as `git triad notes reattach`
/// would copy them, each from where it was read.
#[derive(Debug, Default)]
pub(crate) struct PatchIndex(HashMap<String, Vec<SourcedLine>>);

impl PatchIndex {
    /// Adds the valid lines of one note, read from `source`, that carry a patch id.
    pub fn add_note(&mut self, source: &Source, text: &str) {
        for line in read_note(text) {
            if let Some(pid) = line.patch_id().map(str::to_string) {
                self.0.entry(pid).or_default().push(SourcedLine {
                    line,
                    source: source.clone(),
                });
            }
        }
    }

    /// Whether no line carries a patch id (then no commit needs one computed).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The lines carrying `patch_id`, if any.
    pub fn lines(&self, patch_id: &str) -> Option<&[SourcedLine]> {
        self.0.get(patch_id).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_lines_by_patch_id() {
        let mut i = PatchIndex::default();
        i.add_note(
            &Source::Local,
            "{\"v\":1,\"kind\":\"review\",\"patch_id\":\"p\",\"verdict\":\"HALT\"}\n\
             {\"v\":1,\"kind\":\"review\",\"verdict\":\"APPROVE\"}\n",
        );
        assert_eq!(i.lines("p").map(<[SourcedLine]>::len), Some(1));
        assert!(i.lines("q").is_none());
        assert!(!may_carry_verdict("looks fine to me"));
        assert!(may_carry_verdict("{\"verdict\":\"\\u0048ALT\"}"));
    }
}
