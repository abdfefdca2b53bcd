//! Keeping verdicts attached when history is rewritten: post-rewrite copies, and reattaching
//! by patch id after a squash or cherry-pick.

use std::collections::{BTreeMap, HashMap, HashSet};

use git2::{Oid, Repository};
use serde_json::Value;

use super::format::{canonical_json, effective, parse_note, reattached, without_reattached};
use super::line::ReadLine;
use super::store::{append, blob_text, note_map, read};
use super::{patch_id, NotesError};
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

/// A record's identity wherever it is attached (without `reattached_from`), so a copy made
/// by git's `notes.rewriteRef` and one made by us count once.
fn identity_of(line: &Value) -> String {
    canonical_json(&without_reattached(line))
}

/// The identities of the records already on `commit`.
fn present(repo: &Repository, commit: Oid) -> Result<HashSet<String>, NotesError> {
    Ok(read(repo, commit)?.iter().map(identity_of).collect())
}

/// Copies the verdict lines of each old commit onto its new commit, marked with
/// `reattached_from` (the union when several old commits became one, as in a squash).
/// Records the new commit already has — e.g. copied by git's own `notes.rewriteRef` — are
/// not added again.
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
    let notes = note_map(repo)?;
    let mut copied = Vec::new();
    for (new, olds) in by_new {
        let mut have = present(repo, new)?;
        let mut lines = Vec::new();
        let mut from = Vec::new();
        for old in olds {
            let Some(blob) = notes.get(&old) else {
                continue;
            };
            let old_hex = old.to_string();
            for line in parse_note(&blob_text(repo, *blob)?) {
                if have.insert(identity_of(&line)) {
                    lines.push(reattached(&line, &old_hex));
                    if !from.contains(&old) {
                        from.push(old);
                    }
                }
            }
        }
        if !lines.is_empty() {
            append(repo, new, &lines)?;
            copied.push(Copied {
                commit: new,
                from,
                lines: lines.len(),
            });
        }
    }
    Ok(copied)
}

/// Finds verdicts for `candidates` that carry none: the lines of any noted commit whose
/// records have the candidate's patch id are appended to it, marked `reattached_from`.
///
/// Used after a squash merge or a cherry-pick, where the same change became a new commit
/// that git's rewrite tracking never saw.
pub fn reattach(repo: &Repository, candidates: &[Oid]) -> Result<Vec<Copied>, NotesError> {
    let notes = note_map(repo)?;
    let mut targets = Vec::new();
    for c in candidates {
        let has_verdict = match notes.get(c) {
            Some(blob) => effective(&parse_note(&blob_text(repo, *blob)?)).is_some(),
            None => false,
        };
        if !has_verdict && !targets.contains(c) {
            targets.push(*c);
        }
    }
    if targets.is_empty() {
        return Ok(Vec::new());
    }
    // patch id → (commit the line is on, line); originals (line.commit == where it is) first,
    // so a line found both on its reviewed commit and on a copy points at the reviewed one.
    let mut index: HashMap<String, Vec<(Oid, Value)>> = HashMap::new();
    let mut sources: Vec<(&Oid, &Oid)> = notes.iter().collect();
    sources.sort();
    for (annotated, blob) in sources {
        for line in parse_note(&blob_text(repo, *blob)?) {
            if let Some(pid) = ReadLine::of(&line).patch_id {
                index.entry(pid).or_default().push((*annotated, line));
            }
        }
    }
    for entries in index.values_mut() {
        entries.sort_by_key(|(on, line)| ReadLine::of(line).commit != Some(on.to_string()));
    }
    let mut copied = Vec::new();
    for target in targets {
        let Some(pid) = patch_id(repo, target)? else {
            continue;
        };
        let Some(entries) = index.get(&pid) else {
            continue;
        };
        let mut have = present(repo, target)?;
        let mut lines = Vec::new();
        let mut from = Vec::new();
        for (source, line) in entries {
            if *source != target && have.insert(identity_of(line)) {
                lines.push(reattached(line, &source.to_string()));
                if !from.contains(source) {
                    from.push(*source);
                }
            }
        }
        if !lines.is_empty() {
            append(repo, target, &lines)?;
            copied.push(Copied {
                commit: target,
                from,
                lines: lines.len(),
            });
        }
    }
    Ok(copied)
}
