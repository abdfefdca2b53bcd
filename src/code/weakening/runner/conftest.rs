//! A `conftest.py`'s hooks and `collect_ignore`: the edits that change what pytest
//! collects, runs, or counts.

use std::collections::HashMap;

use tree_sitter::Node;

use super::super::tree::{quoted, statements};
use super::super::weakened_finding;
use super::pytest::may_hold_tests;
use crate::code::lang::{self, Lang};
use crate::code::Finding;

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
pub(super) fn conftest(path: &str, before: Option<&str>, after: &str, out: &mut Vec<Finding>) {
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
