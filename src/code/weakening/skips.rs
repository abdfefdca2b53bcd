//! Skips: a test the base had that the change keeps from running or from failing.
//!
//! A skipped test passes every run it is in, and an expected failure turns a failing
//! assertion into a pass, so a change that puts either on an existing test weakens it as
//! surely as deleting it. A mark applies to a test from wherever it is written: on the
//! test itself, on an enclosing class or module, in a setup function the test runs
//! through, or as a statement in its body. Read from the syntax tree:
//!
//! - Python decorators `@pytest.mark.skip`/`skipif`/`xfail`, `@unittest.skip`/`skipIf`/
//!   `skipUnless`/`expectedFailure` (and the same names imported bare), `pytestmark = …`
//!   in a module or class, and the statements `pytest.skip()`, `pytest.xfail()`,
//!   `pytest.importorskip()`, `self.skipTest()`, `raise SkipTest(…)` in the test, in a
//!   setup function or fixture run for it (`setUp`, `setup_method`, `autouse=True`, …) or
//!   at module level;
//! - Rust attributes `#[ignore]`, `#[should_panic]`, `#[cfg_attr(…, ignore)]`, and a
//!   `#[cfg(…)]` other than `cfg(test)` on the test or an enclosing module, or
//!   `#![cfg(…)]` at the top of its file or module.
//!
//! A mark the base's version of the same test already had (by meaning: layout, quotes and
//! comments aside) is no finding; a changed condition (`skipif(a)` to `skipif(b)`) is.

use std::collections::{BTreeMap, HashMap};

use tree_sitter::Node;

use super::tree::{find, listed, quoted, statements, Pair, Test};
use super::weakened_finding;
use crate::code::lang::{self, Lang};
use crate::code::rust::outer_attributes;
use crate::code::Finding;

/// What a mark does to the tests under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// They do not run.
    Skip,
    /// Their failure passes.
    ExpectFail,
    /// They are built only where a condition holds.
    Condition,
}

impl Effect {
    /// What the mark does, for a sentence about `n` tests.
    fn consequence(self, n: usize) -> &'static str {
        match (self, n > 1) {
            (Effect::Skip, false) => "it no longer runs",
            (Effect::Skip, true) => "they no longer run",
            (Effect::ExpectFail, false) => "its failure no longer fails the run",
            (Effect::ExpectFail, true) => "their failures no longer fail the run",
            (Effect::Condition, false) => "it is built and run only where that condition holds",
            (Effect::Condition, true) => "they are built and run only where that condition holds",
        }
    }
}

/// One mark that applies to a test.
#[derive(Clone)]
struct Mark {
    /// What it says, by meaning.
    key: String,
    /// How it is written, for the reader.
    shown: String,
    /// Its line.
    line: u32,
    /// What it does.
    effect: Effect,
}

/// A mark the change adds, with the base tests it newly covers.
struct Added {
    /// The mark.
    mark: Mark,
    /// The tests under it, by qualified name.
    names: Vec<String>,
    /// Where the base had the first of them.
    at: String,
}

/// Finds the marks the change puts on tests the base had, one finding per mark (naming
/// every base test under it).
pub(super) fn check(pairs: &[Pair<'_>], out: &mut Vec<Finding>) {
    // By (path, line, key): a class or module mark covers many tests, one finding.
    let mut added: BTreeMap<(String, u32, String), Added> = BTreeMap::new();
    let mut scopes = HashMap::new();
    for pair in pairs {
        let mut had: HashMap<String, usize> = HashMap::new();
        for m in marks(&pair.old, &mut scopes) {
            *had.entry(m.key).or_default() += 1;
        }
        for m in marks(&pair.new, &mut scopes) {
            match had.get_mut(&m.key) {
                Some(n) if *n > 0 => *n -= 1,
                _ => {
                    let slot = (pair.new.path.to_string(), m.line, m.key.clone());
                    added
                        .entry(slot)
                        .or_insert_with(|| Added {
                            mark: m,
                            names: Vec::new(),
                            at: pair.old.at(),
                        })
                        .names
                        .push(pair.new.name());
                }
            }
        }
    }
    for ((path, line, _), Added { mark, names, at }) in added {
        let whom = if names.len() == 1 {
            format!("the test `{}` that {at} had", names[0])
        } else {
            format!("{} tests the base had ({})", names.len(), listed(&names))
        };
        out.push(weakened_finding(
            &path,
            line,
            format!(
                "the change adds {} to {whom}: {}",
                mark.shown,
                mark.effect.consequence(names.len())
            ),
        ));
    }
}

/// Every mark that applies to `test`, wherever it is written. The marks of an enclosing
/// class, module or file are read once per scope (`scopes`, by node), not once per test.
fn marks(test: &Test<'_>, scopes: &mut HashMap<usize, Vec<Mark>>) -> Vec<Mark> {
    let src = test.source;
    let mut out = match test.lang {
        Lang::Python => {
            let mut own: Vec<Mark> = decorators(test.node)
                .into_iter()
                .filter_map(|d| decorator_mark(d, src))
                .collect();
            if let Some(body) = test.node.child_by_field_name("body") {
                own.extend(statement_marks(body, src));
            }
            own
        }
        Lang::Rust => outer_attributes(test.node)
            .into_iter()
            .filter_map(|a| rust_mark(a, src, true))
            .collect(),
    };
    let mut node = test.node.parent();
    while let Some(n) = node {
        if matches!(
            n.kind(),
            "class_definition" | "module" | "mod_item" | "source_file"
        ) {
            let lang = test.lang;
            out.extend(
                scopes
                    .entry(n.id())
                    .or_insert_with(|| match lang {
                        Lang::Python => python_scope_marks(n, src),
                        Lang::Rust => rust_scope_marks(n, src),
                    })
                    .iter()
                    .cloned(),
            );
        }
        node = n.parent();
    }
    out
}

/// A mark from a Python decorator, if it skips or expects a failure.
fn decorator_mark(decorator: Node<'_>, src: &str) -> Option<Mark> {
    let effect = python_mark(decorator.named_child(0)?, src)?;
    Some(mark(decorator, decorator, effect, src))
}

/// A mark read from `node` (its meaning), shown as `shown`.
fn mark(node: Node<'_>, shown: Node<'_>, effect: Effect, src: &str) -> Mark {
    Mark {
        key: lang::meaning(node, src),
        shown: quoted(lang::text(shown, src)),
        line: lang::start_line(shown),
        effect,
    }
}

/// The skip statements below `node`, as marks.
fn statement_marks(node: Node<'_>, src: &str) -> Vec<Mark> {
    skip_statements(node, src)
        .into_iter()
        .map(|(s, effect)| mark(s, s, effect, src))
        .collect()
}

/// The marks a Python class or module puts on every test in it: its decorators (a
/// class), its statements (a module: `pytest.skip(…, allow_module_level=True)`),
/// `pytestmark`, and the skips of the setup functions and `autouse` fixtures it defines.
fn python_scope_marks(scope: Node<'_>, src: &str) -> Vec<Mark> {
    let mut out = Vec::new();
    let block = if scope.kind() == "class_definition" {
        out.extend(
            decorators(scope)
                .into_iter()
                .filter_map(|d| decorator_mark(d, src)),
        );
        scope.child_by_field_name("body")
    } else {
        out.extend(statement_marks(scope, src));
        Some(scope)
    };
    for stmt in block.map(statements).unwrap_or_default() {
        for (element, effect) in pytestmark(stmt, src) {
            out.push(mark(element, stmt, effect, src));
        }
        let def = match stmt.kind() {
            "decorated_definition" => stmt.child_by_field_name("definition"),
            "function_definition" => Some(stmt),
            _ => None,
        };
        if let Some(def) = def.filter(|d| runs_before_tests(*d, src)) {
            if let Some(body) = def.child_by_field_name("body") {
                out.extend(statement_marks(body, src));
            }
        }
    }
    out
}

/// The decorators of a Python definition.
fn decorators(def: Node<'_>) -> Vec<Node<'_>> {
    let Some(parent) = def.parent().filter(|p| p.kind() == "decorated_definition") else {
        return Vec::new();
    };
    let mut cursor = parent.walk();
    parent
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "decorator")
        .collect()
}

/// What a Python mark expression does to a test (`pytest.mark.skip`, `skipIf(…)`,
/// `unittest.expectedFailure`), if it skips or expects a failure.
pub(super) fn python_mark(expr: Node<'_>, source: &str) -> Option<Effect> {
    let callee = if expr.kind() == "call" {
        expr.child_by_field_name("function")?
    } else {
        expr
    };
    let name: String = lang::text(callee, source)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let parts: Vec<&str> = name.split('.').collect();
    let known_head = parts.len() == 1 || matches!(parts[0], "pytest" | "unittest" | "mark");
    if !known_head {
        return None;
    }
    match *parts.last()? {
        "skip" | "skipif" | "skipIf" | "skipUnless" => Some(Effect::Skip),
        "xfail" | "expectedFailure" => Some(Effect::ExpectFail),
        _ => None,
    }
}

/// The skip marks of a `pytestmark = …` statement: one mark or a list of them.
fn pytestmark<'t>(stmt: Node<'t>, source: &str) -> Vec<(Node<'t>, Effect)> {
    let Some(assign) = stmt
        .named_child(0)
        .filter(|a| matches!(a.kind(), "assignment" | "augmented_assignment"))
    else {
        return Vec::new();
    };
    let named = assign
        .child_by_field_name("left")
        .is_some_and(|l| lang::text(l, source) == "pytestmark");
    let Some(right) = assign.child_by_field_name("right").filter(|_| named) else {
        return Vec::new();
    };
    let elements = if matches!(right.kind(), "list" | "tuple") {
        statements(right)
    } else {
        vec![right]
    };
    elements
        .into_iter()
        .filter_map(|e| python_mark(e, source).map(|effect| (e, effect)))
        .collect()
}

/// Whether a Python function runs before the tests beside it: a setup method or
/// function, or an `autouse=True` fixture.
fn runs_before_tests(def: Node<'_>, source: &str) -> bool {
    const SETUPS: &[&str] = &[
        "setUp",
        "setUpClass",
        "setUpModule",
        "setup_method",
        "setup_class",
        "setup_function",
        "setup_module",
        "setup",
    ];
    let name = def
        .child_by_field_name("name")
        .map(|n| lang::text(n, source))
        .unwrap_or("");
    SETUPS.contains(&name)
        || decorators(def).iter().any(|d| {
            let t: String = lang::text(*d, source)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect();
            t.contains("fixture") && t.contains("autouse=True")
        })
}

/// The statements below `node` (not in nested functions) that skip the running test:
/// skip and xfail calls, and `raise` of a skip exception.
fn skip_statements<'t>(node: Node<'t>, source: &str) -> Vec<(Node<'t>, Effect)> {
    let mut effects = Vec::new();
    let found = find(node, &mut |n| match skip_effect(n, source) {
        Some(e) => {
            effects.push(e);
            true
        }
        None => false,
    });
    found.into_iter().zip(effects).collect()
}

/// What a Python statement or call does when it skips the running test.
fn skip_effect(node: Node<'_>, source: &str) -> Option<Effect> {
    let squeeze = |n: Node<'_>| -> String {
        lang::text(n, source)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    match node.kind() {
        "call" => {
            let name = squeeze(node.child_by_field_name("function")?);
            match name.as_str() {
                "pytest.skip" | "pytest.importorskip" => Some(Effect::Skip),
                "pytest.xfail" => Some(Effect::ExpectFail),
                _ if name.ends_with(".skipTest") => Some(Effect::Skip),
                _ => None,
            }
        }
        "raise_statement" => {
            let raised = node.named_child(0)?;
            let raised = if raised.kind() == "call" {
                raised.child_by_field_name("function")?
            } else {
                raised
            };
            let name = squeeze(raised);
            let last = name.rsplit('.').next().unwrap_or("");
            (matches!(last, "SkipTest" | "Skipped") || name == "pytest.skip.Exception")
                .then_some(Effect::Skip)
        }
        _ => None,
    }
}

/// The marks a Rust module or file puts on every test in it: a module's outer `cfg`, and
/// the inner `#![cfg(…)]` of either.
fn rust_scope_marks(scope: Node<'_>, src: &str) -> Vec<Mark> {
    let mut out: Vec<Mark> = Vec::new();
    let body = if scope.kind() == "mod_item" {
        out.extend(
            outer_attributes(scope)
                .into_iter()
                .filter_map(|a| rust_mark(a, src, false)),
        );
        scope.child_by_field_name("body")
    } else {
        Some(scope)
    };
    for stmt in body.map(statements).unwrap_or_default() {
        if stmt.kind() == "inner_attribute_item" {
            out.extend(rust_mark(stmt, src, false));
        }
    }
    out
}

/// What a Rust attribute does to the tests under it: `ignore`, `should_panic`, a `cfg`
/// other than `cfg(test)`, or a `cfg_attr` that applies `ignore` or `should_panic`.
/// `on_test` is false for an enclosing module's or file's attribute, where only `cfg`
/// means anything.
fn rust_mark(item: Node<'_>, source: &str, on_test: bool) -> Option<Mark> {
    let attr = item.named_child(0).filter(|a| a.kind() == "attribute")?;
    let head = lang::text(attr.named_child(0)?, source);
    let args = attr
        .child_by_field_name("arguments")
        .map(|a| lang::meaning(a, source))
        .unwrap_or_default();
    let effect = match head {
        "ignore" => Effect::Skip,
        "should_panic" => Effect::ExpectFail,
        "cfg" if args != "( test )" => Effect::Condition,
        "cfg_attr" => {
            let applies = |word: &str| args.split(' ').skip(1).any(|t| t == word);
            if applies("ignore") {
                Effect::Skip
            } else if applies("should_panic") {
                Effect::ExpectFail
            } else {
                return None;
            }
        }
        _ => return None,
    };
    if !on_test && effect != Effect::Condition {
        return None;
    }
    Some(Mark {
        key: lang::meaning(attr, source),
        shown: quoted(lang::text(item, source)),
        line: lang::start_line(item),
        effect,
    })
}
