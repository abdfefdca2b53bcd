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

const RATIO: &str =
    "def ratio(a, b):\n    \"\"\"a over b, rounded down.\"\"\"\n    return a // b\n";

const RATIO_TESTS: &str = "from calc import ratio\n\n\ndef test_ratio():\n    assert ratio(*[30, 4]) == 7\n    assert ratio(*[9, 3]) == 3\n    assert ratio(*[1, 2]) == 0\n";

/// A repository with `ratio` as `code` and its tests, and HEAD changing them to `new_code`
/// and `new_tests`: the review's JSON. Trusted, so its tests may run in the box.
fn ratio_review(code: &str, new_code: &str, new_tests: &str) -> Value {
    ratio_review_in(true, code, new_code, new_tests)
}

fn ratio_review_in(trusted: bool, code: &str, new_code: &str, new_tests: &str) -> Value {
    let env = TestEnv::new();
    let repo = env.repo(
        "ratio",
        &[("calc.py", code), ("tests/test_calc.py", RATIO_TESTS)],
    );
    if trusted {
        env.git(&repo, &["config", "triad.trusted", "true"]).ok();
    }
    env.write_files(
        &repo,
        &[("calc.py", new_code), ("tests/test_calc.py", new_tests)],
    );
    env.commit_all(&repo, "update ratio's tests");
    let r = env.triad(&repo, &["review", "HEAD", "--no-model", "--format", "json"]);
    serde_json::from_str(&r.stdout).unwrap_or_else(|e| panic!("{e}: {}", r.all()))
}

/// Whether a test rewrite weakens the tests is decided by running them: the changed tests
/// against the base's code where the original tests reject it (a bug fix), else against
/// mutants of the function they call. `f(*[a, b])` written `f(a, b)` checks the same and is
/// no weakening; assertions deleted so that broken code passes are one.
#[test]
fn an_equivalent_rewrite_is_not_weakening_and_a_real_weakening_is_caught_by_running() {
    let plain = RATIO_TESTS.replace("(*[", "(").replace("])", ")");
    assert!(plain.contains("ratio(30, 4) == 7"), "{plain}");
    // One assertion left, which no longer pins the value down.
    let thinned = "from calc import ratio\n\n\ndef test_ratio():\n    assert ratio(9, 3) > 0\n";

    // Read, not run (an untrusted clone), the rewrite looks like weakening.
    let v = ratio_review_in(false, RATIO, RATIO, &plain);
    assert!(!weakened(&v).is_empty(), "the rules point at it: {v}");

    // The tests pass at the base: mutants of ratio decide.
    let v = ratio_review(RATIO, RATIO, &plain);
    assert!(weakened(&v).is_empty(), "{v}");
    assert_eq!(v["verdict"], "APPROVE", "{v}");
    let v = ratio_review(RATIO, RATIO, thinned);
    assert_eq!(v["verdict"], "REJECT", "{v}");
    let found = weakened(&v);
    assert!(
        found
            .iter()
            .any(|(_, _, d)| d.contains("checked by running: a fault the original tests catch")),
        "{v}"
    );

    // A bug fix: the base's code fails the original tests, and the changed tests must
    // still fail on it.
    let buggy = RATIO.replace("a // b", "a // b + 1");
    let v = ratio_review(&buggy, RATIO, &plain);
    assert!(weakened(&v).is_empty(), "{v}");
    assert_ne!(v["verdict"], "REJECT", "{v}");
    let v = ratio_review(&buggy, RATIO, thinned);
    assert_eq!(v["verdict"], "REJECT", "{v}");
    assert!(
        weakened(&v)
            .iter()
            .any(|(_, _, d)| d.contains("passes on it with the changed ones")),
        "{v}"
    );
}
