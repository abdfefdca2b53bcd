//! A change that weakens the repository's tests without deleting them, reported by
//! `git triad review --no-model` with the file and line of each weakening.

use serde_json::Value;

use crate::common::TestEnv;

const CALC: &str = "def add(a, b):\n    return a + b\n";

const TESTS: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n";

const RUST_BASE: &str = "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn doubles() {\n        assert_eq!(double(2), 4);\n    }\n}\n";

/// A repository whose base has passing tests in Python and Rust, a pytest configuration
/// and pytest declared as a test dependency.
fn repo(env: &TestEnv) -> std::path::PathBuf {
    env.repo(
        "proj",
        &[
            ("calc.py", CALC),
            ("tests/test_calc.py", TESTS),
            ("pytest.ini", "[pytest]\naddopts = -q\n"),
            (
                "pyproject.toml",
                "[project]\nname = \"calc\"\n\n[project.optional-dependencies]\ntest = [\"pytest\"]\n",
            ),
            ("src/lib.rs", RUST_BASE),
        ],
    )
}

/// The weakened-test issues of a JSON review: `(path, line, description)`.
fn weakened(review: &Value) -> Vec<(String, u64, String)> {
    review["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["evidence"] == "deterministic check (weakened_test)")
        .map(|i| {
            (
                i["path"].as_str().unwrap().to_string(),
                i["start_line"].as_u64().unwrap(),
                i["description"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_commit_that_skips_stubs_and_deselects_tests_is_rejected_with_each_line() {
    let env = TestEnv::new();
    let repo = repo(&env);
    let tests = TESTS
        .replace(
            "\n\nclass T",
            "\n\ndef add(a, b):\n    return 5\n\n\nclass T",
        )
        .replace(
            "    def test_zero(self):",
            "    @unittest.skip(\"flaky\")\n    def test_zero(self):",
        );
    env.write_files(
        &repo,
        &[
            ("tests/test_calc.py", tests.as_str()),
            ("pytest.ini", "[pytest]\naddopts = -q -k 'not zero'\n"),
            (
                "src/lib.rs",
                &RUST_BASE.replace("    #[test]\n", "    #[test]\n    #[ignore]\n"),
            ),
        ],
    );
    env.commit_all(&repo, "make the tests pass");
    let r = env.triad(&repo, &["review", "--no-model", "--format", "json"]);
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(v["verdict"], "REJECT", "{v}");
    let found = weakened(&v);
    let at = |path: &str, line: u64, part: &str| {
        assert!(
            found
                .iter()
                .any(|(p, l, d)| p == path && *l == line && d.contains(part)),
            "{path}:{line} {part}: {found:#?}"
        );
    };
    at("tests/test_calc.py", 6, "replaces `add`");
    at("tests/test_calc.py", 14, "adds `@unittest.skip(\"flaky\")`");
    at("pytest.ini", 2, "adds `-k \"not zero\"`");
    at("src/lib.rs", 10, "adds `#[ignore]`");
    assert_eq!(found.len(), 4, "{found:#?}");
    // The text report names each file:line, and --fail-on reject fails the command.
    let text = env.triad(&repo, &["review", "--no-model"]);
    for place in [
        "tests/test_calc.py:6",
        "tests/test_calc.py:14",
        "pytest.ini:2",
        "src/lib.rs:10",
    ] {
        assert!(text.stdout.contains(place), "{place}: {}", text.stdout);
    }
    env.triad(&repo, &["review", "--no-model", "--fail-on", "reject"])
        .expect_code(1);
}

#[test]
fn new_skipped_tests_fixtures_and_quiet_settings_are_approved() {
    let env = TestEnv::new();
    let repo = repo(&env);
    let tests = format!(
        "{TESTS}\n    @unittest.skip(\"needs a network\")\n    def test_remote(self):\n        self.assertEqual(add(1, 1), 2)\n"
    );
    env.write_files(
        &repo,
        &[
            ("tests/test_calc.py", tests.as_str()),
            (
                "tests/conftest.py",
                "import pytest\n\n\n@pytest.fixture\ndef numbers():\n    return [1, 2]\n",
            ),
            (
                "pytest.ini",
                "[pytest]\naddopts = -q -ra\nmarkers =\n    slow: slow tests\n",
            ),
        ],
    );
    env.commit_all(&repo, "a new test, a fixture and more output");
    let r = env.triad(&repo, &["review", "--no-model", "--format", "json"]);
    let v: Value = serde_json::from_str(&r.ok().stdout).unwrap();
    assert_eq!(weakened(&v), vec![], "{v}");
    assert_eq!(v["verdict"], "APPROVE", "{v}");
}
