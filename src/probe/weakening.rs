//! Whether a change's edits to the tests weaken them, decided by running them.
//!
//! The pattern rules of [`crate::code::weakened_tests`] read a deleted assertion, a new skip
//! or a rewritten call as weakening; they also read an equivalent rewrite that way (seen: an
//! attempt that wrote `f(*[30, 4])` as `f(30, 4)` in three assertions was refused three
//! times). Here their findings are only signals. A test suite is weaker when it lets
//! through code the original suite rejected, so the changed tests are run against such code:
//!
//! - **the base, when its tests fail there** (a bug fix): the base's code with the changed
//!   tests. Every test that failed on that code before must still fail, or the change made
//!   the suite stop seeing the bug;
//! - **else mutants** of the functions the changed tests call, as mutation testing makes
//!   them ([`super::mutants`]): a mutant the original tests catch must still be caught.
//!
//! What is run and what it showed is kept in words for the record. Where nothing can be run
//! (no test command, the box refuses) the signals stand as they are.

use git2::{Oid, Repository, Tree};

use super::mutants::{mutants, Mutant};
use super::regress::{test_run, TestCommand, TestRun};
use super::ProbeSettings;
use crate::code::{test_path, Finding, Lang};
use crate::git::TreeFiles;

/// Most mutants tried for a change (each costs two runs of the tests; a Rust run compiles).
const PYTHON_MUTANTS: usize = 6;
/// Most mutants tried where the tests are Rust's.
const RUST_MUTANTS: usize = 3;

/// What running the changed tests decided about the signals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decided {
    /// They let through code the original tests rejected: the signals stand, and this says
    /// what got through.
    Weakened(String),
    /// They still reject everything the original tests rejected: the signals were about an
    /// equivalent rewrite, and this says what was run.
    Kept(String),
    /// Nothing could decide (why); the signals stand as they are.
    Undecided(String),
}

/// Decides whether the change from `base` to `new` weakens the tests `signals` point at, by
/// running `command` in the box as `settings` say.
pub fn decide(
    repo: &Repository,
    base: &Tree<'_>,
    new: &Tree<'_>,
    signals: &[Finding],
    command: &TestCommand,
    settings: &ProbeSettings,
) -> Decided {
    let decided = || -> Result<Decided, String> {
        let tests = changed_tests(repo, base, new, signals)?;
        if tests.is_empty() {
            return Ok(Decided::Undecided(
                "the change touches no test file to run".into(),
            ));
        }
        // The base's code with the changed tests.
        let hybrid = with_files(repo, base, new, &tests)?;
        let hybrid = repo.find_tree(hybrid).map_err(|e| e.to_string())?;
        let original = test_run(repo, base, command, settings)?;
        if !passed(&original) {
            let changed = test_run(repo, &hybrid, command, settings)?;
            return Ok(against_rejected_base(&original, &changed));
        }
        against_mutants(repo, base, &hybrid, new, &tests, command, settings)
    };
    decided().unwrap_or_else(Decided::Undecided)
}

/// Whether a run of the tests passed: it exited 0 within its time.
fn passed(run: &TestRun) -> bool {
    run.exit == Some(0)
}

/// The verdict of the changed tests run on the base's code, which the original tests
/// rejected (`original`, on the same code): each test that failed there must still fail.
fn against_rejected_base(original: &TestRun, changed: &TestRun) -> Decided {
    let failed_before = original.failed();
    let failed_now = changed.failed();
    if passed(changed) {
        return Decided::Weakened(format!(
            "`{}` fails on the base's code with the original tests and passes on it with the changed ones: they no longer see what failed",
            original.command
        ));
    }
    let lost: Vec<&str> = failed_before
        .iter()
        .filter(|t| !failed_now.contains(t))
        .copied()
        .collect();
    if !failed_before.is_empty() && !failed_now.is_empty() && !lost.is_empty() {
        return Decided::Weakened(format!(
            "with the changed tests, {} no longer fail(s) on the base's code, which the original tests rejected",
            lost.join(", ")
        ));
    }
    Decided::Kept(format!(
        "the changed tests still fail on the base's code, as the original tests did (`{}`): they check what they checked",
        original.command
    ))
}

/// The verdict of mutants of the functions the changed tests call: one the original tests
/// catch on the base and the changed tests (`hybrid`, the base's code with them) let
/// through weakens them.
fn against_mutants(
    repo: &Repository,
    base: &Tree<'_>,
    hybrid: &Tree<'_>,
    new: &Tree<'_>,
    tests: &[String],
    command: &TestCommand,
    settings: &ProbeSettings,
) -> Result<Decided, String> {
    let candidates = mutants_for(repo, base, new, tests);
    if candidates.is_empty() {
        return Ok(Decided::Undecided(
            "the tests pass on the base and no function they call could be mutated".into(),
        ));
    }
    let mut caught = 0;
    for m in &candidates {
        let with_original = with_text(repo, base, m)?;
        let run = test_run(repo, &with_original, command, settings)?;
        if passed(&run) {
            // The original tests do not see this fault either: it says nothing.
            continue;
        }
        caught += 1;
        let with_changed = with_text(repo, hybrid, m)?;
        if passed(&test_run(repo, &with_changed, command, settings)?) {
            return Ok(Decided::Weakened(format!(
                "a fault the original tests catch ({}) passes the changed tests",
                m.shown
            )));
        }
    }
    Ok(if caught == 0 {
        Decided::Undecided(format!(
            "none of {} mutant(s) of the functions the tests call is caught by the original tests",
            candidates.len()
        ))
    } else {
        Decided::Kept(format!(
            "the changed tests still catch all {caught} fault(s) put into the code that the original tests catch"
        ))
    })
}

/// The test files (and test runner configuration) the change touches: the paths of the
/// `signals` and every changed test file.
fn changed_tests(
    repo: &Repository,
    base: &Tree<'_>,
    new: &Tree<'_>,
    signals: &[Finding],
) -> Result<Vec<String>, String> {
    let diff = crate::git::diff_trees(repo, Some(base), new).map_err(|e| e.to_string())?;
    let mut paths: Vec<String> = diff
        .iter()
        .map(|f| f.path.clone())
        .filter(|p| test_path(p) || signals.iter().any(|s| &s.path == p))
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// `base` with each of `paths` as `from` has it (removed where `from` has none).
fn with_files(
    repo: &Repository,
    base: &Tree<'_>,
    from: &Tree<'_>,
    paths: &[String],
) -> Result<Oid, String> {
    let mut update = git2::build::TreeUpdateBuilder::new();
    for p in paths {
        match from.get_path(std::path::Path::new(p)) {
            Ok(entry) => {
                let mode = match entry.filemode() {
                    0o100755 => git2::FileMode::BlobExecutable,
                    0o120000 => git2::FileMode::Link,
                    _ => git2::FileMode::Blob,
                };
                update.upsert(p.as_str(), entry.id(), mode);
            }
            Err(_) => {
                update.remove(p.as_str());
            }
        }
    }
    update.create_updated(repo, base).map_err(|e| e.to_string())
}

/// `tree` with the mutant's file written in.
fn with_text<'r>(repo: &'r Repository, tree: &Tree<'_>, m: &Mutant) -> Result<Tree<'r>, String> {
    let blob = repo.blob(m.text.as_bytes()).map_err(|e| e.to_string())?;
    let mut update = git2::build::TreeUpdateBuilder::new();
    update.upsert(m.path.as_str(), blob, git2::FileMode::Blob);
    let oid = update
        .create_updated(repo, tree)
        .map_err(|e| e.to_string())?;
    repo.find_tree(oid).map_err(|e| e.to_string())
}

/// Mutants of the base's functions that the changed tests (either side) name: source files
/// of the base (not tests) that define a function whose name a test file uses.
fn mutants_for(
    repo: &Repository,
    base: &Tree<'_>,
    new: &Tree<'_>,
    tests: &[String],
) -> Vec<Mutant> {
    let (before, after) = (
        TreeFiles::new(repo, base.clone()),
        TreeFiles::new(repo, new.clone()),
    );
    let test_text: String = tests
        .iter()
        .flat_map(|p| [before.text(p), after.text(p)])
        .flatten()
        .collect::<Vec<String>>()
        .join("\n");
    let words: std::collections::BTreeSet<&str> = test_text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let rust = tests.iter().any(|p| Lang::from_path(p) == Some(Lang::Rust));
    let limit = if rust { RUST_MUTANTS } else { PYTHON_MUTANTS };
    let mut found = Vec::new();
    for path in before.paths() {
        let Some(lang) = Lang::from_path(&path) else {
            continue;
        };
        if test_path(&path) {
            continue;
        }
        let Some(text) = before.text(&path) else {
            continue;
        };
        let names: Vec<String> = crate::code::outline(lang, &text)
            .into_iter()
            .filter(|s| words.contains(s.name.as_str()))
            .map(|s| s.name)
            .collect();
        if !names.is_empty() {
            found.extend(mutants(&path, &text, lang, &names, limit));
        }
    }
    if found.len() > limit {
        let step = found.len() / limit;
        found = found.into_iter().step_by(step.max(1)).take(limit).collect();
    }
    found
}
