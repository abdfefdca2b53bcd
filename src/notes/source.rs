//! Where a note line came from, and whether that place may relax a verdict.
//!
//! Lines on the local notes ref ([`super::NOTES_REF`]) were written here, or merged from a
//! remote the user trusts. Lines fetched from any other remote stay in its refs and can only
//! tighten: their verdicts count, their overrides do not. A remote has two: where git's own
//! `git fetch` lands its notes ([`landing_ref`], which a rewrite on the remote replaces), and
//! the tracking ref git triad keeps ([`tracking_ref`]), which only ever grows by the union of
//! what landed ([`super::fold`]). Only the user's own configuration marks a remote trusted
//! (`notes.trusted_remotes`), never a repository's.
//!
//! Every remote name git accepts has its refs: a `/` in it (`team/origin`) is written `%2F`
//! in them and a `%` is written `%25` ([`ref_segment`]), so one remote's refs never nest in
//! another's.

use std::collections::BTreeSet;
use std::fmt;

use super::line::NoteLine;
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
            trusted: self.trusts(&remote),
            name: remote,
        })
    }
}

/// The remote whose tracking or landing ref `name` is (`refs/notes/remotes/<segment>/triad`
/// or `…/<segment>/fetched/triad`, see [`ref_segment`]).
pub fn remote_of(name: &str) -> Option<String> {
    let rest = name.strip_prefix(REMOTES_PREFIX)?;
    let segment = rest
        .strip_suffix(LANDING_SUFFIX)
        .or_else(|| rest.strip_suffix(TRACKING_SUFFIX))?;
    (!segment.is_empty() && !segment.contains('/')).then(|| remote_name(segment))
}

/// What follows a remote's segment in its tracking ref.
const TRACKING_SUFFIX: &str = "/triad";
/// What follows a remote's segment in its landing ref.
const LANDING_SUFFIX: &str = "/fetched/triad";

/// A remote's name as one ref component: `%` written `%25`, `/` written `%2F` (both are
/// allowed in ref names; nothing else needs writing, since a remote name is a valid ref
/// name already).
pub fn ref_segment(remote: &str) -> String {
    remote.replace('%', "%25").replace('/', "%2F")
}

/// The remote name a [`ref_segment`] spells.
fn remote_name(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    let mut rest = segment;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let code = rest.get(i + 1..i + 3);
        match code {
            Some(c) if c.eq_ignore_ascii_case("2F") => out.push('/'),
            Some("25") => out.push('%'),
            _ => {
                out.push('%');
                rest = &rest[i + 1..];
                continue;
            }
        }
        rest = &rest[i + 3..];
    }
    out.push_str(rest);
    out
}

/// The ref git triad keeps a remote's notes in: the union of everything that landed from it.
pub fn tracking_ref(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}{TRACKING_SUFFIX}", ref_segment(remote))
}

/// The ref a remote's notes land in when fetched (by `git fetch`, with the refspec
/// `git triad init` adds, or by `git triad notes fetch`): forced, so a rewrite on the remote
/// replaces it; its reflog keeps what it held before.
pub fn landing_ref(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}{LANDING_SUFFIX}", ref_segment(remote))
}

/// The command that stops this clone reading `remote`'s notes (fetches only add lines, so a
/// line mended on the remote stays here; this drops them all, until they are fetched again).
pub fn forget_command(remote: &str) -> String {
    format!(
        "git update-ref -d {} && git update-ref -d {}",
        tracking_ref(remote),
        landing_ref(remote)
    )
}

/// The fetch refspec `git triad init` adds for `remote`: forced, and a glob, so `git fetch`
/// and `git pull` never fail on it — not when the remote has no verdicts yet (a glob that
/// matches nothing fetches nothing), nor when it rewrote them.
pub fn fetch_refspec(remote: &str) -> String {
    format!("+{NOTES_REF}*:{}*", landing_ref(remote))
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
    fn every_remote_name_has_refs_of_its_own() {
        for name in [
            "origin",
            "team/origin",
            "a%2Fb",
            "100%",
            "x/y/z",
            "%",
            "a%41",
        ] {
            for r in [tracking_ref(name), landing_ref(name)] {
                assert_eq!(remote_of(&r).as_deref(), Some(name), "{r}");
            }
        }
        assert_eq!(
            tracking_ref("team/origin"),
            "refs/notes/remotes/team%2Forigin/triad"
        );
        assert_eq!(
            fetch_refspec("team/origin"),
            "+refs/notes/triad*:refs/notes/remotes/team%2Forigin/fetched/triad*"
        );
        let trust = Trust::new(&["team/origin"]);
        assert!(trust
            .source_of(&landing_ref("team/origin"))
            .unwrap()
            .may_relax());
        assert_eq!(
            trust.source_of("refs/notes/remotes/a/fetched/triad-verdicts"),
            None
        );
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
