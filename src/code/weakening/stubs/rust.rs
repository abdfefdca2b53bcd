//! Rust: the non-test functions of a test module that shadow what its assertions call.

use std::collections::HashSet;

use tree_sitter::Node;

use super::super::tree::{quoted, File};
use super::stub::{replaced, Call, Stub, Target};
use crate::code::assertions::{read_assertions, test_nodes, Assertion};
use crate::code::lang::{self, Lang};
use crate::code::rust::{use_leaves, Leaf};
use crate::code::Finding;

/// Rust: non-test functions of a test module that shadow what its assertions call.
pub(super) fn rust(file: &File<'_>, out: &mut Vec<Finding>) {
    let Some(after) = &file.after else {
        return;
    };
    let old_modules = file
        .before
        .as_ref()
        .map(|b| test_modules(b.text, &b.tree))
        .unwrap_or_default();
    // The functions each test module gains: most changes add none, and then the
    // assertions are never read.
    let mut gained = Vec::new();
    for module in test_modules(after.text, &after.tree) {
        let old = old_modules.iter().find(|o| o.path == module.path);
        let new_fns: Vec<(String, Node<'_>)> = module
            .fns
            .iter()
            .filter(|(name, _)| !old.is_some_and(|o| o.fns.iter().any(|(n, _)| n == name)))
            .cloned()
            .collect();
        if !new_fns.is_empty() {
            gained.push((module, old, new_fns));
        }
    }
    if gained.is_empty() {
        return;
    }
    let src = after.text;
    let new_asserts = read_assertions(Lang::Rust, after.tree.root_node(), src);
    let old_asserts = file
        .before
        .as_ref()
        .map(|b| read_assertions(Lang::Rust, b.tree.root_node(), b.text))
        .unwrap_or_default();
    for (module, old, new_fns) in gained {
        let now = reach(file.path, &module, src, &after.tree, &new_asserts);
        let base = old
            .zip(file.before.as_ref())
            .map(|(o, b)| reach(file.path, o, b.text, &b.tree, &old_asserts));
        for (name, node) in new_fns {
            // A glob `use` (`use super::*`) makes the file's free functions visible, and a
            // local function shadows them; one that calls the real function through a
            // path (`super::check(…)`) wraps it rather than replacing it.
            let shadows = (now.star && now.outside.contains(&name))
                || base.as_ref().is_some_and(|b| b.foreign.contains(&name));
            if !shadows || calls_through_path(node, &name, src) {
                continue;
            }
            let Some(call) = now.calls.iter().find(|c| c.first == name) else {
                continue;
            };
            {
                let shown = src
                    .get(node.start_byte()..)
                    .and_then(|s| s.split('{').next())
                    .unwrap_or("");
                let stub = Stub {
                    line: lang::start_line(node),
                    key: String::new(),
                    shown: quoted(shown.trim()),
                    target: Target::Name(name.clone()),
                    scope: None,
                };
                out.push(replaced(file.path, &stub, call));
            }
        }
    }
}

/// A Rust module (or file) that holds tests.
struct TestModule<'t> {
    /// The `mod_item`, or the file's root for tests at top level.
    node: Node<'t>,
    /// The module path (`tests`, `a::tests`; empty for the file).
    path: String,
    /// The non-test functions defined directly in it.
    fns: Vec<(String, Node<'t>)>,
}

/// The test modules of a Rust file (the file itself when it has tests at top level).
fn test_modules<'t>(src: &'t str, tree: &'t tree_sitter::Tree) -> Vec<TestModule<'t>> {
    let tests = test_nodes(Lang::Rust, tree.root_node(), src);
    let test_ids: HashSet<usize> = tests.iter().map(|t| t.id()).collect();
    let mut out: Vec<TestModule<'t>> = Vec::new();
    for t in &tests {
        let Some(h) = t
            .parent()
            .map(|p| p.parent().filter(|m| m.kind() == "mod_item").unwrap_or(p))
        else {
            continue;
        };
        if out.iter().any(|m| m.node.id() == h.id()) {
            continue;
        }
        let body = if h.kind() == "mod_item" {
            h.child_by_field_name("body").unwrap_or(h)
        } else {
            h
        };
        let fns = super::super::tree::statements(body)
            .into_iter()
            .filter(|n| n.kind() == "function_item" && !test_ids.contains(&n.id()))
            .filter_map(|n| {
                let name = n.child_by_field_name("name")?;
                Some((lang::text(name, src).to_string(), n))
            })
            .collect();
        let mut mods = Vec::new();
        let mut n = Some(h);
        while let Some(m) = n {
            if m.kind() == "mod_item" {
                if let Some(name) = m.child_by_field_name("name") {
                    mods.push(lang::text(name, src));
                }
            }
            n = m.parent();
        }
        mods.reverse();
        out.push(TestModule {
            node: h,
            path: mods.join("::"),
            fns,
        });
    }
    out
}

/// What a test module's assertions reach.
struct Reach {
    /// The bare-name calls its assertions make.
    calls: Vec<Call>,
    /// The free functions the file defines outside the module.
    outside: HashSet<String>,
    /// Whether the module has a glob `use` from outside the tests (`use super::*`).
    star: bool,
    /// The names its assertions call that reach the code under test: defined outside
    /// the module in the file, or brought by a `use` of a path that is not one of the
    /// file's own modules (`mod common;`).
    foreign: HashSet<String>,
}

/// What the assertions (`asserts`, of the whole file at `path`) of one test module reach.
fn reach(
    path: &str,
    module: &TestModule<'_>,
    src: &str,
    tree: &tree_sitter::Tree,
    asserts: &[Assertion],
) -> Reach {
    let h = module.node;
    let inside = |n: Node<'_>| n.start_byte() >= h.start_byte() && n.end_byte() <= h.end_byte();
    let mut outside = HashSet::new();
    let mut modules: HashSet<&str> = HashSet::from(["self"]);
    lang::walk(tree.root_node(), &mut |n| {
        let name = n.child_by_field_name("name").map(|m| lang::text(m, src));
        match (n.kind(), name) {
            ("function_item", Some(name)) if !inside(n) && free(n) => {
                outside.insert(name.to_string());
            }
            ("mod_item", Some(name)) => {
                modules.insert(name);
            }
            _ => {}
        }
        true
    });
    // What the module's own `use`s bring from outside the tests.
    let body = if h.kind() == "mod_item" {
        h.child_by_field_name("body").unwrap_or(h)
    } else {
        h
    };
    let mut leaves = Vec::new();
    for u in super::super::tree::statements(body)
        .into_iter()
        .filter(|u| u.kind() == "use_declaration")
    {
        if let Some(arg) = u.child_by_field_name("argument") {
            use_leaves(arg, src, &[], &mut leaves);
        }
    }
    let from_code = |leaf: &&Leaf<'_>| {
        leaf.path
            .first()
            .is_some_and(|m| !modules.contains(m.as_str()))
    };
    let used: HashSet<String> = leaves
        .iter()
        .filter(from_code)
        .filter_map(|l| l.binds.clone())
        .collect();
    let star = leaves
        .iter()
        .filter(from_code)
        .any(|l| l.path.last().is_some_and(|s| s == "*"));
    let (from, to) = (lang::start_line(h), lang::end_line(h));
    let calls: Vec<Call> = asserts
        .iter()
        .filter(|a| (from..=to).contains(&a.line))
        .flat_map(|a| {
            a.callees
                .iter()
                .filter(|c| !c.contains("::"))
                .map(|c| Call {
                    written: c.clone(),
                    first: c.clone(),
                    member: None,
                    assertion: quoted(&a.text),
                    line: a.line,
                    at: format!("{path}:{}", a.line),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let local: HashSet<&str> = module.fns.iter().map(|(n, _)| n.as_str()).collect();
    let foreign = calls
        .iter()
        .map(|c| c.first.clone())
        .filter(|c| {
            outside.contains(c) || used.contains(c) || (star && !local.contains(c.as_str()))
        })
        .collect();
    Reach {
        calls,
        outside,
        star,
        foreign,
    }
}

/// Whether a Rust `fn` is a free function of a module or file (not a method, which a free
/// function never shadows).
fn free(function: Node<'_>) -> bool {
    match function.parent() {
        Some(p) if p.kind() == "source_file" => true,
        Some(p) if p.kind() == "declaration_list" => {
            p.parent().is_some_and(|m| m.kind() == "mod_item")
        }
        _ => false,
    }
}

/// Whether a function's body calls `name` through a path (`super::name`,
/// `crate::calc::name`): the real function, wrapped.
fn calls_through_path(function: Node<'_>, name: &str, src: &str) -> bool {
    let mut found = false;
    lang::walk(function, &mut |n| {
        if n.kind() == "scoped_identifier"
            && n.child_by_field_name("name")
                .is_some_and(|last| lang::text(last, src) == name)
        {
            found = true;
        }
        !found
    });
    found
}
