//! Where a commit's change was reviewed before it became this commit: the noted commit with
//! the same patch id (a cherry-pick, a one-commit squash, a rebase), or a run of consecutive
//! commits whose combined change it is (a squash of several reviewed commits).
//!
//! Notes travel for commits a clone may not have (a teammate's scratch branches): their
//! lines are still found by patch id, and the commits are skipped, and counted, where their
//! changes would have to be read.

use std::collections::{BTreeSet, HashMap};

use git2::{ErrorCode, Oid, Repository};

use super::patch::{patch_id, patch_id_between};
use super::source::{merge_sources, SourcedLine, Trust};
use super::store::{blob_text, note_map_of, refs};
use super::{read_note, NotesError};

/// How far back from a reviewed commit a squashed run of commits is looked for.
pub const MAX_SQUASHED: usize = 50;

/// Every line of the notes readers read (local and fetched), indexed for finding where a
/// change was reviewed.
pub struct NoteIndex {
    /// patch id → (commit the line is on, line); a line on the commit it names first.
    by_patch: HashMap<String, Vec<(Oid, SourcedLine)>>,
    /// commit → its lines.
    lines: HashMap<Oid, Vec<SourcedLine>>,
    /// The noted commits this clone has, in a fixed order: where a squashed run may end.
    noted: Vec<Oid>,
    /// The noted commits this clone does not have, in a fixed order.
    absent: Vec<Oid>,
}

/// The reviewed commits a change was found in, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// The noted commits whose lines belong to the change, oldest first.
    pub commits: Vec<Oid>,
    /// How many commits the change was squashed from (1: the same change, by patch id).
    pub squashed: usize,
    /// Their lines, each with the commit it is on.
    pub lines: Vec<(Oid, SourcedLine)>,
}

impl NoteIndex {
    /// Reads every note of the local notes ref and every fetched remote's, each line with
    /// where it was read (`trust` says which remotes may relax a verdict).
    pub fn build(repo: &Repository, trust: &Trust) -> Result<NoteIndex, NotesError> {
        let mut per_commit: HashMap<Oid, Vec<_>> = HashMap::new();
        for (name, source) in refs(repo, trust)? {
            for (annotated, blob) in note_map_of(repo, &name)? {
                let lines = read_note(&blob_text(repo, blob)?);
                per_commit
                    .entry(annotated)
                    .or_default()
                    .push((source.clone(), lines));
            }
        }
        let mut by_patch: HashMap<String, Vec<(Oid, SourcedLine)>> = HashMap::new();
        let mut lines = HashMap::new();
        let mut all: Vec<Oid> = per_commit.keys().copied().collect();
        all.sort();
        for annotated in &all {
            let merged = merge_sources(per_commit.remove(annotated).unwrap_or_default());
            for line in &merged {
                for pid in line.line.patch_ids() {
                    by_patch
                        .entry(pid.to_string())
                        .or_default()
                        .push((*annotated, line.clone()));
                }
            }
            lines.insert(*annotated, merged);
        }
        for entries in by_patch.values_mut() {
            entries.sort_by_key(|(on, line)| {
                line.line.fields().commit.as_deref() != Some(on.to_string().as_str())
            });
        }
        let odb = repo
            .odb()
            .map_err(|e| NotesError::git("cannot open the object database", e))?;
        let (noted, absent) = all.into_iter().partition(|c| odb.exists(*c));
        Ok(NoteIndex {
            by_patch,
            lines,
            noted,
            absent,
        })
    }

    /// The noted commits this clone does not have (notes travel without their commits): their
    /// lines are found by patch id, but no squash can end at them.
    pub fn absent(&self) -> &[Oid] {
        &self.absent
    }

    /// The lines with this patch id, each with the commit it is on.
    pub fn with_patch_id(&self, pid: &str) -> &[(Oid, SourcedLine)] {
        self.by_patch.get(pid).map_or(&[], Vec::as_slice)
    }

    /// The lines of other commits' notes that carry the patch id of `commit` (it is a
    /// cherry-pick, squash or rebase of those commits, or a squash of a whole run), each with
    /// the commit it is on: they count as if they were on `commit`, as the pre-push gate
    /// counts them.
    pub fn found_by_patch_id(
        &self,
        repo: &Repository,
        commit: Oid,
    ) -> Result<Vec<(Oid, SourcedLine)>, NotesError> {
        let Some(pid) = patch_id(repo, commit)? else {
            return Ok(Vec::new());
        };
        Ok(self
            .with_patch_id(&pid)
            .iter()
            .filter(|(on, _)| *on != commit)
            .cloned()
            .collect())
    }

    /// The lines noted on `commit`.
    pub fn lines_of(&self, commit: Oid) -> &[SourcedLine] {
        self.lines.get(&commit).map_or(&[], Vec::as_slice)
    }

    /// Where `target`'s change was reviewed: the noted commits with its patch id, else the
    /// reviewed commits of a run of consecutive commits (first parents, no merges, at most
    /// [`MAX_SQUASHED`]) whose combined change has its patch id. `None` when neither exists.
    pub fn origin(&self, repo: &Repository, target: Oid) -> Result<Option<Origin>, NotesError> {
        let Some(pid) = patch_id(repo, target)? else {
            return Ok(None);
        };
        let same: Vec<(Oid, SourcedLine)> = self
            .with_patch_id(&pid)
            .iter()
            .filter(|(on, _)| *on != target)
            .cloned()
            .collect();
        if !same.is_empty() {
            let mut commits = Vec::new();
            for (c, _) in &same {
                if !commits.contains(c) {
                    commits.push(*c);
                }
            }
            return Ok(Some(Origin {
                commits,
                squashed: 1,
                lines: same,
            }));
        }
        let Some(want) = paths_of(repo, target)? else {
            return Ok(None);
        };
        let mut cache: HashMap<Oid, Option<BTreeSet<String>>> = HashMap::new();
        for end in &self.noted {
            if *end == target {
                continue;
            }
            if let Some(origin) = self.squashed_into(repo, *end, &want, &pid, &mut cache)? {
                return Ok(Some(origin));
            }
        }
        Ok(None)
    }

    /// Walks back from `end` while each commit's change stays within `want`'s files; a run
    /// of two or more commits touching exactly those files whose combined change has `pid`
    /// is the squash.
    fn squashed_into(
        &self,
        repo: &Repository,
        end: Oid,
        want: &BTreeSet<String>,
        pid: &str,
        cache: &mut HashMap<Oid, Option<BTreeSet<String>>>,
    ) -> Result<Option<Origin>, NotesError> {
        let mut seen: BTreeSet<String> = BTreeSet::new();
        let mut run = Vec::new();
        let mut cur = end;
        for _ in 0..MAX_SQUASHED {
            let paths = match cache.get(&cur) {
                Some(p) => p.clone(),
                None => {
                    let p = paths_of(repo, cur)?;
                    cache.insert(cur, p.clone());
                    p
                }
            };
            let Some(paths) = paths else { return Ok(None) };
            if !paths.is_subset(want) {
                return Ok(None);
            }
            seen.extend(paths);
            run.push(cur);
            let Ok(parent) = repo.find_commit(cur).and_then(|c| c.parent_id(0)) else {
                return Ok(None);
            };
            let whole = run.len() >= 2
                && &seen == want
                && patch_id_between(repo, parent, end)?.as_deref() == Some(pid);
            if whole {
                run.reverse();
                let commits: Vec<Oid> = run
                    .iter()
                    .copied()
                    .filter(|c| !self.lines_of(*c).is_empty())
                    .collect();
                let lines = commits
                    .iter()
                    .flat_map(|c| self.lines_of(*c).iter().map(move |l| (*c, l.clone())))
                    .collect();
                return Ok(Some(Origin {
                    commits,
                    squashed: run.len(),
                    lines,
                }));
            }
            cur = parent;
        }
        Ok(None)
    }
}

/// The files a non-merge commit changes against its parent; `None` for a merge or a root,
/// and for a commit (or parent) this clone does not have (a shallow clone, a teammate's
/// scratch branch).
fn paths_of(repo: &Repository, commit: Oid) -> Result<Option<BTreeSet<String>>, NotesError> {
    let ctx = |what: &str| format!("cannot read the change of {commit}: {what}");
    let absent = |e: &git2::Error| e.code() == ErrorCode::NotFound;
    let c = match repo.find_commit(commit) {
        Ok(c) => c,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(NotesError::git(ctx("not a commit"), e)),
    };
    if c.parent_count() != 1 {
        return Ok(None);
    }
    let old = match c.parent(0).and_then(|p| p.tree()) {
        Ok(t) => t,
        Err(e) if absent(&e) => return Ok(None),
        Err(e) => return Err(NotesError::git(ctx("parent missing"), e)),
    };
    let new = c.tree().map_err(|e| NotesError::git(ctx("no tree"), e))?;
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .map_err(|e| NotesError::git(ctx("diff failed"), e))?;
    Ok(Some(
        diff.deltas()
            .filter_map(|d| d.new_file().path().or_else(|| d.old_file().path()))
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
    ))
}
