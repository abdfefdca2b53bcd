//! Paths inside a repository that are safe to read or write: relative, no `..`, and no
//! symbolic link anywhere on the way.
//!
//! Whatever a clone commits is untrusted, and git stores symbolic links: a committed
//! `.triad -> ~/.ssh` or `prompt.md -> ~/.aws/credentials` would make a plain `root.join(p)`
//! read or write outside the repository. Every component under the root is checked with
//! `symlink_metadata` (never followed), not just the last one; the root itself is the user's
//! choice and is not checked.

use std::io;
use std::path::{Component, Path, PathBuf};

/// Why a path inside the repository may not be used.
#[derive(Debug, thiserror::Error)]
pub enum FsGuardError {
    /// Absolute, or climbing out of the root with `..`.
    #[error("`{0}` is not a relative path inside the repository")]
    NotInside(String),
    /// An existing component is a symbolic link.
    #[error("`{path}` goes through the symbolic link `{link}`; links in a repository are never followed")]
    Symlink {
        /// The path asked for, relative to the root.
        path: String,
        /// The component that is a link, relative to the root.
        link: String,
    },
    /// A component could not be inspected, or the file could not be read.
    #[error("cannot read `{path}`")]
    Io {
        /// The path asked for, relative to the root.
        path: String,
        /// The I/O error.
        #[source]
        source: io::Error,
    },
}

impl FsGuardError {
    /// Whether the path (or one of its directories) simply does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, FsGuardError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    /// This error as an `io::Error` (kind `NotFound` when nothing is there).
    pub fn into_io(self) -> io::Error {
        match self {
            FsGuardError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => source,
            other => io::Error::other(other),
        }
    }
}

/// `root` joined with `rel`, when `rel` is relative, never climbs with `..`, and none of its
/// components that exist under `root` is a symbolic link. Components that do not exist yet
/// are fine: the path may be about to be created.
pub fn inside_repo(root: &Path, rel: impl AsRef<Path>) -> Result<PathBuf, FsGuardError> {
    let rel = rel.as_ref();
    let shown = || rel.display().to_string();
    let mut path = root.to_path_buf();
    let mut walked = PathBuf::new();
    let mut exists = true;
    for component in rel.components() {
        match component {
            Component::Normal(part) => {
                path.push(part);
                walked.push(part);
            }
            Component::CurDir => continue,
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(FsGuardError::NotInside(shown()))
            }
        }
        if !exists {
            continue;
        }
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(FsGuardError::Symlink {
                    path: shown(),
                    link: walked.display().to_string(),
                })
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => exists = false,
            Err(source) => {
                return Err(FsGuardError::Io {
                    path: shown(),
                    source,
                })
            }
        }
    }
    if walked.as_os_str().is_empty() {
        return Err(FsGuardError::NotInside(shown()));
    }
    Ok(path)
}

/// Reads the file at `rel` under `root` as text, refusing what [`inside_repo`] refuses; the
/// last component is opened without following a link (closing the gap between check and
/// open on Unix).
pub fn read_to_string(root: &Path, rel: impl AsRef<Path>) -> Result<String, FsGuardError> {
    let rel = rel.as_ref();
    let path = inside_repo(root, rel)?;
    let io_err = |source| FsGuardError::Io {
        path: rel.display().to_string(),
        source,
    };
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    let mut file = options.open(&path).map_err(io_err)?;
    let mut text = String::new();
    io::Read::read_to_string(&mut file, &mut text).map_err(io_err)?;
    Ok(text)
}

/// Creates the file at `rel` under `root` with `contents`, refusing what [`inside_repo`]
/// refuses and never replacing or following anything already there (`create_new`).
/// Missing parent directories are created, each checked first.
pub fn create_new(root: &Path, rel: impl AsRef<Path>, contents: &[u8]) -> Result<(), FsGuardError> {
    let rel = rel.as_ref();
    let path = inside_repo(root, rel)?;
    let io_err = |source| FsGuardError::Io {
        path: rel.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_err)?;
    }
    // The directories may have been swapped for links since the check.
    inside_repo(root, rel)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(io_err)?;
    io::Write::write_all(&mut file, contents).map_err(io_err)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_anywhere_on_the_way_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "key").unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/ok.md"), "fine").unwrap();
        symlink(outside.path(), root.join("a/dir-link")).unwrap();
        symlink(outside.path().join("secret"), root.join("a/b/file-link")).unwrap();
        symlink(root.join("nowhere"), root.join("dangling")).unwrap();

        assert_eq!(read_to_string(root, "a/b/ok.md").unwrap(), "fine");
        assert_eq!(read_to_string(root, "./a/b/ok.md").unwrap(), "fine");
        for (rel, link) in [
            ("a/dir-link/secret", "a/dir-link"),
            ("a/b/file-link", "a/b/file-link"),
            ("dangling/new.toml", "dangling"),
        ] {
            match read_to_string(root, rel) {
                Err(FsGuardError::Symlink { link: l, .. }) => assert_eq!(l, link, "{rel}"),
                other => panic!("{rel}: {other:?}"),
            }
        }
        assert!(create_new(root, "dangling/new.toml", b"x").is_err());
        assert!(!root.join("nowhere").exists());
        for rel in ["../x", "/etc/passwd", "a/../../x", "", "."] {
            assert!(
                matches!(inside_repo(root, rel), Err(FsGuardError::NotInside(_))),
                "{rel}"
            );
        }
        assert!(read_to_string(root, "a/missing.md")
            .unwrap_err()
            .is_not_found());
        create_new(root, "new/dir/file.txt", b"made").unwrap();
        assert_eq!(read_to_string(root, "new/dir/file.txt").unwrap(), "made");
        assert!(create_new(root, "new/dir/file.txt", b"again").is_err());
    }
}
