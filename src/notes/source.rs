//! Where a note line came from, and whether that place may relax a verdict.
//!
//! Lines on the local notes ref ([`super::NOTES_REF`]) were written here, or merged from a
//! remote the user trusts. Lines fetched from any other remote stay in its tracking ref
//! (`refs/notes/remotes/<remote>/triad`) and can only tighten: their verdicts count, their
//! overrides do not. Only the user's own configuration marks a remote trusted
//! (`notes.trusted_remotes`), never a repository's.

use std::collections::BTreeSet;
use std::fmt;

use super::note_line::NoteLine;
use super::NOTES_REF;

/// The prefix of the refs remotes' notes are fetched into.
const REMOTES_PREFIX: &str = "refs/notes/remotes/";

/// Where a line was read.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The local notes ref.
    Local,
    /// A remote's notes, as last fetched.
    Remote {
        /// The remote's name.
        name: String,
        /// Whether the user's own config trusts it.
        trusted: bool,
    },
}

impl Source {
    /// Whether lines from here may relax a verdict (an override counts): local lines and a
    /// trusted remote's.
    pub fn may_relax(&self) -> bool {
        match self {
            Source::Local => true,
            Source::Remote { trusted, .. } => *trusted,
        }
    }

    /// How much its lines count, most first: where a line found in several places is said
    /// to come from.
    fn rank(&self) -> u8 {
        match self {
            Source::Local => 0,
            Source::Remote { trusted: true, .. } => 1,
            Source::Remote { trusted: false, .. } => 2,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Local => f.write_str("this clone"),
            Source::Remote {
                name,
                trusted: true,
            } => write!(f, "{name} (trusted)"),
            Source::Remote {
                name,
                trusted: false,
            } => write!(f, "{name} (not trusted: only tightens)"),
        }
    }
}

/// The remotes whose notes the user trusts to relax verdicts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    remotes: BTreeSet<String>,
}

impl Trust {
    /// Trusts the remotes named (from the user's `notes.trusted_remotes`).
    pub fn new<S: AsRef<str>>(remotes: &[S]) -> Trust {
        Trust {
            remotes: remotes.iter().map(|r| r.as_ref().to_string()).collect(),
        }
    }

    /// Whether `remote` is trusted.
    pub fn trusts(&self, remote: &str) -> bool {
        self.remotes.contains(remote)
    }

    /// Where lines of the notes ref `name` come from: `None` for a ref the readers do not
    /// read (only [`NOTES_REF`] and `refs/notes/remotes/<remote>/triad` are).
    pub fn source_of(&self, name: &str) -> Option<Source> {
        if name == NOTES_REF {
            return Some(Source::Local);
        }
        let remote = remote_of(name)?;
        Some(Source::Remote {
            name: remote.to_string(),
            trusted: self.trusts(remote),
        })
    }
}

/// The remote whose tracking ref `name` is (`refs/notes/remotes/<remote>/triad`).
pub fn remote_of(name: &str) -> Option<&str> {
    name.strip_prefix(REMOTES_PREFIX)
        .and_then(|rest| rest.strip_suffix("/triad"))
        .filter(|remote| !remote.is_empty() && !remote.contains('/'))
}

/// The ref a remote's notes are fetched into.
pub fn tracking_ref(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{remote}/triad")
}

/// A note line with where it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedLine {
    /// The line.
    pub line: NoteLine,
    /// Where it was read.
    pub source: Source,
}

impl SourcedLine {
    /// `lines`, each read from `source`.
    pub fn all_from(source: &Source, lines: Vec<NoteLine>) -> Vec<SourcedLine> {
        lines
            .into_iter()
            .map(|line| SourcedLine {
                line,
                source: source.clone(),
            })
            .collect()
    }
}

/// The lines of several notes on one commit (one per source), each valid record once, from
/// the source whose lines count most; invalid lines from every source (each may block).
pub fn merge_sources(notes: Vec<(Source, Vec<NoteLine>)>) -> Vec<SourcedLine> {
    let mut notes = notes;
    notes.sort_by_key(|(s, _)| s.rank());
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (source, lines) in notes {
        let fresh = lines.into_iter().filter(|line| match line.stored() {
            Some(s) => seen.insert((s.id().clone(), s.reattached_from().map(str::to_string))),
            None => true,
        });
        out.extend(SourcedLine::all_from(&source, fresh.collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::read_note;

    #[test]
    fn only_local_and_trusted_lines_may_relax() {
        let trust = Trust::new(&["upstream"]);
        assert_eq!(trust.source_of(NOTES_REF), Some(Source::Local));
        let fork = trust.source_of("refs/notes/remotes/fork/triad").unwrap();
        assert!(!fork.may_relax());
        assert!(trust
            .source_of("refs/notes/remotes/upstream/triad")
            .unwrap()
            .may_relax());
        assert_eq!(trust.source_of("refs/notes/remotes/a/b/triad"), None);
        assert_eq!(trust.source_of("refs/notes/commits"), None);
        assert_eq!(tracking_ref("fork"), "refs/notes/remotes/fork/triad");
    }

    #[test]
    fn a_line_found_in_several_places_comes_from_the_one_that_counts_most() {
        let line = r#"{"v":1,"kind":"review","ts":"t","verdict":"HALT"}"#;
        let fork = Source::Remote {
            name: "fork".into(),
            trusted: false,
        };
        let lines = merge_sources(vec![
            (fork.clone(), read_note(&format!("{line}\nnot json\n"))),
            (Source::Local, read_note(line)),
        ]);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert_eq!(lines[0].source, Source::Local);
        assert_eq!(lines[1].source, fork);
    }
}
