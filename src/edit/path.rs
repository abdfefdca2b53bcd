//! Which paths a model may write: repo-relative, normalized, never outside, never `.git/`
//! under any of the names a file system gives it.
//!
//! The `.git` rules mirror git's own `verify_path` with `core.protectHFS` and
//! `core.protectNTFS` on (as git sets them on macOS and Windows, and as a repository cloned
//! there needs): HFS+ ignores some invisible code points when it compares names, so
//! `.g\u{200c}it` is `.git`; NTFS ignores trailing dots and spaces, reads `name:stream` as
//! `name`, and has the short name `GIT~1` for `.git`. A path git would refuse to check out must
//! never become a commit.

use crate::bounded;

/// Longest path accepted, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Longest file or directory name accepted, in bytes: Linux's `NAME_MAX`, and what ext4,
/// btrfs, XFS and APFS take. A longer name cannot be written or checked out there.
pub const MAX_NAME_BYTES: usize = 255;

/// Why a path was refused. Its message says why first, then the path (invisible characters
/// escaped, its middle left out when long: [`shown`]); [`PathError::why`] is the reason
/// alone, for messages that name the path apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathError {
    /// Empty or only separators.
    Empty,
    /// `/x`, `C:\x`, `~/x`.
    Absolute(String),
    /// `..` climbing above the root.
    Escapes(String),
    /// Inside `.git`.
    GitDir(String),
    /// A component another file system reads as `.git`.
    GitAlias {
        /// The path, as [`shown`].
        path: String,
        /// The component, as [`shown`].
        component: String,
    },
    /// Goes through a symbolic link.
    Symlink(String),
    /// NUL or control characters.
    Control(String),
    /// Longer than any file system takes.
    TooLong(String),
    /// A file or directory name longer than file systems take.
    NameTooLong {
        /// The path, as [`shown`].
        path: String,
        /// How many bytes the longest name has.
        bytes: usize,
    },
}

impl PathError {
    /// Why the path was refused, without the path.
    pub fn why(&self) -> String {
        match self {
            PathError::Empty => "the path is empty".into(),
            PathError::Absolute(_) => {
                "absolute, and paths must be relative to the repository root".into()
            }
            PathError::Escapes(_) => "escapes the repository".into(),
            PathError::GitDir(_) => "inside .git/, which is never edited".into(),
            PathError::GitAlias { component, .. } => format!(
                "inside .git/, which is never edited (`{component}` is a name for .git on macOS (HFS+) or Windows (NTFS))"
            ),
            PathError::Symlink(_) => {
                "goes through a symbolic link, and links are never followed or edited".into()
            }
            PathError::Control(_) => "contains control characters".into(),
            PathError::TooLong(_) => format!("longer than {MAX_PATH_BYTES} bytes"),
            PathError::NameTooLong { bytes, .. } => format!(
                "a name in it is {bytes} bytes, longer than the {MAX_NAME_BYTES} a file or directory name may be on the file systems git checks out to, so it could be neither written nor checked out"
            ),
        }
    }

    /// The refused path, as [`shown`]; `None` for an empty one.
    pub fn path(&self) -> Option<&str> {
        match self {
            PathError::Empty => None,
            PathError::Absolute(p)
            | PathError::Escapes(p)
            | PathError::GitDir(p)
            | PathError::GitAlias { path: p, .. }
            | PathError::Symlink(p)
            | PathError::Control(p)
            | PathError::TooLong(p)
            | PathError::NameTooLong { path: p, .. } => Some(p),
        }
    }
}

impl std::fmt::Display for PathError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path() {
            Some(p) => write!(f, "{}: `{p}`", self.why()),
            None => f.write_str(&self.why()),
        }
    }
}

impl std::error::Error for PathError {}

/// A path as an error message shows it, after the reason: invisible characters escaped,
/// its middle left out past [`bounded::PATH_BYTES`] (the model chose it).
pub fn shown(p: &str) -> String {
    bounded::path(&escape_invisible(p))
}

/// `p` with control characters and the code points HFS+ ignores written as escapes.
fn escape_invisible(p: &str) -> String {
    p.chars()
        .map(|c| {
            if c.is_control() || hfs_ignored(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Normalizes a model-written path or says why it is refused.
pub fn check_path(raw: &str) -> Result<String, PathError> {
    let p = raw.trim();
    if p.is_empty() {
        return Err(PathError::Empty);
    }
    if p.len() > MAX_PATH_BYTES {
        return Err(PathError::TooLong(shown(p)));
    }
    if p.chars().any(|c| c.is_control()) {
        return Err(PathError::Control(shown(p)));
    }
    let p = p.replace('\\', "/");
    let bytes = p.as_bytes();
    if p.starts_with('/') || p.starts_with('~') || (bytes.len() > 1 && bytes[1] == b':') {
        return Err(PathError::Absolute(shown(&p)));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Escapes(shown(&p)));
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Err(PathError::Empty);
    }
    if let Some(long) = parts.iter().map(|s| s.len()).find(|n| *n > MAX_NAME_BYTES) {
        return Err(PathError::NameTooLong {
            path: shown(&p),
            bytes: long,
        });
    }
    if let Some(alias) = parts.iter().find(|s| is_dotgit(s)) {
        return Err(if alias.eq_ignore_ascii_case(".git") {
            PathError::GitDir(shown(&p))
        } else {
            PathError::GitAlias {
                path: shown(&p),
                component: shown(alias),
            }
        });
    }
    Ok(parts.join("/"))
}

/// Whether one path component names `.git` on any file system git protects: compared
/// without case, without the code points HFS+ ignores, as `.git` or its NTFS short name
/// `git~1`, followed by nothing but dots and spaces up to the end or an NTFS stream (`:`).
fn is_dotgit(component: &str) -> bool {
    let folded: String = component
        .chars()
        .filter(|c| !hfs_ignored(*c))
        .collect::<String>()
        .to_ascii_lowercase();
    let Some(rest) = folded
        .strip_prefix(".git")
        .or_else(|| folded.strip_prefix("git~1"))
    else {
        return false;
    };
    let before_stream = rest.split(':').next().unwrap_or("");
    before_stream.chars().all(|c| c == '.' || c == ' ')
}

/// The code points HFS+ drops when it compares file names (the list git's `is_hfs_dotgit`
/// skips): zero-width (non-)joiners, direction marks and embeddings, the deprecated
/// shaping controls, and the byte order mark.
fn hfs_ignored(c: char) -> bool {
    matches!(
        c,
        '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{206A}'..='\u{206F}' | '\u{FEFF}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_longer_than_file_systems_take_is_refused_with_the_reason() {
        let name = format!("{}.py", "a".repeat(297));
        assert_eq!(name.len(), 300);
        let e = check_path(&format!("src/{name}")).unwrap_err();
        assert!(
            e.why()
                .starts_with("a name in it is 300 bytes, longer than the 255"),
            "{e}"
        );
        assert!(check_path(&format!("src/{}.py", "a".repeat(252))).is_ok());
        // Bytes, not characters: 128 two-byte letters are 256 bytes.
        assert!(check_path(&"é".repeat(128)).is_err());
    }

    #[test]
    fn normalizes_and_refuses() {
        assert_eq!(check_path("./src//a.py").unwrap(), "src/a.py");
        assert_eq!(check_path("src/x/../a.py").unwrap(), "src/a.py");
        assert!(matches!(
            check_path("/etc/passwd"),
            Err(PathError::Absolute(_))
        ));
        assert!(matches!(check_path("C:\\x"), Err(PathError::Absolute(_))));
        assert!(matches!(check_path("../x"), Err(PathError::Escapes(_))));
        assert!(matches!(
            check_path("a/../../x"),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            check_path(".git/hooks/pre-push"),
            Err(PathError::GitDir(_))
        ));
        assert!(matches!(
            check_path("sub/.GIT/config"),
            Err(PathError::GitDir(_))
        ));
        assert!(matches!(check_path("a\0b"), Err(PathError::Control(_))));
        assert!(matches!(check_path(" "), Err(PathError::Empty)));
    }

    #[test]
    fn every_name_of_dot_git_is_refused() {
        for path in [
            ".git\u{200c}/hooks/pre-commit",
            ".g\u{200d}it/config",
            "\u{feff}.git/hooks/x",
            ".\u{202e}git\u{206a}/x",
            "src/.GiT\u{200e}/x",
            "GIT~1/hooks/pre-commit",
            "sub/git~1/config",
            ".git./config",
            ".git ./config",
            ".git. . /config",
            ".git::$INDEX_ALLOCATION/hooks/pre-commit",
            ".git:stream",
            "a\\.GIT\\config",
        ] {
            assert!(
                matches!(
                    check_path(path),
                    Err(PathError::GitDir(_) | PathError::GitAlias { .. })
                ),
                "{path:?}: {:?}",
                check_path(path)
            );
        }
        let e = check_path(".git\u{200c}/hooks/pre-commit").unwrap_err();
        assert_eq!(
            e.to_string(),
            "inside .git/, which is never edited (`.git\\u{200c}` is a name for .git on macOS (HFS+) or Windows (NTFS)): `.git\\u{200c}/hooks/pre-commit`"
        );
        // Names that only look alike are files like any other.
        for path in [
            ".gitignore",
            ".github/workflows/ci.yml",
            ".gitmodules",
            "git~2/x",
            ".git-blame-ignore-revs",
            "my.git/x",
            ".gitx/y",
            "g\u{200c}it~1x",
        ] {
            assert!(check_path(path).is_ok(), "{path:?}: {:?}", check_path(path));
        }
    }

    #[test]
    fn long_paths_are_refused_and_echoed_briefly() {
        let long = "a/".repeat(5000);
        let e = check_path(&long).unwrap_err();
        assert!(matches!(e, PathError::TooLong(_)));
        assert!(e.to_string().len() < 500, "{e}");
        let e = check_path(&format!("/{}", "x".repeat(4000))).unwrap_err();
        assert!(e.to_string().len() < 500, "{e}");
    }
}
