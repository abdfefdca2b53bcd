//! The repository's own tests, run on the base of a change and on the change, in the box: a
//! test that passed before and fails after is a regression the change made (a fact that
//! floors a review at REJECT), one that failed before and passes after is shown as fixed.
//!
//! A reviewer shown only a diff missed every one-line bug of a bench where the repository's
//! tests, which the bug commits broke, were never run. The command is the configured verify
//! command, else one found from the tree (`cargo test` beside a `Cargo.toml`, pytest or
//! unittest beside Python tests); per-test outcomes are read from what the runners print
//! (pytest's `-rA` summary, unittest's `-v` lines, cargo's `test … ok`), and where none can
//! be read the command's exit decides for the whole.

use std::collections::BTreeMap;

use git2::{Repository, Tree};
use serde::{Deserialize, Serialize};

use super::sandbox::{quote, Sandbox};
use super::ProbeSettings;
use crate::bounded::clip;
use crate::code::{test_path, Finding, Lang};
use crate::git::TreeFiles;

/// The finding kind of a test the change makes fail.
pub const REGRESSED_TEST: &str = "regressed_test";

/// What running the tests on both sides showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestRuns {
    /// The command run.
    pub command: String,
    /// Tests that passed at the base and fail with the change, each with its first failure
    /// line when one was printed.
    pub regressed: Vec<(String, String)>,
    /// Tests that failed at the base and pass with the change.
    pub fixed: Vec<String>,
    /// How many tests passed on each side (`None`: the runner printed no per-test line).
    pub passed: (Option<usize>, Option<usize>),
    /// The command's exit on each side.
    pub exit: (Option<i32>, Option<i32>),
    /// Paths of either tree left out of the scratch copies the tests ran in (names git
    /// refuses, links that lead out), each with why: never written, never run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<String>,
}

impl TestRuns {
    /// One finding a regression (critical: the change breaks a test that passed).
    pub fn findings(&self) -> Vec<Finding> {
        self.regressed
            .iter()
            .map(|(name, why)| {
                let path = name
                    .split("::")
                    .next()
                    .filter(|p| Lang::from_path(p).is_some());
                Finding {
                    kind: REGRESSED_TEST.into(),
                    category: "logic".into(),
                    severity: "critical".into(),
                    path: path.unwrap_or_default().to_string(),
                    line: 0,
                    end_line: 0,
                    symbol: None,
                    import: None,
                    reason: format!(
                        "`{name}` passed at the base and fails with the change{}",
                        if why.is_empty() {
                            String::new()
                        } else {
                            format!(": {why}")
                        }
                    ),
                }
            })
            .collect()
    }

    /// The runs as a fact for a model and a person.
    pub fn render(&self) -> String {
        let count = |n: Option<usize>| n.map_or("?".to_string(), |n| n.to_string());
        let mut s = format!(
            "## The repository's tests on the base and on the change (a fact)\n`{}`: {} passed before, {} now (exit {} before, {} now).\n",
            self.command,
            count(self.passed.0),
            count(self.passed.1),
            self.exit.0.map_or("none".into(), |c| c.to_string()),
            self.exit.1.map_or("none".into(), |c| c.to_string()),
        );
        for (name, why) in &self.regressed {
            s.push_str(&format!(
                "- REGRESSED: {name} passed before and fails now {why}\n"
            ));
        }
        for name in &self.fixed {
            s.push_str(&format!("- fixed: {name} failed before and passes now\n"));
        }
        if !self.left_out.is_empty() {
            s.push_str(&format!(
                "- left out of the scratch copies (never written, never run): {}\n",
                self.left_out.join("; ")
            ));
        }
        s
    }
}

/// git triad's own runner for Python tests when pytest is not installed, compiled in.
const RUNNER: &str = include_str!("../../config/test_runner.py");

/// The command that runs a tree's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestCommand {
    /// The configured verify command.
    Configured(String),
    /// `cargo test`, for a crate at the root.
    Cargo,
    /// pytest when installed, else git triad's own runner (`config/test_runner.py`), for
    /// a tree with Python tests.
    Python,
}

/// The test command for `tree`: `configured` when given, else `cargo test` for a crate at
/// the root, else pytest (or git triad's runner) when the tree has Python tests; `None` when
/// nothing can be run.
pub fn command_for(
    repo: &Repository,
    tree: &Tree<'_>,
    configured: Option<&str>,
) -> Option<TestCommand> {
    if let Some(c) = configured.filter(|c| !c.trim().is_empty()) {
        return Some(TestCommand::Configured(c.to_string()));
    }
    let files = TreeFiles::new(repo, tree.clone());
    let paths = files.paths();
    if paths.iter().any(|p| p == "Cargo.toml") {
        return Some(TestCommand::Cargo);
    }
    let python_tests = paths
        .iter()
        .any(|p| Lang::from_path(p) == Some(Lang::Python) && test_path(p));
    python_tests.then_some(TestCommand::Python)
}

/// One run of the tests on one tree.
#[derive(Debug, Clone, PartialEq)]
pub struct TestRun {
    /// The command as a person reads it.
    pub command: String,
    /// Its exit (`None`: killed or timed out).
    pub exit: Option<i32>,
    /// The per-test outcomes its runner printed.
    outcomes: BTreeMap<String, Outcome>,
    /// The end of its output.
    pub tail: String,
    /// Paths of the tree left out of its scratch copy, each with why.
    pub left_out: Vec<String>,
}

impl TestRun {
    /// How many tests passed (`None`: the runner printed no per-test line).
    pub fn passed(&self) -> Option<usize> {
        passed(&self.outcomes)
    }

    /// The tests that failed, by name.
    pub fn failed(&self) -> Vec<&str> {
        self.outcomes
            .iter()
            .filter(|(_, o)| **o != Outcome::Pass)
            .map(|(n, _)| n.as_str())
            .collect()
    }
}

/// Runs `command` on `tree`, in the box on its own scratch copy.
pub fn test_run(
    repo: &Repository,
    tree: &Tree<'_>,
    command: &TestCommand,
    settings: &ProbeSettings,
) -> Result<TestRun, String> {
    let sb = Sandbox::export(repo, tree)?;
    let root = sb.root();
    let line = match command {
        TestCommand::Configured(c) => c.clone(),
        TestCommand::Cargo => "cargo test --offline 2>&1".into(),
        TestCommand::Python => {
            let runner = sb.scratch().join("test_runner.py");
            std::fs::write(&runner, RUNNER)
                .map_err(|e| format!("the test runner could not be written: {e}"))?;
            format!(
                "if {py} -c 'import pytest' 2>/dev/null; then {py} -m pytest -rA -q -p no:cacheprovider; else {py} {}; fi",
                quote(&runner.display().to_string()),
                py = quote(&settings.python),
            )
        }
    };
    let shown = match command {
        TestCommand::Configured(c) => c.clone(),
        TestCommand::Cargo => "cargo test".into(),
        TestCommand::Python => "the Python tests (pytest, else git triad's runner)".into(),
    };
    let env = [("PYTHONDONTWRITEBYTECODE", "1")].map(|(k, v)| (k.to_string(), v.to_string()));
    let mut out = sb.command(settings, &root, &line, settings.tests_timeout(), &env);
    if out.refused() {
        return Err(out.tail);
    }
    if out.timed_out {
        out.exit_code = None;
    }
    Ok(TestRun {
        command: shown,
        exit: out.exit_code,
        outcomes: outcomes(&out.tail),
        tail: out.tail,
        left_out: sb.left_out().to_vec(),
    })
}

/// Runs `command` on `base` and on `new`, each in the box on its own scratch copy.
pub fn test_runs(
    repo: &Repository,
    base: &Tree<'_>,
    new: &Tree<'_>,
    command: &TestCommand,
    settings: &ProbeSettings,
) -> Result<TestRuns, String> {
    let run = |tree: &Tree<'_>| {
        test_run(repo, tree, command, settings).map(|r| (r.outcomes, r.exit, r.command, r.left_out))
    };
    let (before, exit_before, _, mut left_out) = run(base)?;
    let (after, exit_after, shown, also) = run(new)?;
    left_out.extend(also);
    left_out.sort();
    left_out.dedup();
    let mut runs = TestRuns {
        command: shown,
        regressed: Vec::new(),
        fixed: Vec::new(),
        passed: (passed(&before), passed(&after)),
        exit: (exit_before, exit_after),
        left_out,
    };
    if before.is_empty() && after.is_empty() {
        if exit_before == Some(0) && exit_after != Some(0) {
            runs.regressed.push((
                "the test command".into(),
                format!(
                    "it exits {}",
                    exit_after.map_or("by a signal".into(), |c| c.to_string())
                ),
            ));
        } else if exit_before != Some(0) && exit_after == Some(0) {
            runs.fixed.push("the test command".into());
        }
        return Ok(runs);
    }
    for (name, now) in &after {
        match (before.get(name), now) {
            (Some(Outcome::Pass), Outcome::Fail(why)) => {
                runs.regressed.push((name.clone(), clip(why, 200)));
            }
            (Some(Outcome::Fail(_)), Outcome::Pass) => runs.fixed.push(name.clone()),
            _ => {}
        }
    }
    Ok(runs)
}

/// A test's outcome as its runner printed it.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Pass,
    /// Failed or errored, with the runner's line about it.
    Fail(String),
}

/// How many of `outcomes` passed (`None` when there are none).
fn passed(outcomes: &BTreeMap<String, Outcome>) -> Option<usize> {
    (!outcomes.is_empty()).then(|| outcomes.values().filter(|o| **o == Outcome::Pass).count())
}

/// The per-test outcomes a runner's output shows: pytest's `-rA` summary (`PASSED a::t`,
/// `FAILED a::t - why`, `ERROR a::t`), unittest's `-v` lines (`t (m.C.t) ... ok`), cargo's
/// `test m::t ... ok` lines. Skipped and ignored tests are left out.
fn outcomes(output: &str) -> BTreeMap<String, Outcome> {
    let mut found = BTreeMap::new();
    for line in output.lines() {
        let line = line.trim_end();
        for (prefix, pass) in [("PASSED ", true), ("FAILED ", false), ("ERROR ", false)] {
            if let Some(rest) = line.strip_prefix(prefix) {
                let (name, why) = rest.split_once(" - ").unwrap_or((rest, ""));
                let o = if pass {
                    Outcome::Pass
                } else {
                    Outcome::Fail(why.trim().to_string())
                };
                found.insert(name.trim().to_string(), o);
            }
        }
        if let Some((name, status)) = line.rsplit_once(" ... ") {
            let name = name.trim().strip_prefix("test ").unwrap_or(name.trim());
            let o = match status.trim() {
                "ok" => Outcome::Pass,
                "FAIL" | "FAILED" | "ERROR" => Outcome::Fail(String::new()),
                _ => continue,
            };
            found.insert(name.to_string(), o);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_test_outcomes_are_read_from_each_runner() {
        let pytest = "F.\n=== short test summary info ===\nPASSED tests/test_calc.py::test_zero\nFAILED tests/test_calc.py::test_add - assert -1 == 5\n";
        let o = outcomes(pytest);
        assert_eq!(o["tests/test_calc.py::test_zero"], Outcome::Pass);
        assert_eq!(
            o["tests/test_calc.py::test_add"],
            Outcome::Fail("assert -1 == 5".into())
        );
        let unittest = "test_add (tests.test_calc.T.test_add) ... FAIL\ntest_zero (tests.test_calc.T.test_zero) ... ok\ntest_skip (tests.test_calc.T.test_skip) ... skipped 'x'\n";
        let o = outcomes(unittest);
        assert_eq!(o.len(), 2);
        assert_eq!(o["test_zero (tests.test_calc.T.test_zero)"], Outcome::Pass);
        let cargo = "running 2 tests\ntest tests::adds ... ok\ntest tests::subs ... FAILED\ntest tests::slow ... ignored\n";
        let o = outcomes(cargo);
        assert_eq!(o["tests::adds"], Outcome::Pass);
        assert_eq!(o["tests::subs"], Outcome::Fail(String::new()));
        assert!(!o.contains_key("tests::slow"));
    }

    #[test]
    fn a_regression_is_a_critical_finding_naming_the_test() {
        let runs = TestRuns {
            command: "pytest".into(),
            regressed: vec![(
                "tests/test_calc.py::test_add".into(),
                "assert -1 == 5".into(),
            )],
            fixed: vec!["tests/test_calc.py::test_neg".into()],
            passed: (Some(2), Some(2)),
            exit: (Some(0), Some(1)),
            left_out: Vec::new(),
        };
        let f = runs.findings();
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].kind.as_str(), f[0].severity.as_str()),
            (REGRESSED_TEST, "critical")
        );
        assert_eq!(f[0].path, "tests/test_calc.py");
        assert!(f[0]
            .reason
            .contains("passed at the base and fails with the change: assert -1 == 5"));
        let text = runs.render();
        assert!(
            text.contains("REGRESSED: tests/test_calc.py::test_add")
                && text.contains("fixed: tests/test_calc.py::test_neg"),
            "{text}"
        );
    }
}
