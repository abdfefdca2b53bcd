//! What one note says, as far as the gate needs it to decide on a commit without reading the
//! note again: its verdict in force read from a place that may relax a verdict and from one
//! that may not, what its unreadable lines would block, and the patch ids its lines carry.
//! Worked out by reading the note whole ([`read_note`], [`effective`]), so it decides exactly
//! as reading does; kept per note blob in [`super::cache`].

use crate::notes::{effective, read_note, NoteLine, Source, SourcedLine};
use crate::verdict::Verdict;

/// A patch id as the gate compares them: its bytes (20 for SHA-1, 32 for SHA-256), zero
/// padded.
pub(crate) type PatchKey = [u8; 32];

/// The key of a patch id written in hex; `None` for text that is not one (no computed patch
/// id can equal it).
pub(crate) fn patch_key(hex: &str) -> Option<PatchKey> {
    if !matches!(hex.len(), 40 | 64) {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, pair) in hex.as_bytes().chunks(2).enumerate() {
        let digit = |b: u8| (b as char).to_digit(16);
        key[i] = (digit(pair[0])? * 16 + digit(pair[1])?) as u8;
    }
    Some(key)
}

/// A note's lines, summed up for the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// The verdict in force when the note is read from this clone or a trusted remote.
    pub relaxed: Option<Verdict>,
    /// The verdict in force when it is read from a remote not trusted (its overrides do not
    /// count).
    pub strict: Option<Verdict>,
    /// Whether it holds a valid line (what vouches for a reviewed commit).
    pub valid: bool,
    /// Whether it holds an override (then lines of several notes on one commit answer each
    /// other, and the gate reads them together).
    pub overrides: bool,
    /// Whether an unreadable line blocks whatever the policy.
    pub fails_closed: bool,
    /// The verdicts its other unreadable lines mention (they block where the policy blocks
    /// one of them).
    pub mentions: Vec<Verdict>,
    /// Every patch id its lines carry (valid or not), each once: where a copy of the change
    /// finds them.
    pub patch_ids: Vec<PatchKey>,
}

impl Summary {
    /// The summary of a note's text.
    pub fn of(text: &str) -> Summary {
        let lines = read_note(text);
        let mut s = Summary {
            relaxed: None,
            strict: None,
            valid: false,
            overrides: false,
            fails_closed: false,
            mentions: Vec::new(),
            patch_ids: Vec::new(),
        };
        for line in &lines {
            match line {
                NoteLine::Verdict(_) => s.valid = true,
                NoteLine::Override(_) => (s.valid, s.overrides) = (true, true),
                NoteLine::Invalid(bad) if bad.fails_closed() => s.fails_closed = true,
                NoteLine::Invalid(bad) => {
                    for v in &bad.mentions {
                        if !s.mentions.contains(v) {
                            s.mentions.push(*v);
                        }
                    }
                }
            }
            for key in line.patch_ids().into_iter().filter_map(patch_key) {
                if !s.patch_ids.contains(&key) {
                    s.patch_ids.push(key);
                }
            }
        }
        let as_from = |source: Source| {
            let sourced = SourcedLine::all_from(&source, lines.clone());
            effective(&sourced).map(|e| e.verdict)
        };
        s.relaxed = as_from(Source::Local);
        s.strict = match s.overrides {
            true => as_from(Source::Remote {
                name: String::new(),
                trusted: false,
            }),
            false => s.relaxed,
        };
        s
    }

    /// The verdict in force when read from `source`.
    pub fn verdict_from(&self, source: &Source) -> Option<Verdict> {
        match source.may_relax() {
            true => self.relaxed,
            false => self.strict,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(v: &str, pid: &str) -> String {
        format!(r#"{{"v":1,"kind":"review","ts":"t","patch_id":"{pid}","verdict":"{v}"}}"#)
    }

    #[test]
    fn a_summary_decides_as_reading_does_from_either_kind_of_place() {
        let (p, q) = ("a".repeat(40), "b".repeat(64));
        let s = Summary::of(&format!("{}\n{}\n", review("FLAG", &p), review("HALT", &q)));
        assert_eq!(
            (s.relaxed, s.strict),
            (Some(Verdict::Halt), Some(Verdict::Halt))
        );
        assert_eq!(
            s.patch_ids,
            [patch_key(&p).unwrap(), patch_key(&q).unwrap()]
        );
        assert!(s.valid && !s.overrides && !s.fails_closed);
        // An override counts only where the note may relax.
        let halt = review("HALT", &p);
        let id = read_note(&halt)[0].id().unwrap().to_string();
        let over = format!(
            r#"{{"v":1,"kind":"override","ts":"u","verdict":"APPROVE","answers":["{id}"]}}"#
        );
        let s = Summary::of(&format!("{halt}\n{over}\n"));
        assert_eq!(
            (s.relaxed, s.strict),
            (Some(Verdict::Approve), Some(Verdict::Halt))
        );
        assert!(s.overrides);
        // Unreadable lines.
        assert!(Summary::of("lgtm").fails_closed);
        let fullwidth = r#"{"v":1,"kind":"review","verdict":"ＨＡＬＴ"}"#;
        assert!(Summary::of(fullwidth).fails_closed);
        let newer = Summary::of(r#"{"v":2,"kind":"review","verdict":"HALT","patch_id":"x"}"#);
        assert_eq!(
            (newer.fails_closed, newer.mentions.as_slice(), newer.valid),
            (false, &[Verdict::Halt][..], false)
        );
        assert!(
            newer.patch_ids.is_empty(),
            "text that is no patch id matches none"
        );
        assert_eq!(patch_key("zz"), None);
        assert_eq!(patch_key(&"g".repeat(40)), None);
    }
}
