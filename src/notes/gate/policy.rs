//! What the gate decides on: the pushed ref updates, the policy of which effective verdicts
//! block, and the findings it reports. Both readers ([`super::libgit2`], [`super::cli`]) feed
//! the same [`Policy`].

use super::summary::Summary;
use crate::notes::{
    effective, read_note, Effective, InvalidLine, NoteLine, NotesError, Source, SourcedLine, Trust,
};
use crate::verdict::{Blocker, Verdict};

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
    verdicts: Vec<Verdict>,
    missing: bool,
}

impl Policy {
    /// A policy from the configured list (see [`Blocker::parse`]).
    pub fn new(block_on: &[Blocker]) -> Policy {
        Policy {
            verdicts: block_on
                .iter()
                .filter_map(|b| match b {
                    Blocker::Verdict(v) => Some(*v),
                    Blocker::Missing => None,
                })
                .collect(),
            missing: block_on.contains(&Blocker::Missing),
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

    /// Whether a commit whose own notes are summed up by `notes` (each with where it was
    /// read), and which no other commit's note reaches by patch id, surely passes without
    /// reading them again; `false` means they must be read to decide. Decides as
    /// [`Policy::judge_lines`] would: the verdict in force (the worst of the notes', which
    /// is that of their lines read together unless one holds an override: then they are
    /// read), unreadable lines, and `missing`.
    pub(crate) fn passes(&self, notes: &[(&Source, &Summary)]) -> bool {
        if notes.len() > 1 && notes.iter().any(|(_, n)| n.overrides) {
            return false;
        }
        let blocks = |v: &Verdict| self.verdicts.contains(v);
        let mut vouched = false;
        for (source, n) in notes {
            if n.verdict_from(source).as_ref().is_some_and(blocks)
                || n.fails_closed
                || n.mentions.iter().any(blocks)
            {
                return false;
            }
            vouched |= n.valid && source.may_relax();
        }
        !self.missing || vouched
    }

    /// Judges one commit's notes (one text per notes ref that has a note on it, with where
    /// it was read; none: no note), every line read; `None` lets it through.
    pub fn judge(&self, texts: &[(&Source, &str)]) -> Option<Blocked> {
        self.judge_with(texts, Vec::new())
    }

    /// [`Policy::judge`], with `found`: the lines of other commits' notes found by the
    /// commit's patch id, which count as if they were on it.
    pub fn judge_with(
        &self,
        texts: &[(&Source, &str)],
        found: Vec<SourcedLine>,
    ) -> Option<Blocked> {
        if texts.is_empty() && found.is_empty() {
            return self.missing.then_some(Blocked::Missing);
        }
        let mut lines: Vec<SourcedLine> = texts
            .iter()
            .flat_map(|(source, text)| {
                read_note(text).into_iter().map(|line| SourcedLine {
                    line,
                    source: (*source).clone(),
                })
            })
            .collect();
        lines.extend(found);
        self.judge_lines(&lines)
    }

    /// Judges read lines (a commit's, with those found by its patch id).
    ///
    /// The effective verdict first, when the policy blocks it. Then an invalid line,
    /// whoever wrote it, when it fails closed ([`InvalidLine::fails_closed`]: not JSON, a
    /// verdict field that is not exactly a verdict word, a record that swallows another) or
    /// mentions a verdict the policy blocks: the gate cannot tell what it says. Then
    /// `missing`, which only a line from a place that may relax a verdict satisfies (a
    /// fetched APPROVE from a remote not trusted does not).
    pub fn judge_lines(&self, lines: &[SourcedLine]) -> Option<Blocked> {
        let e = effective(lines);
        if let Some(e) = e.as_ref().filter(|e| self.verdicts.contains(&e.verdict)) {
            return Some(Blocked::Verdict(Box::new(e.clone())));
        }
        for l in lines {
            if let NoteLine::Invalid(bad) = &l.line {
                let blocks =
                    bad.fails_closed() || bad.mentions.iter().any(|v| self.verdicts.contains(v));
                if blocks {
                    return Some(Blocked::Invalid {
                        line: bad.clone(),
                        source: l.source.clone(),
                    });
                }
            }
        }
        let vouched = lines
            .iter()
            .any(|l| l.source.may_relax() && !matches!(l.line, NoteLine::Invalid(_)));
        (self.missing && !vouched).then_some(Blocked::Missing)
    }
}

/// Why the gate blocks a commit.
#[derive(Debug, Clone, PartialEq)]
pub enum Blocked {
    /// It has no verdict from this clone or a trusted remote, and the policy blocks `missing`.
    Missing,
    /// Its verdict in force is one the policy blocks; the line it comes from.
    Verdict(Box<Effective>),
    /// A line on it is not a valid known line and is not JSON or mentions a blocking
    /// verdict: what it says is unknown, so the push is not let through on it.
    Invalid {
        /// The line.
        line: InvalidLine,
        /// Where it was read.
        source: Source,
    },
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
    /// Whether a commit carries, besides its own notes, the lines of other commits' notes
    /// that carry its patch id (it is a cherry-pick, squash or rebase of a reviewed commit),
    /// whatever notes it has of its own.
    pub by_patch_id: bool,
}

/// What one reader checks: the updates pushed to `remote`, under `policy`, with `trust`
/// saying which remotes' lines may relax, as far as `scope` looks.
#[derive(Clone, Copy)]
pub(crate) struct Push<'a> {
    /// The remote pushed to.
    pub remote: &'a str,
    /// The updates to check.
    pub pushed: &'a [&'a RefUpdate],
    /// Which effective verdicts block.
    pub policy: &'a Policy,
    /// Whose lines may relax.
    pub trust: &'a Trust,
    /// How far the verdict of a commit is looked for.
    pub scope: Scope,
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

    const TS: &str = "2026-01-01T00:00:00.000Z";

    fn halt_policy() -> Policy {
        Policy::new(&[Blocker::Verdict(Verdict::Halt)])
    }

    fn here(texts: &[&str]) -> Option<Blocked> {
        halt_policy().judge(
            &texts
                .iter()
                .map(|t| (&Source::Local, *t))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn escapes_and_odd_spacing_read_as_the_same_records() {
        let escaped =
            format!(r#"{{ "v" : 1, "kind" : "re\u0076iew", "ts" : "{TS}", "verdict" : "HALT" }}"#);
        assert!(matches!(here(&[&escaped]), Some(Blocked::Verdict(_))));
        // `HALT` spelled with an escape, so the word itself never occurs.
        let hidden = format!(r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"\u0048ALT"}}"#);
        assert!(!hidden.contains("HALT"));
        assert!(matches!(here(&[&hidden]), Some(Blocked::Verdict(_))));
    }

    #[test]
    fn lines_of_unknown_shape_that_mention_a_blocking_verdict_block() {
        for text in [
            format!(r#"[1,"review","{TS}","HALT"]"#),
            format!(r#"{{"v":2,"kind":"review","ts":"{TS}","verdict":"HALT"}}"#),
            format!(r#"{{"v":"1","kind":"review","ts":"{TS}","verdict":"HALT"}}"#),
            format!(r#"{{"v":1.0,"kind":"review","ts":"{TS}","verdict":"HALT"}}"#),
            format!(r#"{{"kind":"review","ts":"{TS}","verdict":"HALT"}}"#),
            format!(r#"{{"v":1,"kind":"Review","ts":"{TS}","verdict":"HALT"}}"#),
            format!(r#"{{"v":1,"kind":"rumour","ts":"{TS}","verdict":"HALT"}}"#),
            format!(
                r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"HALT","verdict":"APPROVE"}}"#
            ),
            format!(
                r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"APPROVE","verdict":"\u0048ALT"}}"#
            ),
        ] {
            assert!(
                matches!(here(&[&text]), Some(Blocked::Invalid { .. })),
                "{text}"
            );
        }
        // An unknown shape that mentions nothing blocking is not the gate's business.
        let newer = format!(r#"{{"v":2,"kind":"review","ts":"{TS}","verdict":"APPROVE"}}"#);
        assert!(here(&[&newer]).is_none());
    }

    #[test]
    fn confusable_verdict_words_and_a_swallowing_record_block_whatever_the_policy() {
        let p = Policy::new(&[Blocker::Verdict(Verdict::Reject)]);
        let one = |t: &str| p.judge(&[(&Source::Local, t)]);
        for word in [
            "ＨＡＬＴ",
            "HA\u{200d}LT",
            r"HA\u200dLT",
            "HA\u{fffd}LT",
            " HALT",
            "STOP",
            "",
        ] {
            let line = format!(r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"{word}"}}"#);
            assert!(
                matches!(one(&line), Some(Blocked::Invalid { .. })),
                "{line}"
            );
        }
        // A repeated verdict key, an unknown kind or a newer format: the same.
        for line in [
            r#"{"v":1,"kind":"review","verdict":"APPROVE","verdict":"ＨＡＬＴ"}"#.to_string(),
            r#"{"v":2,"kind":"review","verdict":"ＨＡＬＴ"}"#.to_string(),
            format!(r#"{{"v":1,"kind":"review","ts":"{TS}"}}"#),
        ] {
            assert!(
                matches!(one(&line), Some(Blocked::Invalid { .. })),
                "{line}"
            );
        }
        let swallowing = format!(
            "{{\"v\":1,\"kind\":\"review\",\"ts\":\"{TS}\",\"verdict\":\"APPROVE\",\"x\":\n\
             {{\"v\":1,\"kind\":\"review\",\"ts\":\"{TS}\",\"verdict\":\"HALT\"}}\n}}\n"
        );
        assert!(matches!(
            one(&swallowing),
            Some(Blocked::Invalid { line, .. }) if line.text.contains("HALT")
        ));
        // A newer format that says APPROVE exactly is no business of the gate's.
        let newer = format!(r#"{{"v":2,"kind":"review","ts":"{TS}","verdict":"APPROVE"}}"#);
        assert!(one(&newer).is_none());
    }

    #[test]
    fn verdict_words_in_any_case_and_unreadable_text_block() {
        let p = Policy::new(&[Blocker::parse("halt").unwrap()]);
        let lower = format!(r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"halt"}}"#);
        let one = |t: &str| p.judge(&[(&Source::Local, t)]);
        assert!(matches!(one(&lower), Some(Blocked::Verdict(e)) if e.verdict == Verdict::Halt));
        let bom = format!("\u{feff}{lower}");
        assert!(matches!(one(&bom), Some(Blocked::Verdict(_))));
        let spread = format!("{{\n \"v\": 1,\n \"kind\": \"review\",\n \"ts\": \"{TS}\",\n \"verdict\": \"Halt\"\n}}\n");
        assert!(matches!(one(&spread), Some(Blocked::Verdict(_))));
        let approve = format!(r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"approve"}}"#);
        assert!(one(&approve).is_none());
        assert!(one("\n  \n").is_none());
        let garbled = format!("{approve}\nverdict: APPROVE, trust me\n");
        assert!(matches!(
            one(&garbled),
            Some(Blocked::Invalid { line, .. }) if line.text == "verdict: APPROVE, trust me"
        ));
    }

    #[test]
    fn policy_judges_effective_verdicts() {
        let halt = format!(r#"{{"v":1,"kind":"review","ts":"{TS}","verdict":"HALT"}}"#);
        let id = read_note(&halt)[0].id().unwrap().to_string();
        let over = format!(
            r#"{{"answers":["{id}"],"kind":"override","overrides":"HALT","ts":"2026-01-02T00:00:00.000Z","v":1,"verdict":"APPROVE"}}"#
        );
        assert!(matches!(here(&[&halt]), Some(Blocked::Verdict(_))));
        assert!(here(&[&format!("{halt}\n{over}")]).is_none());
        // Notes on two refs (local and a trusted remote's) are one note.
        assert!(here(&[&halt, &over]).is_none());
        let fork = Source::Remote {
            name: "fork".into(),
            trusted: false,
        };
        let p = halt_policy();
        assert!(p
            .judge(&[(&Source::Local, &halt), (&fork, &over)])
            .is_some());
        assert!(p.judge(&[]).is_none());
        let p = Policy::new(&[Blocker::Verdict(Verdict::Halt), Blocker::Missing]);
        assert!(matches!(p.judge(&[]), Some(Blocked::Missing)));
        assert!(matches!(
            p.judge(&[(&Source::Local, "junk")]),
            Some(Blocked::Invalid { .. })
        ));
        assert!(p.without_missing().judge(&[]).is_none());
        // A fetched APPROVE does not make an unreviewed commit reviewed.
        let approve = halt.replace("HALT", "APPROVE");
        assert!(matches!(
            p.judge(&[(&fork, &approve)]),
            Some(Blocked::Missing)
        ));
        assert!(p.judge(&[(&Source::Local, &approve)]).is_none());
    }
}
