//! What the gate reads besides a commit's own note: the notes of every ref the gate reads
//! (local and teammates'), indexed by the patch ids their lines carry, for commits that are
//! cherry-picks, squashes or rebases of reviewed ones.

use super::idhash::IdMap;
use super::summary::{patch_key, PatchKey};
use crate::notes::{read_note, Source, SourcedLine};

/// Patch id → the notes (of other commits) whose lines carry it.
///
/// A pushed commit whose stable patch id equals a patch id some line carries (its commit's
/// `patch_id`, or a run's `change_patch_id`) carries that line as well as its own: the
/// reviews of the original, its reconciliation, the overrides written on it, exactly as
/// `git triad notes reattach` would copy them, each from where it was read. `K` is how the
/// reader names an object (an [`git2::Oid`], or hex text from the git CLI).
#[derive(Debug)]
pub(crate) struct PatchIndex<K> {
    /// patch id → (source, annotated commit, note blob).
    by_pid: IdMap<PatchKey, Vec<(usize, K, K)>>,
}

impl<K> Default for PatchIndex<K> {
    fn default() -> Self {
        PatchIndex {
            by_pid: IdMap::default(),
        }
    }
}

impl<K: PartialEq> PatchIndex<K> {
    /// Adds the note `blob` on `annotated`, read from source number `source`, whose lines
    /// carry `patch_ids`.
    pub fn add(&mut self, source: usize, annotated: K, blob: K, patch_ids: &[PatchKey])
    where
        K: Clone,
    {
        for pid in patch_ids {
            self.by_pid
                .entry(*pid)
                .or_default()
                .push((source, annotated.clone(), blob.clone()));
        }
    }

    /// Whether no line carries a patch id (then no commit needs one computed).
    pub fn is_empty(&self) -> bool {
        self.by_pid.is_empty()
    }

    /// The notes of commits other than `commit` with a line carrying `patch_id`: (source,
    /// note blob).
    pub fn others(&self, patch_id: &PatchKey, commit: &K) -> Vec<(usize, &K)> {
        self.by_pid.get(patch_id).map_or_else(Vec::new, |notes| {
            notes
                .iter()
                .filter(|(_, annotated, _)| annotated != commit)
                .map(|(s, _, blob)| (*s, blob))
                .collect()
        })
    }
}

/// The lines of `texts` (each with where it was read) that carry `patch_id`.
pub(crate) fn lines_carrying(texts: &[(&Source, &str)], patch_id: &PatchKey) -> Vec<SourcedLine> {
    texts
        .iter()
        .flat_map(|(source, text)| {
            read_note(text)
                .into_iter()
                .filter(|l| {
                    l.patch_ids()
                        .into_iter()
                        .any(|p| patch_key(p).as_ref() == Some(patch_id))
                })
                .map(|line| SourcedLine {
                    line,
                    source: (*source).clone(),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_notes_by_patch_id_and_leaves_the_commit_itself_out() {
        let (p, q, r) = ([1; 32], [2; 32], [3; 32]);
        let mut i = PatchIndex::default();
        i.add(0, "a", "blob-a", &[p]);
        i.add(1, "b", "blob-b", &[p, q]);
        assert_eq!(i.others(&p, &"a"), [(1, &"blob-b")]);
        assert_eq!(i.others(&q, &"a"), [(1, &"blob-b")]);
        assert!(i.others(&r, &"a").is_empty());
        let (hex, other) = ("ab".repeat(20), "cd".repeat(20));
        let text = format!(
            "{{\"v\":1,\"kind\":\"review\",\"patch_id\":\"{hex}\",\"verdict\":\"HALT\"}}\n\
             {{\"v\":1,\"kind\":\"review\",\"patch_id\":\"{other}\",\"verdict\":\"APPROVE\"}}\n\
             {{\"v\":1,\"kind\":\"review\",\"change_patch_id\":\"{hex}\",\"verdict\":\"REJECT\"}}\n"
        );
        let found = lines_carrying(&[(&Source::Local, &text)], &patch_key(&hex).unwrap());
        assert_eq!(found.len(), 2);
    }
}
