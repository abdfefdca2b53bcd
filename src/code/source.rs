//! Read-only views of a repository's files: a git tree, a directory, and the internal
//! memoizing overlay that puts a change's new file contents over either.
//!
//! Paths are always `/`-separated and relative to the repository root, without a leading
//! `./` or `/`; the root itself is `""`.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use git2::{ObjectType, Repository, Tree};

/// A read-only view of a repository's files at some revision.
pub trait FileSource {
    /// The contents of a file (lossily decoded as UTF-8), or `None` if there is no such
    /// file.
    fn read(&self, path: &str) -> Option<String>;
    /// Whether `path` is a file (a symlink counts as a file).
    fn is_file(&self, path: &str) -> bool;
    /// Whether `path` is a directory (`""` is the root).
    fn is_dir(&self, path: &str) -> bool;
    /// The names (not paths) of the entries directly in `dir`, files and directories,
    /// sorted; empty if `dir` is not a directory.
    fn list(&self, dir: &str) -> Vec<String>;
}

/// Strips `./`, leading and trailing `/` so that callers may be sloppy.
pub(crate) fn clean(path: &str) -> &str {
    let mut p = path.trim_matches('/');
    while let Some(rest) = p.strip_prefix("./") {
        p = rest.trim_start_matches('/');
    }
    if p == "." {
        ""
    } else {
        p
    }
}

/// The files of one commit's tree, read straight from the object database (no checkout
/// needed, so a review can look at any revision).
pub struct GitTreeSource<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
}

impl<'r> GitTreeSource<'r> {
    /// A view of `tree`, whose objects live in `repo`.
    pub fn new(repo: &'r Repository, tree: Tree<'r>) -> GitTreeSource<'r> {
        GitTreeSource { repo, tree }
    }

    fn entry(&self, path: &str) -> Option<git2::TreeEntry<'static>> {
        let path = clean(path);
        if path.is_empty() {
            return None;
        }
        self.tree.get_path(Path::new(path)).ok()
    }
}

impl FileSource for GitTreeSource<'_> {
    fn read(&self, path: &str) -> Option<String> {
        let entry = self.entry(path)?;
        if entry.kind() != Some(ObjectType::Blob) {
            return None;
        }
        let blob = self.repo.find_blob(entry.id()).ok()?;
        Some(String::from_utf8_lossy(blob.content()).into_owned())
    }

    fn is_file(&self, path: &str) -> bool {
        self.entry(path)
            .is_some_and(|e| e.kind() == Some(ObjectType::Blob))
    }

    fn is_dir(&self, path: &str) -> bool {
        if clean(path).is_empty() {
            return true;
        }
        self.entry(path)
            .is_some_and(|e| e.kind() == Some(ObjectType::Tree))
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let names = |t: &Tree| -> Vec<String> {
            let mut v: Vec<String> = t
                .iter()
                .filter_map(|e| e.name().ok().map(str::to_string))
                .collect();
            v.sort();
            v
        };
        if clean(dir).is_empty() {
            return names(&self.tree);
        }
        match self.entry(dir) {
            Some(e) if e.kind() == Some(ObjectType::Tree) => self
                .repo
                .find_tree(e.id())
                .map(|t| names(&t))
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// The files under a directory on disk: a work tree for `--worktree` reviews, or a
/// virtualenv's `site-packages`. Paths that would leave the directory (`..`, absolute)
/// are treated as absent.
#[derive(Debug, Clone)]
pub struct DirSource {
    root: PathBuf,
}

impl DirSource {
    /// A view of the directory `root`.
    pub fn new(root: impl Into<PathBuf>) -> DirSource {
        DirSource { root: root.into() }
    }

    /// The directory this view reads.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn full(&self, path: &str) -> Option<PathBuf> {
        let rel = Path::new(clean(path));
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return None;
        }
        Some(self.root.join(rel))
    }
}

impl FileSource for DirSource {
    fn read(&self, path: &str) -> Option<String> {
        let bytes = std::fs::read(self.full(path)?).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn is_file(&self, path: &str) -> bool {
        self.full(path).is_some_and(|p| p.is_file())
    }

    fn is_dir(&self, path: &str) -> bool {
        self.full(path).is_some_and(|p| p.is_dir())
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let Some(p) = self.full(dir) else {
            return Vec::new();
        };
        let Ok(rd) = std::fs::read_dir(p) else {
            return Vec::new();
        };
        let mut v: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .collect();
        v.sort();
        v
    }
}

/// The repository as the change leaves it: the caller's source with the changed files'
/// new contents laid over it (so callers may pass either the base or the result tree),
/// and every directory query memoized, because resolvers ask the same questions for
/// every import of every file.
pub(crate) struct View<'a> {
    base: &'a dyn FileSource,
    overlay: HashMap<String, Option<&'a str>>,
    /// Entries that added files create, per directory (names, not paths).
    added: HashMap<String, BTreeSet<String>>,
    files: RefCell<HashMap<String, bool>>,
    dirs: RefCell<HashMap<String, bool>>,
    lists: RefCell<HashMap<String, Rc<[String]>>>,
}

impl<'a> View<'a> {
    /// `base` with `changes` (path, new contents or `None` for deleted) laid over it.
    pub(crate) fn new(
        base: &'a dyn FileSource,
        changes: impl IntoIterator<Item = (&'a str, Option<&'a str>)>,
    ) -> View<'a> {
        let mut overlay = HashMap::new();
        let mut added: HashMap<String, BTreeSet<String>> = HashMap::new();
        for (path, after) in changes {
            let path = clean(path);
            if after.is_some() {
                let mut child = path;
                while let Some((dir, name)) = child.rsplit_once('/') {
                    added
                        .entry(dir.to_string())
                        .or_default()
                        .insert(name.to_string());
                    child = dir;
                }
                added
                    .entry(String::new())
                    .or_default()
                    .insert(child.to_string());
            }
            overlay.insert(path.to_string(), after);
        }
        View {
            base,
            overlay,
            added,
            files: RefCell::default(),
            dirs: RefCell::default(),
            lists: RefCell::default(),
        }
    }

    /// A file's contents.
    pub(crate) fn read(&self, path: &str) -> Option<String> {
        let path = clean(path);
        match self.overlay.get(path) {
            Some(after) => after.map(str::to_string),
            None => self.base.read(path),
        }
    }

    /// Whether `path` is a file.
    pub(crate) fn is_file(&self, path: &str) -> bool {
        let path = clean(path);
        if let Some(after) = self.overlay.get(path) {
            return after.is_some();
        }
        if let Some(&known) = self.files.borrow().get(path) {
            return known;
        }
        let answer = self.base.is_file(path);
        self.files.borrow_mut().insert(path.to_string(), answer);
        answer
    }

    /// Whether `path` is a directory.
    pub(crate) fn is_dir(&self, path: &str) -> bool {
        let path = clean(path);
        if path.is_empty() || self.added.contains_key(path) {
            return true;
        }
        if let Some(&known) = self.dirs.borrow().get(path) {
            return known;
        }
        let answer = self.base.is_dir(path);
        self.dirs.borrow_mut().insert(path.to_string(), answer);
        answer
    }

    /// The entry names of a directory.
    pub(crate) fn list(&self, dir: &str) -> Rc<[String]> {
        let dir = clean(dir);
        if let Some(known) = self.lists.borrow().get(dir) {
            return known.clone();
        }
        let mut names: BTreeSet<String> = self.base.list(dir).into_iter().collect();
        if let Some(extra) = self.added.get(dir) {
            names.extend(extra.iter().cloned());
        }
        names.retain(|n| {
            let p = if dir.is_empty() {
                n.clone()
            } else {
                format!("{dir}/{n}")
            };
            !matches!(self.overlay.get(&p), Some(None)) || self.added.contains_key(&p)
        });
        let names: Rc<[String]> = names.into_iter().collect();
        self.lists
            .borrow_mut()
            .insert(dir.to_string(), names.clone());
        names
    }
}

/// `dir/name`, or `name` at the root.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

/// The directory part of a path (`""` for a top-level file).
pub(crate) fn parent(path: &str) -> &str {
    path.rsplit_once('/').map(|(d, _)| d).unwrap_or("")
}

/// `dir/rel` with `.` and `..` resolved; `None` if it climbs above the root.
pub(crate) fn normalize(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|s| !s.is_empty()).collect()
    };
    for seg in rel.split(['/', '\\']) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_helpers() {
        assert_eq!(clean("./a/b/"), "a/b");
        assert_eq!(clean("/"), "");
        assert_eq!(normalize("src/a", "../b.rs").as_deref(), Some("src/b.rs"));
        assert_eq!(normalize("", "../x"), None);
        assert_eq!(parent("a/b/c.rs"), "a/b");
        assert_eq!(parent("c.rs"), "");
    }

    #[test]
    fn dir_source_refuses_to_escape() {
        let d = DirSource::new("/");
        assert!(d.read("../etc/passwd").is_none());
    }
}
