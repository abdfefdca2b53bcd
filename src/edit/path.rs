//! Which paths a model may write: repo-relative, normalized, never outside, never `.git/`.

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    /// Empty or only separators.
    #[error("the path is empty")]
    Empty,
    /// `/x`, `C:\x`, `~/x`.
    #[error("`{0}` is absolute; paths must be relative to the repository root")]
    Absolute(String),
    /// `..` climbing above the root.
    #[error("`{0}` escapes the repository")]
    Escapes(String),
    /// Inside `.git`.
    #[error("`{0}` is inside .git/, which is never edited")]
    GitDir(String),
    /// Goes through a symbolic link.
    #[error("`{0}` goes through a symbolic link; links are never followed or edited")]
    Symlink(String),
    /// NUL or control characters.
    #[error("`{0}` contains control characters")]
    Control(String),
}

/// Normalizes a model-written path or says why it is refused.
pub fn check_path(raw: &str) -> Result<String, PathError> {
    let p = raw.trim();
    if p.is_empty() {
        return Err(PathError::Empty);
    }
    if p.chars().any(|c| c.is_control()) {
        return Err(PathError::Control(p.escape_debug().to_string()));
    }
    let p = p.replace('\\', "/");
    let bytes = p.as_bytes();
    if p.starts_with('/') || p.starts_with('~') || (bytes.len() > 1 && bytes[1] == b':') {
        return Err(PathError::Absolute(p));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(PathError::Escapes(p.clone()));
                }
            }
            s => parts.push(s),
        }
    }
    if parts.is_empty() {
        return Err(PathError::Empty);
    }
    // Case-insensitive file systems treat `.GIT` as `.git`; `.git ` and `.git.` too on Windows.
    if parts
        .iter()
        .any(|s| s.trim_end_matches(['.', ' ']).eq_ignore_ascii_case(".git"))
    {
        return Err(PathError::GitDir(p));
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
