//! Applying edit blocks to in-memory files: all blocks are checked before any result exists.

use std::collections::BTreeMap;

use super::failure::BlockFailure;
use super::parse::EditBlock;
use super::path::{check_path, shown, PathError};

/// Largest file an edit may produce.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// What a path names in the tree the edits start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A file (a blob, executable or not).
    File,
    /// A directory (a tree).
    Dir,
    /// A symbolic link or a submodule.
    Other,
}

/// Read access to the files the edits start from.
pub trait BaseFiles {
    /// The bytes of a file, or `None` if it does not exist.
    fn read(&self, path: &str) -> Option<Vec<u8>>;
    /// Whether `path` or one of its parent directories is a symbolic link.
    fn through_symlink(&self, path: &str) -> bool;
    /// Why `path` is a private file that no edit may touch, if it is (see
    /// [`crate::privacy::Guard`]); by default no file is.
    fn withheld(&self, _path: &str) -> Option<String> {
        None
    }
    /// What `path` names, or `None` if nothing is there.
    fn kind(&self, path: &str) -> Option<EntryKind>;
}

/// The outcome of applying a set of blocks.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// New full content per changed path (normalized), in path order.
    pub files: BTreeMap<String, String>,
    /// Blocks that were already applied (skipped, reported).
    pub already_applied: Vec<BlockFailure>,
    /// Blocks the caller's policy left out (a file the stage may only read), reported to the
    /// model with the reason but not applied: the rest of the answer still is.
    pub set_aside: Vec<BlockFailure>,
}

/// Applies `blocks` on top of `base`. Nothing is produced unless every block applies.
///
/// `allowed` decides whether a normalized path is inside the task's scope.
pub fn apply_blocks(
    base: &dyn BaseFiles,
    blocks: &[EditBlock],
    allowed: &dyn Fn(&str) -> bool,
) -> Result<Applied, Vec<BlockFailure>> {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut applied = Applied::default();
    for block in blocks {
        let fail = |reason: String| BlockFailure::of(block, reason);
        let path = match check_path(&block.path) {
            Ok(p) => p,
            Err(e) => {
                failures.push(fail(e.why()));
                continue;
            }
        };
        if !allowed(&path) {
            failures.push(fail(
                "outside the task's scope: only files the TaskSpec's [scope] includes may change"
                    .to_string(),
            ));
            continue;
        }
        if base.through_symlink(&path) {
            failures.push(fail(PathError::Symlink(shown(&path)).why()));
            continue;
        }
        // Before its content is read for matching: nothing of it may reach the feedback.
        if let Some(why) = base.withheld(&path) {
            let mut f = fail(format!(
                "a private file ({why}), withheld from models and never edited: leave it out of your answer"
            ));
            f.private = true;
            failures.push(f);
            continue;
        }
        if let Err(why) = storable(base, &files, &path) {
            failures.push(fail(format!("cannot be stored: {why}")));
            continue;
        }
        if block.search.contains('\0') || block.replace.contains('\0') {
            failures.push(fail("binary content cannot be edited".to_string()));
            continue;
        }
        let current: Option<String> = match files.get(&path) {
            Some(text) => Some(text.clone()),
            None => match base.read(&path) {
                Some(bytes) => {
                    if bytes.contains(&0) {
                        failures.push(fail("a binary file, which cannot be edited".to_string()));
                        continue;
                    }
                    match String::from_utf8(bytes) {
                        Ok(s) => Some(s),
                        Err(_) => {
                            failures
                                .push(fail("not UTF-8 text, so it cannot be edited".to_string()));
                            continue;
                        }
                    }
                }
                None => None,
            },
        };
        if block.whole {
            files.insert(path, block.replace.clone());
            continue;
        }
        let result = match (&current, block.search.is_empty()) {
            (None, true) => Ok(block.replace.clone()),
            (None, false) => Err(fail(
                "the file does not exist; to create it, leave SEARCH empty".to_string(),
            )),
            (Some(text), true) if text.trim().is_empty() => Ok(block.replace.clone()),
            (Some(text), true) => {
                if text.contains(block.replace.trim()) && !block.replace.trim().is_empty() {
                    let mut f = fail("the file already contains this content".to_string());
                    f.already_applied = true;
                    Err(f)
                } else {
                    Err(fail(
                        "the file already exists; an empty SEARCH only creates new files — copy the lines to change into SEARCH".to_string(),
                    ))
                }
            }
            (Some(text), false) => replace_once(text, block).map_err(|mut f| {
                f.path = block.path.clone();
                f
            }),
        };
        match result {
            Ok(new_text) => {
                if new_text.len() > MAX_FILE_BYTES {
                    failures.push(fail(format!(
                        "the file would be {} bytes, and files over {} bytes are refused",
                        new_text.len(),
                        MAX_FILE_BYTES
                    )));
                    continue;
                }
                files.insert(path, new_text);
            }
            Err(f) if f.already_applied => applied.already_applied.push(f),
            Err(f) => failures.push(f),
        }
    }
    if failures.is_empty() {
        applied.files = files;
        Ok(applied)
    } else {
        Err(failures)
    }
}

/// Whether git can store a file at `path` next to what the tree and the answer's other
/// files already hold: a directory cannot become a file, nor a file a directory (libgit2
/// refuses both, and a tree must never lose a directory to one block).
fn storable(
    base: &dyn BaseFiles,
    files: &BTreeMap<String, String>,
    path: &str,
) -> Result<(), String> {
    if base.kind(path) == Some(EntryKind::Dir) {
        let path = shown(path);
        return Err(format!(
            "`{path}` is a directory in the repository; write the files inside it (`{path}/<name>`), not the directory itself"
        ));
    }
    for (i, _) in path.match_indices('/') {
        let dir = &path[..i];
        if base.kind(dir) == Some(EntryKind::File) {
            return Err(format!(
                "`{}` is a file in the repository, so it cannot also be a directory",
                shown(dir)
            ));
        }
        if files.contains_key(dir) {
            return Err(format!(
                "another block of this answer writes `{}` as a file, so it cannot also be a directory",
                shown(dir)
            ));
        }
    }
    let inside = format!("{path}/");
    if let Some((other, _)) = files.range(inside.clone()..).next() {
        if other.starts_with(&inside) {
            return Err(format!(
                "another block of this answer writes `{}`, so `{}` must be a directory, not a file",
                shown(other),
                shown(path)
            ));
        }
    }
    Ok(())
}

/// Replaces the one place `block.search` matches: exactly, else ignoring whitespace
/// differences at line ends and in indentation.
fn replace_once(text: &str, block: &EditBlock) -> Result<String, BlockFailure> {
    let fail = |reason: String| BlockFailure::of(block, reason);
    let exact = text.matches(block.search.as_str()).count();
    if exact == 1 {
        return Ok(text.replacen(block.search.as_str(), &block.replace, 1));
    }
    if exact > 1 {
        return Err(fail(format!(
            "SEARCH matches {exact} places; add surrounding lines so it matches exactly one"
        )));
    }
    // Whitespace-tolerant: compare trimmed lines.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let want: Vec<&str> = block.search.lines().map(str::trim).collect();
    let want: Vec<&str> = trim_blank_edges(&want);
    if !want.is_empty() {
        let hits = find_windows(&lines, &want);
        if hits.len() == 1 {
            let start = hits[0];
            let mut out: String = lines[..start].concat();
            out.push_str(&block.replace);
            let tail = lines[start + want.len()..].concat();
            if !block.replace.is_empty() && !block.replace.ends_with('\n') && !tail.is_empty() {
                out.push('\n');
            }
            out.push_str(&tail);
            return Ok(out);
        }
        if hits.len() > 1 {
            return Err(fail(format!(
                "SEARCH matches {} places (ignoring whitespace); add surrounding lines so it matches exactly one",
                hits.len()
            )));
        }
    }
    if !block.replace.trim().is_empty() && text.contains(block.replace.trim()) {
        let mut f = fail("the REPLACE text is already in the file".into());
        f.already_applied = true;
        return Err(f);
    }
    let mut f = fail("SEARCH does not match the current file".into());
    f.nearest = nearest_lines(&lines, &want);
    Err(f)
}

/// `lines` without leading and trailing empty lines.
pub fn trim_blank_edges<S: AsRef<str> + Clone>(lines: &[S]) -> Vec<S> {
    let start = lines
        .iter()
        .position(|l| !l.as_ref().is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.as_ref().is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end].to_vec()
}

/// Every index where `want` (already trimmed lines) occurs in `lines`, comparing each line
/// trimmed: the whitespace-tolerant match shared by edit application and re-anchoring.
pub fn find_windows<S: AsRef<str>, W: AsRef<str>>(lines: &[S], want: &[W]) -> Vec<usize> {
    if want.is_empty() || want.len() > lines.len() {
        return Vec::new();
    }
    (0..=lines.len() - want.len())
        .filter(|&start| {
            want.iter()
                .enumerate()
                .all(|(k, w)| lines[start + k].as_ref().trim() == w.as_ref())
        })
        .collect()
}

/// The window of the file most similar to the SEARCH lines, with line numbers.
fn nearest_lines(lines: &[&str], want: &[&str]) -> Option<String> {
    if want.is_empty() || lines.is_empty() {
        return None;
    }
    let needle = want.join("\n");
    let n = want.len().min(lines.len());
    let mut best = (0.0f32, 0usize);
    for start in 0..=lines.len() - n {
        let window: Vec<&str> = lines[start..start + n].iter().map(|l| l.trim()).collect();
        let ratio =
            similar::TextDiff::from_chars(needle.as_str(), window.join("\n").as_str()).ratio();
        if ratio > best.0 {
            best = (ratio, start);
        }
    }
    if best.0 < 0.3 {
        return None;
    }
    let start = best.1;
    Some(
        lines[start..start + n]
            .iter()
            .enumerate()
            .map(|(k, l)| format!("{:>5} | {}", start + k + 1, l.trim_end_matches('\n')))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Mem(BTreeMap<String, Vec<u8>>);
    impl BaseFiles for Mem {
        fn read(&self, path: &str) -> Option<Vec<u8>> {
            self.0.get(path).cloned()
        }
        fn through_symlink(&self, path: &str) -> bool {
            path.starts_with("link/")
        }
        fn kind(&self, path: &str) -> Option<EntryKind> {
            if self.0.contains_key(path) {
                Some(EntryKind::File)
            } else if self.0.keys().any(|k| k.starts_with(&format!("{path}/"))) {
                Some(EntryKind::Dir)
            } else {
                None
            }
        }
    }

    fn base() -> Mem {
        let mut m = BTreeMap::new();
        m.insert(
            "a.py".to_string(),
            b"def f():\n    return 1\n\ndef g():\n    return 1\n".to_vec(),
        );
        m.insert("bin.dat".to_string(), b"\0\x01".to_vec());
        m.insert("src/lib.py".to_string(), b"x = 1\n".to_vec());
        Mem(m)
    }

    fn block(path: &str, search: &str, replace: &str) -> EditBlock {
        EditBlock::at_line_one(path, search, replace)
    }

    #[test]
    fn exact_and_whitespace_tolerant_matches() {
        let b = base();
        let ok = apply_blocks(
            &b,
            &[block(
                "a.py",
                "def f():\n    return 1\n",
                "def f():\n    return 2\n",
            )],
            &|_| true,
        )
        .unwrap();
        assert!(ok.files["a.py"].starts_with("def f():\n    return 2\n"));
        let ok = apply_blocks(
            &b,
            &[block(
                "a.py",
                "def g():  \n  return 1\n",
                "def g():\n    return 3\n",
            )],
            &|_| true,
        )
        .unwrap();
        assert!(ok.files["a.py"].ends_with("def g():\n    return 3\n"));
    }

    #[test]
    fn ambiguous_missing_and_already_applied() {
        let b = base();
        let e = apply_blocks(&b, &[block("a.py", "    return 1\n", "x\n")], &|_| true).unwrap_err();
        assert!(e[0].reason.contains("2 places"), "{e:?}");
        let e = apply_blocks(
            &b,
            &[block("a.py", "def f():\n    return 7\n", "y\n")],
            &|_| true,
        )
        .unwrap_err();
        assert!(
            e[0].nearest.as_deref().unwrap().contains("def f():"),
            "{e:?}"
        );
        let ok = apply_blocks(
            &b,
            &[block("a.py", "def h():\n", "def g():\n    return 1\n")],
            &|_| true,
        )
        .unwrap();
        assert_eq!(ok.already_applied.len(), 1);
    }

    #[test]
    fn one_failure_means_nothing_applies() {
        let b = base();
        let e = apply_blocks(
            &b,
            &[
                block("new.py", "", "x = 1\n"),
                block("a.py", "nope\n", "x\n"),
            ],
            &|_| true,
        )
        .unwrap_err();
        assert_eq!(e.len(), 1);
    }

    #[test]
    fn refuses_bad_paths_binary_scope_and_symlinks() {
        let b = base();
        for p in [
            "/etc/passwd",
            "../x",
            ".git/config",
            "a/../../x",
            "link/x.py",
        ] {
            let e = apply_blocks(&b, &[block(p, "", "x\n")], &|_| true).unwrap_err();
            assert_eq!(e.len(), 1, "{p}");
        }
        let e = apply_blocks(&b, &[block("bin.dat", "x", "y")], &|_| true).unwrap_err();
        assert!(e[0].reason.contains("binary"));
        let e =
            apply_blocks(&b, &[block("secret.py", "", "x\n")], &|p| p != "secret.py").unwrap_err();
        assert!(e[0].reason.contains("scope"));
        let big = "x".repeat(MAX_FILE_BYTES + 1);
        assert!(apply_blocks(&b, &[block("big.txt", "", &big)], &|_| true).is_err());
    }

    #[test]
    fn a_file_where_a_directory_is_and_the_reverse_are_refused_by_name() {
        let b = base();
        let cases = [
            (
                vec![block("src", "", "x\n")],
                "`src` is a directory in the repository",
            ),
            (
                vec![block("src/", "", "x\n")],
                "`src` is a directory in the repository",
            ),
            (
                vec![block("a.py/helper.py", "", "x\n")],
                "`a.py` is a file in the repository, so it cannot also be a directory",
            ),
            (
                vec![block("new", "", "x\n"), block("new/x.py", "", "y\n")],
                "another block of this answer writes `new` as a file",
            ),
            (
                vec![block("new/x.py", "", "y\n"), block("new", "", "x\n")],
                "another block of this answer writes `new/x.py`, so `new` must be a directory",
            ),
        ];
        for (blocks, want) in cases {
            let e = apply_blocks(&b, &blocks, &|_| true).unwrap_err();
            assert_eq!(e.len(), 1, "{blocks:?}: {e:?}");
            assert!(e[0].reason.contains("cannot be stored"), "{e:?}");
            assert!(e[0].reason.contains(want), "{want}: {e:?}");
        }
        // Siblings that only share a prefix of their names are fine.
        let ok = apply_blocks(
            &b,
            &[
                block("new", "", "x\n"),
                block("new.py", "", "y\n"),
                block("src2/a", "", "z\n"),
            ],
            &|_| true,
        )
        .unwrap();
        assert_eq!(ok.files.len(), 3);
    }

    #[test]
    fn a_refusal_of_a_long_path_says_why_first_and_keeps_both_ends_of_the_path() {
        use crate::edit::{render_failures, summarize_failures};
        let long = format!("src/{}/evil.py", "d/".repeat(1_500));
        let longest = format!("src/{}/evil.py", "d/".repeat(2_500));
        assert!(longest.len() > 5_000);
        let cases = [
            (block(&long, "", "x\n"), "outside the task's scope"),
            (block(&format!("/{long}"), "", "x\n"), "absolute"),
            (
                block(&format!("../{long}"), "", "x\n"),
                "escapes the repository",
            ),
            (block(&longest, "", "x\n"), "longer than 4096 bytes"),
        ];
        for (b, why) in cases {
            let e = apply_blocks(&base(), &[b], &|p| !p.starts_with("src/d")).unwrap_err();
            let s = summarize_failures(&e, 0);
            assert!(
                s.starts_with(&format!(
                    "1 of 1 edit block(s) refused, so none was applied: {why}"
                )),
                "{s}"
            );
            assert!(
                s.contains("d//evil.py`, line 1)"),
                "the path's end is kept: {s}"
            );
            assert!(
                s.matches("bytes)…").count() <= 2,
                "elided once per path: {s}"
            );
            assert!(s.len() < 500, "{} bytes: {s}", s.len());
            let feedback = render_failures(&e, 0);
            assert!(
                feedback.contains(why) && feedback.len() < 1_000,
                "{feedback}"
            );
        }
    }
}
