//! The tests of the `skips` rule, through every rule at once as a change meets them.

use super::super::testing::*;

const PY: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n";

#[test]
fn an_added_skip_decorator_is_found_and_one_already_there_is_not() {
    let skipped = PY.replace(
        "    def test_add(self):",
        "    @unittest.skip(\"later\")\n    def test_add(self):",
    );
    let (path, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&skipped))]);
    assert_eq!((path.as_str(), line), ("tests/test_calc.py", 7));
    assert_eq!(
        reason,
        "the change adds `@unittest.skip(\"later\")` to the test `T.test_add` that tests/test_calc.py:7 had: it no longer runs"
    );
    // Control: the base had the same skip, written another way.
    let also = skipped.replace("skip(\"later\")", "skip( 'later' )  # still");
    assert!(found(&[change("tests/test_calc.py", Some(&skipped), Some(&also))]).is_empty());
    // Control: a new test may be skipped.
    let new_test =
        format!("{PY}\n    @unittest.skip('todo')\n    def test_new(self):\n        pass\n");
    assert!(found(&[change("tests/test_calc.py", Some(PY), Some(&new_test))]).is_empty());
}

#[test]
fn pytest_marks_class_and_module_marks_are_found() {
    let base = "import pytest\nfrom calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_zero():\n    assert add(0, 0) == 0\n";
    let skipif = base.replace(
        "def test_add",
        "@pytest.mark.skipif(sys.platform != 'x', reason='no')\ndef test_add",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(base), Some(&skipif))]);
    assert_eq!(line, 4);
    assert!(
        reason.contains("`@pytest.mark.skipif(sys.platform != 'x', reason='no')`"),
        "{reason}"
    );
    for (mark, what) in [
        ("@pytest.mark.skip(reason='later')", "it no longer runs"),
        ("@unittest.skipIf(True, 'x')", "it no longer runs"),
        ("@skipUnless(False, 'x')", "it no longer runs"),
        (
            "@unittest.expectedFailure",
            "its failure no longer fails the run",
        ),
    ] {
        let after = base.replace("def test_add", &format!("{mark}\ndef test_add"));
        let (_, line, reason) = one(&[change("tests/test_calc.py", Some(base), Some(&after))]);
        assert_eq!(line, 4, "{reason}");
        assert!(reason.contains(mark) && reason.ends_with(what), "{reason}");
    }
    // Control: a decorator that is not a skip.
    let other = base.replace(
        "def test_add",
        "@pytest.mark.slow\n@mock.patch('os.getcwd')\ndef test_add",
    );
    assert!(found(&[change("tests/test_calc.py", Some(base), Some(&other))]).is_empty());
    let xfail = base.replace("def test_add", "@pytest.mark.xfail\ndef test_add");
    let (_, _, reason) = one(&[change("tests/test_calc.py", Some(base), Some(&xfail))]);
    assert!(
        reason.ends_with("its failure no longer fails the run"),
        "{reason}"
    );
    // A module-level mark covers every test of the file, one finding.
    let module = base.replace(
        "from calc import add\n",
        "from calc import add\npytestmark = [pytest.mark.skip]\n",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(base), Some(&module))]);
    assert_eq!(line, 3);
    assert!(
        reason.contains("2 tests the base had (`test_add` and `test_zero`)"),
        "{reason}"
    );
    // Control: a mark that the base had stays quiet when the tests around it change.
    let kept = module.replace(
        "assert add(0, 0) == 0",
        "assert add(0, 0) == 0\n    assert add(1, 0) == 1",
    );
    assert!(found(&[change("tests/test_calc.py", Some(&module), Some(&kept))]).is_empty());
}

#[test]
fn skip_calls_and_skip_raises_are_found() {
    for (stmt, what) in [
        ("pytest.skip('flaky')", "`pytest.skip('flaky')`"),
        (
            "raise unittest.SkipTest('x')",
            "`raise unittest.SkipTest('x')`",
        ),
        ("self.skipTest('x')", "`self.skipTest('x')`"),
    ] {
        let after = PY.replace(
            "        self.assertEqual(add(2, 3), 5)",
            &format!("        if add(2, 3) != 5:\n            {stmt}\n        self.assertEqual(add(2, 3), 5)"),
        );
        let (_, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&after))]);
        assert_eq!(line, 9, "{reason}");
        assert!(reason.contains(what), "{reason}");
    }
    // In a setup method, every test of the class is skipped.
    let setup = PY.replace(
        "    def test_add(self):",
        "    def setUp(self):\n        self.skipTest('broken')\n\n    def test_add(self):",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&setup))]);
    assert_eq!(line, 8);
    assert!(reason.contains("2 tests the base had"), "{reason}");
}

#[test]
fn rust_ignore_should_panic_and_cfg_are_found() {
    let base = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n";
    for (attr, what) in [
        ("#[ignore]", "it no longer runs"),
        ("#[cfg_attr(unix, ignore = \"slow\")]", "it no longer runs"),
        ("#[should_panic]", "its failure no longer fails the run"),
        ("#[cfg(windows)]", "only where that condition holds"),
    ] {
        let after = base.replace(
            "    #[test]\n",
            &format!("    #[test]\n    // why\n    {attr}\n"),
        );
        let (_, line, reason) = one(&[change("src/calc.rs", Some(base), Some(&after))]);
        assert_eq!(line, 7, "{reason}");
        assert!(
            reason.contains(what) && reason.contains("`tests::adds`"),
            "{reason}"
        );
    }
    let file = "#![cfg(feature = \"slow\")]\n";
    let integration = "use calc::add;\n\n#[test]\nfn adds() {\n    assert_eq!(add(2, 3), 5);\n}\n";
    let gated = format!("{file}{integration}");
    let (_, line, reason) = one(&[change("tests/calc.rs", Some(integration), Some(&gated))]);
    assert_eq!(line, 1);
    assert!(reason.contains("`#![cfg(feature = \"slow\")]`"), "{reason}");
    // Controls: the base had the gate; `cfg(test)` is what every test module has.
    assert!(found(&[change(
        "tests/calc.rs",
        Some(&gated),
        Some(&gated.replace("5);", "5, \"sum\");"))
    )])
    .is_empty());
    // Two tests of one name, one per platform: each keeps its own gate.
    let pair = "#[cfg(unix)]\n#[test]\nfn t() {\n    assert!(a());\n}\n\n#[cfg(not(unix))]\n#[test]\nfn t() {\n    assert!(b());\n}\n";
    assert!(found(&[change(
        "tests/calc.rs",
        Some(pair),
        Some(&pair.replace("a()", "a(1)"))
    )])
    .iter()
    .all(|(_, _, r)| !r.contains("adds")));
    let plain = base.replace("#[cfg(test)]\n", "");
    assert!(found(&[change("src/calc.rs", Some(&plain), Some(base))]).is_empty());
}
