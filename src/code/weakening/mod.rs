//! Tests that stay written but stop testing: how a change keeps the base's tests from
//! running, from failing, or from reaching the code, while every assertion is still there.
//!
//! [`weakened`](super::weakened) finds the tests and assertions a change deletes or
//! rewrites. Each rule here answers a failure that passes it unseen, in any repository:
//!
//! - `skips.rs`: a skip, an expected failure or a compile-time condition put on a test the
//!   base had (`@pytest.mark.skip`, `@unittest.skipIf`, `pytest.xfail()`, `raise
//!   SkipTest`, `#[ignore]`, `#[should_panic]`, `#![cfg(…)]`);
//! - `exits.rs`: an early `return` or a constant condition that leaves assertions of a
//!   base test unreachable;
//! - `stubs.rs`: the function an assertion calls replaced inside the tests (a `def` that
//!   shadows the import, `module.f = …`, `monkeypatch.setattr`, `mock.patch`, a Rust `fn`
//!   that shadows the code under test);
//! - `params.rs`: `@pytest.mark.parametrize` cases removed, rewritten or marked to skip;
//! - `runner.rs`: the test runner's configuration narrowed (pytest's `addopts`,
//!   `testpaths`, … in `pytest.ini`, `setup.cfg`, `tox.ini`, `pyproject.toml`; hooks and
//!   `collect_ignore` in `conftest.py`; `test = false`, `harness = false` in
//!   `Cargo.toml`).
//!
//! Every rule compares the base and the new version by their syntax trees (or parsed
//! configuration), never by text: what the base already had (a skip, a stub, a `return`)
//! is no finding, and a change of layout, quoting or comments is none either. A test is
//! matched to the base's by its qualified name (`Class.test_x`, `tests::adds`), so a test
//! moved to another file keeps its history. The findings all have the kind
//! [`WEAKENED_TEST`](super::WEAKENED_TEST), so the verdict's floor and the building stages'
//! feedback count them as they count a deleted assertion.

mod deleted;
mod exits;
mod params;
mod runner;
mod skips;
mod stubs;

use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use super::assertions::{test_nodes, test_path};
use super::lang::{self, Lang};
use super::{ChangedFile, Finding};
pub(crate) use deleted::weakened_finding;
pub use deleted::{weakened, Weakened};

/// Every way `changes` weaken the tests their base had, as findings: the deleted and
/// rewritten tests and assertions of [`weakened`], then the rules of this module, each
/// file's in line order.
pub fn weakened_tests(changes: &[ChangedFile]) -> Vec<Finding> {
    let mut out: Vec<Finding> = weakened(changes).iter().map(|w| w.finding()).collect();
    let files: Vec<File<'_>> = changes.iter().filter_map(File::parse).collect();
    let pairs = pairs(&files);
    let mut found = Vec::new();
    skips::check(&pairs, &mut found);
    exits::check(&pairs, &mut found);
    params::check(&pairs, &mut found);
    stubs::check(&files, &mut found);
    runner::check(changes, &mut found);
    found.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
    found.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.reason == b.reason);
    out.extend(found);
    out
}

/// Whether [`weakened_tests`] reads a changed file: a Python or Rust source, or a test
/// runner's configuration (the caller may leave every other file out).
pub fn weakening_reads(path: &str) -> bool {
    Lang::from_path(path).is_some() || runner::is_config(path)
}

/// One side of a changed source file, parsed.
pub(super) struct Side<'c> {
    /// The text.
    pub(super) text: &'c str,
    /// Its syntax tree.
    pub(super) tree: Tree,
}

/// A changed Python or Rust file whose tests the rules read, with both sides parsed.
pub(super) struct File<'c> {
    /// Its path in the repository.
    pub(super) path: &'c str,
    /// Its language.
    pub(super) lang: Lang,
    /// The base's version; `None` for an added file.
    pub(super) before: Option<Side<'c>>,
    /// The new version; `None` for a deleted file.
    pub(super) after: Option<Side<'c>>,
}

impl<'c> File<'c> {
    /// The change parsed, if it is a file that holds tests: a Python test file (or a
    /// `conftest.py`), any Rust file (unit tests live beside the code).
    fn parse(change: &'c ChangedFile) -> Option<File<'c>> {
        let lang = Lang::from_path(&change.path)?;
        if lang == Lang::Python && !test_path(&change.path) && !runner::is_conftest(&change.path) {
            return None;
        }
        let side = |text: &'c Option<String>| {
            let text = text.as_deref()?;
            Some(Side {
                text,
                tree: lang::parse(lang, text)?,
            })
        };
        Some(File {
            path: &change.path,
            lang,
            before: side(&change.before),
            after: side(&change.after),
        })
    }
}

/// A test function of one side of a changed file.
#[derive(Clone, Copy)]
pub(super) struct Test<'t> {
    /// The file it is in.
    pub(super) path: &'t str,
    /// The file's language.
    pub(super) lang: Lang,
    /// The file's text.
    pub(super) source: &'t str,
    /// The `function_definition` or `function_item`.
    pub(super) node: Node<'t>,
}

impl Test<'_> {
    /// `Class.test_x` (Python) or `tests::adds` (Rust): the enclosing classes or modules
    /// and the name.
    pub(super) fn name(&self) -> String {
        let (scope, sep) = match self.lang {
            Lang::Python => ("class_definition", "."),
            Lang::Rust => ("mod_item", "::"),
        };
        let mut parts = Vec::new();
        let mut node = Some(self.node);
        while let Some(n) = node {
            if n.id() == self.node.id() || n.kind() == scope {
                if let Some(name) = n.child_by_field_name("name") {
                    parts.push(lang::text(name, self.source));
                }
            }
            node = n.parent();
        }
        parts.reverse();
        parts.join(sep)
    }

    /// `path:line` of the test's definition.
    pub(super) fn at(&self) -> String {
        format!("{}:{}", self.path, lang::start_line(self.node))
    }
}

/// A test of the new side with the base's test of the same qualified name.
pub(super) struct Pair<'t> {
    /// The test as the change leaves it.
    pub(super) new: Test<'t>,
    /// The test as the base had it.
    pub(super) old: Test<'t>,
}

/// The tests of one side of every file.
fn tests<'t>(files: &'t [File<'_>], after: bool) -> Vec<Test<'t>> {
    let mut out = Vec::new();
    for f in files {
        let side = if after { &f.after } else { &f.before };
        if let Some(s) = side {
            for node in test_nodes(f.lang, s.tree.root_node(), s.text) {
                out.push(Test {
                    path: f.path,
                    lang: f.lang,
                    source: s.text,
                    node,
                });
            }
        }
    }
    out
}

/// Every new test that the base had, with the base's version: from the same file when
/// the name is in several, and the same occurrence of it when a file has several tests of
/// one name (Rust's `#[cfg(unix)] fn t` and `#[cfg(not(unix))] fn t`), in the same file
/// or, for a file moved, in the base's.
fn pairs<'t>(files: &'t [File<'_>]) -> Vec<Pair<'t>> {
    let named = |after: bool| -> Vec<(Test<'t>, String, usize)> {
        let mut seen: HashMap<(&str, String), usize> = HashMap::new();
        tests(files, after)
            .into_iter()
            .map(|t| {
                let name = t.name();
                let n = seen.entry((t.path, name.clone())).or_default();
                *n += 1;
                (t, name, *n)
            })
            .collect()
    };
    let old = named(false);
    let mut out = Vec::new();
    for (new, name, nth) in named(true) {
        let mut candidates = old
            .iter()
            .filter(|(t, n, _)| *n == name && t.lang == new.lang);
        let first = candidates.clone().next();
        let same_file = candidates.clone().find(|(t, _, _)| t.path == new.path);
        let same_nth = candidates.clone().find(|(_, _, k)| *k == nth);
        let same_place = candidates.find(|(t, _, k)| t.path == new.path && *k == nth);
        if let Some((old, _, _)) = same_place.or(same_file).or(same_nth).or(first) {
            out.push(Pair { new, old: *old });
        }
    }
    out
}

/// The statements of a Python block or a Rust block, comments left out.
pub(super) fn statements(block: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = block.walk();
    block
        .named_children(&mut cursor)
        .filter(|n| !n.kind().ends_with("comment"))
        .collect()
}

/// The nodes below `node` (itself included) for which `pick` holds, not looking inside
/// nested functions, classes and lambdas (their code runs elsewhere, if at all).
pub(super) fn find<'t>(node: Node<'t>, pick: &mut dyn FnMut(Node<'t>) -> bool) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let root = node.id();
    lang::walk(node, &mut |n| {
        let nested = n.id() != root
            && matches!(
                n.kind(),
                "function_definition" | "class_definition" | "lambda" | "function_item"
            );
        if nested {
            return false;
        }
        if pick(n) {
            out.push(n);
            return false;
        }
        true
    });
    out
}

/// `` `text` `` on one line, cut to a readable length.
pub(super) fn quoted(text: &str) -> String {
    const MAX: usize = 100;
    let t = lang::squash(text);
    if t.chars().count() <= MAX {
        return format!("`{t}`");
    }
    let cut: String = t.chars().take(MAX).collect();
    format!("`{cut}…`")
}

/// "`a`", "`a` and `b`", "`a`, `b` and 3 more": names for a sentence.
pub(super) fn listed(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let quoted: Vec<String> = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
    match names.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n if n <= SHOWN => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
        n => format!("{} and {} more", quoted.join(", "), n - SHOWN),
    }
}

#[cfg(test)]
pub(super) mod testing {
    //! Shared by the rules' tests: a change of one file, and the findings of a change.

    use super::*;

    /// A change of `path` from `before` to `after`.
    pub(crate) fn change(path: &str, before: Option<&str>, after: Option<&str>) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            before: before.map(str::to_string),
            after: after.map(str::to_string),
        }
    }

    /// `(path, line, reason)` of every finding of `changes`.
    pub(crate) fn found(changes: &[ChangedFile]) -> Vec<(String, u32, String)> {
        weakened_tests(changes)
            .into_iter()
            .map(|f| {
                assert_eq!(f.kind, super::super::WEAKENED_TEST);
                (f.path, f.line, f.reason)
            })
            .collect()
    }

    /// The one finding of `changes` (panics with all of them otherwise).
    pub(crate) fn one(changes: &[ChangedFile]) -> (String, u32, String) {
        let mut all = found(changes);
        assert_eq!(all.len(), 1, "{all:#?}");
        all.remove(0)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;

    #[test]
    fn tests_are_paired_by_qualified_name_across_files() {
        let base = "class T:\n    def test_a(self):\n        assert f() == 1\n";
        let moved = "class T:\n    def test_a(self):\n        assert f() == 1\n";
        let changes = [
            change("tests/test_a.py", Some(base), None),
            change("tests/test_b.py", None, Some(moved)),
        ];
        let files: Vec<File<'_>> = changes.iter().filter_map(File::parse).collect();
        let p = pairs(&files);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].new.name(), "T.test_a");
        assert_eq!(p[0].old.at(), "tests/test_a.py:2");
        assert!(found(&changes).is_empty());
    }

    #[test]
    fn names_are_listed_for_a_sentence() {
        let n = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(listed(&n(&["a"])), "`a`");
        assert_eq!(listed(&n(&["a", "b"])), "`a` and `b`");
        assert_eq!(
            listed(&n(&["a", "b", "c", "d"])),
            "`a`, `b`, `c` and 1 more"
        );
    }
}
