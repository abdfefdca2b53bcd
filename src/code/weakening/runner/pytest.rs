//! pytest's settings (`addopts`, `testpaths`, `python_files`, `filterwarnings`, …) in
//! the files that hold them, and the edits of them that change which tests run or how
//! their outcomes count.

use std::collections::BTreeMap;

use super::super::weakened_finding;
use crate::code::assertions::test_path;
use crate::code::settings::{ini, toml_at, toml_line};
use crate::code::Finding;

/// One pytest setting: its values and its line.
#[derive(Debug, Clone, Default)]
pub(super) struct Setting {
    values: Vec<String>,
    line: u32,
}

/// pytest's settings in one configuration file, by key.
pub(super) type Settings = BTreeMap<String, Setting>;

/// The pytest settings of a configuration file named `file`.
pub(super) fn pytest(file: &str, text: &str) -> Settings {
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
pub(super) fn may_hold_tests(pattern: &str) -> bool {
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
pub(super) fn pytest_edits(path: &str, old: &Settings, new: &Settings, out: &mut Vec<Finding>) {
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
