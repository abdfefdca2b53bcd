//! Early exits: assertions of a base test that the change leaves written but unreachable.
//!
//! A `return` before an assertion, `if True: return`, or an assertion put under
//! `if False:` makes the test pass without asserting anything, and no assertion is
//! deleted. Read from the syntax tree of the test's body: a statement always exits when it
//! is a `return`, an `if` whose condition is a constant true (`True`, `1`, `not False`,
//! `true`, `!false`) and whose branch exits, an `if`/`else` whose every branch exits, or a
//! block (`with`, `{ … }`) that exits; everything after it in its block is unreachable,
//! and so is the branch a constant condition never takes. (Skip calls and `raise
//! SkipTest` end a test too; `skips.rs` reports them, as skips.)
//!
//! What counts is the assertions newly unreachable: one the base's version of the test
//! already had after a `return` is no finding, and a `return` with no assertion after it
//! is none either.

use std::collections::HashMap;

use tree_sitter::Node;

use super::tree::{find, quoted, statements, Pair, Test};
use super::weakened_finding;
use crate::code::assertions::is_assertion;
use crate::code::lang::{self, Lang};
use crate::code::Finding;

/// Finds the exits the change adds to tests the base had, with the assertions each leaves
/// unreachable.
pub(super) fn check(pairs: &[Pair<'_>], out: &mut Vec<Finding>) {
    for pair in pairs {
        let mut had: HashMap<String, usize> = HashMap::new();
        for (_, asserts) in dead(&pair.old) {
            for a in asserts {
                *had.entry(lang::meaning(a, pair.old.source)).or_default() += 1;
            }
        }
        let src = pair.new.source;
        for (exit, asserts) in dead(&pair.new) {
            let newly: Vec<Node<'_>> = asserts
                .into_iter()
                .filter(|a| match had.get_mut(&lang::meaning(*a, src)) {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                })
                .collect();
            let Some(first) = newly.first() else {
                continue;
            };
            let more = match newly.len() {
                1 => "it no longer runs".to_string(),
                n => format!("it and {} more assertion(s) no longer run", n - 1),
            };
            out.push(weakened_finding(
                pair.new.path,
                lang::start_line(exit),
                format!(
                    "the change adds {} (line {}) to the test `{}` that {} had, which leaves the assertion {} (line {}) unreachable: {more}",
                    quoted(lang::text(exit, src)),
                    lang::start_line(exit),
                    pair.new.name(),
                    pair.old.at(),
                    quoted(lang::text(*first, src)),
                    lang::start_line(*first),
                ),
            ));
        }
    }
}

/// The unreachable assertions of a test, each group with the statement that makes it
/// unreachable.
fn dead<'t>(test: &Test<'t>) -> Vec<(Node<'t>, Vec<Node<'t>>)> {
    let mut reader = Reader {
        lang: test.lang,
        source: test.source,
        found: Vec::new(),
    };
    if let Some(body) = test.node.child_by_field_name("body") {
        reader.block(body);
    }
    reader.found
}

/// Reads a body for unreachable code.
struct Reader<'t> {
    lang: Lang,
    source: &'t str,
    found: Vec<(Node<'t>, Vec<Node<'t>>)>,
}

impl<'t> Reader<'t> {
    /// Reads a block; returns the statement through which it always exits, if it does.
    fn block(&mut self, block: Node<'t>) -> Option<Node<'t>> {
        let stmts = statements(block);
        for (i, stmt) in stmts.iter().enumerate() {
            if let Some(exit) = self.statement(*stmt) {
                self.unreachable(exit, &stmts[i + 1..]);
                return Some(exit);
            }
        }
        None
    }

    /// Records the assertions in `nodes` as unreachable because of `exit`.
    fn unreachable(&mut self, exit: Node<'t>, nodes: &[Node<'t>]) {
        let (lang, src) = (self.lang, self.source);
        let asserts: Vec<Node<'t>> = nodes
            .iter()
            .flat_map(|n| find(*n, &mut |m| is_assertion(lang, m, src)))
            .collect();
        if !asserts.is_empty() {
            self.found.push((exit, asserts));
        }
    }

    /// Reads a statement; returns the node through which it always exits, if it does.
    fn statement(&mut self, stmt: Node<'t>) -> Option<Node<'t>> {
        let stmt = match (self.lang, stmt.kind()) {
            (Lang::Rust, "expression_statement") => stmt.named_child(0)?,
            _ => stmt,
        };
        match stmt.kind() {
            "return_statement" | "return_expression" => Some(stmt),
            "if_statement" | "if_expression" => self.branch(stmt),
            "with_statement" | "block" | "unsafe_block" => {
                let body = if stmt.kind() == "with_statement" {
                    stmt.child_by_field_name("body")?
                } else {
                    stmt
                };
                self.block(body)
            }
            "while_statement" | "while_expression" => {
                let body = stmt.child_by_field_name("body")?;
                if self.truth(stmt.child_by_field_name("condition")?) == Some(false) {
                    self.unreachable(stmt, &[body]);
                } else {
                    self.block(body);
                }
                None
            }
            _ => {
                // Loops and `try`: their blocks may not run, so they never always exit,
                // but code inside them may still be unreachable.
                let mut cursor = stmt.walk();
                let blocks: Vec<Node<'t>> = stmt
                    .named_children(&mut cursor)
                    .flat_map(|c| match c.kind() {
                        "block" => vec![c],
                        "except_clause" | "finally_clause" | "else_clause" => {
                            let mut cc = c.walk();
                            c.named_children(&mut cc)
                                .filter(|b| b.kind() == "block")
                                .collect()
                        }
                        _ => Vec::new(),
                    })
                    .collect();
                for b in blocks {
                    self.block(b);
                }
                None
            }
        }
    }

    /// Reads an `if`: a constant condition makes one side unreachable; the `if` always
    /// exits when the side that runs does, or when every side does.
    fn branch(&mut self, stmt: Node<'t>) -> Option<Node<'t>> {
        let consequence = stmt.child_by_field_name("consequence")?;
        let mut cursor = stmt.walk();
        let alternatives: Vec<Node<'t>> = stmt
            .children_by_field_name("alternative", &mut cursor)
            .collect();
        let truth = stmt
            .child_by_field_name("condition")
            .and_then(|c| self.truth(c));
        match truth {
            Some(true) => {
                self.unreachable(stmt, &alternatives);
                self.block(consequence).map(|_| stmt)
            }
            Some(false) => {
                self.unreachable(stmt, &[consequence]);
                for alt in &alternatives {
                    self.alternative(*alt);
                }
                None
            }
            None => {
                let then = self.block(consequence).is_some();
                let mut all = then;
                let mut has_else = false;
                for alt in &alternatives {
                    has_else |= self.is_else(*alt);
                    all &= self.alternative(*alt);
                }
                (all && has_else).then_some(stmt)
            }
        }
    }

    /// Reads an `elif`/`else` clause; returns whether it always exits.
    fn alternative(&mut self, clause: Node<'t>) -> bool {
        match clause.kind() {
            "elif_clause" => {
                if let Some(c) = clause.child_by_field_name("consequence") {
                    self.block(c);
                }
                false
            }
            _ => {
                let body = clause
                    .child_by_field_name("body")
                    .or_else(|| clause.named_child(0));
                match body {
                    Some(b) if matches!(b.kind(), "block") => self.block(b).is_some(),
                    Some(b) if b.kind() == "if_expression" => self.branch(b).is_some(),
                    _ => false,
                }
            }
        }
    }

    /// Whether a clause is a final `else` (a Rust `else if` is not).
    fn is_else(&self, clause: Node<'t>) -> bool {
        match self.lang {
            Lang::Python => clause.kind() == "else_clause",
            Lang::Rust => clause.named_child(0).is_some_and(|b| b.kind() == "block"),
        }
    }

    /// The value of a condition that is a constant: `True`, `False`, `None`, a number,
    /// `not`/`!` of one, in parentheses or not.
    fn truth(&self, cond: Node<'t>) -> Option<bool> {
        match cond.kind() {
            "true" | "false" => Some(cond.kind() == "true"),
            "boolean_literal" => Some(lang::text(cond, self.source) == "true"),
            "none" => Some(false),
            "integer" => Some(
                !lang::text(cond, self.source)
                    .trim_start_matches(['0', '_'])
                    .is_empty(),
            ),
            "parenthesized_expression" => self.truth(cond.named_child(0)?),
            "not_operator" => self
                .truth(cond.child_by_field_name("argument")?)
                .map(|b| !b),
            "unary_expression" if lang::text(cond, self.source).starts_with('!') => {
                self.truth(cond.named_child(0)?).map(|b| !b)
            }
            _ => None,
        }
    }
}
