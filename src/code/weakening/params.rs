//! Parametrized cases: the data rows of a base test that the change removes, rewrites or
//! marks to skip.
//!
//! `@pytest.mark.parametrize("a,b,expected", [(2, 3, 5)])` holds the test's expected
//! values in its rows: rewriting `(2, 3, 5)` to `(2, 3, -1)` makes the test agree with a
//! bug as surely as rewriting an assertion, and dropping the row, or wrapping it in
//! `pytest.param(…, marks=pytest.mark.xfail)`, stops it from testing anything. Rows are
//! read from the syntax tree (a literal list or tuple, or a constant that holds one), each
//! value resolved through the constants that spell it and keyed by its argument name, so
//! a reordered, reformatted or re-spelled table (`"a,b"` or `["a", "b"]`) is the same
//! table, and an added row is no finding. Rows computed by code (a call, a comprehension)
//! are not compared.

use std::collections::HashMap;

use tree_sitter::Node;

use super::skips::python_mark;
use super::tree::{quoted, statements, Pair, Test};
use super::weakened_finding;
use crate::code::assertions::norm;
use crate::code::constants::Constants;
use crate::code::lang::{self, Lang};
use crate::code::Finding;

/// One `parametrize` decorator: its argument names and its rows.
struct Table<'t> {
    /// The decorator.
    node: Node<'t>,
    /// The argument names, sorted: what the table is matched by.
    names: Vec<String>,
    /// The rows, or `None` when they are computed.
    rows: Option<Vec<Row<'t>>>,
}

/// One row of a table.
struct Row<'t> {
    /// The row as written.
    node: Node<'t>,
    /// `name=value` per argument, values resolved and normalised, sorted by name.
    values: Vec<String>,
    /// Whether it is marked to skip or to fail (`pytest.param(…, marks=…)`).
    marked: bool,
}

impl Row<'_> {
    fn key(&self) -> String {
        self.values.join(", ")
    }
}

/// Finds the rows the change removes, rewrites or newly marks in the tables of tests the
/// base had.
pub(super) fn check(pairs: &[Pair<'_>], out: &mut Vec<Finding>) {
    // One reading of each file's constants, whatever the number of its tests.
    let mut files: HashMap<usize, Constants<'_>> = HashMap::new();
    for pair in pairs.iter().filter(|p| p.new.lang == Lang::Python) {
        let new_tables = tables(&pair.new, &mut files);
        for old in tables(&pair.old, &mut files) {
            let Some(old_rows) = &old.rows else {
                continue;
            };
            // The same columns, or more: a column added keeps every case it had.
            let same = new_tables.iter().find(|t| t.names == old.names);
            let wider = || {
                new_tables
                    .iter()
                    .find(|t| old.names.iter().all(|n| t.names.contains(n)))
            };
            let Some(new) = same.or_else(wider) else {
                out.push(weakened_finding(
                    pair.new.path,
                    lang::start_line(pair.new.node),
                    format!(
                        "the change drops the parametrize table {} ({} case(s)) of the test `{}` that {} had: its cases no longer run",
                        quoted(&old.names.join(", ")),
                        old_rows.len(),
                        pair.new.name(),
                        pair.old.at(),
                    ),
                ));
                continue;
            };
            if let Some(new_rows) = &new.rows {
                let narrowed: Vec<Row<'_>> = new_rows
                    .iter()
                    .map(|r| Row {
                        node: r.node,
                        values: r
                            .values
                            .iter()
                            .filter(|v| {
                                v.split_once('=')
                                    .is_none_or(|(n, _)| old.names.iter().any(|o| o == n))
                            })
                            .cloned()
                            .collect(),
                        marked: r.marked,
                    })
                    .collect();
                compare(pair, old_rows, &narrowed, new.node, out);
            }
        }
    }
}

/// Compares the rows of one table: each base row kept (possibly newly marked), rewritten
/// (paired with an added row that shares some of its values) or removed.
fn compare(
    pair: &Pair<'_>,
    old_rows: &[Row<'_>],
    new_rows: &[Row<'_>],
    table: Node<'_>,
    out: &mut Vec<Finding>,
) {
    let (name, at) = (pair.new.name(), pair.old.at());
    let (old_src, new_src) = (pair.old.source, pair.new.source);
    let mut unused: Vec<bool> = vec![true; new_rows.len()];
    let mut missing = Vec::new();
    // A finding at the node it is about (an added row, or the table for a lost one).
    let mut flag = |at: Node<'_>, reason: String| {
        out.push(weakened_finding(
            pair.new.path,
            lang::start_line(at),
            reason,
        ));
    };
    for old in old_rows {
        let kept = new_rows
            .iter()
            .enumerate()
            .find(|(i, r)| unused[*i] && r.key() == old.key());
        match kept {
            Some((i, r)) => {
                unused[i] = false;
                if r.marked && !old.marked {
                    flag(
                        r.node,
                        format!(
                            "the change marks the case {} of the test `{name}` that {at} had to skip or to fail: it no longer counts",
                            quoted(lang::text(r.node, new_src))
                        ),
                    );
                }
            }
            None => missing.push(old),
        }
    }
    for old in missing {
        // The added row that shares the most values with the lost one is its rewrite.
        let shared = |r: &Row<'_>| r.values.iter().filter(|v| old.values.contains(v)).count();
        let rewrite = new_rows
            .iter()
            .enumerate()
            .filter(|(i, r)| unused[*i] && shared(r) > 0)
            .max_by_key(|(i, r)| (shared(r), std::cmp::Reverse(*i)));
        let was = quoted(lang::text(old.node, old_src));
        match rewrite {
            Some((i, r)) => {
                unused[i] = false;
                flag(
                    r.node,
                    format!(
                        "the change rewrites the case {was} of the test `{name}` that {at} had to {}: a test must not be changed to agree with the code",
                        quoted(lang::text(r.node, new_src))
                    ),
                );
            }
            None => flag(
                table,
                format!(
                    "the change removes the case {was} from the parametrize table of the test `{name}` that {at} had: it no longer runs"
                ),
            ),
        }
    }
}

/// The `parametrize` tables of a test.
fn tables<'t>(test: &Test<'t>, files: &mut HashMap<usize, Constants<'t>>) -> Vec<Table<'t>> {
    let src = test.source;
    let Some(parent) = test
        .node
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
    else {
        return Vec::new();
    };
    let mut root = parent;
    while let Some(p) = root.parent() {
        root = p;
    }
    let constants = files
        .entry(root.id())
        .or_insert_with(|| Constants::new(Lang::Python, root, src));
    let mut out = Vec::new();
    for d in statements(parent)
        .into_iter()
        .filter(|d| d.kind() == "decorator")
    {
        let Some(call) = d.named_child(0).filter(|c| c.kind() == "call") else {
            continue;
        };
        let function = call
            .child_by_field_name("function")
            .map(|f| lang::text(f, src))
            .unwrap_or("");
        if !function.ends_with("parametrize") {
            continue;
        }
        let Some(args) = call.child_by_field_name("arguments") else {
            continue;
        };
        let (names_node, values_node) = arguments(args, src);
        let Some(names) = names_node.map(|n| argnames(n, src)) else {
            continue;
        };
        let rows = values_node.and_then(|v| rows(v, &names, src, constants));
        let mut sorted = names.clone();
        sorted.sort();
        out.push(Table {
            node: d,
            names: sorted,
            rows,
        });
    }
    out
}

/// The `argnames` and `argvalues` arguments of a `parametrize` call, positional or named.
fn arguments<'t>(args: Node<'t>, source: &str) -> (Option<Node<'t>>, Option<Node<'t>>) {
    let mut positional = Vec::new();
    let (mut names, mut values) = (None, None);
    for a in statements(args) {
        if a.kind() == "keyword_argument" {
            let key = a
                .child_by_field_name("name")
                .map(|n| lang::text(n, source))
                .unwrap_or("");
            match key {
                "argnames" => names = a.child_by_field_name("value"),
                "argvalues" => values = a.child_by_field_name("value"),
                _ => {}
            }
        } else {
            positional.push(a);
        }
    }
    (
        names.or(positional.first().copied()),
        values.or(positional.get(1).copied()),
    )
}

/// The argument names: `"a, b"` or `["a", "b"]` / `("a", "b")`.
fn argnames(node: Node<'_>, source: &str) -> Vec<String> {
    let strings: Vec<String> = if node.kind() == "string" {
        vec![string_content(node, source)]
    } else {
        statements(node)
            .into_iter()
            .filter(|n| n.kind() == "string")
            .map(|n| string_content(n, source))
            .collect()
    };
    strings
        .iter()
        .flat_map(|s| s.split(','))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The text between a Python string's quotes.
fn string_content(node: Node<'_>, source: &str) -> String {
    statements(node)
        .into_iter()
        .filter(|c| c.kind() == "string_content")
        .map(|c| lang::text(c, source))
        .collect()
}

/// The rows of `argvalues`: a literal list or tuple, or a constant holding one; `None`
/// when they are computed.
fn rows<'t>(
    values: Node<'t>,
    names: &[String],
    src: &'t str,
    constants: &mut Constants<'t>,
) -> Option<Vec<Row<'t>>> {
    let values = match values.kind() {
        "identifier" => constants.lookup(values, lang::text(values, src))?,
        _ => values,
    };
    if !matches!(values.kind(), "list" | "tuple") {
        return None;
    }
    let mut out = Vec::new();
    for row in statements(values) {
        let (items, marked) = match row.kind() {
            "call"
                if row
                    .child_by_field_name("function")
                    .is_some_and(|f| lang::text(f, src).ends_with("param")) =>
            {
                let args = row.child_by_field_name("arguments")?;
                let mut items = Vec::new();
                let mut marked = false;
                for a in statements(args) {
                    if a.kind() == "keyword_argument" {
                        let is_marks = a
                            .child_by_field_name("name")
                            .is_some_and(|n| lang::text(n, src) == "marks");
                        if let Some(v) = a.child_by_field_name("value").filter(|_| is_marks) {
                            let marks = if matches!(v.kind(), "list" | "tuple") {
                                statements(v)
                            } else {
                                vec![v]
                            };
                            marked |= marks.iter().any(|m| python_mark(*m, src).is_some());
                        }
                    } else {
                        items.push(a);
                    }
                }
                (items, marked)
            }
            _ if names.len() == 1 => (vec![row], false),
            "tuple" | "list" => (statements(row), false),
            _ => return None,
        };
        let mut values: Vec<String> = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let value = norm(&constants.resolve_node(*item).text);
                match names.get(i) {
                    Some(n) if items.len() == names.len() => format!("{n}={value}"),
                    _ => value,
                }
            })
            .collect();
        values.sort();
        out.push(Row {
            node: row,
            values,
            marked,
        });
    }
    Some(out)
}
