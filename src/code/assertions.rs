//! Tests as evidence: which files are tests, and the test functions and assertions they
//! hold (how a change weakens them is `weakening/deleted.rs`).
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

use std::ops::Range;

use tree_sitter::Node;

use super::constants::Constants;
use super::lang::{self, Lang};
use super::rust::outer_attributes;

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
    pub(crate) fn key(&self) -> String {
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
pub(super) fn test_fn(node: Node<'_>, source: &str) -> Option<TestFn> {
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
