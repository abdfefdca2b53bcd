//! The pre-push gate: which pushed commits carry a verdict the policy blocks on.
//!
//! Two ways to look: libgit2 (fast: one pass over the notes ref, one revwalk; SHA-1 and
//! SHA-256 repositories), and the git CLI for repositories libgit2 cannot open (reftable refs,
//! see [`super::gate_cli`]).
//! Both start from the same [`check`], which picks the updates to look at, and feed the same
//! [`Policy`].

use git2::{ObjectType, Oid, Repository};

use std::path::Path;

use serde_json::Value;

use super::format::{effective, parse_note, Effective};
use super::gate_index::{may_carry_verdict, notes_refs, PatchIndex};
use super::store::{note_map_of, NoteMap};
use super::NotesError;
use crate::git::parse_oid;

/// One line of pre-push input: `<local ref> <local oid> <remote ref> <remote oid>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefUpdate {
    /// The local ref being pushed (may contain spaces; `(delete)` for deletes).
    pub local_ref: String,
    /// The object pushed; all zeros for a delete.
    pub local_oid: String,
    /// The ref updated on the remote.
    pub remote_ref: String,
    /// What the remote ref points at now; all zeros if it does not exist.
    pub remote_oid: String,
}

impl RefUpdate {
    /// Whether this update deletes the remote ref (nothing is pushed).
    pub fn is_delete(&self) -> bool {
        is_zero_id(&self.local_oid)
    }

    /// Whether this pushes triad's own refs (notes, runs, tasks), whose commits (notes
    /// commits, run records) carry no verdicts of their own.
    ///
    /// Such a push is still checked like any other — a `refs/triad/x` pointing at a halted
    /// commit is blocked by that commit's verdict — except that its commits without a verdict
    /// never block as `missing` and are not matched by patch id. Both sides must be in those
    /// namespaces, so `git push origin bad:refs/notes/x` gets no such leniency.
    pub fn is_triad_ref(&self) -> bool {
        let ours = |r: &str| r.starts_with("refs/notes/") || r.starts_with("refs/triad/");
        ours(&self.local_ref) && ours(&self.remote_ref)
    }

    /// Whether the gate has to look at this update at all: everything but a delete.
    pub fn needs_check(&self) -> bool {
        !self.is_delete()
    }

    /// Whether the remote side names an existing ref (not all zeros).
    pub fn has_remote(&self) -> bool {
        !is_zero_id(&self.remote_oid)
    }
}

/// Whether `id` is git's null object id, in SHA-1 (40) or SHA-256 (64) form.
pub fn is_zero_id(id: &str) -> bool {
    (id.len() == 40 || id.len() == 64) && id.bytes().all(|b| b == b'0')
}

fn is_hex_id(id: &str) -> bool {
    (id.len() == 40 || id.len() == 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Parses pre-push input. Fields are split from the right, because only the local ref can
/// contain spaces; blank lines are ignored, anything else malformed is an error.
pub fn parse_updates(text: &str) -> Result<Vec<RefUpdate>, NotesError> {
    let mut updates = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_end_matches('\r');
        if trimmed.trim().is_empty() {
            continue;
        }
        let bad = || NotesError::BadPushLine(trimmed.to_string());
        let mut parts = trimmed.rsplitn(4, ' ');
        let remote_oid = parts.next().ok_or_else(bad)?;
        let remote_ref = parts.next().ok_or_else(bad)?;
        let local_oid = parts.next().ok_or_else(bad)?;
        let local_ref = parts.next().ok_or_else(bad)?;
        if !is_hex_id(local_oid) || !is_hex_id(remote_oid) {
            return Err(bad());
        }
        updates.push(RefUpdate {
            local_ref: local_ref.to_string(),
            local_oid: local_oid.to_ascii_lowercase(),
            remote_ref: remote_ref.to_string(),
            remote_oid: remote_oid.to_ascii_lowercase(),
        });
    }
    Ok(updates)
}

/// Which effective verdicts block a push (`hooks.pre_push.block_on`).
#[derive(Debug, Clone)]
pub struct Policy {
    verdicts: Vec<String>,
    missing: bool,
}

impl Policy {
    /// A policy from the configured list: verdict names, and `missing` for commits without one.
    pub fn new(block_on: &[String]) -> Policy {
        Policy {
            verdicts: block_on
                .iter()
                .filter(|v| v.as_str() != "missing")
                .cloned()
                .collect(),
            missing: block_on.iter().any(|v| v == "missing"),
        }
    }

    /// The same policy without `missing`: for commits that carry no verdicts of their own.
    pub fn without_missing(&self) -> Policy {
        Policy {
            verdicts: self.verdicts.clone(),
            missing: false,
        }
    }

    /// Whether commits without any verdict block.
    pub fn blocks_missing(&self) -> bool {
        self.missing
    }

    /// Whether nothing can ever block (an empty list).
    pub fn is_open(&self) -> bool {
        self.verdicts.is_empty() && !self.missing
    }

    /// Whether a note made of `texts` could block, decided without parsing it.
    ///
    /// A superset of what parsing decides: a line's verdict is a JSON string, which spells a
    /// blocking verdict either literally or with an escape, so a note in which no blocking
    /// verdict occurs and no backslash at all cannot block.
    fn may_block(&self, texts: &[&str]) -> bool {
        self.missing
            || texts
                .iter()
                .any(|t| t.contains('\\') || self.verdicts.iter().any(|v| t.contains(v.as_str())))
    }

    /// Judges one commit's notes (one text per notes ref that has a note on it; none: no
    /// note). `Some(None)` blocks as missing, `Some(Some(e))` blocks on the effective verdict
    /// `e`, `None` lets it through.
    pub fn judge(&self, texts: &[&str]) -> Option<Option<Effective>> {
        if texts.is_empty() {
            return self.missing.then_some(None);
        }
        if !self.may_block(texts) {
            return None;
        }
        let lines: Vec<Value> = texts.iter().flat_map(|t| parse_note(t)).collect();
        self.judge_lines(&lines)
    }

    /// Judges parsed verdict lines (the note's, or those found by patch id).
    pub fn judge_lines(&self, lines: &[Value]) -> Option<Option<Effective>> {
        match effective(lines) {
            None => self.missing.then_some(None),
            Some(e) if self.verdicts.contains(&e.verdict) => Some(Some(e)),
            Some(_) => None,
        }
    }
}

/// A pushed commit the policy blocks.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Full commit id.
    pub commit: String,
    /// Abbreviated commit id.
    pub short: String,
    /// First line of the commit message.
    pub subject: String,
    /// The blocking verdict and its record; `None` when the commit has no verdict at all.
    pub effective: Option<Effective>,
}

/// Where the gate reads commits and notes.
#[derive(Clone, Copy)]
pub enum Backend<'a> {
    /// libgit2 (SHA-1 and SHA-256 repositories).
    Git2(&'a Repository),
    /// The git command line, in this directory (repositories libgit2 cannot open).
    Cli(&'a Path),
}

/// Checks the pushed commits; the findings are those whose verdict `policy` blocks on.
///
/// Only updates that push commits are looked at ([`RefUpdate::needs_check`]), and nothing
/// is when the policy blocks nothing; `backend` then reads the commits and their notes.
pub fn check(
    backend: Backend<'_>,
    remote: &str,
    updates: &[RefUpdate],
    policy: &Policy,
) -> Result<Vec<Finding>, NotesError> {
    let (ours, theirs): (Vec<&RefUpdate>, Vec<&RefUpdate>) = updates
        .iter()
        .filter(|u| u.needs_check())
        .partition(|u| u.is_triad_ref());
    let mut findings = Vec::new();
    // Ordinary refs: every verdict, found by note or else by patch id. Triad's own refs:
    // their commits' own verdicts only (see [`RefUpdate::is_triad_ref`]).
    let groups = [
        (theirs, policy.clone(), Scope { by_patch_id: true }),
        (ours, policy.without_missing(), Scope { by_patch_id: false }),
    ];
    for (pushed, policy, scope) in groups {
        if pushed.is_empty() || policy.is_open() {
            continue;
        }
        findings.extend(match backend {
            Backend::Git2(repo) => check_git2(repo, remote, &pushed, &policy, scope)?,
            Backend::Cli(dir) => super::gate_cli::check(dir, remote, &pushed, &policy, scope)?,
        });
    }
    Ok(findings)
}

/// How far the gate looks for the verdict of a pushed commit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope {
    /// Whether a commit without a note carries the verdicts of the notes whose lines have its
    /// patch id (a cherry-pick or squash of a reviewed commit).
    pub by_patch_id: bool,
}

/// Checks the pushed commits with libgit2: one revwalk over every pushed ref that hides what
/// the remote already has; the notes ref is listed once and only the pushed commits' notes
/// are read.
///
/// For an update whose remote oid exists locally, the remote oid is hidden (`remote..local`);
/// otherwise (new branch, or a force push over history this clone never saw) every
/// `refs/remotes/<remote>/*` ref is hidden, so only commits new to that remote are checked.
///
/// The walk and the reading of notes run on two threads (each with its own repository
/// handle): a big push costs about the walk alone.
fn check_git2(
    repo: &Repository,
    remote: &str,
    pushed: &[&RefUpdate],
    policy: &Policy,
    scope: Scope,
) -> Result<Vec<Finding>, NotesError> {
    // Without any verdict only "missing" can block; skip the walk when it cannot.
    let refs = notes_refs(repo)?;
    if refs.is_empty() && !policy.blocks_missing() {
        return Ok(Vec::new());
    }
    // git does not re-hash objects it reads, and the notes are hashed by name anyway; libgit2's
    // default check (SHA-1DC of every object) would cost more than the whole walk.
    git2::opts::strict_hash_verification(false);
    // Every object is read once; caching them only costs allocations.
    git2::opts::enable_caching(false);
    let started = std::time::Instant::now();
    let (tx, rx) = std::sync::mpsc::channel::<Oid>();
    let git_dir = repo.path().to_path_buf();
    let (walked, judged) = std::thread::scope(|threads| {
        let judge = threads.spawn(move || judge_stream(&git_dir, rx, policy, &refs, scope));
        let walked = walk_pushed(repo, remote, pushed, &tx);
        drop(tx);
        (
            walked,
            judge.join().expect("the gate's reader thread panicked"),
        )
    });
    // A failed reader stops the walk early, so its error is the one to report.
    let blocked = judged?;
    let count = walked?;
    tracing::debug!("checked {count} pushed commits in {:?}", started.elapsed());
    blocked
        .into_iter()
        .map(|(oid, effective)| describe(repo, oid, effective))
        .collect()
}

/// Judges the commits arriving on `rx`: lists the notes of every ref in `refs` once (when
/// the first commit comes), then reads and judges each commit's notes. A commit without a
/// note, or whose notes carry no verdict at all ([`may_carry_verdict`]), is judged, when
/// `scope` says so, by the lines that carry its patch id
/// ([`PatchIndex`], built on the first such commit). Returns the blocked ones in arrival
/// order.
fn judge_stream(
    git_dir: &std::path::Path,
    rx: std::sync::mpsc::Receiver<Oid>,
    policy: &Policy,
    refs: &[String],
    scope: Scope,
) -> Result<Vec<(Oid, Option<Effective>)>, NotesError> {
    let mut blocked = Vec::new();
    let Ok(first) = rx.recv() else {
        return Ok(blocked); // nothing pushed that the remote lacks
    };
    let repo =
        Repository::open(git_dir).map_err(|e| NotesError::git("cannot open the repository", e))?;
    let maps: Vec<NoteMap> = refs
        .iter()
        .map(|r| note_map_of(&repo, r))
        .collect::<Result<_, _>>()?;
    let odb = repo
        .odb()
        .map_err(|e| NotesError::git("cannot open the object database", e))?;
    let read = |blob: Oid| -> Result<String, NotesError> {
        let obj = odb
            .read(blob)
            .map_err(|e| NotesError::git(format!("cannot read note blob {blob}"), e))?;
        Ok(match std::str::from_utf8(obj.data()) {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(obj.data()).into_owned(),
        })
    };
    let mut index: Option<PatchIndex> = None;
    for oid in std::iter::once(first).chain(rx) {
        let blobs: Vec<Oid> = maps.iter().filter_map(|m| m.get(&oid).copied()).collect();
        let texts = blobs.into_iter().map(read).collect::<Result<Vec<_>, _>>()?;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        // A note without any verdict (say a hand-written remark) does not hide a copy.
        let own = policy.judge(&texts);
        let verdict = if matches!(own, Some(Some(_)))
            || !scope.by_patch_id
            || texts.iter().any(|t| may_carry_verdict(t))
        {
            own
        } else {
            if index.is_none() {
                let mut built = PatchIndex::default();
                for blob in maps.iter().flat_map(|m| m.values()) {
                    built.add_note(&read(*blob)?);
                }
                index = Some(built);
            }
            let index = index.as_ref().expect("built above");
            // Patch ids cost a diff each: only when some line could match.
            let pid = match index.is_empty() {
                true => None,
                false => super::patch_id(&repo, oid)?,
            };
            match pid.and_then(|p| index.lines(&p)) {
                Some(lines) => policy.judge_lines(lines),
                None => own,
            }
        };
        if let Some(effective) = verdict {
            blocked.push((oid, effective));
        }
    }
    Ok(blocked)
}

/// Sends the commits the updates bring to the remote, newest first, each once; returns how
/// many. Stops early (without error) when the reader has gone away.
fn walk_pushed(
    repo: &Repository,
    remote: &str,
    pushed: &[&RefUpdate],
    tx: &std::sync::mpsc::Sender<Oid>,
) -> Result<usize, NotesError> {
    let walk_err = |e| NotesError::git("cannot walk the pushed commits", e);
    let mut walk = repo.revwalk().map_err(walk_err)?;
    let mut hide_tracking = false;
    for u in pushed {
        let Some(local) = peel_commit(repo, &u.local_oid)? else {
            continue; // a tag of a tree or blob: no commits, no verdicts
        };
        walk.push(local).map_err(walk_err)?;
        match u.has_remote().then(|| peel_commit(repo, &u.remote_oid)) {
            Some(Ok(Some(remote_commit))) => walk.hide(remote_commit).map_err(walk_err)?,
            _ => hide_tracking = true,
        }
    }
    if hide_tracking {
        let glob = format!("refs/remotes/{remote}/*");
        let refs = repo
            .references_glob(&glob)
            .map_err(|e| NotesError::git(format!("cannot list {glob}"), e))?;
        for r in refs.flatten() {
            if let Ok(c) = r.peel_to_commit() {
                walk.hide(c.id()).map_err(walk_err)?;
            }
        }
    }
    let mut count = 0;
    for oid in walk {
        if tx.send(oid.map_err(walk_err)?).is_err() {
            break;
        }
        count += 1;
    }
    Ok(count)
}

/// The commit an id names, peeling tags; `None` if it names no commit or is not here.
fn peel_commit(repo: &Repository, id: &str) -> Result<Option<Oid>, NotesError> {
    let oid = parse_oid(id).map_err(|e| NotesError::git(format!("bad object id {id}"), e))?;
    let Ok(obj) = repo.find_object(oid, None) else {
        return Ok(None);
    };
    Ok(obj.peel(ObjectType::Commit).ok().map(|c| c.id()))
}

fn describe(
    repo: &Repository,
    oid: Oid,
    effective: Option<Effective>,
) -> Result<Finding, NotesError> {
    let commit = repo
        .find_commit(oid)
        .map_err(|e| NotesError::git(format!("cannot read commit {oid}"), e))?;
    let short = commit
        .as_object()
        .short_id()
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_string))
        .unwrap_or_else(|| oid.to_string()[..12].to_string());
    Ok(Finding {
        commit: oid.to_string(),
        short,
        subject: commit.summary().ok().flatten().unwrap_or("").to_string(),
        effective,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_from_the_right() {
        let z = "0".repeat(40);
        let a = "a".repeat(40);
        let text =
            format!("refs/heads/odd name {a} refs/heads/x {z}\n\n(delete) {z} refs/heads/y {a}\n");
        let u = parse_updates(&text).unwrap();
        assert_eq!(u[0].local_ref, "refs/heads/odd name");
        assert!(!u[0].has_remote() && u[0].needs_check());
        assert!(u[1].is_delete() && !u[1].needs_check());
        assert!(parse_updates("just garbage").is_err());
        assert!(is_zero_id(&"0".repeat(64)));
        assert!(!is_zero_id(&"0".repeat(50)));
    }

    #[test]
    fn the_fast_path_never_skips_what_parsing_would_block() {
        let p = Policy::new(&["HALT".to_string()]);
        let ts = "2026-01-01T00:00:00.000Z";
        // Duplicate keys, escapes, odd spacing: still the same records as `parse_note` sees.
        let dup = format!(
            r#"{{"v":1,"kind":"review","ts":"{ts}","verdict":"APPROVE","verdict":"HALT"}}"#
        );
        assert!(matches!(p.judge(&[&dup]), Some(Some(_))));
        let escaped =
            format!(r#"{{ "v" : 1, "kind" : "re\u0076iew", "ts" : "{ts}", "verdict" : "HALT" }}"#);
        assert!(matches!(p.judge(&[&escaped]), Some(Some(_))));
        // `HALT` spelled with an escape, so the word itself never occurs.
        let hidden = format!(r#"{{"v":1,"kind":"review","ts":"{ts}","verdict":"\u0048ALT"}}"#);
        assert!(!hidden.contains("HALT"));
        assert!(matches!(p.judge(&[&hidden]), Some(Some(_))));
        // Not records: an array, another version, an unknown kind.
        for text in [
            format!(r#"[1,"review","{ts}","HALT"]"#),
            format!(r#"{{"v":2,"kind":"review","ts":"{ts}","verdict":"HALT"}}"#),
            format!(r#"{{"v":1,"kind":"rumour","ts":"{ts}","verdict":"HALT"}}"#),
        ] {
            assert!(p.judge(&[&text]).is_none(), "{text}");
        }
    }

    #[test]
    fn policy_judges_effective_verdicts() {
        let halt = r#"{"v":1,"kind":"review","ts":"2026-01-01T00:00:00.000Z","verdict":"HALT"}"#;
        let over = r#"{"answers":["2026-01-01T00:00:00.000Z review HALT"],"kind":"override","overrides":"HALT","ts":"2026-01-02T00:00:00.000Z","v":1,"verdict":"APPROVE"}"#;
        let p = Policy::new(&["HALT".to_string()]);
        assert!(matches!(p.judge(&[halt]), Some(Some(_))));
        assert!(p.judge(&[&format!("{halt}\n{over}")]).is_none());
        // Notes on two refs (local and a teammate's) are one note.
        assert!(p.judge(&[halt, over]).is_none());
        assert!(p.judge(&[]).is_none());
        let p = Policy::new(&["HALT".to_string(), "missing".to_string()]);
        assert!(matches!(p.judge(&[]), Some(None)));
        assert!(matches!(p.judge(&["junk"]), Some(None)));
        assert!(p.without_missing().judge(&[]).is_none());
    }
}
