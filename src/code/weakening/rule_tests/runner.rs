//! The tests of the `runner` rule, through every rule at once as a change meets them.

use super::super::testing::*;

#[test]
fn pytest_selection_in_every_config_file_is_found() {
    let cases = [
        ("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q -k 'not add'\n", 2, "adds `-k \"not add\"` to pytest's `addopts`"),
        ("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests tests/unit\n", "[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests\n", 4, "removes `tests/unit` from pytest's `testpaths`"),
        ("tox.ini", "[tox]\nenvlist = py3\n", "[tox]\nenvlist = py3\n[pytest]\naddopts =\n    --deselect tests/test_calc.py::test_add\n", 4, "adds `--deselect tests/test_calc.py::test_add`"),
        ("pyproject.toml", "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\nxfail_strict = true\n", "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\nxfail_strict = false\naddopts = [\"-m\", \"not slow\"]\n", 5, "turns pytest's `xfail_strict` off"),
        ("pyproject.toml", "[tool.pytest.ini_options]\npython_files = [\"test_*.py\", \"check_*.py\"]\n", "[tool.pytest.ini_options]\npython_files = [\"check_*.py\"]\n", 2, "drops `test_*.py` from pytest's `python_files`"),
        ("pytest.ini", "[pytest]\nfilterwarnings =\n    error\n", "[pytest]\nfilterwarnings =\n    ignore::DeprecationWarning\nnorecursedirs = tests/slow\n", 2, "removes `error` from pytest's `filterwarnings`"),
        ("pytest.ini", "[pytest]\naddopts = --doctest-modules\n", "[pytest]\naddopts = -ra\n", 2, "removes `--doctest-modules`"),
    ];
    for (file, before, after, line, what) in cases {
        let all = found(&[change(file, Some(before), Some(after))]);
        assert!(
            all.iter()
                .any(|(p, l, r)| p == file && *l == line && r.contains(what)),
            "{file}: {all:#?}"
        );
    }
    // The pyproject case also deselects by marker; the filterwarnings case also stops recursing into a test folder.
    let all = found(&[change(cases[3].0, Some(cases[3].1), Some(cases[3].2))]);
    assert!(
        all.iter()
            .any(|(_, l, r)| *l == 6 && r.contains("adds `-m \"not slow\"`")),
        "{all:#?}"
    );
    let all = found(&[change(cases[5].0, Some(cases[5].1), Some(cases[5].2))]);
    assert!(
        all.iter()
            .any(|(_, l, r)| *l == 4
                && r.contains("adds `tests/slow` to pytest's `norecursedirs`")),
        "{all:#?}"
    );
}

#[test]
fn pytest_edits_that_select_nothing_are_no_finding() {
    let cases = [
        // Output and markers, a wider testpaths, a plugin switched off, layout.
        ("pytest.ini", "[pytest]\naddopts = -q\ntestpaths = tests\n", "[pytest]\n# why\naddopts = -q -ra --strict-markers -p no:cacheprovider\ntestpaths =\n    tests\n    more\nmarkers =\n    slow: slow tests\n"),
        // A new file with settings that select nothing; norecursedirs that the defaults already skip.
        ("pyproject.toml", "[project]\nname = \"x\"\n", "[project]\nname = \"x\"\n[tool.pytest.ini_options]\naddopts = \"-ra\"\nnorecursedirs = [\".venv\", \"build\"]\nminversion = \"7.0\"\n"),
        // Sections other than pytest's.
        ("setup.cfg", "[flake8]\nignore = E1\n", "[flake8]\nignore = E1 E2\n[pytest]\naddopts = -k x\n"),
    ];
    for (file, before, after) in cases {
        assert!(
            found(&[change(file, Some(before), Some(after))]).is_empty(),
            "{file}"
        );
    }
    assert!(found(&[change(
        "pytest.ini",
        None,
        Some("[pytest]\naddopts = -ra\n")
    )])
    .is_empty());
    // Paths that hold no tests, left out; a key removed is pytest's defaults again.
    let quiet =
        "[pytest]\naddopts = --ignore=.tox --ignore setup.py\nnorecursedirs = .tox ja docs\n";
    assert!(found(&[change("pytest.ini", Some("[pytest]\n"), Some(quiet))]).is_empty());
    assert!(found(&[change("pytest.ini", Some(quiet), Some("[pytest]\n"))]).is_empty());
    let tests = "[pytest]\naddopts = --ignore=tests/test_calc.py\nnorecursedirs = *\n";
    assert_eq!(
        found(&[change("pytest.ini", Some("[pytest]\n"), Some(tests))]).len(),
        2
    );
}

#[test]
fn conftest_hooks_and_collect_ignore_are_found() {
    let base = "import pytest\n\n\n@pytest.fixture\ndef calc():\n    return 1\n";
    let hook = format!("{base}\n\ndef pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if 'add' not in i.name]\n");
    let (path, line, reason) = one(&[change("tests/conftest.py", Some(base), Some(&hook))]);
    assert_eq!((path.as_str(), line), ("tests/conftest.py", 9));
    assert!(
        reason.contains("adds the pytest hook `pytest_collection_modifyitems`"),
        "{reason}"
    );
    let changed = hook.replace("'add'", "'zero'");
    let (_, _, reason) = one(&[change("tests/conftest.py", Some(&hook), Some(&changed))]);
    assert!(reason.contains("changes the pytest hook"), "{reason}");
    let ignore = format!("{base}\ncollect_ignore = ['test_calc.py']\n");
    let (_, line, reason) = one(&[change("conftest.py", Some(base), Some(&ignore))]);
    assert_eq!(line, 8);
    assert!(
        reason.contains("adds `test_calc.py` to `collect_ignore`"),
        "{reason}"
    );
    let setup =
        format!("{base}\ncollect_ignore = ['setup.py']\ncollect_ignore_glob = ['build/*']\n");
    assert!(found(&[change("conftest.py", Some(base), Some(&setup))]).is_empty());
}

#[test]
fn conftest_fixtures_and_marker_registration_are_no_finding() {
    let fixtures = "import pytest\n\n\n@pytest.fixture\ndef calc():\n    return 1\n\n\ndef pytest_configure(config):\n    config.addinivalue_line(\"markers\", \"slow: slow tests\")\n";
    assert_eq!(
        found(&[change("tests/conftest.py", None, Some(fixtures))]),
        vec![]
    );
    let base = fixtures.replace(
        "    config.addinivalue_line(\"markers\", \"slow: slow tests\")\n",
        "    pass\n",
    );
    let more = fixtures.replace(
        "\"slow: slow tests\")\n",
        "\"slow: slow tests\")\n    config.addinivalue_line('markers', 'fast: fast')\n",
    );
    assert!(found(&[change("tests/conftest.py", Some(&base), Some(&more))]).is_empty());
    let reformatted = "import pytest\n\n@pytest.fixture\ndef calc():  # one\n    return 1\n\ndef pytest_configure(config):\n    config.addinivalue_line('markers', 'slow: slow tests')\n";
    assert!(found(&[change(
        "tests/conftest.py",
        Some(fixtures),
        Some(reformatted)
    )])
    .is_empty());
}

#[test]
fn cargo_test_targets_turned_off_are_found() {
    let base = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[[test]]\nname = \"calc\"\npath = \"tests/calc.rs\"\n";
    let cases = [
        (
            base.replace(
                "path = \"src/lib.rs\"\n",
                "path = \"src/lib.rs\"\ntest = false\n",
            ),
            7,
            "sets `test = false` on the library",
        ),
        (
            format!("{base}harness = false\n"),
            11,
            "sets `harness = false` on the `[[test]]` target `calc`",
        ),
        (
            format!("{base}required-features = [\"slow\"]\n"),
            11,
            "require the feature `slow`",
        ),
        (
            format!("{base}\n[profile.test]\ndebug-assertions = false\n"),
            13,
            "turns `debug-assertions` off",
        ),
    ];
    for (after, line, what) in cases {
        let all = found(&[change("Cargo.toml", Some(base), Some(&after))]);
        assert!(
            all.iter().any(|(_, l, r)| *l == line && r.contains(what)),
            "{what}: {all:#?}"
        );
    }
    // `autotests = false` with no `[[test]]` listed: nothing runs `tests/` any more.
    let plain = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\n";
    let (_, line, reason) = one(&[change(
        "Cargo.toml",
        Some(plain),
        Some(&format!("{plain}autotests = false\n")),
    )]);
    assert_eq!(line, 4);
    assert!(reason.contains("sets `autotests = false`"), "{reason}");
    // Control: with targets listed, it is the choice to list them.
    let listing = base.replace(
        "version = \"0.1.0\"\n",
        "version = \"0.1.0\"\nautotests = false\n",
    );
    assert!(found(&[change("Cargo.toml", Some(base), Some(&listing))]).is_empty());
    let removed = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nautotests = false\n";
    let with = format!("{removed}\n[[test]]\nname = \"calc\"\n");
    let (_, _, reason) = one(&[change("Cargo.toml", Some(&with), Some(removed))]);
    assert!(
        reason.contains("removes the `[[test]]` target `calc`"),
        "{reason}"
    );
    // Controls: a dependency, a new test target, and what the base already had.
    let dep = format!("{base}\n[dependencies]\nserde = \"1\"\n\n[[test]]\nname = \"more\"\n\n[[bin]]\nname = \"fuzz\"\ntest = false\n");
    assert!(found(&[change("Cargo.toml", Some(base), Some(&dep))]).is_empty());
    let off = format!("{base}harness = false\n");
    assert!(found(&[change(
        "Cargo.toml",
        Some(&off),
        Some(&off.replace("0.1.0", "0.2.0"))
    )])
    .is_empty());
}
