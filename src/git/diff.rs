//! Diffs between trees with line numbers on both sides, rendered for models and humans.

use git2::{Delta, DiffOptions, Repository, Tree};
use serde::{Deserialize, Serialize};

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HunkLine {
    /// `+`, `-` or ` `.
    pub origin: char,
    /// Line number in the old file.
    pub old_line: Option<u32>,
    /// Line number in the new file.
    pub new_line: Option<u32>,
    /// The text without its newline.
    pub text: String,
}

/// One hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// First old line.
    pub old_start: u32,
    /// Old line count.
    pub old_lines: u32,
    /// First new line.
    pub new_start: u32,
    /// New line count.
    pub new_lines: u32,
    /// The lines.
    pub lines: Vec<HunkLine>,
}

/// What a model is shown instead of a private file's content: a [`FileDiff`] marked
/// `withheld` renders as this line.
pub const WITHHELD: &str = "[withheld: private file]";

/// The change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDiff {
    /// Path in the new tree (old path for deletions).
    pub path: String,
    /// `added`, `modified`, `deleted`, `renamed`, ...
    pub status: String,
    /// Binary files have no hunks.
    pub binary: bool,
    /// A private file (see [`crate::privacy`]): no hunks, never shown.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub withheld: bool,
    /// A submodule (a gitlink): its one hunk is the commit it points at (`Subproject commit
    /// …`), never the code that commit holds.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub submodule: bool,
    /// Hunks.
    pub hunks: Vec<Hunk>,
}

impl FileDiff {
    /// Lines added in the new file.
    pub fn added_lines(&self) -> Vec<u32> {
        self.hunks
            .iter()
            .flat_map(|h| h.lines.iter())
            .filter(|l| l.origin == '+')
            .filter_map(|l| l.new_line)
            .collect()
    }
}

/// How much one file changed: what a stage did, in a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStat {
    /// The path.
    pub path: String,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
}

impl FileStat {
    /// The counts of every file of a diff.
    pub fn of(files: &[FileDiff]) -> Vec<FileStat> {
        files
            .iter()
            .map(|f| {
                let count = |o: char| {
                    f.hunks
                        .iter()
                        .flat_map(|h| &h.lines)
                        .filter(|l| l.origin == o)
                        .count() as u32
                };
                FileStat {
                    path: f.path.clone(),
                    added: count('+'),
                    removed: count('-'),
                }
            })
            .collect()
    }

    /// `a.py (+3 -1), b.py (+10 -0)`, or `no change`.
    pub fn describe(stats: &[FileStat]) -> String {
        if stats.is_empty() {
            return "no change".into();
        }
        stats
            .iter()
            .map(|s| format!("{} (+{} -{})", s.path, s.added, s.removed))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The diff from `old` (none = empty) to `new`, file by file.
pub fn diff_trees(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: &Tree<'_>,
) -> Result<Vec<FileDiff>, git2::Error> {
    let mut opts = DiffOptions::new();
    opts.context_lines(3);
    let diff = repo.diff_tree_to_tree(old, Some(new), Some(&mut opts))?;
    let mut files = Vec::new();
    for idx in 0..diff.deltas().len() {
        let Some(delta) = diff.get_delta(idx) else {
            continue;
        };
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let status = match delta.status() {
            Delta::Added => "added",
            Delta::Deleted => "deleted",
            Delta::Modified => "modified",
            Delta::Renamed => "renamed",
            Delta::Copied => "copied",
            Delta::Typechange => "typechange",
            _ => "changed",
        }
        .to_string();
        let gitlink = |f: git2::DiffFile<'_>| f.mode() == git2::FileMode::Commit;
        let mut fd = FileDiff {
            path,
            status,
            binary: false,
            withheld: false,
            submodule: gitlink(delta.new_file()) || gitlink(delta.old_file()),
            hunks: Vec::new(),
        };
        match git2::Patch::from_diff(&diff, idx)? {
            None => fd.binary = true,
            Some(patch) => {
                if delta.flags().is_binary() {
                    fd.binary = true;
                }
                for h in 0..patch.num_hunks() {
                    let (hunk, n) = patch.hunk(h)?;
                    let mut lines = Vec::with_capacity(n);
                    for l in 0..n {
                        let line = patch.line_in_hunk(h, l)?;
                        let origin = line.origin();
                        if !matches!(origin, '+' | '-' | ' ') {
                            continue;
                        }
                        lines.push(HunkLine {
                            origin,
                            old_line: line.old_lineno(),
                            new_line: line.new_lineno(),
                            text: String::from_utf8_lossy(line.content())
                                .trim_end_matches(['\n', '\r'])
                                .to_string(),
                        });
                    }
                    fd.hunks.push(Hunk {
                        old_start: hunk.old_start(),
                        old_lines: hunk.old_lines(),
                        new_start: hunk.new_start(),
                        new_lines: hunk.new_lines(),
                        lines,
                    });
                }
            }
        }
        files.push(fd);
    }
    Ok(files)
}

/// Renders a diff with the new-side line number in front of every line, and an optional
/// label per hunk (the enclosing symbol).
pub fn render_diff(
    files: &[FileDiff],
    label: &dyn Fn(&FileDiff, &Hunk) -> Option<String>,
) -> String {
    let mut s = String::new();
    for f in files {
        s.push_str(&format!(
            "=== {} ({})\n",
            super::quote::quote(&f.path),
            f.status
        ));
        if f.withheld {
            s.push_str(WITHHELD);
            s.push('\n');
            continue;
        }
        if f.binary {
            s.push_str("(binary file, not shown)\n");
            continue;
        }
        for h in &f.hunks {
            s.push_str(&format!(
                "@@ -{},{} +{},{} @@",
                h.old_start, h.old_lines, h.new_start, h.new_lines
            ));
            if let Some(l) = label(f, h) {
                s.push_str(&format!("  in {l}"));
            }
            s.push('\n');
            for l in &h.lines {
                let num = l.new_line.map(|n| n.to_string()).unwrap_or_default();
                s.push_str(&format!("{num:>5} {} {}\n", l.origin, l.text));
            }
        }
    }
    s
}
