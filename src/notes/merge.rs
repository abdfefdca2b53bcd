//! Merging two verdict notes refs by the union of their lines (git's `cat_sort_uniq`).
//!
//! A merge only adds: a line of the target is never lost, not even when the source is a
//! descendant that removed it (a remote that rewrote its notes, or fast-forwarded past a
//! removal). Then the source is not taken as it is; the union of both is written.

use std::collections::{BTreeMap, HashSet};

use git2::{Oid, Repository};

use super::store::{backoff, blob_text, compare_and_swap, note_map_at, ref_target, NoteMap};
use super::NotesError;

/// How often a merge is rebuilt when the target ref moves underneath it.
const MAX_MERGE_TRIES: u32 = 20;

/// What a merge did to the target ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeOutcome {
    /// The source has nothing the target lacks (or there is no source).
    UpToDate,
    /// The target did not exist and now points at the source.
    Created,
    /// The target was an ancestor of the source and moved forward to it.
    FastForward,
    /// A merge commit with both parents was written.
    Merged {
        /// Notes whose lines were combined from both sides.
        combined: usize,
        /// Notes only the source had.
        added: usize,
    },
}

/// Merges the notes of `source_ref` into `target_ref`: per annotated object, the union of the
/// lines of both sides (concatenate, sort, drop duplicates and blank lines, as git's
/// `cat_sort_uniq`), recorded as a merge commit with both tips as parents ([`write_union`]).
/// The target moves by compare-and-swap.
pub fn merge_notes(
    repo: &Repository,
    target_ref: &str,
    source_ref: &str,
) -> Result<MergeOutcome, NotesError> {
    match ref_target(repo, source_ref)? {
        Some(src) => merge_commit(repo, target_ref, src, source_ref),
        None => Ok(MergeOutcome::UpToDate),
    }
}

/// Merges the notes commit `src` (named `from` in the merge commit's message) into
/// `target_ref`, as [`merge_notes`] does. A fast-forward is taken only when it keeps every
/// line of the target.
pub fn merge_commit(
    repo: &Repository,
    target_ref: &str,
    src: Oid,
    from: &str,
) -> Result<MergeOutcome, NotesError> {
    let msg = format!("git-triad: merge notes from {from}");
    for attempt in 0..MAX_MERGE_TRIES {
        let dst = ref_target(repo, target_ref)?;
        let Some(dst) = dst else {
            if compare_and_swap(repo, target_ref, None, src, &msg)? {
                return Ok(MergeOutcome::Created);
            }
            backoff(attempt);
            continue;
        };
        // An empty start (what `init` creates) holds nothing: step over it either way.
        if super::start::is_empty_start(repo, src) {
            return Ok(MergeOutcome::UpToDate);
        }
        let descends = |a: Oid, b: Oid| {
            repo.graph_descendant_of(a, b)
                .map_err(|e| NotesError::git("cannot compare notes histories", e))
        };
        if dst == src || descends(dst, src)? {
            return Ok(MergeOutcome::UpToDate);
        }
        let forward = super::start::is_empty_start(repo, dst)
            || (descends(src, dst)? && keeps_every_line(repo, dst, src)?);
        if forward {
            if compare_and_swap(repo, target_ref, Some(dst), src, &msg)? {
                return Ok(MergeOutcome::FastForward);
            }
            backoff(attempt);
            continue;
        }
        let union = write_union(repo, [dst, src], from)?;
        let Union {
            commit,
            combined,
            added,
        } = union;
        if compare_and_swap(repo, target_ref, Some(dst), commit, &msg)? {
            return Ok(MergeOutcome::Merged { combined, added });
        }
        backoff(attempt);
    }
    Err(NotesError::Contended {
        tries: MAX_MERGE_TRIES,
    })
}

/// Whether every line of the notes at commit `old` is in the notes at commit `new`.
pub fn keeps_every_line(repo: &Repository, old: Oid, new: Oid) -> Result<bool, NotesError> {
    let (before, after) = (note_map_at(repo, old)?, note_map_at(repo, new)?);
    for (annotated, blob) in &before {
        let kept = match after.get(annotated) {
            None => false,
            Some(b) if b == blob => true,
            Some(b) => {
                let now = blob_text(repo, *b)?;
                let now: HashSet<&str> = now.lines().map(str::trim).collect();
                blob_text(repo, *blob)?
                    .lines()
                    .map(str::trim)
                    .all(|l| l.is_empty() || now.contains(l))
            }
        };
        if !kept {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A notes commit holding the union of two notes refs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Union {
    /// The commit, with both tips as parents.
    pub commit: Oid,
    /// Notes whose lines were combined from both sides.
    pub combined: usize,
    /// Notes only the second side had.
    pub added: usize,
}

/// Writes, without moving any ref, a merge commit with parents `tips` (ours, theirs; the
/// message names theirs `from`) whose tree holds, per annotated object, the union of the
/// lines of both sides (see [`cat_sort_uniq`]).
///
/// The tree is written from scratch with git's fanout rule, so entries in a notes tree that
/// are not notes are not carried over.
pub fn write_union(repo: &Repository, tips: [Oid; 2], from: &str) -> Result<Union, NotesError> {
    let ours: NoteMap = note_map_at(repo, tips[0])?;
    let theirs: NoteMap = note_map_at(repo, tips[1])?;
    let mut merged: BTreeMap<String, Oid> = ours.iter().map(|(k, v)| (k.to_string(), *v)).collect();
    let (mut combined, mut added) = (0, 0);
    for (annotated, their_blob) in &theirs {
        match ours.get(annotated) {
            None => {
                added += 1;
                merged.insert(annotated.to_string(), *their_blob);
            }
            Some(our_blob) if our_blob == their_blob => {}
            Some(our_blob) => {
                combined += 1;
                let text =
                    cat_sort_uniq(&blob_text(repo, *our_blob)?, &blob_text(repo, *their_blob)?);
                let blob = repo
                    .blob(text.as_bytes())
                    .map_err(|e| NotesError::git("cannot write a merged note", e))?;
                merged.insert(annotated.to_string(), blob);
            }
        }
    }
    let tree = write_notes_tree(repo, &merged)?;
    let commit = crate::git::commit(
        repo,
        tree,
        &tips,
        &format!("Notes merged by 'git triad' from {from}\n"),
    )?;
    Ok(Union {
        commit,
        combined,
        added,
    })
}

/// Two notes combined like git's `cat_sort_uniq`: all lines, sorted, each once, no blank lines.
pub fn cat_sort_uniq(a: &str, b: &str) -> String {
    let mut lines: Vec<&str> = a
        .lines()
        .chain(b.lines())
        .filter(|l| !l.trim().is_empty())
        .collect();
    lines.sort_unstable();
    lines.dedup();
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

/// Writes a notes tree for `notes` (hex id of annotated object → blob), with the fanout
/// `git fast-import` uses: one directory level per factor of 256 notes (`ab/cdef…`).
pub fn write_notes_tree(
    repo: &Repository,
    notes: &BTreeMap<String, Oid>,
) -> Result<Oid, NotesError> {
    let mut fanout = 0usize;
    let mut n = notes.len() >> 8;
    while n > 0 {
        fanout += 1;
        n >>= 8;
    }
    let entries: Vec<(&str, Oid)> = notes.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    write_level(repo, &entries, fanout)
}

/// One tree level: `fanout` more directory levels below it, then the blobs. `entries` are
/// sorted by name, so each two-character group is one contiguous run.
fn write_level(
    repo: &Repository,
    entries: &[(&str, Oid)],
    fanout: usize,
) -> Result<Oid, NotesError> {
    let err = |e| NotesError::git("cannot write a notes tree", e);
    let mut builder = repo.treebuilder(None).map_err(err)?;
    if fanout == 0 {
        for (name, blob) in entries {
            builder.insert(name, *blob, 0o100644).map_err(err)?;
        }
    } else {
        let mut rest = entries;
        while let Some((first, _)) = rest.first() {
            let dir = &first[..2];
            let run = rest.iter().take_while(|(n, _)| n.starts_with(dir)).count();
            let children: Vec<(&str, Oid)> =
                rest[..run].iter().map(|(n, b)| (&n[2..], *b)).collect();
            let sub = write_level(repo, &children, fanout - 1)?;
            builder.insert(dir, sub, 0o040000).map_err(err)?;
            rest = &rest[run..];
        }
    }
    builder.write().map_err(err)
}

#[cfg(test)]
mod tests {
    use super::cat_sort_uniq;

    #[test]
    fn union_sorts_and_drops_duplicates_and_blank_lines() {
        assert_eq!(cat_sort_uniq("b\na\n\n", "c\na\n"), "a\nb\nc\n");
    }
}
