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
//! assertion moved to another test file of the change is not deleted.

use std::collections::HashMap;

use tree_sitter::Node;

use super::lang::{self, Lang};
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
}

impl Assertion {
    /// What the assertion asserts, independent of its style: the call and the expected
    /// value for an equality, else its normalised text.
    fn key(&self) -> String {
        match (&self.call, &self.expected) {
            (Some(c), Some(e)) => format!("{} == {}", norm(c), norm(e)),
            _ => norm(&self.text),
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
    let Some(tree) = lang::parse(lang, source) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(tree.root_node(), &mut |node| {
        let found = match lang {
            Lang::Python => python_assertion(node, source),
            Lang::Rust => rust_assertion(node, source),
        };
        match found {
            Some(a) => {
                out.push(a);
                false
            }
            None => true,
        }
    });
    out
}

/// The test functions in a file of `lang`: Python `def test…` (in classes too), Rust
/// functions with a `#[test]` attribute (any attribute path ending in `test`).
pub fn test_functions(lang: Lang, source: &str) -> Vec<TestFn> {
    let Some(tree) = lang::parse(lang, source) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    walk(tree.root_node(), &mut |node| {
        let name = match (lang, node.kind()) {
            (Lang::Python, "function_definition") => node
                .child_by_field_name("name")
                .map(|n| lang::text(n, source))
                .filter(|n| n.starts_with("test")),
            (Lang::Rust, "function_item") => {
                let attributed =
                    std::iter::successors(node.prev_named_sibling(), |n| n.prev_named_sibling())
                        .take_while(|n| n.kind() == "attribute_item")
                        .any(|n| {
                            let t = lang::text(n, source).replace(' ', "");
                            t.ends_with("test]") || t.ends_with("::test]")
                        });
                node.child_by_field_name("name")
                    .map(|n| lang::text(n, source))
                    .filter(|_| attributed)
            }
            _ => None,
        };
        if let Some(name) = name {
            out.push(TestFn {
                name: name.to_string(),
                line: lang::start_line(node),
                end_line: lang::end_line(node),
            });
        }
        true
    });
    out
}

/// Depth-first walk; `visit` returns whether to descend into the node.
fn walk(node: Node<'_>, visit: &mut dyn FnMut(Node<'_>) -> bool) {
    if !visit(node) {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, visit);
    }
}

/// A Python `assert` statement or `self.assert…(…)` call.
fn python_assertion(node: Node<'_>, source: &str) -> Option<Assertion> {
    let equality = |a: Node<'_>, b: Node<'_>| sides(lang::text(a, source), lang::text(b, source));
    let (call, expected) = match node.kind() {
        "assert_statement" => {
            let test = node.named_child(0)?;
            match (test.kind(), test.named_child(0), test.named_child(1)) {
                ("comparison_operator", Some(a), Some(b)) if test.named_child_count() == 2 => {
                    let op = source
                        .get(a.end_byte()..b.start_byte())
                        .unwrap_or("")
                        .trim();
                    if op == "==" {
                        equality(a, b)
                    } else {
                        (None, None)
                    }
                }
                _ => (None, None),
            }
        }
        "call" => {
            let name = lang::text(node.child_by_field_name("function")?, source);
            let method = name.strip_prefix("self.")?;
            if !method.starts_with("assert") {
                return None;
            }
            let args = node.child_by_field_name("arguments")?;
            match (method, args.named_child(0), args.named_child(1)) {
                ("assertEqual" | "assertEquals", Some(a), Some(b)) => equality(a, b),
                _ => (None, None),
            }
        }
        _ => return None,
    };
    Some(Assertion {
        line: lang::start_line(node),
        text: lang::squash(lang::text(node, source)),
        call,
        expected,
    })
}

/// A Rust `assert…!` macro call.
fn rust_assertion(node: Node<'_>, source: &str) -> Option<Assertion> {
    if node.kind() != "macro_invocation" {
        return None;
    }
    let name = lang::text(node.child_by_field_name("macro")?, source);
    let name = name.rsplit("::").next().unwrap_or(name);
    let name = name.strip_prefix("debug_").unwrap_or(name);
    if !matches!(name, "assert" | "assert_eq" | "assert_ne") {
        return None;
    }
    let text = lang::squash(lang::text(node, source));
    let (call, expected) = if name == "assert_eq" {
        let tokens = node
            .children(&mut node.walk())
            .find(|c| c.kind() == "token_tree")?;
        let inner = lang::text(tokens, source);
        let inner = inner.get(1..inner.len().saturating_sub(1)).unwrap_or("");
        let args = top_level_args(inner);
        match args.as_slice() {
            [a, b, ..] => sides(a, b),
            _ => (None, None),
        }
    } else {
        (None, None)
    };
    Some(Assertion {
        line: lang::start_line(node),
        text,
        call,
        expected,
    })
}

/// The computed side and the expected side of an equality (`2 == f(x)` reads as
/// `f(x) == 2`): the expected value is the side that is a literal when only one is.
fn sides(a: &str, b: &str) -> (Option<String>, Option<String>) {
    let (a, b) = (lang::squash(a), lang::squash(b));
    if literal(&a) && !literal(&b) {
        (Some(b), Some(a))
    } else {
        (Some(a), Some(b))
    }
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

/// Splits macro arguments at the commas outside brackets and strings.
fn top_level_args(inner: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut escaped, mut start) = (0i32, false, false, 0);
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
                out.push(inner[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].trim().is_empty() {
        out.push(inner[start..].trim());
    }
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
                line,
            } => (
                path,
                *line,
                format!(
                    "the change rewrites the expected value of `{call}` from {old} to {new} (the base had `{was}`): a test must not be changed to agree with the code"
                ),
            ),
        };
        Finding {
            kind: WEAKENED_TEST.into(),
            category: "logic".into(),
            severity: "critical".into(),
            path: path.clone(),
            line,
            end_line: line,
            symbol: None,
            import: None,
            reason,
        }
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
        asserts: Vec<(String, Assertion)>,
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
            let tests = test_functions(lang, text);
            for a in assertions(lang, text) {
                let in_test = tests
                    .iter()
                    .any(|t| (t.line..=t.end_line).contains(&a.line));
                if whole || in_test {
                    side.asserts.push((c.path.clone(), a));
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
    for (_, a) in &after.asserts {
        *kept.entry(a.key()).or_default() += 1;
    }
    let mut gone = Vec::new();
    for (path, a) in &before.asserts {
        match kept.get_mut(&a.key()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => gone.push((path, a)),
        }
    }
    for (path, a) in gone {
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
        let rewritten = a.call.as_ref().and_then(|call| {
            after.asserts.iter().find(|(_, b)| {
                b.call.as_deref().map(norm) == Some(norm(call))
                    && b.expected.as_deref().map(norm) != a.expected.as_deref().map(norm)
            })
        });
        match rewritten {
            Some((new_path, b)) => out.push(Weakened::ChangedExpected {
                path: new_path.clone(),
                call: a.call.clone().unwrap_or_default(),
                old: a.expected.clone().unwrap_or_default(),
                new: b.expected.clone().unwrap_or_default(),
                was: a.text.clone(),
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
}
