//! Setting a repository up for verdict notes, and taking it down again: the local git config
//! `git triad init` adds ([`gitconfig`], with a record so `--uninstall` removes exactly what
//! was added), and the hook shims it installs where git looks for hooks ([`hookfile`]).

pub mod gitconfig;
pub mod hookfile;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::Repository;

use crate::fsguard::{self, FsGuardError};

/// The hooks directory git uses: `core.hooksPath` (relative to the work tree root, or to the
/// git dir of a bare repository), else `hooks/` in the common git dir.
pub fn hooks_dir(repo: &Repository) -> Result<PathBuf, git2::Error> {
    let cfg = repo.config()?;
    match cfg.get_path("core.hooksPath") {
        Ok(p) if p.is_absolute() => Ok(p),
        Ok(p) => Ok(repo.workdir().unwrap_or_else(|| repo.path()).join(p)),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(repo.commondir().join("hooks")),
        Err(e) => Err(e),
    }
}

/// Refuses a hook path in the work tree (`core.hooksPath = .githooks`) that goes through a
/// symbolic link: those files come with the clone. Paths in the git dir are the user's own.
pub fn checked_hook_path(repo: &Repository, path: &Path) -> Result<(), FsGuardError> {
    let Some(root) = repo.workdir() else {
        return Ok(());
    };
    if path.starts_with(repo.path()) || path.starts_with(repo.commondir()) {
        return Ok(());
    }
    match path.strip_prefix(root) {
        // `core.hooksPath = ../elsewhere` points out of the work tree on the user's own say.
        Ok(rel)
            if !rel
                .components()
                .any(|c| c == std::path::Component::ParentDir) =>
        {
            fsguard::inside_repo(root, rel)?;
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Whether git would run the hook at `path` (any execute bit set).
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}
