//! What on a branch was already reviewed: the last commit a verdict was recorded on (where
//! `git triad review --since-last` starts), and the findings a person already answered with
//! an override, by a fingerprint that survives lines moving (so a later review does not
//! raise them again).

use std::collections::HashMap;

use git2::{Oid, Repository};

use super::effective::answered;
use super::line::{read_note, NoteLine, ReadIssue};
use super::source::{Source, SourcedLine};
use super::store::{blob_text, NoteMap};
use super::NotesError;

/// How far back along first parents the last reviewed commit is looked for.
pub const MAX_WALK: usize = 10_000;

/// The newest commit at or before `from` (along first parents) with a review or
/// reconciliation verdict recorded on it; `None` when there is none.
pub fn last_reviewed(
    repo: &Repository,
    from: Oid,
    notes: &NoteMap,
) -> Result<Option<Oid>, NotesError> {
    let mut cur = Some(from);
    for _ in 0..MAX_WALK {
        let Some(c) = cur else { break };
        if let Some(blob) = notes.get(&c) {
            let lines = read_note(&blob_text(repo, *blob)?);
            if lines.iter().any(|l| matches!(l, NoteLine::Verdict(_))) {
                return Ok(Some(c));
            }
        }
        cur = repo
            .find_commit(c)
            .map_err(|e| NotesError::git(format!("cannot read commit {c}"), e))?
            .parent_id(0)
            .ok();
    }
    Ok(None)
}

/// [`last_reviewed`] from HEAD, with the repository's notes.
pub fn last_reviewed_from_head(repo: &Repository) -> Result<Option<Oid>, NotesError> {
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|e| NotesError::git("HEAD has no commit", e))?;
    last_reviewed(repo, head.id(), &super::note_map(repo)?)
}

/// A finding's fingerprint: its file, its category and the lines it quotes (whitespace and
/// case aside), so the same finding on the same code matches wherever the lines moved.
/// `None` for a finding without a quote (nothing pins it to lines).
pub fn fingerprint(path: &str, category: &str, quote: &str) -> Option<String> {
    let quote = quote
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    if quote.is_empty() {
        return None;
    }
    Some(format!(
        "{:016x}",
        fnv1a(&format!("{path}\0{category}\0{quote}"))
    ))
}

/// [`fingerprint`] of an issue as a verdict line stores it.
fn stored_fingerprint(issue: &ReadIssue) -> Option<String> {
    fingerprint(
        issue.path.as_deref().unwrap_or(""),
        issue.category.as_deref().unwrap_or(""),
        issue.quote.as_deref()?,
    )
}

/// FNV-1a, 64 bits: stable across versions and machines, unlike the standard hasher.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Every fingerprint of an issue on a review line a human override answered, with why it is
/// not raised again ("overridden on <commit> by <who>: <reason>").
pub fn overridden_findings(
    repo: &Repository,
    notes: &NoteMap,
) -> Result<HashMap<String, String>, NotesError> {
    let mut out = HashMap::new();
    let mut annotated: Vec<(&Oid, &Oid)> = notes.iter().collect();
    annotated.sort();
    for (commit, blob) in annotated {
        // The local notes: written here, or merged from a remote the user trusts.
        let lines = SourcedLine::all_from(&Source::Local, read_note(&blob_text(repo, *blob)?));
        for (line, o) in answered(&lines) {
            let o = o.line.fields();
            let why = format!(
                "a person overrode it on {} ({}: {})",
                &commit.to_string()[..12],
                o.who.as_deref().unwrap_or("someone"),
                o.reason.as_deref().unwrap_or("")
            );
            for issue in line.line.fields().issues.into_iter().flatten() {
                if let Some(fp) = stored_fingerprint(&issue) {
                    out.entry(fp).or_insert_with(|| why.clone());
                }
            }
        }
    }
    Ok(out)
}

/// Sets aside, in `review`, the model's findings a person already overrode on the same lines
/// anywhere in the notes (see [`crate::arbiter::review::set_aside`]); returns how many.
pub fn set_aside_overridden(
    repo: &Repository,
    review: &mut crate::arbiter::ArbiterReview,
    findings: &[crate::code::Finding],
) -> Result<usize, NotesError> {
    let answered = overridden_findings(repo, &super::note_map(repo)?)?;
    if answered.is_empty() {
        return Ok(0);
    }
    let why = |i: &crate::arbiter::Issue| {
        let fp = fingerprint(&i.path, i.category.as_str(), &i.quote)?;
        answered.get(&fp).cloned()
    };
    // A review of a change derives its verdict by evidence (probes run or not, a
    // behavioural claim stands only on a confirmed one).
    Ok(crate::arbiter::review::set_aside(
        review, &why, findings, true,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_fingerprint_follows_the_quoted_lines_not_their_place() {
        let stored = |v: serde_json::Value| stored_fingerprint(&serde_json::from_value(v).unwrap());
        let a = stored(
            json!({"path": "calc.py", "category": "logic", "quote": "return a  +\n b",
            "start_line": 3, "description": "wrong operator"}),
        );
        let moved = fingerprint("calc.py", "logic", "return A + b");
        assert!(a.is_some());
        assert_eq!(a, moved);
        let other = fingerprint("calc.py", "security", "return a + b");
        assert_ne!(a, other);
        assert_eq!(stored(json!({"path": "calc.py", "quote": "  "})), None);
        assert_eq!(stored(json!({"path": "calc.py", "quote": 7})), None);
    }
}
