//! The gate's reader through libgit2 (fast: one pass over the notes ref, one revwalk; SHA-1
//! and SHA-256 repositories).

use git2::{ObjectType, Oid, Repository};

use super::cache::GateCache;
use super::index::{lines_carrying, PatchIndex};
use super::policy::{Blocked, Finding, Policy, Push, RefUpdate, Scope};
use super::summary::{patch_key, PatchKey, Summary};
use crate::git::parse_oid;
use crate::notes::store::{note_map_of, refs, NoteMap};
use crate::notes::{NotesError, Source};

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
pub(super) fn check(repo: &Repository, push: Push<'_>) -> Result<Vec<Finding>, NotesError> {
    let Push {
        remote,
        pushed,
        policy,
        trust,
        scope,
    } = push;
    // What `git fetch` landed from remotes, every value it held, is read in first.
    crate::notes::fold::fold_all(repo)?;
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
/// the first commit comes), and, when `scope` says so, indexes them by the patch ids their
/// lines carry ([`PatchIndex`]). Each commit is judged by its own notes and by the lines of
/// other commits' notes that carry its patch id, whatever notes it has of its own. What
/// cannot change — a commit's patch id, what a note blob says — comes from the
/// [`GateCache`] when it was worked out before, and is kept there otherwise, so a commit
/// that no other note reaches and whose notes do not block is let through without reading
/// them again. Returns the blocked ones in arrival order.
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
    let mut notes = Notes {
        odb: repo
            .odb()
            .map_err(|e| NotesError::git("cannot open the object database", e))?,
        cache: GateCache::load(crate::git::paths::gate_cache(repo.commondir())),
    };
    let mut index = PatchIndex::default();
    if scope.by_patch_id {
        for (source, (_, m)) in maps.iter().enumerate() {
            for (annotated, blob) in m {
                let pids = &notes.summary(*blob)?.patch_ids;
                if !pids.is_empty() {
                    index.add(source, *annotated, *blob, pids);
                }
            }
        }
    }
    for oid in std::iter::once(first).chain(rx) {
        let own: Vec<(&Source, Oid)> = maps
            .iter()
            .filter_map(|(source, m)| Some((*source, *m.get(&oid)?)))
            .collect();
        // A patch id costs a diff (once): only when some line carries one.
        let pid = match index.is_empty() {
            true => None,
            false => notes.patch_id(&repo, oid)?,
        };
        let others = pid.map_or_else(Vec::new, |p| index.others(&p, &oid));
        if others.is_empty() {
            for (_, blob) in &own {
                notes.summary(*blob)?;
            }
            let summaries: Vec<(&Source, &Summary)> = own
                .iter()
                .filter_map(|(s, blob)| Some((*s, notes.cache.summary(*blob)?)))
                .collect();
            if summaries.len() == own.len() && policy.passes(&summaries) {
                continue;
            }
        }
        let texts = own
            .iter()
            .map(|(s, blob)| Ok((*s, notes.text(*blob)?)))
            .collect::<Result<Vec<_>, NotesError>>()?;
        let texts: Vec<(&Source, &str)> = texts.iter().map(|(s, t)| (*s, t.as_str())).collect();
        let found = match &pid {
            Some(p) if !others.is_empty() => {
                let theirs = others
                    .iter()
                    .map(|(s, blob)| Ok((maps[*s].0, notes.text(**blob)?)))
                    .collect::<Result<Vec<_>, NotesError>>()?;
                let theirs: Vec<(&Source, &str)> =
                    theirs.iter().map(|(s, t)| (*s, t.as_str())).collect();
                lines_carrying(&theirs, p)
            }
            _ => Vec::new(),
        };
        if let Some(why) = policy.judge_with(&texts, found) {
            blocked.push((oid, why));
        }
    }
    if let Err(e) = notes.cache.save() {
        tracing::warn!("the pre-push gate could not keep what it worked out: {e}");
    }
    Ok(blocked)
}

/// The notes the gate reads, and what it keeps of them.
struct Notes<'r> {
    odb: git2::Odb<'r>,
    cache: GateCache,
}

impl Notes<'_> {
    /// The text of a note blob (bytes that are not UTF-8 become U+FFFD).
    fn text(&self, blob: Oid) -> Result<String, NotesError> {
        let obj = self
            .odb
            .read(blob)
            .map_err(|e| NotesError::git(format!("cannot read note blob {blob}"), e))?;
        Ok(match std::str::from_utf8(obj.data()) {
            Ok(text) => text.to_string(),
            Err(_) => String::from_utf8_lossy(obj.data()).into_owned(),
        })
    }

    /// What a note blob says, read once and kept.
    fn summary(&mut self, blob: Oid) -> Result<&Summary, NotesError> {
        if self.cache.summary(blob).is_none() {
            let summary = Summary::of(&self.text(blob)?);
            self.cache.learn_summary(blob, summary);
        }
        Ok(self.cache.summary(blob).expect("learned above"))
    }

    /// The patch id of `commit`, computed once and kept.
    fn patch_id(&mut self, repo: &Repository, commit: Oid) -> Result<Option<PatchKey>, NotesError> {
        if let Some(pid) = self.cache.patch_id(commit) {
            return Ok(pid);
        }
        let pid = crate::notes::patch_id(repo, commit)?.and_then(|p| patch_key(&p));
        self.cache.learn_patch_id(commit, pid);
        Ok(pid)
    }
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
        // `refs/remotes/team/*` holds the branches of a remote `team/origin` too.
        let nested: Vec<String> = repo
            .remotes()
            .map_err(|e| NotesError::git("cannot list the remotes", e))?
            .iter()
            .flatten()
            .flatten()
            .filter(|r| r.starts_with(&format!("{remote}/")))
            .map(|r| format!("refs/remotes/{r}/"))
            .collect();
        for r in refs.flatten() {
            let theirs = r
                .name()
                .is_ok_and(|n| nested.iter().any(|p| n.starts_with(p.as_str())));
            if theirs {
                continue;
            }
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
