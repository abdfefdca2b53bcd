//! The test runner's configuration: edits that change which tests run, or how their
//! outcomes count, without touching a test.
//!
//! What is read, and what is a finding (each compared with the base's parsed
//! configuration, so layout and comments never count):
//!
//! - pytest's settings in `pytest.ini`/`.pytest.ini` `[pytest]`, `tox.ini` `[pytest]`,
//!   `setup.cfg` `[tool:pytest]` and `pyproject.toml` `[tool.pytest.ini_options]` (or
//!   `[tool.pytest]`): an `addopts` option added that selects or deselects tests (`-k`,
//!   `-m`, `--deselect`, `--ignore`, `--ignore-glob`, `--collect-only`, `--last-failed`,
//!   `--stepwise`) or one removed that ran tests (`--doctest-modules`, `--doctest-glob`);
//!   a `testpaths` entry removed (while some remain: none means "everywhere"); a
//!   `python_files`/`python_classes`/`python_functions` pattern removed (pytest's
//!   defaults count when the key is absent); a `norecursedirs` entry written that the
//!   base's (or the default) patterns did not already skip; `xfail_strict` turned off; an
//!   `error` entry of `filterwarnings` removed. Other keys (`markers`, `log_cli`,
//!   `minversion`, …) select nothing and are never findings.
//! - `conftest.py`: a pytest hook that decides what is collected, what runs or what an
//!   outcome is (`pytest_collection_modifyitems`, `pytest_runtest_makereport`,
//!   `pytest_sessionfinish`, …) added or changed by meaning (`pytest_configure` without
//!   its `addinivalue_line("markers", …)` registrations), and a path added to
//!   `collect_ignore`/`collect_ignore_glob`. A new `conftest.py` that only adds fixtures
//!   is no finding; a fixture that replaces what a test asserts is `stubs.rs`'s.
//!
//!   A path left out (`--ignore`, `norecursedirs`, `collect_ignore`) counts only when it
//!   may hold tests (a test path, or a pattern that matches one): leaving out `.tox`,
//!   `build` or `setup.py` is none.
//! - `Cargo.toml`: `autotests = false` with no `[[test]]` listed (with targets listed it is
//!   the choice to list them all); `test = false`, `doctest = false` or
//!   `harness = false` on the library or a `[[test]]`/`[[bin]]` target the base had; a
//!   `required-features` entry added to such a target (`cargo test` skips it without the
//!   feature); a `[[test]]` target removed while `autotests = false` (nothing finds its
//!   file any more); `debug-assertions` or `overflow-checks` turned off in
//!   `[profile.test]` or `[profile.dev]` (`debug_assert!` stops checking).
//!
//! Left out, because the changed files alone cannot tell: a new configuration file that
//! shadows another one (a `pytest.ini` added beside a `setup.cfg`), `testpaths` written
//! where the base had none (it narrows the run only if tests live elsewhere), and a
//! `[[test]]` target new in `Cargo.toml` that takes over a file `tests/` already had.

use crate::code::{ChangedFile, Finding};

mod cargo;
mod conftest;
mod pytest;

/// The file name of a path.
fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Whether `path` is a pytest `conftest.py`.
pub(super) fn is_conftest(path: &str) -> bool {
    name(path) == "conftest.py"
}

/// Whether `path` is a file that configures a test runner (see the module's doc).
pub(super) fn is_config(path: &str) -> bool {
    matches!(
        name(path),
        "pytest.ini" | ".pytest.ini" | "tox.ini" | "setup.cfg" | "pyproject.toml" | "Cargo.toml"
    ) || is_conftest(path)
}

/// Finds the runner configuration edits of `changes` that weaken the tests.
pub(super) fn check(changes: &[ChangedFile], out: &mut Vec<Finding>) {
    for c in changes.iter().filter(|c| is_config(&c.path)) {
        let Some(after) = c.after.as_deref() else {
            continue;
        };
        let before = c.before.as_deref();
        match name(&c.path) {
            "conftest.py" => conftest::conftest(&c.path, before, after, out),
            "Cargo.toml" => cargo::cargo(&c.path, before, after, out),
            file => {
                let old = before.map(|b| pytest::pytest(file, b)).unwrap_or_default();
                pytest::pytest_edits(&c.path, &old, &pytest::pytest(file, after), out);
            }
        }
    }
}
