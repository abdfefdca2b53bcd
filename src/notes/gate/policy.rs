//! What the gate decides on: the pushed ref updates, the policy of which effective verdicts
//! block, and the findings it reports. Both readers ([`super::libgit2`], [`super::cli`]) feed
//! the same [`Policy`].

use serde_json::Value;

use crate::notes::format::{contains_word, effective, read_note, Effective};
use crate::notes::NotesError;

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
                .filter(|v| !v.eq_ignore_ascii_case("missing"))
                .map(|v| v.trim().to_ascii_uppercase())
                .collect(),
            missing: block_on.iter().any(|v| v.eq_ignore_ascii_case("missing")),
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

    /// Whether a note made of `texts` could block, decided without reading its records.
    ///
    /// A superset of what reading decides: a line's verdict is a JSON string, which spells a
    /// blocking verdict (in any case) either literally or with an escape, and a line that is
    /// not JSON on its own may be a record spread over lines or unreadable text; a note with
    /// none of these cannot block.
    fn may_block(&self, texts: &[&str]) -> bool {
        self.missing
            || texts.iter().any(|t| {
                t.contains('\\')
                    || self.verdicts.iter().any(|v| contains_word(t, v))
                    || t.lines().any(|l| {
                        !l.trim().is_empty()
                            && serde_json::from_str::<serde::de::IgnoredAny>(l).is_err()
                    })
            })
    }

    /// Judges one commit's notes (one text per notes ref that has a note on it; none: no
    /// note); `None` lets it through. Text in them that is not JSON blocks (the gate cannot
    /// tell what it says), before any verdict is weighed.
    pub fn judge(&self, texts: &[&str]) -> Option<Blocked> {
        if texts.is_empty() {
            return self.missing.then_some(Blocked::Missing);
        }
        if !self.may_block(texts) {
            return None;
        }
        let mut lines: Vec<Value> = Vec::new();
        for text in texts {
            let note = read_note(text);
            if let Some(first) = note.unreadable.into_iter().next() {
                return Some(Blocked::Unreadable(first));
            }
            lines.extend(note.records);
        }
        self.judge_lines(&lines)
    }

    /// Judges parsed verdict lines (the note's, or those found by patch id).
    pub fn judge_lines(&self, lines: &[Value]) -> Option<Blocked> {
        match effective(lines) {
            None => self.missing.then_some(Blocked::Missing),
            Some(e) if self.verdicts.contains(&e.verdict) => Some(Blocked::Verdict(e)),
            Some(_) => None,
        }
    }
}

/// Why the gate blocks a commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Blocked {
    /// It has no verdict at all, and the policy blocks `missing`.
    Missing,
    /// Its verdict in force is one the policy blocks; the record it comes from.
    Verdict(Effective),
    /// Its note holds text that is not JSON (the first such line): what it says is unknown,
    /// so the push is not let through on it.
    Unreadable(String),
}

impl Blocked {
    /// The verdict in force, when that is why.
    pub fn effective(&self) -> Option<&Effective> {
        match self {
            Blocked::Verdict(e) => Some(e),
            _ => None,
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
    /// Why it is blocked.
    pub blocked: Blocked,
}

/// How far the gate looks for the verdict of a pushed commit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope {
    /// Whether a commit without a note carries the verdicts of the notes whose lines have its
    /// patch id (a cherry-pick or squash of a reviewed commit).
    pub by_patch_id: bool,
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
        assert!(matches!(p.judge(&[&dup]), Some(Blocked::Verdict(_))));
        let escaped =
            format!(r#"{{ "v" : 1, "kind" : "re\u0076iew", "ts" : "{ts}", "verdict" : "HALT" }}"#);
        assert!(matches!(p.judge(&[&escaped]), Some(Blocked::Verdict(_))));
        // `HALT` spelled with an escape, so the word itself never occurs.
        let hidden = format!(r#"{{"v":1,"kind":"review","ts":"{ts}","verdict":"\u0048ALT"}}"#);
        assert!(!hidden.contains("HALT"));
        assert!(matches!(p.judge(&[&hidden]), Some(Blocked::Verdict(_))));
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
    fn verdict_words_in_any_case_and_unreadable_text_block() {
        let p = Policy::new(&["halt".to_string()]);
        let ts = "2026-01-01T00:00:00.000Z";
        let lower = format!(r#"{{"v":1,"kind":"review","ts":"{ts}","verdict":"halt"}}"#);
        assert!(matches!(p.judge(&[&lower]), Some(Blocked::Verdict(e)) if e.verdict == "HALT"));
        let bom = format!("\u{feff}{lower}");
        assert!(matches!(p.judge(&[&bom]), Some(Blocked::Verdict(_))));
        let spread = format!("{{\n \"v\": 1,\n \"kind\": \"review\",\n \"ts\": \"{ts}\",\n \"verdict\": \"Halt\"\n}}\n");
        assert!(matches!(p.judge(&[&spread]), Some(Blocked::Verdict(_))));
        let approve = format!(r#"{{"v":1,"kind":"review","ts":"{ts}","verdict":"approve"}}"#);
        assert!(p.judge(&[&approve]).is_none());
        assert!(p.judge(&["\n  \n"]).is_none());
        let garbled = format!("{approve}\nverdict: APPROVE, trust me\n");
        assert_eq!(
            p.judge(&[&garbled]),
            Some(Blocked::Unreadable("verdict: APPROVE, trust me".into()))
        );
    }

    #[test]
    fn policy_judges_effective_verdicts() {
        let halt = r#"{"v":1,"kind":"review","ts":"2026-01-01T00:00:00.000Z","verdict":"HALT"}"#;
        let over = r#"{"answers":["2026-01-01T00:00:00.000Z review HALT"],"kind":"override","overrides":"HALT","ts":"2026-01-02T00:00:00.000Z","v":1,"verdict":"APPROVE"}"#;
        let p = Policy::new(&["HALT".to_string()]);
        assert!(matches!(p.judge(&[halt]), Some(Blocked::Verdict(_))));
        assert!(p.judge(&[&format!("{halt}\n{over}")]).is_none());
        // Notes on two refs (local and a teammate's) are one note.
        assert!(p.judge(&[halt, over]).is_none());
        assert!(p.judge(&[]).is_none());
        let p = Policy::new(&["HALT".to_string(), "missing".to_string()]);
        assert!(matches!(p.judge(&[]), Some(Blocked::Missing)));
        assert!(matches!(p.judge(&["junk"]), Some(Blocked::Unreadable(_))));
        assert!(p.without_missing().judge(&[]).is_none());
    }
}
