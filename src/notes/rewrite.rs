//! Keeping verdicts attached when history is rewritten: post-rewrite copies, and reattaching
//! by patch id after a squash or cherry-pick.

use std::collections::{BTreeMap, HashSet};

use git2::{Oid, Repository};

use super::line::{read_note, reattached, LineId};
use super::origin::NoteIndex;
use super::source::{remote_of, tracking_ref, Trust};
use super::store::{append_json_to, blob_text, note_map_of, read_text};
use super::write::append;
use super::{NotesError, NOTES_REF};
use crate::git::parse_oid;

/// Verdict lines copied onto one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// The commit that received the lines.
    pub commit: Oid,
    /// The commits the lines came from.
    pub from: Vec<Oid>,
    /// How many lines were appended.
    pub lines: usize,
}

/// Parses post-rewrite input: `<old> <new> [extra]` per line, blank lines ignored.
pub fn parse_rewrites(text: &str) -> Result<Vec<(Oid, Oid)>, NotesError> {
    let mut pairs = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let bad = || NotesError::BadRewriteLine(line.to_string());
        let mut fields = line.split_whitespace();
        let old = fields.next().ok_or_else(bad)?;
        let new = fields.next().ok_or_else(bad)?;
        let old = parse_oid(old).map_err(|_| bad())?;
        let new = parse_oid(new).map_err(|_| bad())?;
        pairs.push((old, new));
    }
    Ok(pairs)
}

/// The ids of the records already on `commit` in `notes_ref` (an id ignores
/// `reattached_from`, so a copy made by git's `notes.rewriteRef` and one made by us count
/// once).
fn present(repo: &Repository, notes_ref: &str, commit: Oid) -> Result<HashSet<LineId>, NotesError> {
    Ok(read_text(repo, notes_ref, commit)?
        .map(|t| read_note(&t))
        .unwrap_or_default()
        .iter()
        .filter_map(|l| l.id())
        .cloned()
        .collect())
}

/// Copies the verdict lines of each old commit onto its new commit, marked with
/// `reattached_from` (the union when several old commits became one, as in a squash).
/// Records the new commit already has — e.g. copied by git's own `notes.rewriteRef` — are
/// not added again.
///
/// Lines fetched from a remote are carried over too, within that remote's tracking ref
/// (after what `git fetch` landed is folded in): there they still count as that remote's,
/// so an amend or a rebase loses no fetched HALT, and a copy never passes a remote's line
/// off as this clone's.
pub fn copy_for_rewrite(
    repo: &Repository,
    pairs: &[(Oid, Oid)],
) -> Result<Vec<Copied>, NotesError> {
    let mut by_new: BTreeMap<Oid, Vec<Oid>> = BTreeMap::new();
    for (old, new) in pairs {
        let olds = by_new.entry(*new).or_default();
        if !olds.contains(old) && old != new {
            olds.push(*old);
        }
    }
    super::fold::fold_all(repo)?;
    let mut refs = vec![NOTES_REF.to_string()];
    refs.extend(
        super::store::refs(repo, &Trust::default())?
            .into_iter()
            .map(|(name, _)| name)
            .filter(|name| remote_of(name).is_some_and(|r| tracking_ref(&r) == *name)),
    );
    let mut copied: Vec<Copied> = Vec::new();
    for notes_ref in refs {
        let notes = note_map_of(repo, &notes_ref)?;
        for (new, olds) in &by_new {
            let mut have = present(repo, &notes_ref, *new)?;
            let mut lines = Vec::new();
            let mut from = Vec::new();
            for old in olds {
                let Some(blob) = notes.get(old) else {
                    continue;
                };
                let old_hex = old.to_string();
                for line in read_note(&blob_text(repo, *blob)?) {
                    let Some(stored) = line.stored() else {
                        continue; // git's own notes.rewriteRef copies the note text whole
                    };
                    if have.insert(stored.id().clone()) {
                        lines.push(reattached(&stored.value, &old_hex));
                        if !from.contains(old) {
                            from.push(*old);
                        }
                    }
                }
            }
            if lines.is_empty() {
                continue;
            }
            match notes_ref == NOTES_REF {
                true => append(repo, *new, &lines)?,
                false => append_json_to(repo, &notes_ref, *new, &lines)?,
            }
            match copied.iter_mut().find(|c| c.commit == *new) {
                Some(c) => {
                    c.lines += lines.len();
                    for o in from {
                        if !c.from.contains(&o) {
                            c.from.push(o);
                        }
                    }
                }
                None => copied.push(Copied {
                    commit: *new,
                    from,
                    lines: lines.len(),
                }),
            }
        }
    }
    Ok(copied)
}

/// What reattaching did, and what it left alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reattached {
    /// The lines copied, per commit.
    pub copied: Vec<Copied>,
    /// Lines of the reviewed originals not copied because they were fetched from a remote
    /// the user does not trust: they can only tighten where they are (the gate reads them
    /// there, by patch id too), and a copy here would pass them off as this clone's.
    pub untrusted: usize,
    /// Noted commits this clone does not have: their lines are still found by patch id, but
    /// no squash of them can be recognized.
    pub absent: Vec<Oid>,
}

/// Finds verdicts for `candidates` that carry none: the lines of the noted commits where the
/// candidate's change was reviewed ([`NoteIndex::origin`]: the same patch id, or a squash of
/// several reviewed commits) are appended to it, marked `reattached_from`. Notes of this
/// clone and of the remotes `trust` trusts are copied; others are counted, not copied.
///
/// Used after a squash merge or a cherry-pick, where the same change became a new commit
/// that git's rewrite tracking never saw.
pub fn reattach(
    repo: &Repository,
    candidates: &[Oid],
    trust: &Trust,
) -> Result<Reattached, NotesError> {
    let index = NoteIndex::build(repo, trust)?;
    let mut done = Reattached {
        absent: index.absent().to_vec(),
        ..Reattached::default()
    };
    let mut targets = Vec::new();
    for c in candidates {
        let has_verdict = super::effective(index.lines_of(*c)).is_some();
        if !has_verdict && !targets.contains(c) {
            targets.push(*c);
        }
    }
    for target in targets {
        let Some(origin) = index.origin(repo, target)? else {
            continue;
        };
        let mut have = present(repo, NOTES_REF, target)?;
        let mut lines = Vec::new();
        let mut from = Vec::new();
        for (source_commit, line) in &origin.lines {
            let Some(stored) = line.line.stored() else {
                continue;
            };
            if *source_commit == target || have.contains(stored.id()) {
                continue;
            }
            if !line.source.may_relax() {
                done.untrusted += 1;
                continue;
            }
            have.insert(stored.id().clone());
            lines.push(reattached(&stored.value, &source_commit.to_string()));
            if !from.contains(source_commit) {
                from.push(*source_commit);
            }
        }
        if !lines.is_empty() {
            append(repo, target, &lines)?;
            done.copied.push(Copied {
                commit: target,
                from,
                lines: lines.len(),
            });
        }
    }
    Ok(done)
}
