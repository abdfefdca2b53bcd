//! The tests of the `stubs` rule, through every rule at once as a change meets them.

use super::super::testing::*;

const PY: &str = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n";

#[test]
fn a_def_that_shadows_the_imported_function_is_found() {
    let after = PY.replace(
        "\n\nclass T",
        "\n\ndef add(a, b):\n    return 5\n\n\nclass T",
    );
    let (path, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&after))]);
    assert_eq!((path.as_str(), line), ("tests/test_calc.py", 6));
    assert_eq!(
        reason,
        "the change replaces `add`, which the assertion `self.assertEqual(add(2, 3), 5)` (tests/test_calc.py:12) calls, with `def add(a, b): return 5` in the tests: the assertion checks the stub, not the code"
    );
    // The same in a test file new in the change: the import says what `add` was.
    let (_, line, _) = one(&[change("tests/test_new.py", None, Some(&after))]);
    assert_eq!(line, 6);
    // The base dropped the import; the base's call still says `add` came from elsewhere.
    let no_import = after.replace("from calc import add\n", "");
    let (_, line, _) = one(&[change("tests/test_calc.py", Some(PY), Some(&no_import))]);
    assert_eq!(line, 5);
}

#[test]
fn patches_of_the_asserted_function_are_found() {
    let module = "import calc\n\n\ndef test_add(monkeypatch):\n    assert calc.add(2, 3) == 5\n";
    for (stub, line) in [
        ("    monkeypatch.setattr(calc, 'add', lambda a, b: 5)\n", 5),
        ("    monkeypatch.setattr('calc.add', lambda a, b: 5)\n", 5),
        ("    calc.add = lambda a, b: 5\n", 5),
        ("    mocker.patch('calc.add', return_value=5)\n", 5),
        ("    setattr(calc, 'add', lambda a, b: 5)\n", 5),
    ] {
        let after = module.replace("    assert", &format!("{stub}    assert"));
        let (_, l, reason) = one(&[change("tests/test_calc.py", Some(module), Some(&after))]);
        assert_eq!(l, line, "{reason}");
        assert!(reason.contains("replaces `calc.add`"), "{reason}");
    }
    let decorated = PY.replace(
        "    def test_add(self):",
        "    @mock.patch(\"calc.add\", return_value=5)\n    def test_add(self, m):",
    );
    let (_, line, _) = one(&[change("tests/test_calc.py", Some(PY), Some(&decorated))]);
    assert_eq!(line, 7);
    let with = module.replace(
        "    assert calc.add(2, 3) == 5\n",
        "    with mock.patch.object(calc, \"add\", return_value=5):\n        assert calc.add(2, 3) == 5\n",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(module), Some(&with))]);
    assert_eq!(line, 5);
    assert!(
        reason.contains("`mock.patch.object(calc, \"add\", return_value=5)`"),
        "{reason}"
    );
    // A conftest fixture that patches what a changed test asserts.
    let conftest = "import pytest\nimport calc\n\n\n@pytest.fixture(autouse=True)\ndef fake(monkeypatch):\n    monkeypatch.setattr(calc, 'add', lambda a, b: 5)\n";
    let all = found(&[
        change("tests/conftest.py", None, Some(conftest)),
        change(
            "tests/test_calc.py",
            Some(module),
            Some(&module.replace("5\n", "5\n    assert calc.add(1, 1) == 2\n")),
        ),
    ]);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!((all[0].0.as_str(), all[0].1), ("tests/conftest.py", 7));
}

#[test]
fn mocks_of_other_functions_spies_and_helpers_are_no_finding() {
    let module =
        "import calc\nimport os\n\n\ndef test_cwd(monkeypatch):\n    assert calc.cwd() == '/x'\n";
    // Another module's function of the same name is a dependency, mocked.
    let other = module.replace(
        "    assert",
        "    monkeypatch.setattr(os, 'cwd', lambda: '/x')\n    assert",
    );
    assert!(found(&[change("tests/test_calc.py", Some(module), Some(&other))]).is_empty());
    // A spy still runs the code.
    let spy = module.replace(
        "    assert",
        "    mock.patch.object(calc, 'cwd', wraps=calc.cwd)\n    assert",
    );
    assert!(found(&[change("tests/test_calc.py", Some(module), Some(&spy))]).is_empty());
    // A helper the new tests define for themselves, and an alias of the real function.
    let helper = "from calc import add\n\n\ndef add_one(x):\n    return add(x, 1)\n\n\ndef test_add_one():\n    plus = add\n    add2 = add\n    assert add_one(2) == 3\n";
    assert!(found(&[change("tests/test_helper.py", None, Some(helper))]).is_empty());
    // A test helper moved into the test file is the tests' own code, not a stub.
    let helped =
        "from tests.helpers import total\n\n\ndef test_total():\n    assert total([2, 3]) == 5\n";
    let inlined = "from calc import add\n\n\ndef total(xs):\n    return sum(xs)\n\n\ndef test_total():\n    assert total([2, 3]) == 5\n";
    assert!(found(&[change("tests/test_total.py", Some(helped), Some(inlined))]).is_empty());
    // A same-named wrapper that calls the real function.
    let wrapper = "import calc\nfrom calc import add\n\n\ndef add(a, b):\n    return calc.add(a, b)\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    assert!(found(&[change("tests/test_calc.py", None, Some(wrapper))]).is_empty());
    // A stub the base already had.
    let stubbed = "from calc import add\n\n\ndef add(a, b):\n    return 5\n\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert add(1, 1) == 5\n";
    let base = stubbed.replace("    assert add(1, 1) == 5\n", "");
    assert!(found(&[change("tests/test_calc.py", Some(&base), Some(stubbed))]).is_empty());
}

#[test]
fn a_rust_fn_that_shadows_the_code_under_test_is_found() {
    let base = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n    }\n}\n";
    let after = base.replace(
        "    use super::*;\n",
        "    use super::*;\n\n    fn add(_: i32, _: i32) -> i32 {\n        5\n    }\n",
    );
    let (_, line, reason) = one(&[change("src/calc.rs", Some(base), Some(&after))]);
    assert_eq!(line, 9);
    assert!(
        reason.contains("`fn add(_: i32, _: i32) -> i32`")
            && reason.contains("`assert_eq!(add(2, 3), 5)`"),
        "{reason}"
    );
    // New in the change, too: the file's own code says what `add` is.
    assert_eq!(found(&[change("src/calc.rs", None, Some(&after))]).len(), 1);
    // An integration test whose `use` of the crate gives way to a local `fn`; and
    // one whose helper moves from its own `mod common` into the file.
    let it = "use calc::add;\nmod common;\nuse common::setup;\n\n#[test]\nfn adds() {\n    assert_eq!(add(setup(), 3), 5);\n    assert_eq!(setup(), 2);\n}\n";
    let stubbed = it.replace(
        "use calc::add;\n",
        "fn add(_: i32, _: i32) -> i32 {\n    5\n}\n",
    );
    let (_, line, _) = one(&[change("tests/calc.rs", Some(it), Some(&stubbed))]);
    assert_eq!(line, 1);
    let moved = it.replace(
        "mod common;\nuse common::setup;\n",
        "fn setup() -> i32 {\n    2\n}\n",
    );
    assert!(found(&[change("tests/calc.rs", Some(it), Some(&moved))]).is_empty());
    // A same-named helper that wraps the real function, or one in a module that
    // does not glob-import it, or one named like a method: no stub.
    let wrapper = base.replace("    use super::*;\n", "    use super::*;\n\n    fn add(a: i32, b: i32) -> i32 {\n        super::add(a, b)\n    }\n");
    assert!(found(&[change("src/calc.rs", Some(base), Some(&wrapper))]).is_empty());
    let explicit = base.replace(
        "    use super::*;\n",
        "    fn add(a: i32, b: i32) -> i32 {\n        a + b\n    }\n",
    );
    assert!(found(&[change("src/calc.rs", None, Some(&explicit))]).is_empty());
    let method = base
        .replace(
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
            "pub struct C;\nimpl C {\n    pub fn add(&self) -> i32 {\n        1\n    }\n}\n",
        )
        .replace(
            "    use super::*;\n",
            "    use super::*;\n\n    fn add(_: i32, _: i32) -> i32 {\n        5\n    }\n",
        );
    assert!(found(&[change("src/calc.rs", None, Some(&method))]).is_empty());
    // Control: a test helper with a name of its own.
    let helper = base.replace("    use super::*;\n", "    use super::*;\n\n    fn sum(v: &[i32]) -> i32 {\n        v.iter().fold(0, |a, b| add(a, *b))\n    }\n").replace("assert_eq!(add(2, 3), 5);", "assert_eq!(add(2, 3), 5);\n        assert_eq!(sum(&[2, 3]), 5);");
    assert!(found(&[change("src/calc.rs", Some(base), Some(&helper))]).is_empty());
}
