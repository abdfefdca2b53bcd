//! Reading and appending verdict notes, with compare-and-swap updates of the notes ref.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use git2::{ErrorCode, Oid, Repository};
use rand::Rng;
use serde_json::Value;

use super::format::canonical_json;
use super::line::read_note;
use super::source::{merge_sources, Source, SourcedLine, Trust};
use super::{NotesError, NOTES_REF};

/// How often `append` rebuilds its notes commit when another writer moved the ref first.
pub const MAX_APPEND_TRIES: u32 = 100;

/// Annotated object → note blob, for every note on a notes ref.
pub type NoteMap = HashMap<Oid, Oid>;

/// Lists every note on `notes_ref` once, reading its tree as git does: an entry whose path,
/// fanout directories (`ab/cdef…`) joined, spells a full object id in hex is the note on that
/// object; any fanout works, and other entries are not notes.
///
/// A missing ref is an empty map: nobody has written a verdict yet.
pub fn note_map_of(repo: &Repository, notes_ref: &str) -> Result<NoteMap, NotesError> {
    let failed = |e| NotesError::git(format!("cannot list the notes of {notes_ref}"), e);
    let reference = match repo.find_reference(notes_ref) {
        Ok(r) => r,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(NoteMap::new()),
        Err(e) => return Err(failed(e)),
    };
    let tree = reference
        .peel_to_commit()
        .and_then(|c| c.tree())
        .map_err(failed)?;
    let mut map = NoteMap::new();
    collect_notes(repo, &tree, &mut Vec::new(), &mut map).map_err(failed)?;
    Ok(map)
}

/// Lists every note of the notes commit `commit`, as [`note_map_of`] does for a ref.
pub fn note_map_at(repo: &Repository, commit: Oid) -> Result<NoteMap, NotesError> {
    let failed = |e| NotesError::git(format!("cannot list the notes of {commit}"), e);
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(failed)?;
    let mut map = NoteMap::new();
    collect_notes(repo, &tree, &mut Vec::new(), &mut map).map_err(failed)?;
    Ok(map)
}

/// Adds the notes of `tree`, whose path from the root spells `prefix`, to `map`.
fn collect_notes(
    repo: &Repository,
    tree: &git2::Tree<'_>,
    prefix: &mut Vec<u8>,
    map: &mut NoteMap,
) -> Result<(), git2::Error> {
    for entry in tree.iter() {
        let name = entry.name_bytes();
        if !name.iter().all(u8::is_ascii_hexdigit) {
            continue;
        }
        let len = prefix.len() + name.len();
        match entry.kind() {
            Some(git2::ObjectType::Tree) if name.len() == 2 && len < 64 => {
                let sub = repo.find_tree(entry.id())?;
                prefix.extend_from_slice(name);
                let done = collect_notes(repo, &sub, prefix, map);
                prefix.truncate(prefix.len() - 2);
                done?;
            }
            Some(git2::ObjectType::Blob) if len == 40 || len == 64 => {
                let mut hex = prefix.clone();
                hex.extend_from_slice(name);
                let annotated = std::str::from_utf8(&hex)
                    .ok()
                    .and_then(|h| crate::git::parse_oid(h).ok());
                if let Some(annotated) = annotated {
                    map.insert(annotated, entry.id());
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Lists every note on [`NOTES_REF`].
pub fn note_map(repo: &Repository) -> Result<NoteMap, NotesError> {
    note_map_of(repo, NOTES_REF)
}

/// The text of a note blob; bytes that are not UTF-8 become U+FFFD (a line with them still
/// parses when the bytes sat inside a string, and is invalid otherwise).
pub fn blob_text(repo: &Repository, blob: Oid) -> Result<String, NotesError> {
    let blob = repo
        .find_blob(blob)
        .map_err(|e| NotesError::git(format!("cannot read note blob {blob}"), e))?;
    Ok(String::from_utf8_lossy(blob.content()).into_owned())
}

/// The lines of the local note on `commit` (see [`read_note`]), in note order; empty if none.
/// Lines fetched from remotes are not among them: [`read_everywhere`] reads those too.
pub fn read(repo: &Repository, commit: Oid) -> Result<Vec<SourcedLine>, NotesError> {
    let lines = read_text(repo, NOTES_REF, commit)?
        .map(|t| read_note(&t))
        .unwrap_or_default();
    Ok(SourcedLine::all_from(&Source::Local, lines))
}

/// Every line on `commit`: the local note's and every fetched remote's
/// (`refs/notes/remotes/<remote>/triad`), each with where it was read
/// ([`super::source::merge_sources`]).
pub fn read_everywhere(
    repo: &Repository,
    commit: Oid,
    trust: &Trust,
) -> Result<Vec<SourcedLine>, NotesError> {
    let mut notes = Vec::new();
    for (name, source) in refs(repo, trust)? {
        if let Some(text) = read_text(repo, &name, commit)? {
            notes.push((source, read_note(&text)));
        }
    }
    Ok(merge_sources(notes))
}

/// The notes refs readers read, local first, then the remotes' in name order, each with
/// where its lines come from; empty when none exists.
pub fn refs(repo: &Repository, trust: &Trust) -> Result<Vec<(String, Source)>, NotesError> {
    let all = repo
        .references_glob("refs/notes/*")
        .map_err(|e| NotesError::git("cannot list the notes refs", e))?;
    let mut refs: Vec<(String, Source)> = all
        .flatten()
        .filter_map(|r| r.name().ok().map(str::to_string))
        .filter_map(|n| trust.source_of(&n).map(|s| (n, s)))
        .collect();
    refs.sort_by(|a, b| (a.1 != Source::Local, &a.0).cmp(&(b.1 != Source::Local, &b.0)));
    Ok(refs)
}

/// The raw note text on `commit` under `notes_ref`, if any.
pub(crate) fn read_text(
    repo: &Repository,
    notes_ref: &str,
    commit: Oid,
) -> Result<Option<String>, NotesError> {
    match repo.find_note(Some(notes_ref), commit) {
        Ok(note) => Ok(Some(
            String::from_utf8_lossy(note.message_bytes()).into_owned(),
        )),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(NotesError::git(
            format!("cannot read the note on {commit}"),
            e,
        )),
    }
}

/// Who is acting, for the `who` of an override: `user.name`/`user.email` from git config,
/// else the `GIT_COMMITTER_*` / `GIT_AUTHOR_*` environment, as git itself would.
pub fn identity(repo: &Repository) -> Option<(String, String)> {
    if let Ok(sig) = repo.signature() {
        if let (Ok(n), Ok(e)) = (sig.name(), sig.email()) {
            return Some((n.to_string(), e.to_string()));
        }
    }
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let name = var("GIT_COMMITTER_NAME").or_else(|| var("GIT_AUTHOR_NAME"))?;
    let email = var("GIT_COMMITTER_EMAIL").or_else(|| var("GIT_AUTHOR_EMAIL"))?;
    Some((name, email))
}

/// The current target of a ref, `None` when it does not exist.
pub(crate) fn ref_target(repo: &Repository, name: &str) -> Result<Option<Oid>, NotesError> {
    match repo.refname_to_id(name) {
        Ok(id) => Ok(Some(id)),
        Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(NotesError::git(format!("cannot read {name}"), e)),
    }
}

/// Moves `name` from `expected` to `new` only if it still points at `expected` (`None`: only
/// if it does not exist). `Ok(false)` means another writer won the race.
///
/// The swap is done by `git update-ref <name> <new> <old>`, git's own locked
/// compare-and-swap: with libgit2's `reference_matching`, processes appending at once were
/// seen to lose a note now and then (tests/notes_hooks/store.rs, concurrent processes).
pub(crate) fn compare_and_swap(
    repo: &Repository,
    name: &str,
    expected: Option<Oid>,
    new: Oid,
    message: &str,
) -> Result<bool, NotesError> {
    let zero = "0".repeat(new.as_bytes().len() * 2);
    let old = expected.map_or(zero, |o| o.to_string());
    let out = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(repo.path())
        .args(["update-ref", "-m", message, name, &new.to_string(), &old])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| NotesError::GitCli {
            args: format!("update-ref {name}"),
            message: format!("cannot run git: {e}"),
        })?;
    if out.status.success() {
        return Ok(true);
    }
    // Failed: a race if the ref no longer holds what we expected, else a real error.
    if ref_target(repo, name)? != expected {
        return Ok(false);
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("cannot lock ref") || stderr.contains("but expected") {
        return Ok(false);
    }
    Err(NotesError::GitCli {
        args: format!("update-ref {name}"),
        message: stderr.trim().to_string(),
    })
}

/// A short random pause before retrying a lost race, growing with the attempt so that
/// many writers spread out instead of colliding again.
pub(crate) fn backoff(attempt: u32) {
    let cap_ms = 1u64 << attempt.min(5);
    let micros = rand::rng().random_range(100..=cap_ms * 1000);
    std::thread::sleep(Duration::from_micros(micros));
}

/// A scratch ref name no other writer (thread or process) uses.
fn scratch_ref(purpose: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let salt: u32 = rand::rng().random();
    format!(
        "refs/triad/tmp/{purpose}-{}-{n}-{salt:08x}",
        std::process::id()
    )
}

/// A ref of our own to build a notes commit on, removed on every exit path.
pub(crate) struct ScratchRef<'r> {
    repo: &'r Repository,
    /// The ref name.
    pub(crate) name: String,
}

impl<'r> ScratchRef<'r> {
    /// A new scratch ref for `purpose` (not created until [`ScratchRef::set`]).
    pub(crate) fn new(repo: &'r Repository, purpose: &str) -> Self {
        ScratchRef {
            repo,
            name: scratch_ref(purpose),
        }
    }

    /// Points the scratch ref at `target`, or removes it for `None`.
    pub(crate) fn set(&self, target: Option<Oid>) -> Result<(), NotesError> {
        match target {
            Some(t) => self
                .repo
                .reference(&self.name, t, true, "git-triad: scratch")
                .map(|_| ())
                .map_err(|e| NotesError::git(format!("cannot write {}", self.name), e)),
            None => {
                self.remove();
                Ok(())
            }
        }
    }

    fn remove(&self) {
        if let Ok(mut r) = self.repo.find_reference(&self.name) {
            let _ = r.delete();
        }
    }
}

impl Drop for ScratchRef<'_> {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Appends records to the note on `commit`; existing lines are never rewritten, and lines
/// already present (as canonical JSON) are skipped.
///
/// The new notes commit is built on the ref's current tip with libgit2's notes writer (on a
/// scratch ref, so any fanout is kept), then the ref is moved only if it still points at that
/// tip; a lost race rebuilds on the new tip, at most [`MAX_APPEND_TRIES`] times. Writers go
/// through [`super::write::append`], which keeps the display note in step too.
pub(crate) fn append_json(
    repo: &Repository,
    commit: Oid,
    lines: &[Value],
) -> Result<(), NotesError> {
    append_json_to(repo, NOTES_REF, commit, lines)
}

/// [`append_json`] to the notes ref `notes_ref` (a remote's tracking ref, for lines of that
/// remote carried over to a rewritten commit: they stay where they count as that remote's).
pub(crate) fn append_json_to(
    repo: &Repository,
    notes_ref: &str,
    commit: Oid,
    lines: &[Value],
) -> Result<(), NotesError> {
    let mut seen = HashSet::new();
    // Notes travel with the code to every remote: no key may be in a line.
    let new: Vec<String> = lines
        .iter()
        .map(|l| crate::redact::redact(&canonical_json(l)).into_owned())
        .filter(|l| seen.insert(l.clone()))
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let sig = crate::git::signature(repo);
    let scratch = ScratchRef::new(repo, "append");
    for attempt in 0..MAX_APPEND_TRIES {
        let tip = ref_target(repo, notes_ref)?;
        scratch.set(tip)?;
        // Read at the tip we build on (the scratch ref), not at a ref that may move meanwhile.
        let old = match tip {
            Some(_) => read_text(repo, &scratch.name, commit)?,
            None => None,
        };
        let Some(text) = appended_text(old.as_deref(), &new) else {
            return Ok(());
        };
        repo.note(&sig, &sig, Some(&scratch.name), commit, &text, true)
            .map_err(|e| NotesError::git(format!("cannot write the note on {commit}"), e))?;
        let built = repo
            .refname_to_id(&scratch.name)
            .map_err(|e| NotesError::git("cannot read the new notes commit", e))?;
        let msg = format!("git-triad: append to the note on {commit}");
        if compare_and_swap(repo, notes_ref, tip, built, &msg)? {
            return Ok(());
        }
        backoff(attempt);
    }
    Err(NotesError::Contended {
        tries: MAX_APPEND_TRIES,
    })
}

/// The note text after appending `new` canonical lines to `old`, or `None` if every line is
/// already there. A missing final newline is added so lines never run together.
fn appended_text(old: Option<&str>, new: &[String]) -> Option<String> {
    let old = old.unwrap_or("");
    let present: HashSet<&str> = old.lines().map(str::trim).collect();
    let missing: Vec<&String> = new
        .iter()
        .filter(|l| !present.contains(l.as_str()))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut text = old.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appending_keeps_old_text_and_skips_present_lines() {
        let new = vec!["{\"a\":1}".to_string(), "{\"b\":2}".to_string()];
        assert_eq!(
            appended_text(Some("free text\n\n{\"a\":1}"), &new).unwrap(),
            "free text\n\n{\"a\":1}\n{\"b\":2}\n"
        );
        assert_eq!(appended_text(Some("{\"a\":1}\n{\"b\":2}\n"), &new), None);
        assert_eq!(appended_text(None, &new).unwrap(), "{\"a\":1}\n{\"b\":2}\n");
    }
}
