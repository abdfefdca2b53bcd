//! The gate's reader through libgit2 (fast: one pass over the notes ref, one revwalk; SHA-1
//! and SHA-256 repositories).

use git2::{ObjectType, Oid, Repository};

use super::index::{may_carry_verdict, PatchIndex};
use super::policy::{Blocked, Finding, Policy, RefUpdate, Scope};
use crate::git::parse_oid;
use crate::notes::store::{note_map_of, refs, NoteMap};
use crate::notes::{NotesError, Source, Trust};

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
pub(super) fn check(
    repo: &Repository,
    remote: &str,
    pushed: &[&RefUpdate],
    policy: &Policy,
    trust: &Trust,
    scope: Scope,
) -> Result<Vec<Finding>, NotesError> {
    // Without any verdict only "missing" can block; skip the walk when it cannot.
    let refs = refs(repo, trust)?;
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
        .map(|(oid, why)| describe(repo, oid, why))
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
    refs: &[(String, Source)],
    scope: Scope,
) -> Result<Vec<(Oid, Blocked)>, NotesError> {
    let mut blocked = Vec::new();
    let Ok(first) = rx.recv() else {
        return Ok(blocked); // nothing pushed that the remote lacks
    };
    let repo =
        Repository::open(git_dir).map_err(|e| NotesError::git("cannot open the repository", e))?;
    let maps: Vec<(&Source, NoteMap)> = refs
        .iter()
        .map(|(r, source)| Ok((source, note_map_of(&repo, r)?)))
        .collect::<Result<_, NotesError>>()?;
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
        let texts = maps
            .iter()
            .filter_map(|(source, m)| Some(read(*m.get(&oid)?).map(|t| (*source, t))))
            .collect::<Result<Vec<_>, _>>()?;
        let texts: Vec<(&Source, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
        // A note without any verdict (say a hand-written remark) does not hide a copy.
        let own = policy.judge(&texts);
        let verdict = if matches!(own, Some(Blocked::Verdict(_) | Blocked::Invalid { .. }))
            || !scope.by_patch_id
            || texts.iter().any(|(_, t)| may_carry_verdict(t))
        {
            own
        } else {
            if index.is_none() {
                let mut built = PatchIndex::default();
                for (source, m) in &maps {
                    for blob in m.values() {
                        built.add_note(source, &read(*blob)?);
                    }
                }
                index = Some(built);
            }
            let index = index.as_ref().expect("built above");
            // Patch ids cost a diff each: only when some line could match.
            let pid = match index.is_empty() {
                true => None,
                false => crate::notes::patch_id(&repo, oid)?,
            };
            match pid.and_then(|p| index.lines(&p)) {
                Some(lines) => policy.judge_lines(lines),
                None => own,
            }
        };
        if let Some(why) = verdict {
            blocked.push((oid, why));
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

fn describe(repo: &Repository, oid: Oid, blocked: Blocked) -> Result<Finding, NotesError> {
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
        blocked,
    })
}
