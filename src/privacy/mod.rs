//! Private files never leave the machine.
//!
//! A file is private when its name is on the built-in deny-list (`.env`, keys, certificates,
//! credentials files: [`names::BUILTIN_NAMES`]), matches a configured `privacy.withhold`
//! pattern (a committed repository config may only add patterns), or its content holds
//! something shaped like a secret ([`scan`]: a PEM private key, an `sk-…`, AWS, GitHub, Slack,
//! Google, GitLab or Stripe token, or any configured API key in any form the redactor knows).
//!
//! Wherever file contents go to a model — a stage's repository map and files, the previous
//! stage's diff, the arbiter's diff and evidence, the reconciliation's scaffold — a private
//! file appears as its path and [`WITHHELD`], and an edit aimed at one is refused with the
//! reason (see [`Guard`]).

pub mod names;
pub mod scan;

use std::borrow::Cow;
use std::fmt;

use git2::{Repository, Tree};

use crate::config::Config;
use crate::edit::BaseFiles;
pub use crate::git::WITHHELD;
use crate::git::{FileDiff, TreeFiles};

/// Why a file is private.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Withheld {
    /// Its name matches this deny-list pattern (built in or configured).
    Name(String),
    /// Its content holds what looks like this kind of secret.
    Content(&'static str),
}

impl fmt::Display for Withheld {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Withheld::Name(p) => write!(f, "its name matches the private-file pattern `{p}`"),
            Withheld::Content(what) => write!(f, "its content holds what looks like {what}"),
        }
    }
}

/// Which files are private: the built-in deny-list, the configured patterns, the content scan.
#[derive(Debug, Clone, Default)]
pub struct Privacy {
    patterns: Vec<String>,
}

impl Privacy {
    /// The built-in deny-list plus `patterns` (globs, as in a TaskSpec scope).
    pub fn new(patterns: Vec<String>) -> Privacy {
        Privacy { patterns }
    }

    /// The deny-list of the effective configuration (`privacy.withhold`).
    pub fn from_config(config: &Config) -> Privacy {
        Privacy::new(config.privacy.withhold.clone())
    }

    /// Why `path` is private by its name alone, if it is.
    pub fn by_name(&self, path: &str) -> Option<Withheld> {
        names::builtin(path)
            .or_else(|| names::configured(&self.patterns, path))
            .map(|p| Withheld::Name(p.to_string()))
    }

    /// Why `path`, with `content` (when the file exists), is private, if it is.
    pub fn check(&self, path: &str, content: Option<&[u8]>) -> Option<Withheld> {
        self.by_name(path)
            .or_else(|| content.and_then(content_reason))
    }

    /// Marks the private files of a diff from `old` (none: empty) to `new`: by name, or by
    /// the content of either side. Their hunks are dropped, so no rendering can show them.
    pub fn mark_diff(
        &self,
        repo: &Repository,
        old: Option<&Tree<'_>>,
        new: &Tree<'_>,
        files: &mut [FileDiff],
    ) {
        let old = old.map(|t| TreeFiles::new(repo, t.clone()));
        let new = TreeFiles::new(repo, new.clone());
        for f in files.iter_mut() {
            let private = self.by_name(&f.path).is_some()
                || [old.as_ref(), Some(&new)]
                    .into_iter()
                    .flatten()
                    .any(|side| {
                        side.bytes(&f.path)
                            .is_some_and(|b| content_reason(&b).is_some())
                    });
            if private {
                f.withheld = true;
                f.hunks.clear();
            }
        }
    }
}

/// Why content is private, if it is: a key-shaped string, or a configured key.
pub fn content_reason(content: &[u8]) -> Option<Withheld> {
    if let Some(found) = scan::find(content, true).first() {
        return Some(Withheld::Content(found.what));
    }
    crate::redact::Redactor::global()
        .finds_secret(&String::from_utf8_lossy(content))
        .then_some(Withheld::Content("a configured API key"))
}

/// `text` with every key-shaped string replaced by `[redacted]` (for output that may print
/// one, like the verify command's), configured keys included.
pub fn mask_key_shaped(text: &str) -> Cow<'_, str> {
    let found = scan::find(text.as_bytes(), false);
    let masked = if found.is_empty() {
        Cow::Borrowed(text)
    } else {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for f in found {
            // Tokens are ASCII and start after a non-alphanumeric byte: on char boundaries.
            out.push_str(&text[at..f.start]);
            out.push_str(crate::redact::MARK);
            at = f.end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    };
    match crate::redact::redact(&masked) {
        Cow::Owned(r) => Cow::Owned(r),
        Cow::Borrowed(_) => masked,
    }
}

/// The files edits start from, with private files refused: an edit aimed at one fails with
/// the reason, before its content is read for matching.
pub struct Guard<'a> {
    /// The files.
    pub files: &'a dyn BaseFiles,
    /// Which of them are private.
    pub privacy: &'a Privacy,
}

impl BaseFiles for Guard<'_> {
    fn read(&self, path: &str) -> Option<Vec<u8>> {
        self.files.read(path)
    }

    fn through_symlink(&self, path: &str) -> bool {
        self.files.through_symlink(path)
    }

    fn kind(&self, path: &str) -> Option<crate::edit::EntryKind> {
        self.files.kind(path)
    }

    fn withheld(&self, path: &str) -> Option<String> {
        self.privacy
            .check(path, self.files.read(path).as_deref())
            .map(|w| w.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_patterns_and_content_each_make_a_file_private() {
        let p = Privacy::new(vec!["secrets/**".into()]);
        assert_eq!(p.check(".env", None), Some(Withheld::Name(".env".into())));
        assert_eq!(
            p.check("secrets/db.txt", Some(b"hunter2")),
            Some(Withheld::Name("secrets/**".into()))
        );
        assert_eq!(
            p.check("src/settings.py", Some(b"AWS = 'AKIAIOSFODNN7EXAMPLE'\n")),
            Some(Withheld::Content("an AWS access key id"))
        );
        assert_eq!(p.check("src/settings.py", Some(b"DEBUG = True\n")), None);
        assert_eq!(p.check("new.py", None), None);
        assert_eq!(
            Withheld::Name("*.pem".into()).to_string(),
            "its name matches the private-file pattern `*.pem`"
        );
    }

    struct Mem(Vec<(&'static str, &'static str)>);

    impl BaseFiles for Mem {
        fn read(&self, path: &str) -> Option<Vec<u8>> {
            self.0
                .iter()
                .find(|(p, _)| *p == path)
                .map(|(_, t)| t.as_bytes().to_vec())
        }
        fn through_symlink(&self, _: &str) -> bool {
            false
        }
        fn kind(&self, path: &str) -> Option<crate::edit::EntryKind> {
            self.read(path).map(|_| crate::edit::EntryKind::File)
        }
    }

    #[test]
    fn edits_to_private_files_are_refused_without_echoing_them() {
        use crate::edit::{apply_blocks, render_failures, EditBlock};
        let base = Mem(vec![
            (".env", "TOKEN=canary-env-7f3a\n"),
            ("conf.py", "AWS = 'AKIAIOSFODNN7EXAMPLE'\n"),
            ("calc.py", "x = 1\n"),
        ]);
        let guard = Guard {
            files: &base,
            privacy: &Privacy::default(),
        };
        let block = |path: &str, search: &str| EditBlock {
            whole: false,
            path: path.into(),
            search: search.into(),
            replace: "y = 2\n".into(),
            answer_line: 1,
        };
        for (path, search) in [
            (".env", "TOKEN=canary-env-7f3a\n"),
            ("conf.py", "AWS = 'nope'\n"),
            ("web/.npmrc", ""),
        ] {
            let failures = apply_blocks(&guard, &[block(path, search)], &|_| true).unwrap_err();
            assert!(failures[0].private, "{path}");
            let text = render_failures(&failures, 0);
            assert!(text.contains("a private file ("), "{text}");
            assert!(
                !text.contains("canary-env") && !text.contains("AKIA"),
                "{text}"
            );
        }
        assert!(apply_blocks(&guard, &[block("calc.py", "x = 1\n")], &|_| true).is_ok());
    }

    #[test]
    fn key_shaped_output_is_masked() {
        let text = "ok\nKEY=AKIAIOSFODNN7EXAMPLE ✓\n";
        assert_eq!(mask_key_shaped(text), "ok\nKEY=[redacted] ✓\n");
        assert!(matches!(mask_key_shaped("plain ✓"), Cow::Borrowed(_)));
    }
}
