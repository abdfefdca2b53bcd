//! Tests as evidence: which files are tests, the test functions and assertions they hold,
//! and how a change weakens them.
//!
//! A passing test run is a fact only while the tests are the ones the repository had: a
//! builder that makes a failing test agree with a bug (`assert add(2, 3) == 5` rewritten to
//! `== -1`) or deletes it turns the verify command into its own word. So a change that
//! deletes a test function or an assertion the base had, or changes an existing assertion's
//! expected value, is a finding, in any repository, whatever the task.
//!
//! Assertions are read from the syntax tree (Python `assert` statements and
//! `self.assert*(…)` calls, Rust `assert!`/`assert_eq!`/`assert_ne!` and their `debug_`
//! forms) and compared by meaning, not by text: `self.assertEqual(f(x), 2)` and
//! `assert f(x) == 2` are the same assertion, so a change of style is no finding, and an
//! assertion moved to another test file of the change is not deleted. Values are read
//! through the constants that spell them (`constants.rs`): an expected value moved into a
//! constant that holds another value is rewritten, one moved into a constant that holds
//! the same value is not, and an unchanged assertion whose constant is edited is.

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::Node;

use super::constants::Constants;
use super::lang::{self, Lang};
use super::rust::outer_attributes;
use super::{ChangedFile, Finding};

/// The finding kind of a change that deletes or rewrites a test the base had.
pub const WEAKENED_TEST: &str = "weakened_test";

/// Whether `path` is a test file by the conventions of Python and Rust projects
/// (`tests/…`, `test_x.py`, `x_test.py`, `…/test/…`).
pub fn test_path(path: &str) -> bool {
    path.split('/')
        .any(|part| part.starts_with("test") || part.contains("_test."))
}

/// One assertion of a test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    /// 1-based line where it starts.
    pub line: u32,
    /// Its source, whitespace folded.
    pub text: String,
    /// For an equality assertion, the side that is computed (`add(2, 3)`).
    pub call: Option<String>,
    /// For an equality assertion, the expected value (`5`).
    pub expected: Option<String>,
    /// The assertion with the constants it reads replaced by their values, whitespace
    /// folded (`assert add(2, 3) == 5` for `assert add(2, 3) == EXPECTED`); `call` and
    /// `expected` are resolved the same way.
    pub resolved: String,
    /// The constants the expected value reads, each as `` `NAME` = value (line N) ``.
    pub constants: Vec<String>,
    /// The functions the computed side calls, as written (`add`, `calc.add`,
    /// `calc::add`): for an equality its computed side, else the whole condition.
    pub callees: Vec<String>,
}

impl Assertion {
    /// What the assertion asserts, independent of its style and of the constants that
    /// spell its values: the call and the expected value for an equality, else its
    /// normalised text.
    fn key(&self) -> String {
        match (&self.call, &self.expected) {
            (Some(c), Some(e)) => format!("{} == {}", norm(c), norm(e)),
            _ => norm(&self.resolved),
        }
    }
}

/// A test function: its name and 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestFn {
    /// The function's name.
    pub name: String,
    /// Where it starts.
    pub line: u32,
    /// Where it ends.
    pub end_line: u32,
}

/// The assertions in a file of `lang`, in source order.
pub fn assertions(lang: Lang, source: &str) -> Vec<Assertion> {
    match lang::parse(lang, source) {
        Some(tree) => read_assertions(lang, tree.root_node(), source),
        None => Vec::new(),
    }
}

/// The assertions below `root` (a parsed file of `lang`), in source order.
pub(crate) fn read_assertions(lang: Lang, root: Node<'_>, source: &str) -> Vec<Assertion> {
    let mut nodes = Vec::new();
    lang::walk(root, &mut |node| {
        if is_assertion(lang, node, source) {
            nodes.push(node);
            false
        } else {
            true
        }
    });
    let mut constants = Constants::new(lang, root, source);
    nodes
        .into_iter()
        .map(|node| match lang {
            Lang::Python => python_assertion(node, source, &mut constants),
            Lang::Rust => rust_assertion(node, source, &mut constants),
        })
        .collect()
}

/// Whether `node` is an assertion: a Python `assert` statement or `self.assert…(…)` call,
/// a Rust `assert!`/`assert_eq!`/`assert_ne!` (or a `debug_` form).
pub(crate) fn is_assertion(lang: Lang, node: Node<'_>, source: &str) -> bool {
    match (lang, node.kind()) {
        (Lang::Python, "assert_statement") => true,
        (Lang::Python, "call") => node
            .child_by_field_name("function")
            .map(|f| lang::text(f, source))
            .and_then(|name| name.strip_prefix("self."))
            .is_some_and(|method| method.starts_with("assert")),
        (Lang::Rust, "macro_invocation") => {
            matches!(
                rust_macro(node, source),
                "assert" | "assert_eq" | "assert_ne"
            )
        }
        _ => false,
    }
}

/// The name of a Rust macro call without its path and `debug_` prefix (`assert_eq` for
/// `std::debug_assert_eq!`).
fn rust_macro<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    let name = node
        .child_by_field_name("macro")
        .map(|m| lang::text(m, source))
        .unwrap_or("");
    let name = name.rsplit("::").next().unwrap_or(name);
    name.strip_prefix("debug_").unwrap_or(name)
}

/// The test functions in a file of `lang`: Python `def test…` (in classes too), Rust
/// functions with a `#[test]` attribute (any attribute path ending in `test`).
pub fn test_functions(lang: Lang, source: &str) -> Vec<TestFn> {
    let Some(tree) = lang::parse(lang, source) else {
        return Vec::new();
    };
    test_nodes(lang, tree.root_node(), source)
        .into_iter()
        .filter_map(|node| test_fn(node, source))
        .collect()
}

/// A test function node as a [`TestFn`].
fn test_fn(node: Node<'_>, source: &str) -> Option<TestFn> {
    let name = node.child_by_field_name("name")?;
    Some(TestFn {
        name: lang::text(name, source).to_string(),
        line: lang::start_line(node),
        end_line: lang::end_line(node),
    })
}

/// The test function nodes below `root` (see [`test_functions`]), in source order.
pub(crate) fn test_nodes<'t>(lang: Lang, root: Node<'t>, source: &str) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    lang::walk(root, &mut |node| {
        let test = match (lang, node.kind()) {
            (Lang::Python, "function_definition") => node
                .child_by_field_name("name")
                .is_some_and(|n| lang::text(n, source).starts_with("test")),
            (Lang::Rust, "function_item") => outer_attributes(node).iter().any(|a| {
                let t = lang::text(*a, source).replace(' ', "");
                t.ends_with("test]") || t.ends_with("::test]")
            }),
            _ => false,
        };
        if test {
            out.push(node);
        }
        true
    });
    out
}

/// Every function a piece of code calls, as written (`add`, `calc.add`, `calc::add`),
/// within `range` of `node`. Python reads `call` nodes (not `self.assert…` itself); Rust
/// reads the tokens of a macro's arguments: a path followed by a parenthesised group that
/// is not a method call.
pub(crate) fn callees(
    lang: Lang,
    node: Node<'_>,
    range: Range<usize>,
    source: &str,
) -> Vec<String> {
    let mut out = Vec::new();
    lang::walk(node, &mut |n| {
        if n.end_byte() <= range.start || n.start_byte() >= range.end {
            return false;
        }
        match (lang, n.kind()) {
            (Lang::Python, "call") => {
                if let Some(f) = n.child_by_field_name("function") {
                    let name = lang::squash(lang::text(f, source));
                    if !name.starts_with("self.assert") {
                        out.push(name);
                    }
                }
            }
            (Lang::Rust, "call_expression") => {
                if let Some(f) = n.child_by_field_name("function") {
                    if f.kind() != "field_expression" {
                        out.push(lang::squash(lang::text(f, source)));
                    }
                }
            }
            (Lang::Rust, "identifier") if n.parent().is_some_and(|p| p.kind() == "token_tree") => {
                let called = n.next_sibling().is_some_and(|a| {
                    a.kind() == "token_tree" && a.child(0).is_some_and(|c| c.kind() == "(")
                });
                if called && n.prev_sibling().is_none_or(|p| p.kind() != ".") {
                    // The path: `a :: b :: name`, read backwards.
                    let mut path = vec![lang::text(n, source)];
                    let mut at = n;
                    while let Some(seg) = at
                        .prev_sibling()
                        .filter(|p| p.kind() == "::")
                        .and_then(|sep| sep.prev_sibling())
                    {
                        path.push(lang::text(seg, source));
                        at = seg;
                    }
                    path.reverse();
                    out.push(path.join("::"));
                }
            }
            _ => {}
        }
        true
    });
    out
}

/// A Python `assert` statement or `self.assert…(…)` call, read.
fn python_assertion<'t>(node: Node<'t>, source: &str, constants: &mut Constants<'t>) -> Assertion {
    let pair = match node.kind() {
        "assert_statement" => node.named_child(0).and_then(|test| {
            match (test.kind(), test.named_child(0), test.named_child(1)) {
                ("comparison_operator", Some(a), Some(b)) if test.named_child_count() == 2 => {
                    let op = source
                        .get(a.end_byte()..b.start_byte())
                        .unwrap_or("")
                        .trim();
                    (op == "==").then_some((a.byte_range(), b.byte_range()))
                }
                _ => None,
            }
        }),
        _ => {
            let method = node
                .child_by_field_name("function")
                .map(|f| lang::text(f, source))
                .unwrap_or("");
            let args = node.child_by_field_name("arguments");
            match (
                method,
                args.and_then(|a| a.named_child(0)),
                args.and_then(|a| a.named_child(1)),
            ) {
                ("self.assertEqual" | "self.assertEquals", Some(a), Some(b)) => {
                    Some((a.byte_range(), b.byte_range()))
                }
                _ => None,
            }
        }
    };
    read(
        Lang::Python,
        node,
        pair,
        node.byte_range(),
        source,
        constants,
    )
}

/// A Rust `assert…!` macro call, read.
fn rust_assertion<'t>(node: Node<'t>, source: &str, constants: &mut Constants<'t>) -> Assertion {
    let tokens = node
        .children(&mut node.walk())
        .find(|c| c.kind() == "token_tree");
    let args = tokens
        .map(|t| {
            let inner = t.start_byte() + 1..t.end_byte().saturating_sub(1).max(t.start_byte() + 1);
            let text = source.get(inner.clone()).unwrap_or("");
            top_level_args(text)
                .into_iter()
                .map(|r| inner.start + r.start..inner.start + r.end)
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    let name = rust_macro(node, source);
    let pair = match (name, args.as_slice()) {
        ("assert_eq", [a, b, ..]) => Some((a.clone(), b.clone())),
        _ => None,
    };
    let condition = match (name, args.as_slice()) {
        ("assert_ne", [a, b, ..]) => a.start..b.end,
        (_, [a, ..]) => a.clone(),
        _ => node.byte_range(),
    };
    read(Lang::Rust, node, pair, condition, source, constants)
}

/// An assertion from its node, the two sides of its equality if it is one, and the range
/// of its condition (what it calls when it is not an equality).
fn read<'t>(
    lang: Lang,
    node: Node<'t>,
    pair: Option<(Range<usize>, Range<usize>)>,
    condition: Range<usize>,
    source: &str,
    constants: &mut Constants<'t>,
) -> Assertion {
    let resolved = constants.resolve_node(node).text;
    let mut assertion = Assertion {
        line: lang::start_line(node),
        text: lang::squash(lang::text(node, source)),
        call: None,
        expected: None,
        resolved,
        constants: Vec::new(),
        callees: callees(lang, node, condition, source),
    };
    if let Some((a, b)) = pair {
        let (ra, rb) = (
            constants.resolve(node, a.clone()),
            constants.resolve(node, b.clone()),
        );
        // The expected value is the side that is a literal when only one is
        // (`2 == f(x)` reads as `f(x) == 2`).
        let ((computed, call), expected) = if literal(&ra.text) && !literal(&rb.text) {
            ((b, rb), ra)
        } else {
            ((a, ra), rb)
        };
        assertion.callees = callees(lang, node, computed, source);
        assertion.call = Some(call.text);
        assertion.constants = expected.used.iter().map(|u| u.describe()).collect();
        assertion.expected = Some(expected.text);
    }
    assertion
}

/// Whether an expression reads as a literal value (a number, a string, a constant, a
/// collection of those), as far as its text tells.
fn literal(text: &str) -> bool {
    let t = text.trim();
    let first = t.chars().next().unwrap_or(' ');
    first.is_ascii_digit()
        || matches!(first, '"' | '\'' | '-' | '[' | '(' | '{')
        || matches!(t, "True" | "False" | "None" | "true" | "false")
        || t.starts_with("Some(")
        || t.starts_with("vec![")
}

/// The byte ranges of macro arguments (trimmed), split at the commas outside brackets
/// and strings.
fn top_level_args(inner: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
    let mut push = |from: usize, to: usize| {
        let piece = &inner[from..to];
        let lead = piece.len() - piece.trim_start().len();
        let trimmed = piece.trim();
        if !trimmed.is_empty() {
            out.push(from + lead..from + lead + trimmed.len());
        }
    };
    for (i, c) in inner.char_indices() {
        if quoted {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => quoted = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => quoted = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                push(start, i);
                start = i + 1;
            }
            _ => {}
        }
    }
    push(start, inner.len());
    out
}

/// `text` with the whitespace outside string literals dropped (one space kept between two
/// words) and every quote made `'`, so `f("a b", 2)` and `f('a b',2)` read the same.
pub fn norm(text: &str) -> String {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut space = false;
    for c in text.chars() {
        if quote.is_none() && !c.is_whitespace() {
            if space && out.ends_with(word) && word(c) {
                out.push(' ');
            }
            space = false;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    out.push('\'');
                    continue;
                }
                out.push(c);
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                out.push('\'');
            }
            None if c.is_whitespace() => space = true,
            None => out.push(c),
        }
    }
    out
}

/// How a change weakens the tests the base had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Weakened {
    /// A test function of the base is gone from every test file of the change.
    DeletedTest {
        /// The file it was in.
        path: String,
        /// Its name.
        name: String,
        /// Its line in the base.
        line: u32,
    },
    /// An assertion of the base is gone (and its call is asserted nowhere else).
    DeletedAssertion {
        /// The file it was in.
        path: String,
        /// Its text in the base.
        text: String,
        /// Its line in the base.
        line: u32,
    },
    /// An equality assertion now expects another value of the same call.
    ChangedExpected {
        /// The file it is in now.
        path: String,
        /// The call asserted.
        call: String,
        /// The base's expected value.
        old: String,
        /// The new expected value.
        new: String,
        /// The assertion's text in the base.
        was: String,
        /// The constants the new expected value reads (`` `EXPECTED` = -1 (line 3) ``).
        via: Vec<String>,
        /// Its line in the new file.
        line: u32,
    },
}

impl Weakened {
    /// The deterministic finding.
    pub fn finding(&self) -> Finding {
        let (path, line, reason) = match self {
            Weakened::DeletedTest { path, name, line } => (
                path,
                *line,
                format!("the change deletes the test `{name}` that {path}:{line} had"),
            ),
            Weakened::DeletedAssertion { path, text, line } => (
                path,
                *line,
                format!("the change deletes the assertion `{text}` that {path}:{line} had"),
            ),
            Weakened::ChangedExpected {
                path,
                call,
                old,
                new,
                was,
                via,
                line,
            } => {
                let through = if via.is_empty() {
                    String::new()
                } else {
                    format!(", read from {}", via.join(", "))
                };
                (
                    path,
                    *line,
                    format!(
                        "the change rewrites the expected value of `{call}` from {old} to {new}{through} (the base had `{was}`): a test must not be changed to agree with the code"
                    ),
                )
            }
        };
        weakened_finding(path, line, reason)
    }
}

/// A critical [`WEAKENED_TEST`] finding at `path:line`, the one shape of every way a change
/// weakens the tests: the verdict's floor and the building stages' feedback count them
/// all alike.
pub(crate) fn weakened_finding(path: &str, line: u32, reason: String) -> Finding {
    Finding {
        kind: WEAKENED_TEST.into(),
        category: "logic".into(),
        severity: "critical".into(),
        path: path.to_string(),
        line,
        end_line: line,
        symbol: None,
        import: None,
        reason,
    }
}

/// How `changes` weaken the tests their base had: deleted test functions, deleted
/// assertions and rewritten expected values, over every test of the change together (an
/// assertion moved from one test file to another is neither deleted nor rewritten). Tests
/// are the test files ([`test_path`]) and, in Rust, `#[test]` functions anywhere (unit
/// tests live beside the code); a Python `assert` outside a test file is a runtime check,
/// not a test.
pub fn weakened(changes: &[ChangedFile]) -> Vec<Weakened> {
    struct Side {
        tests: Vec<(String, TestFn)>,
        /// Each assertion with its file and the test it is in.
        asserts: Vec<(String, Assertion, Option<String>)>,
    }
    let read = |pick: &dyn Fn(&ChangedFile) -> Option<&String>| {
        let mut side = Side {
            tests: Vec::new(),
            asserts: Vec::new(),
        };
        for c in changes {
            let (Some(lang), Some(text)) = (Lang::from_path(&c.path), pick(c)) else {
                continue;
            };
            let whole = test_path(&c.path);
            if !whole && lang != Lang::Rust {
                continue;
            }
            let Some(tree) = lang::parse(lang, text) else {
                continue;
            };
            let root = tree.root_node();
            let tests: Vec<TestFn> = test_nodes(lang, root, text)
                .into_iter()
                .filter_map(|node| test_fn(node, text))
                .collect();
            for a in read_assertions(lang, root, text) {
                let test = tests
                    .iter()
                    .rfind(|t| (t.line..=t.end_line).contains(&a.line))
                    .map(|t| t.name.clone());
                if whole || test.is_some() {
                    side.asserts.push((c.path.clone(), a, test));
                }
            }
            for t in tests {
                side.tests.push((c.path.clone(), t));
            }
        }
        side
    };
    let before = read(&|c| c.before.as_ref());
    let after = read(&|c| c.after.as_ref());
    let mut out = Vec::new();
    for (path, t) in &before.tests {
        if !after.tests.iter().any(|(_, n)| n.name == t.name) {
            out.push(Weakened::DeletedTest {
                path: path.clone(),
                name: t.name.clone(),
                line: t.line,
            });
        }
    }
    // A multiset of what the new side asserts, so one kept copy answers one old copy.
    let mut kept: HashMap<String, usize> = HashMap::new();
    for (_, a, _) in &after.asserts {
        *kept.entry(a.key()).or_default() += 1;
    }
    let mut gone = Vec::new();
    for (path, a, test) in &before.asserts {
        match kept.get_mut(&a.key()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => gone.push((path, a, test)),
        }
    }
    let mut answered: Vec<usize> = Vec::new();
    for (path, a, test) in gone {
        // Inside a deleted test, the test's deletion says it already.
        let in_deleted = before
            .tests
            .iter()
            .filter(|(p, _)| p == path)
            .find(|(_, t)| (t.line..=t.end_line).contains(&a.line))
            .is_some_and(|(_, t)| !after.tests.iter().any(|(_, n)| n.name == t.name));
        if in_deleted {
            continue;
        }
        // The rewrite is in the same test: a call asserted in another test with
        // another value is that test's own assertion. Each new assertion answers one
        // lost one while others are left.
        let candidates: Vec<usize> = a
            .call
            .as_ref()
            .map(|call| {
                (0..after.asserts.len())
                    .filter(|i| {
                        let (_, b, in_test) = &after.asserts[*i];
                        b.call.as_deref().map(norm) == Some(norm(call))
                            && b.expected.as_deref().map(norm) != a.expected.as_deref().map(norm)
                            && (test.is_none() || in_test == test)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let pick = candidates
            .iter()
            .find(|i| !answered.contains(*i))
            .or(candidates.first())
            .copied();
        if let Some(i) = pick {
            answered.push(i);
        }
        match pick.map(|i| &after.asserts[i]) {
            Some((new_path, b, _)) => out.push(Weakened::ChangedExpected {
                path: new_path.clone(),
                call: a.call.clone().unwrap_or_default(),
                old: a.expected.clone().unwrap_or_default(),
                new: b.expected.clone().unwrap_or_default(),
                was: a.text.clone(),
                via: b.constants.clone(),
                line: b.line,
            }),
            None => out.push(Weakened::DeletedAssertion {
                path: path.clone(),
                text: a.text.clone(),
                line: a.line,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, before: &str, after: &str) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            before: Some(before.into()),
            after: Some(after.into()),
        }
    }

    const PY_BASE: &str = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n";

    #[test]
    fn a_rewritten_expected_value_is_found_with_its_old_value() {
        let after = PY_BASE.replace("add(2, 3), 5)", "add(2, 3), -1)");
        let w = weakened(&[change("tests/test_calc.py", PY_BASE, &after)]);
        assert_eq!(w.len(), 1, "{w:?}");
        let f = w[0].finding();
        assert_eq!(f.kind, WEAKENED_TEST);
        assert_eq!(f.line, 6);
        assert!(
            f.reason.contains("`add(2, 3)` from 5 to -1"),
            "{}",
            f.reason
        );
        assert!(
            f.reason.contains("self.assertEqual(add(2, 3), 5)"),
            "{}",
            f.reason
        );
    }

    #[test]
    fn deleted_tests_and_assertions_are_found() {
        let after = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n";
        let w = weakened(&[change("tests/test_calc.py", PY_BASE, after)]);
        assert_eq!(
            w,
            vec![
                Weakened::DeletedTest {
                    path: "tests/test_calc.py".into(),
                    name: "test_zero".into(),
                    line: 8
                },
                Weakened::DeletedAssertion {
                    path: "tests/test_calc.py".into(),
                    text: "self.assertEqual(add(2, 3), 5)".into(),
                    line: 6
                },
            ]
        );
    }

    #[test]
    fn style_changes_moves_and_additions_are_no_finding() {
        // Another style, the value first, another file, reformatted, and a new test.
        let after = "from calc import add\n\ndef test_add():\n    assert 5 == add(2,3)\n\ndef test_zero():\n    assert add( 0, 0 ) == 0\n\ndef test_more():\n    assert add(1, 1) == 2\n";
        let changes = [
            change("tests/test_calc.py", PY_BASE, "# moved\n"),
            ChangedFile {
                path: "tests/test_more.py".into(),
                before: None,
                after: Some(after.into()),
            },
        ];
        assert_eq!(weakened(&changes), vec![]);
        // Code files are not tests.
        let code = change(
            "calc.py",
            "def f(x):\n    assert x == 1\n",
            "def f(x):\n    assert x == 2\n",
        );
        assert_eq!(weakened(&[code]), vec![]);
    }

    #[test]
    fn a_rewrite_is_looked_for_in_the_same_test() {
        let base = "def test_a():\n    lines = run('a')\n    assert lines == 'a'\n\ndef test_b():\n    lines = run('b')\n    assert lines == 'b'\n";
        let after = "def test_b():\n    lines = run('b')\n    assert lines == 'b'\n";
        let w = weakened(&[change("tests/test_run.py", base, after)]);
        assert!(
            matches!(&w[..], [Weakened::DeletedTest { .. }]),
            "test_a's assertion goes with it, it is not rewritten into test_b's: {w:?}"
        );
        let emptied = base.replace("    assert lines == 'a'\n", "    pass\n");
        let w = weakened(&[change("tests/test_run.py", base, &emptied)]);
        assert!(
            matches!(&w[..], [Weakened::DeletedAssertion { line: 3, .. }]),
            "{w:?}"
        );
    }

    #[test]
    fn rust_assertions_and_tests_are_read() {
        let base = "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n        assert!(add(1, 1) > 0);\n    }\n    #[tokio::test]\n    async fn later() {}\n}\n";
        let tests = test_functions(Lang::Rust, base);
        assert_eq!(
            tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["adds", "later"]
        );
        let a = assertions(Lang::Rust, base);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].call.as_deref(), Some("add(2, 3)"));
        assert_eq!(a[0].expected.as_deref(), Some("5"));
        let after = base.replace("add(2, 3), 5)", "add(2, 3), -1)");
        let w = weakened(&[change("tests/calc.rs", base, &after)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { old, new, .. }] if old == "5" && new == "-1"),
            "{w:?}"
        );
    }

    #[test]
    fn an_expected_value_moved_into_a_constant_is_read_as_its_value() {
        let base = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
        // The expected value moved into a constant that holds another value.
        let moved = "from calc import add\n\nEXPECTED = -1\n\ndef test_add():\n    assert add(2, 3) == EXPECTED\n";
        let w = weakened(&[change("tests/test_calc.py", base, moved)]);
        let f = match &w[..] {
            [one @ Weakened::ChangedExpected { .. }] => one.finding(),
            _ => panic!("{w:?}"),
        };
        assert_eq!(f.line, 6);
        assert!(
            f.reason
                .contains("from 5 to -1, read from `EXPECTED` = -1 (line 3)"),
            "{}",
            f.reason
        );
        // Control: a constant (or a local) that holds the value the base asserted.
        let same = moved.replace("EXPECTED = -1", "EXPECTED = 5");
        assert_eq!(
            weakened(&[change("tests/test_calc.py", base, &same)]),
            vec![]
        );
        let local = "from calc import add\n\ndef test_add():\n    expected = 5\n    assert add(2, 3) == expected\n";
        assert_eq!(
            weakened(&[change("tests/test_calc.py", base, local)]),
            vec![]
        );
        // The assertion is untouched and the constant it reads is edited.
        let edited = local.replace("expected = 5", "expected = 6");
        let w = weakened(&[change("tests/test_calc.py", local, &edited)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { old, new, .. }] if old == "5" && new == "6"),
            "{w:?}"
        );
    }

    #[test]
    fn rust_constants_resolve_and_callees_are_read() {
        let base = "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n";
        let after = "const WANT: i32 = 5;\n#[test]\nfn adds() {\n    assert_eq!(WANT, calc::add(2, 3));\n}\n";
        assert_eq!(weakened(&[change("tests/calc.rs", base, after)]), vec![]);
        let a = assertions(Lang::Rust, after);
        assert_eq!(a[0].callees, ["calc::add"]);
        assert_eq!(a[0].call.as_deref(), Some("calc::add(2, 3)"));
        let wrong = after.replace("= 5;", "= -1;");
        let w = weakened(&[change("tests/calc.rs", base, &wrong)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { new, line: 4, .. }] if new == "-1"),
            "{w:?}"
        );
        let py = assertions(
            Lang::Python,
            "def test_a(self):\n    self.assertTrue(is_prime(mod.seven()))\n",
        );
        assert_eq!(py[0].callees, ["is_prime", "mod.seven"]);
    }
}
