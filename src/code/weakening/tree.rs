//! The test files of a change as the rules read them: each side parsed, the tests of a
//! side, a new test paired with the base's of the same name, and the helpers that walk a
//! test's syntax and name what they found.

use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use super::super::assertions::test_nodes;
use super::super::lang::{self, Lang};

/// One side of a changed source file, parsed.
pub(super) struct Side<'c> {
    /// The text.
    pub(super) text: &'c str,
    /// Its syntax tree.
    pub(super) tree: Tree,
}

/// A changed Python or Rust file whose tests the rules read, with both sides parsed.
pub(super) struct File<'c> {
    /// Its path in the repository.
    pub(super) path: &'c str,
    /// Its language.
    pub(super) lang: Lang,
    /// The base's version; `None` for an added file.
    pub(super) before: Option<Side<'c>>,
    /// The new version; `None` for a deleted file.
    pub(super) after: Option<Side<'c>>,
}

/// A test function of one side of a changed file.
#[derive(Clone, Copy)]
pub(super) struct Test<'t> {
    /// The file it is in.
    pub(super) path: &'t str,
    /// The file's language.
    pub(super) lang: Lang,
    /// The file's text.
    pub(super) source: &'t str,
    /// The `function_definition` or `function_item`.
    pub(super) node: Node<'t>,
}

impl Test<'_> {
    /// `Class.test_x` (Python) or `tests::adds` (Rust): the enclosing classes or modules
    /// and the name.
    pub(super) fn name(&self) -> String {
        let (scope, sep) = match self.lang {
            Lang::Python => ("class_definition", "."),
            Lang::Rust => ("mod_item", "::"),
        };
        let mut parts = Vec::new();
        let mut node = Some(self.node);
        while let Some(n) = node {
            if n.id() == self.node.id() || n.kind() == scope {
                if let Some(name) = n.child_by_field_name("name") {
                    parts.push(lang::text(name, self.source));
                }
            }
            node = n.parent();
        }
        parts.reverse();
        parts.join(sep)
    }

    /// `path:line` of the test's definition.
    pub(super) fn at(&self) -> String {
        format!("{}:{}", self.path, lang::start_line(self.node))
    }
}

/// A test of the new side with the base's test of the same qualified name.
pub(super) struct Pair<'t> {
    /// The test as the change leaves it.
    pub(super) new: Test<'t>,
    /// The test as the base had it.
    pub(super) old: Test<'t>,
}

/// The tests of one side of every file.
pub(super) fn tests<'t>(files: &'t [File<'_>], after: bool) -> Vec<Test<'t>> {
    let mut out = Vec::new();
    for f in files {
        let side = if after { &f.after } else { &f.before };
        if let Some(s) = side {
            for node in test_nodes(f.lang, s.tree.root_node(), s.text) {
                out.push(Test {
                    path: f.path,
                    lang: f.lang,
                    source: s.text,
                    node,
                });
            }
        }
    }
    out
}

/// Every new test that the base had, with the base's version: from the same file when
/// the name is in several, and the same occurrence of it when a file has several tests of
/// one name (Rust's `#[cfg(unix)] fn t` and `#[cfg(not(unix))] fn t`), in the same file
/// or, for a file moved, in the base's.
pub(super) fn pairs<'t>(files: &'t [File<'_>]) -> Vec<Pair<'t>> {
    let named = |after: bool| -> Vec<(Test<'t>, String, usize)> {
        let mut seen: HashMap<(&str, String), usize> = HashMap::new();
        tests(files, after)
            .into_iter()
            .map(|t| {
                let name = t.name();
                let n = seen.entry((t.path, name.clone())).or_default();
                *n += 1;
                (t, name, *n)
            })
            .collect()
    };
    let old = named(false);
    let mut out = Vec::new();
    for (new, name, nth) in named(true) {
        let mut candidates = old
            .iter()
            .filter(|(t, n, _)| *n == name && t.lang == new.lang);
        let first = candidates.clone().next();
        let same_file = candidates.clone().find(|(t, _, _)| t.path == new.path);
        let same_nth = candidates.clone().find(|(_, _, k)| *k == nth);
        let same_place = candidates.find(|(t, _, k)| t.path == new.path && *k == nth);
        if let Some((old, _, _)) = same_place.or(same_file).or(same_nth).or(first) {
            out.push(Pair { new, old: *old });
        }
    }
    out
}

/// The statements of a Python block or a Rust block, comments left out.
pub(super) fn statements(block: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = block.walk();
    block
        .named_children(&mut cursor)
        .filter(|n| !n.kind().ends_with("comment"))
        .collect()
}

/// The nodes below `node` (itself included) for which `pick` holds, not looking inside
/// nested functions, classes and lambdas (their code runs elsewhere, if at all).
pub(super) fn find<'t>(node: Node<'t>, pick: &mut dyn FnMut(Node<'t>) -> bool) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let root = node.id();
    lang::walk(node, &mut |n| {
        let nested = n.id() != root
            && matches!(
                n.kind(),
                "function_definition" | "class_definition" | "lambda" | "function_item"
            );
        if nested {
            return false;
        }
        if pick(n) {
            out.push(n);
            return false;
        }
        true
    });
    out
}

/// `` `text` `` on one line, cut to a readable length.
pub(super) fn quoted(text: &str) -> String {
    const MAX: usize = 100;
    let t = lang::squash(text);
    if t.chars().count() <= MAX {
        return format!("`{t}`");
    }
    let cut: String = t.chars().take(MAX).collect();
    format!("`{cut}…`")
}

/// "`a`", "`a` and `b`", "`a`, `b` and 3 more": names for a sentence.
pub(super) fn listed(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let quoted: Vec<String> = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect();
    match names.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n if n <= SHOWN => format!("{} and {}", quoted[..n - 1].join(", "), quoted[n - 1]),
        n => format!("{} and {} more", quoted.join(", "), n - SHOWN),
    }
}
