//! Evidence for one change: imports it adds that do not exist, and syntax errors it
//! introduces, each with exact lines and the enclosing symbol.
//!
//! Cost model: every changed file's new version is parsed once; its old version is
//! parsed only if the new one has a syntax error or an import that does not resolve (an
//! import that resolves cannot be a finding, added or not). Manifests are read once per
//! directory, Rust modules once per run.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::PathBuf;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use tree_sitter::Tree;

use super::import::Outcome;
use super::imports::{self, import_keys, only_new, ImportKey};
use super::lang::{self, Lang, Parsed};
use super::python::{sys_path_roots, PyResolver};
use super::rust::RustResolver;
use super::source::{clean, FileSource, View};
use super::symbols::{innermost_in, outline_tree, Symbol};
use super::syntax::new_issues_trees;

/// One fact about a change that the arbiter must weigh.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// `"unresolved_import"`, `"optional_import"` or `"syntax_error"`.
    pub kind: String,
    /// `"hallucination"` for imports, `"logic"` for syntax errors.
    pub category: String,
    /// `"critical"`, or `"warning"` for an optional import that does not resolve.
    pub severity: String,
    /// The changed file.
    pub path: String,
    /// First line, 1-based, in the file's new version.
    pub line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// The innermost definition containing the lines, if any.
    pub symbol: Option<Symbol>,
    /// The import statement, one line, for import findings.
    pub import: Option<String>,
    /// Why, in words: what was looked for and where.
    pub reason: String,
}

/// One file of a change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    /// Path relative to the repository root, `/`-separated.
    pub path: String,
    /// Contents before the change; `None` for an added file.
    pub before: Option<String>,
    /// Contents after the change; `None` for a deleted file.
    pub after: Option<String>,
}

/// Knobs for [`evidence_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EvidenceOptions {
    /// A directory on disk (normally the work tree) whose virtualenvs (`.venv/`,
    /// `venv/`, `env/`) count as installed Python packages; `None` to ignore venvs.
    pub venv_root: Option<PathBuf>,
}

/// [`evidence_with`] with default options.
pub fn evidence(source: &dyn FileSource, changes: &[ChangedFile]) -> Vec<Finding> {
    evidence_with(source, changes, &EvidenceOptions::default())
}

/// For each changed `.py`/`.pyi`/`.rs` file: imports the change adds that do not resolve
/// (critical `unresolved_import`, or `optional_import` warnings for imports guarded by
/// `except ImportError`), and syntax errors the change introduces (critical
/// `syntax_error`). `source` is the repository at either revision: the changed files' new
/// contents are laid over it.
pub fn evidence_with(
    source: &dyn FileSource,
    changes: &[ChangedFile],
    options: &EvidenceOptions,
) -> Vec<Finding> {
    let view = View::new(
        source,
        changes
            .iter()
            .map(|c| (c.path.as_str(), c.after.as_deref())),
    );
    let mut py = PyResolver::new(&view, options.venv_root.clone());
    let mut rs = RustResolver::new(&view);
    let parsed: Vec<Option<(Lang, Rc<Parsed>)>> = changes
        .iter()
        .map(|c| {
            let lang = Lang::from_path(&c.path)?;
            let after = c.after.as_deref()?;
            if is_vendored(clean(&c.path)) {
                return None;
            }
            let tree = lang::parse(lang, after)?;
            Some((
                lang,
                Rc::new(Parsed {
                    text: Cow::Borrowed(after),
                    tree,
                }),
            ))
        })
        .collect();
    // Module lookups in the Rust resolver reuse the new trees instead of re-parsing.
    for (change, p) in changes.iter().zip(&parsed) {
        if let Some((Lang::Rust, p)) = p {
            rs.preload(clean(&change.path), p.clone());
        }
    }
    let mut findings = Vec::new();
    for (change, p) in changes.iter().zip(&parsed) {
        if let Some((lang, p)) = p {
            let mut file = FileCheck {
                lang: *lang,
                path: clean(&change.path),
                after: p,
                before_src: change.before.as_deref(),
                before: None,
                outline: None,
            };
            let start = findings.len();
            file.syntax(&mut findings);
            file.imports(&mut py, &mut rs, &mut findings);
            findings[start..].sort_by_key(|f| (f.line, f.end_line));
        }
    }
    tracing::debug!(
        files = changes.len(),
        findings = findings.len(),
        "code evidence"
    );
    findings
}

/// Virtualenvs and vendored dependency trees are not the project's code.
fn is_vendored(path: &str) -> bool {
    path.split('/').any(|seg| {
        matches!(
            seg,
            "site-packages" | "node_modules" | ".venv" | "__pypackages__" | ".tox" | ".nox"
        )
    })
}

/// The lazily computed facts about one changed file.
struct FileCheck<'c, 'p> {
    lang: Lang,
    path: &'c str,
    after: &'p Parsed<'p>,
    before_src: Option<&'c str>,
    before: Option<Option<Tree>>,
    outline: Option<Vec<Symbol>>,
}

impl FileCheck<'_, '_> {
    fn before_tree(&mut self) -> Option<&Tree> {
        let (lang, src) = (self.lang, self.before_src);
        self.before
            .get_or_insert_with(|| src.and_then(|s| lang::parse(lang, s)))
            .as_ref()
    }

    fn symbol(&mut self, line: u32, end_line: u32) -> Option<Symbol> {
        let (lang, after) = (self.lang, self.after);
        let outline = self
            .outline
            .get_or_insert_with(|| outline_tree(lang, &after.tree, &after.text));
        innermost_in(outline, line, end_line)
    }

    fn syntax(&mut self, out: &mut Vec<Finding>) {
        if !self.after.tree.root_node().has_error() {
            return;
        }
        let before_src = self.before_src;
        let (lang, after) = (self.lang, self.after);
        let before = self.before_tree().zip(before_src);
        for (issue, symbol) in new_issues_trees(lang, before, &after.tree, &after.text) {
            let what = if issue.kind == "MISSING" {
                format!(
                    "the parser expected `{}` here and it is missing",
                    issue.text
                )
            } else {
                format!("the parser cannot make sense of `{}`", issue.text)
            };
            out.push(Finding {
                kind: "syntax_error".to_string(),
                category: "logic".to_string(),
                severity: "critical".to_string(),
                path: self.path.to_string(),
                line: issue.start_line,
                end_line: issue.end_line,
                symbol,
                import: None,
                reason: format!(
                    "syntax error introduced by this change at line {}, column {}: {what}",
                    issue.start_line, issue.start_col
                ),
            });
        }
    }

    fn imports(&mut self, py: &mut PyResolver, rs: &mut RustResolver, out: &mut Vec<Finding>) {
        let after = self.after;
        let sites = imports::sites(self.lang, &after.tree, &after.text);
        if self.lang == Lang::Python {
            py.begin_file(sys_path_roots(&after.tree, &after.text, self.path));
        }
        let mut old: Option<HashSet<ImportKey>> = None;
        // Leaves of one `use` group failing on the same segment are one finding.
        let mut reported: HashSet<(String, String)> = HashSet::new();
        for site in &sites {
            let outcome = match self.lang {
                Lang::Python => py.resolve(self.path, &site.import),
                Lang::Rust => rs.resolve(self.path, site, &after.text),
            };
            let Outcome::Unresolved(mut reason) = outcome else {
                continue;
            };
            // Only now is the old version worth parsing: was this import already there?
            if old.is_none() {
                let (lang, src) = (self.lang, self.before_src);
                let keys = match self.before_tree() {
                    Some(tree) => {
                        let src = src.unwrap_or("");
                        let olds: Vec<_> = imports::sites(lang, tree, src)
                            .into_iter()
                            .map(|s| s.import)
                            .collect();
                        import_keys(&olds)
                    }
                    None => HashSet::new(),
                };
                old = Some(keys);
            }
            let Some(new) = old
                .as_ref()
                .and_then(|keys| only_new(site.import.clone(), keys))
            else {
                continue;
            };
            if self.lang == Lang::Python && new.names != site.import.names {
                // Some names were already imported; judge only the added ones.
                match py.resolve(self.path, &new) {
                    Outcome::Resolved => continue,
                    Outcome::Unresolved(r) => reason = r,
                }
            }
            if !reported.insert((new.text.clone(), reason.clone())) {
                continue;
            }
            let (kind, severity) = if new.optional {
                reason.push_str(
                    "; the import is guarded (`except ImportError`, or a Python-version or \
                     platform check), so the code runs, but only ever takes the other path",
                );
                ("optional_import", "warning")
            } else {
                ("unresolved_import", "critical")
            };
            let symbol = self.symbol(new.line, new.end_line);
            out.push(Finding {
                kind: kind.to_string(),
                category: "hallucination".to_string(),
                severity: severity.to_string(),
                path: self.path.to_string(),
                line: new.line,
                end_line: new.end_line,
                symbol,
                import: Some(new.text.clone()),
                reason,
            });
        }
    }
}
