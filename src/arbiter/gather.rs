//! What the arbiter is shown about a change: the numbered diff with enclosing symbols, and
//! the deterministic findings (imports that do not resolve, new syntax errors).

use std::path::PathBuf;

use git2::{Repository, Tree};

use crate::code::{self, ChangedFile, EvidenceOptions, Finding, GitTreeSource};
use crate::git::{self, FileDiff, TreeFiles};
use crate::privacy::Privacy;

/// The material of one review.
pub struct Gathered {
    /// Diff rendered with new-side line numbers and `in <symbol>` per hunk.
    pub diff_text: String,
    /// The structured diff.
    pub files: Vec<FileDiff>,
    /// Deterministic findings.
    pub findings: Vec<Finding>,
}

/// Diffs `old` → `new` and runs the code evidence on the changed files.
///
/// `venv_root` lets installed Python packages of a work tree count as resolved imports.
/// With `privacy` (the diff and the findings go to a model), private files are listed as
/// withheld, without hunks or findings.
pub fn gather(
    repo: &Repository,
    old: Option<&Tree<'_>>,
    new: &Tree<'_>,
    venv_root: Option<PathBuf>,
    privacy: Option<&Privacy>,
) -> Result<Gathered, git2::Error> {
    let mut files = git::diff_trees(repo, old, new)?;
    if let Some(privacy) = privacy {
        privacy.mark_diff(repo, old, new, &mut files);
    }
    let old_files = old.map(|t| TreeFiles::new(repo, t.clone()));
    let new_files = TreeFiles::new(repo, new.clone());
    let diff_text = git::render_diff(&files, &|f, h| {
        let lang = code::Lang::from_path(&f.path)?;
        let src = new_files.text(&f.path)?;
        let start = h.new_start.max(1);
        let end = (h.new_start + h.new_lines.max(1))
            .saturating_sub(1)
            .max(start);
        code::innermost(lang, &src, start, end).map(|s| {
            format!(
                "{} {} (lines {}-{})",
                s.kind, s.name, s.start_line, s.end_line
            )
        })
    });
    let changes: Vec<ChangedFile> = files
        .iter()
        .filter(|f| !f.binary && !f.withheld)
        .map(|f| ChangedFile {
            path: f.path.clone(),
            before: old_files.as_ref().and_then(|o| o.text(&f.path)),
            after: new_files.text(&f.path),
        })
        .collect();
    let source = GitTreeSource::new(repo, new.clone());
    let findings = code::evidence_with(&source, &changes, &EvidenceOptions { venv_root });
    Ok(Gathered {
        diff_text,
        files,
        findings,
    })
}
