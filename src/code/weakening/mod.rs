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
#[cfg(test)]
mod rule_tests;
mod runner;
mod skips;
mod stubs;
mod tree;

use super::assertions::test_path;
use super::lang::{self, Lang};
use super::{ChangedFile, Finding};
pub(crate) use deleted::weakened_finding;
pub use deleted::{weakened, Weakened};
use tree::{pairs, File, Side};

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
    use super::tree::listed;
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
