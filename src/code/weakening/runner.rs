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

use std::collections::{BTreeMap, HashMap};

use tree_sitter::Node;

use super::tree::{quoted, statements};
use super::weakened_finding;
use crate::code::assertions::test_path;
use crate::code::lang::{self, Lang};
use crate::code::settings::{ini, toml_at, toml_line};
use crate::code::{ChangedFile, Finding};

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
            "conftest.py" => conftest(&c.path, before, after, out),
            "Cargo.toml" => cargo(&c.path, before, after, out),
            file => {
                let old = before.map(|b| pytest(file, b)).unwrap_or_default();
                pytest_edits(&c.path, &old, &pytest(file, after), out);
            }
        }
    }
}

/// One pytest setting: its values and its line.
#[derive(Debug, Clone, Default)]
struct Setting {
    values: Vec<String>,
    line: u32,
}

/// pytest's settings in one configuration file, by key.
type Settings = BTreeMap<String, Setting>;

/// The pytest settings of a configuration file named `file`.
fn pytest(file: &str, text: &str) -> Settings {
    let mut out = Settings::new();
    if file == "pyproject.toml" {
        let Ok(v) = toml::from_str::<toml::Value>(text) else {
            return out;
        };
        for (table, path) in [
            (
                "tool.pytest.ini_options",
                &["tool", "pytest", "ini_options"][..],
            ),
            ("tool.pytest", &["tool", "pytest"][..]),
        ] {
            let Some(t) = toml_at(&v, path).and_then(|t| t.as_table()) else {
                continue;
            };
            for (key, value) in t.iter().filter(|(_, v)| !v.is_table()) {
                // An array is already split: `addopts = ["-m", "not slow"]` is two words.
                let values = match value {
                    toml::Value::Array(a) => a.iter().map(toml_text).collect(),
                    other => split(key, &[toml_text(other)]),
                };
                out.insert(
                    key.clone(),
                    Setting {
                        values,
                        line: toml_line(text, table, None, key).unwrap_or(1),
                    },
                );
            }
        }
        return out;
    }
    let section = if file == "setup.cfg" {
        "tool:pytest"
    } else {
        "pytest"
    };
    for e in ini(text).into_iter().filter(|e| e.section == section) {
        out.insert(
            e.key.clone(),
            Setting {
                values: split(&e.key, &e.lines),
                line: e.line,
            },
        );
    }
    out
}

/// A TOML value as pytest reads it from a string.
fn toml_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The values of a setting: `addopts` split like a command line, the line-per-entry
/// keys by line, every other list by whitespace.
fn split(key: &str, lines: &[String]) -> Vec<String> {
    match key {
        "addopts" => lines.iter().flat_map(|l| shell_words(l)).collect(),
        "filterwarnings" | "markers" => lines.iter().map(|l| l.trim().to_string()).collect(),
        _ => lines
            .iter()
            .flat_map(|l| l.split_whitespace().map(str::to_string))
            .collect(),
    }
}

/// Splits a command line into words, with `'…'` and `"…"` quoting.
fn shell_words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

/// `addopts` options that choose which tests run, with whether they take a value.
const SELECTING: &[(&str, bool)] = &[
    ("-k", true),
    ("-m", true),
    ("--deselect", true),
    ("--ignore", true),
    ("--ignore-glob", true),
    ("--co", false),
    ("--collect-only", false),
    ("--lf", false),
    ("--last-failed", false),
    ("--sw", false),
    ("--stepwise", false),
    ("--sw-skip", false),
    ("--stepwise-skip", false),
];

/// `addopts` options that add tests to the run (doctests).
const ADDING: &[(&str, bool)] = &[("--doctest-modules", false), ("--doctest-glob", true)];

/// The options of `args` that are among `known`, each with its value (`-k not add`).
fn options(args: &[String], known: &[(&str, bool)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        let (opt, glued) = match arg.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ if arg.len() > 2 && !arg.starts_with("--") && arg.starts_with('-') => {
                (&arg[..2], Some(arg[2..].to_string()))
            }
            _ => (arg.as_str(), None),
        };
        let Some((_, takes)) = known.iter().find(|(o, _)| *o == opt) else {
            continue;
        };
        if !takes {
            out.push(opt.to_string());
            continue;
        }
        let value = match glued {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i - 1).cloned().unwrap_or_default()
            }
        };
        out.push(if value.contains(' ') {
            format!("{opt} \"{value}\"")
        } else {
            format!("{opt} {value}")
        });
    }
    out
}

/// Whether a path or pattern that pytest is told to leave out may hold tests: a test path
/// (`tests/slow`, `test_calc.py`) or a pattern that matches one (`*`, `*.py`, `t*`).
/// Leaving out `.tox`, `build`, `docs` or `setup.py` leaves out no test.
fn may_hold_tests(pattern: &str) -> bool {
    let pattern = pattern.trim_end_matches('/');
    test_path(pattern)
        || ["tests", "test_x.py", "x_test.py"]
            .iter()
            .any(|p| crate::glob::matches(pattern, p))
}

/// The values of `key`, or pytest's default when the key is absent.
fn values_or_default<'s>(settings: &'s Settings, key: &str) -> Vec<&'s str> {
    match settings.get(key) {
        Some(s) => s.values.iter().map(String::as_str).collect(),
        None => match key {
            "python_files" => vec!["test_*.py", "*_test.py"],
            "python_classes" => vec!["Test"],
            "python_functions" => vec!["test"],
            "norecursedirs" => vec![
                "*.egg",
                ".*",
                "_darcs",
                "build",
                "CVS",
                "dist",
                "node_modules",
                "venv",
                "{arch}",
            ],
            _ => Vec::new(),
        },
    }
}

/// Compares pytest's settings of one file.
fn pytest_edits(path: &str, old: &Settings, new: &Settings, out: &mut Vec<Finding>) {
    let line = |key: &str| new.get(key).or(old.get(key)).map_or(1, |s| s.line);
    let mut flag = |key: &str, what: String, why: &str| {
        out.push(weakened_finding(
            path,
            line(key),
            format!("the change {what} in {path}: {why}"),
        ));
    };
    let args = |s: &Settings| {
        s.get("addopts")
            .map(|a| a.values.clone())
            .unwrap_or_default()
    };
    let (old_args, new_args) = (args(old), args(new));
    let before = options(&old_args, SELECTING);
    // `--ignore=.tox` or `--ignore setup.py` leaves out no test; `--ignore tests/x` does.
    let leaves_tests = |opt: &String| match opt.split_once(' ') {
        Some(("--ignore" | "--ignore-glob", path)) => may_hold_tests(path.trim_matches('"')),
        _ => true,
    };
    for opt in options(&new_args, SELECTING)
        .into_iter()
        .filter(|o| !before.contains(o) && leaves_tests(o))
    {
        flag(
            "addopts",
            format!("adds `{opt}` to pytest's `addopts`"),
            "the tests it leaves out no longer run",
        );
    }
    let after = options(&new_args, ADDING);
    for opt in options(&old_args, ADDING)
        .into_iter()
        .filter(|o| !after.contains(o))
    {
        flag(
            "addopts",
            format!("removes `{opt}` from pytest's `addopts`"),
            "the doctests it ran no longer run",
        );
    }
    if let (Some(o), Some(n)) = (old.get("testpaths"), new.get("testpaths")) {
        for gone in o.values.iter().filter(|p| !n.values.contains(p)) {
            flag(
                "testpaths",
                format!("removes `{gone}` from pytest's `testpaths`"),
                "the tests there are no longer collected",
            );
        }
    }
    for key in ["python_files", "python_classes", "python_functions"] {
        let n = values_or_default(new, key);
        for gone in values_or_default(old, key)
            .into_iter()
            .filter(|p| !n.contains(p))
        {
            flag(
                key,
                format!("drops `{gone}` from pytest's `{key}`"),
                "the tests only it matched are no longer collected",
            );
        }
    }
    // Only an explicit list can add a directory (no key is pytest's defaults again).
    let skipped = values_or_default(old, "norecursedirs");
    for dir in new
        .get("norecursedirs")
        .map(|n| n.values.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|d| may_hold_tests(d))
        .filter(|d| !skipped.iter().any(|p| p == d || crate::glob::matches(p, d)))
    {
        flag(
            "norecursedirs",
            format!("adds `{dir}` to pytest's `norecursedirs`"),
            "the tests there are no longer collected",
        );
    }
    let strict = |s: &Settings| {
        s.get("xfail_strict")
            .is_some_and(|x| x.values.iter().any(|v| v.eq_ignore_ascii_case("true")))
    };
    if strict(old) && !strict(new) {
        flag(
            "xfail_strict",
            "turns pytest's `xfail_strict` off".to_string(),
            "an expected failure that passes no longer fails the run",
        );
    }
    let warnings = |s: &Settings| {
        s.get("filterwarnings")
            .map(|f| f.values.clone())
            .unwrap_or_default()
    };
    let kept = warnings(new);
    for gone in warnings(old)
        .into_iter()
        .filter(|w| w.starts_with("error") && !kept.contains(w))
    {
        flag(
            "filterwarnings",
            format!("removes `{gone}` from pytest's `filterwarnings`"),
            "the warnings it made test failures no longer fail",
        );
    }
}

/// pytest hooks that decide what is collected, what runs, or what an outcome is.
const HOOKS: &[&str] = &[
    "pytest_cmdline_main",
    "pytest_load_initial_conftests",
    "pytest_configure",
    "pytest_collection",
    "pytest_collection_modifyitems",
    "pytest_ignore_collect",
    "pytest_collect_file",
    "pytest_pycollect_makemodule",
    "pytest_pycollect_makeitem",
    "pytest_generate_tests",
    "pytest_runtest_protocol",
    "pytest_runtest_setup",
    "pytest_runtest_call",
    "pytest_pyfunc_call",
    "pytest_runtest_makereport",
    "pytest_report_teststatus",
    "pytest_sessionfinish",
];

/// What a `conftest.py` says about the run: its hooks by name (with their meaning) and the
/// paths it keeps pytest from collecting (with their lines).
struct Conftest {
    hooks: HashMap<String, (String, u32)>,
    ignored: Vec<(String, u32)>,
}

/// Reads a `conftest.py`.
fn read_conftest(text: &str) -> Option<Conftest> {
    let tree = lang::parse(Lang::Python, text)?;
    let root = tree.root_node();
    let mut hooks = HashMap::new();
    let mut ignored = Vec::new();
    for stmt in statements(root) {
        let def = match stmt.kind() {
            "decorated_definition" => stmt.child_by_field_name("definition"),
            "function_definition" => Some(stmt),
            _ => None,
        };
        let hook = def.and_then(|d| {
            let name = lang::text(d.child_by_field_name("name")?, text);
            HOOKS.contains(&name).then_some((name, d))
        });
        if let Some((name, d)) = hook {
            hooks.insert(
                name.to_string(),
                (hook_meaning(name, stmt, d, text), lang::start_line(d)),
            );
            continue;
        }
        if targets_collect_ignore(stmt, text) {
            lang::walk(stmt, &mut |n| {
                if n.kind() == "string_content" {
                    ignored.push((lang::text(n, text).to_string(), lang::start_line(n)));
                }
                true
            });
        }
    }
    Some(Conftest { hooks, ignored })
}

/// What a hook does, by meaning; `pytest_configure`'s marker registrations
/// (`config.addinivalue_line("markers", …)`) select nothing and are left out.
fn hook_meaning(name: &str, stmt: Node<'_>, def: Node<'_>, text: &str) -> String {
    if name != "pytest_configure" {
        return lang::meaning(stmt, text);
    }
    let Some(body) = def.child_by_field_name("body") else {
        return String::new();
    };
    statements(body)
        .into_iter()
        .filter(|s| !registers_markers(*s, text))
        .map(|s| lang::meaning(s, text))
        .collect::<Vec<_>>()
        .join(" ; ")
}

/// Whether a statement is `….addinivalue_line("markers", …)`.
fn registers_markers(stmt: Node<'_>, text: &str) -> bool {
    let Some(call) = stmt.named_child(0).filter(|c| c.kind() == "call") else {
        return false;
    };
    let adds = call
        .child_by_field_name("function")
        .is_some_and(|f| lang::text(f, text).ends_with("addinivalue_line"));
    let first = call
        .child_by_field_name("arguments")
        .and_then(|a| a.named_child(0))
        .map(|a| lang::text(a, text).trim_matches(['"', '\'']));
    adds && first == Some("markers")
}

/// Whether a module-level statement adds to `collect_ignore` or `collect_ignore_glob`
/// (`=`, `+=`, `.append(…)`, `.extend(…)`).
fn targets_collect_ignore(stmt: Node<'_>, text: &str) -> bool {
    let Some(expr) = stmt
        .named_child(0)
        .filter(|_| stmt.kind() == "expression_statement")
    else {
        return false;
    };
    let target = match expr.kind() {
        "assignment" | "augmented_assignment" => expr.child_by_field_name("left"),
        "call" => expr
            .child_by_field_name("function")
            .and_then(|f| f.child_by_field_name("object")),
        _ => None,
    };
    target.is_some_and(|t| {
        matches!(
            lang::text(t, text),
            "collect_ignore" | "collect_ignore_glob"
        )
    })
}

/// Compares a `conftest.py` with the base's.
fn conftest(path: &str, before: Option<&str>, after: &str, out: &mut Vec<Finding>) {
    let Some(new) = read_conftest(after) else {
        return;
    };
    let old = before.and_then(read_conftest);
    let mut hooks: Vec<(&String, &(String, u32))> = new.hooks.iter().collect();
    hooks.sort_by_key(|(_, (_, line))| *line);
    for (name, (meaning, line)) in hooks {
        // A hook that does nothing that counts (marker registrations only) is as good as
        // none.
        let verb = match old.as_ref().and_then(|o| o.hooks.get(name)) {
            Some((m, _)) if m == meaning => continue,
            _ if meaning.is_empty() => continue,
            Some(_) => "changes",
            None => "adds",
        };
        out.push(weakened_finding(
            path,
            *line,
            format!(
                "the change {verb} the pytest hook `{name}` in {path}, which decides which tests are collected and run and how their outcomes count"
            ),
        ));
    }
    let had: Vec<&str> = old
        .iter()
        .flat_map(|o| o.ignored.iter().map(|(p, _)| p.as_str()))
        .collect();
    for (ignored, line) in new
        .ignored
        .iter()
        .filter(|(p, _)| !had.contains(&p.as_str()) && may_hold_tests(p))
    {
        out.push(weakened_finding(
            path,
            *line,
            format!(
                "the change adds {} to `collect_ignore` in {path}: pytest no longer collects the tests there",
                quoted(ignored)
            ),
        ));
    }
}

/// Compares a `Cargo.toml` with the base's.
fn cargo(path: &str, before: Option<&str>, after: &str, out: &mut Vec<Finding>) {
    let parse = |t: &str| toml::from_str::<toml::Value>(t).ok();
    let Some(new) = parse(after) else {
        return;
    };
    let old = before
        .and_then(parse)
        .unwrap_or(toml::Value::Table(Default::default()));
    let off = |v: &toml::Value, at: &[&str], key: &str| {
        toml_at(v, at)
            .and_then(|t| t.get(key))
            .and_then(|b| b.as_bool())
            == Some(false)
    };
    let mut flag = |table: &str, nth: Option<usize>, key: &str, what: String, why: &str| {
        let line = toml_line(after, table, nth, key).unwrap_or(1);
        out.push(weakened_finding(
            path,
            line,
            format!("the change {what} in {path}: {why}"),
        ));
    };
    // With `[[test]]` targets listed, `autotests = false` is the choice to list them all.
    let listed = new
        .get("test")
        .and_then(|t| t.as_array())
        .is_some_and(|a| !a.is_empty());
    if off(&new, &["package"], "autotests") && !off(&old, &["package"], "autotests") && !listed {
        flag(
            "package",
            None,
            "autotests",
            "sets `autotests = false`".into(),
            "`cargo test` no longer finds the tests under `tests/` that no `[[test]]` lists",
        );
    }
    for key in ["test", "doctest", "harness"] {
        if off(&new, &["lib"], key) && !off(&old, &["lib"], key) {
            flag(
                "lib",
                None,
                key,
                format!("sets `{key} = false` on the library"),
                if key == "doctest" {
                    "`cargo test` no longer runs its doc tests"
                } else {
                    "`cargo test` no longer runs its unit tests"
                },
            );
        }
    }
    let targets = |v: &toml::Value, kind: &str| -> Vec<toml::Value> {
        v.get(kind)
            .and_then(|t| t.as_array())
            .cloned()
            .unwrap_or_default()
    };
    let id = |t: &toml::Value| {
        t.get("name")
            .or_else(|| t.get("path"))
            .and_then(|n| n.as_str())
            .unwrap_or("")
            .to_string()
    };
    for kind in ["test", "bin"] {
        let olds = targets(&old, kind);
        for (i, t) in targets(&new, kind).iter().enumerate() {
            let name = id(t);
            // A target new in the change ran no test of the base.
            let Some(base) = olds.iter().find(|o| id(o) == name) else {
                continue;
            };
            let was_off = |key: &str| base.get(key).and_then(|x| x.as_bool()) == Some(false);
            for key in ["test", "harness"] {
                if t.get(key).and_then(|x| x.as_bool()) == Some(false) && !was_off(key) {
                    flag(
                        kind,
                        Some(i),
                        key,
                        format!("sets `{key} = false` on the `[[{kind}]]` target `{name}`"),
                        "`cargo test` no longer runs its tests",
                    );
                }
            }
            let features = |t: &toml::Value| -> Vec<String> {
                t.get("required-features")
                    .and_then(|f| f.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let had = features(base);
            for f in features(t).into_iter().filter(|f| !had.contains(f)) {
                flag(
                    kind,
                    Some(i),
                    "required-features",
                    format!("makes the `[[{kind}]]` target `{name}` require the feature `{f}`"),
                    "`cargo test` skips it unless that feature is on",
                );
            }
        }
    }
    if off(&new, &["package"], "autotests") {
        let news: Vec<String> = targets(&new, "test").iter().map(id).collect();
        for gone in targets(&old, "test")
            .iter()
            .map(id)
            .filter(|n| !news.contains(n))
        {
            flag(
                "package",
                None,
                "autotests",
                format!("removes the `[[test]]` target `{gone}` while `autotests = false`"),
                "nothing runs its tests any more",
            );
        }
    }
    for profile in ["test", "dev"] {
        let at = ["profile", profile];
        for key in ["debug-assertions", "overflow-checks"] {
            if off(&new, &at, key) && !off(&old, &at, key) {
                flag(
                    &format!("profile.{profile}"),
                    None,
                    key,
                    format!("turns `{key}` off in `[profile.{profile}]`"), "the checks it enabled (`debug_assert!`, overflow panics) no longer fail the tests",
                );
            }
        }
    }
}
