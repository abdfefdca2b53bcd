//! The verdict in force on a commit, from its lines and where they came from.
//!
//! The worst verdict no counted override answers is in force. An override counts when it
//! comes from a place that may relax a verdict ([`Source::may_relax`]: this clone, or a
//! remote the user trusts), and it answers exactly the lines it names
//! ([`Answers::Named`]). An override written before overrides named lines
//! ([`Answers::Unnamed`]) answers the lines of the verdict it names that are no later than
//! itself, but never a HALT: its timestamp is all that orders it above one, and time alone
//! never orders an override above a verdict.

use super::line::{Answers, LineId, NoteLine, OverrideNote, VerdictNote};
use super::source::SourcedLine;
use crate::verdict::Verdict;

/// The verdict in force for a commit and the line that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// The verdict.
    pub verdict: Verdict,
    /// The line it comes from (a review, reconciliation or override line).
    pub line: SourcedLine,
    /// Overrides on the commit that did not count, each with why.
    pub uncounted: Vec<(SourcedLine, Uncounted)>,
}

/// Why an override on a commit did not count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncounted {
    /// It was fetched from a remote the user does not trust: such lines only tighten.
    Untrusted,
    /// It names no lines (written by an older git triad) and a HALT stands: only an override
    /// naming that HALT clears it.
    Unnamed,
}

impl Uncounted {
    /// Why, as a clause for people.
    pub fn describe(self) -> &'static str {
        match self {
            Uncounted::Untrusted => {
                "it was fetched from a remote your own config does not trust (notes.trusted_remotes), and such lines only add verdicts"
            }
            Uncounted::Unnamed => {
                "it names no lines (an older git triad wrote it), and only an override naming a HALT clears it"
            }
        }
    }
}

/// Whether override `o` answers verdict line `v`.
fn answers(o: &OverrideNote, v: &VerdictNote) -> bool {
    match &o.answers {
        // An id costs a hash, the older key a format: each only when a key has its shape.
        Answers::Named(keys) => keys.iter().any(|k| match LineId::looks_like(k) {
            true => k == v.record.id().as_str(),
            false => *k == v.legacy_key(),
        }),
        Answers::Unnamed(cleared) => {
            v.verdict != Verdict::Halt && *cleared == v.verdict && v.ts <= o.ts
        }
    }
}

/// The verdict lines of some lines and the overrides that count, each with its position.
struct Split<'a> {
    verdicts: Vec<(usize, &'a VerdictNote)>,
    overrides: Vec<(usize, &'a OverrideNote)>,
}

impl Split<'_> {
    fn of(lines: &[SourcedLine]) -> Split<'_> {
        let mut split = Split {
            verdicts: Vec::new(),
            overrides: Vec::new(),
        };
        for (i, l) in lines.iter().enumerate() {
            match &l.line {
                NoteLine::Verdict(v) => split.verdicts.push((i, v)),
                NoteLine::Override(o) if l.source.may_relax() => split.overrides.push((i, o)),
                _ => {}
            }
        }
        split
    }
}

/// The verdict lines a counted override answers, each with the override that answers it.
pub fn answered(lines: &[SourcedLine]) -> Vec<(&SourcedLine, &SourcedLine)> {
    let Split {
        verdicts,
        overrides,
    } = Split::of(lines);
    verdicts
        .into_iter()
        .filter_map(|(i, v)| {
            let (j, _) = overrides.iter().find(|(_, o)| answers(o, v))?;
            Some((&lines[i], &lines[*j]))
        })
        .collect()
}

/// The effective verdict of a commit's lines (invalid lines aside: blocking on them is the
/// gate's policy).
///
/// The worst verdict (HALT > REJECT > FLAG > APPROVE) among the review and reconciliation
/// lines, from any source, that no counted override answers; among equals the latest by
/// `ts`, then the later line. When every such line is answered, the latest counted
/// override's verdict (by `ts`, then position). A line dated in the future therefore never
/// hides a HALT, and a fetched override never clears one unless its remote is trusted.
pub fn effective(lines: &[SourcedLine]) -> Option<Effective> {
    let Split {
        verdicts,
        overrides,
    } = Split::of(lines);
    let open = verdicts
        .iter()
        .filter(|(_, v)| !overrides.iter().any(|(_, o)| answers(o, v)));
    let chosen = open
        .max_by_key(|(i, v)| (v.verdict, v.ts.as_str(), *i))
        .map(|(i, v)| (*i, v.verdict))
        .or_else(|| {
            overrides
                .iter()
                .max_by_key(|(i, o)| (o.ts.as_str(), *i))
                .map(|(i, o)| (*i, o.verdict))
        })?;
    let halt_stands = chosen.1 == Verdict::Halt;
    let uncounted = lines
        .iter()
        .filter_map(|l| match &l.line {
            NoteLine::Override(_) if !l.source.may_relax() => {
                Some((l.clone(), Uncounted::Untrusted))
            }
            NoteLine::Override(o) if halt_stands && matches!(o.answers, Answers::Unnamed(_)) => {
                Some((l.clone(), Uncounted::Unnamed))
            }
            _ => None,
        })
        .collect();
    Some(Effective {
        verdict: chosen.1,
        line: lines[chosen.0].clone(),
        uncounted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::line::read_note;
    use crate::notes::source::Source;
    use serde_json::{json, Value};

    fn at(source: &Source, values: &[Value]) -> Vec<SourcedLine> {
        values
            .iter()
            .flat_map(|v| read_note(&v.to_string()))
            .map(|line| SourcedLine {
                line,
                source: source.clone(),
            })
            .collect()
    }

    fn local(values: &[Value]) -> Vec<SourcedLine> {
        at(&Source::Local, values)
    }

    fn line(kind: &str, ts: &str, verdict: &str) -> Value {
        json!({"v":1,"kind":kind,"ts":ts,"verdict":verdict})
    }

    fn id(v: &Value) -> String {
        local(std::slice::from_ref(v))[0]
            .line
            .id()
            .unwrap()
            .to_string()
    }

    fn verdict(lines: &[SourcedLine]) -> Verdict {
        effective(lines).unwrap().verdict
    }

    #[test]
    fn the_worst_unanswered_line_is_in_force() {
        let halt = line("review", "2026-01-01T00:00:00.000Z", "HALT");
        let recon = line("reconciliation", "2026-01-01T00:00:00.000Z", "REJECT");
        let later = line("review", "2026-01-02T00:00:00.000Z", "FLAG");
        let future = line("review", "2099-01-01T00:00:00.000Z", "APPROVE");
        assert_eq!(verdict(&local(&[later, halt.clone()])), Verdict::Halt);
        // A line dated in the future does not shadow a HALT.
        assert_eq!(
            verdict(&local(&[halt.clone(), future.clone()])),
            Verdict::Halt
        );
        // An override answers only the lines it names.
        let mut o = line("override", "2026-01-03T00:00:00.000Z", "APPROVE");
        o["answers"] = json!([id(&halt)]);
        let e = effective(&local(&[halt.clone(), recon, o.clone()])).unwrap();
        assert_eq!(e.verdict, Verdict::Reject);
        let e = effective(&local(&[halt.clone(), o.clone(), future])).unwrap();
        assert_eq!(e.verdict, Verdict::Approve);
        assert!(matches!(e.line.line, NoteLine::Verdict(_)));
        let e = effective(&local(&[halt.clone(), o.clone()])).unwrap();
        assert!(matches!(e.line.line, NoteLine::Override(_)));
        // A HALT written after the override (another ts) is not answered by it.
        let again = line("review", "2026-01-04T00:00:00.000Z", "HALT");
        assert_eq!(verdict(&local(&[halt, o, again])), Verdict::Halt);
        assert!(effective(&[]).is_none());
    }

    #[test]
    fn keys_older_overrides_named_lines_by_still_answer_them() {
        let halt = line("review", "2026-01-01T00:00:00.000Z", "HALT");
        let mut o = line("override", "2026-01-03T00:00:00.000Z", "APPROVE");
        o["answers"] = json!(["2026-01-01T00:00:00.000Z review HALT"]);
        assert_eq!(verdict(&local(&[halt, o])), Verdict::Approve);
    }

    #[test]
    fn overrides_that_name_no_line_never_clear_a_halt() {
        let halt = line("review", "2026-01-01T00:00:00.000Z", "HALT");
        let mut old = line("override", "9999-01-01T00:00:00.000Z", "APPROVE");
        old["overrides"] = json!("HALT");
        let e = effective(&local(&[halt, old.clone()])).unwrap();
        assert_eq!(e.verdict, Verdict::Halt);
        assert_eq!(e.uncounted.len(), 1);
        assert_eq!(e.uncounted[0].1, Uncounted::Unnamed);
        // It still answers the milder verdict it names, up to its own time.
        let reject = line("review", "2026-01-01T00:00:00.000Z", "REJECT");
        let mut old = line("override", "2026-01-03T00:00:00.000Z", "FLAG");
        old["overrides"] = json!("REJECT");
        assert_eq!(
            verdict(&local(&[reject.clone(), old.clone()])),
            Verdict::Flag
        );
        let dated = line("review", "2099-01-01T00:00:00.000Z", "REJECT");
        assert_eq!(verdict(&local(&[reject, old, dated])), Verdict::Reject);
    }

    #[test]
    fn fetched_overrides_count_only_from_trusted_remotes() {
        let halt = line("review", "2026-01-01T00:00:00.000Z", "HALT");
        let mut o = line("override", "9999-01-01T00:00:00.000Z", "APPROVE");
        o["answers"] = json!([id(&halt)]);
        let remote = |trusted| Source::Remote {
            name: "fork".into(),
            trusted,
        };
        let mut lines = local(std::slice::from_ref(&halt));
        lines.extend(at(&remote(false), &[o.clone()]));
        let e = effective(&lines).unwrap();
        assert_eq!(e.verdict, Verdict::Halt);
        assert_eq!(e.uncounted[0].1, Uncounted::Untrusted);
        // A fetched verdict tightens from anywhere.
        let mut lines = local(&[line("review", "2026-01-01T00:00:00.000Z", "APPROVE")]);
        lines.extend(at(&remote(false), std::slice::from_ref(&halt)));
        assert_eq!(verdict(&lines), Verdict::Halt);
        let mut lines = local(&[halt]);
        lines.extend(at(&remote(true), &[o]));
        assert_eq!(verdict(&lines), Verdict::Approve);
    }
}
