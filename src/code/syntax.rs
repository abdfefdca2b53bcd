//! Syntax errors as tree-sitter sees them, and which of them a change introduced.
//!
//! Tree-sitter recovers from errors with `ERROR` nodes (unparseable text) and `MISSING`
//! nodes (a token it had to invent). Both are facts a reviewer cannot argue with; only
//! the ones a change *introduced* are the change's fault.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Tree};

use super::lang::{self, Lang};
use super::symbols::{innermost_in, outline_tree, Symbol};

/// Longest `text` kept for an `ERROR` node: enough to recognise it, never a whole file.
const MAX_TEXT: usize = 120;

/// A place where the parser could not make sense of the code.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SyntaxIssue {
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// Column of the first byte, 1-based (a byte offset within the line).
    pub start_col: u32,
    /// `"ERROR"` (text the grammar cannot place) or `"MISSING"` (an expected token is
    /// absent, e.g. a closing parenthesis).
    pub kind: String,
    /// For `ERROR`, the offending text on one line (truncated); for `MISSING`, the
    /// missing token or node kind (e.g. `)` or `identifier`).
    pub text: String,
}

/// Every syntax issue in `source`, in source order. Issues nested inside an `ERROR` node
/// are part of it and not repeated.
pub fn syntax_issues(lang: Lang, source: &str) -> Vec<SyntaxIssue> {
    match lang::parse(lang, source) {
        Some(tree) => issues_tree(&tree, source),
        None => Vec::new(),
    }
}

/// Issues present in `after` but not in `before` (`None`: a new file).
///
/// Issues are matched by kind, text and the name of the innermost enclosing symbol, not
/// by line numbers, because edits above an old error shift its lines. Duplicates count:
/// a second identical error in the same function is new.
pub fn new_syntax_issues(lang: Lang, before: Option<&str>, after: &str) -> Vec<SyntaxIssue> {
    let Some(after_tree) = lang::parse(lang, after) else {
        return Vec::new();
    };
    let before_tree = before.and_then(|b| lang::parse(lang, b).map(|t| (t, b)));
    new_issues_trees(
        lang,
        before_tree.as_ref().map(|(t, s)| (t, *s)),
        &after_tree,
        after,
    )
    .into_iter()
    .map(|(issue, _)| issue)
    .collect()
}

/// [`new_syntax_issues`] over parsed trees; also returns each new issue's innermost
/// enclosing symbol (in `after`), which callers report anyway.
pub(crate) fn new_issues_trees(
    lang: Lang,
    before: Option<(&Tree, &str)>,
    after: &Tree,
    after_src: &str,
) -> Vec<(SyntaxIssue, Option<Symbol>)> {
    // The common case, a clean file, costs one flag check.
    if !after.root_node().has_error() {
        return Vec::new();
    }
    let after_outline = outline_tree(lang, after, after_src);
    let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
    if let Some((tree, src)) = before {
        if tree.root_node().has_error() {
            let outline = outline_tree(lang, tree, src);
            for issue in issues_tree(tree, src) {
                let sym = innermost_in(&outline, issue.start_line, issue.end_line);
                *seen.entry(key(&issue, sym.as_ref())).or_default() += 1;
            }
        }
    }
    let mut out = Vec::new();
    for issue in issues_tree(after, after_src) {
        let sym = innermost_in(&after_outline, issue.start_line, issue.end_line);
        match seen.get_mut(&key(&issue, sym.as_ref())) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push((issue, sym)),
        }
    }
    out
}

fn key(issue: &SyntaxIssue, sym: Option<&Symbol>) -> (String, String, String) {
    (
        issue.kind.clone(),
        issue.text.clone(),
        sym.map(|s| s.name.clone()).unwrap_or_default(),
    )
}

/// The issues of an already parsed file.
pub(crate) fn issues_tree(tree: &Tree, source: &str) -> Vec<SyntaxIssue> {
    let mut out = Vec::new();
    let root = tree.root_node();
    if root.has_error() {
        collect(root, source, &mut out);
    }
    out
}

/// Depth-first, visiting only subtrees that contain an error (`has_error` is cached per
/// node), so clean regions of a broken file cost nothing.
fn collect(node: Node<'_>, source: &str, out: &mut Vec<SyntaxIssue>) {
    if node.is_error() {
        out.push(issue(node, "ERROR", one_line(lang::text(node, source))));
        return;
    }
    if node.is_missing() {
        out.push(issue(node, "MISSING", node.kind().to_string()));
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        if child.has_error() {
            collect(child, source, out);
        }
    }
}

fn issue(node: Node<'_>, kind: &str, text: String) -> SyntaxIssue {
    let start_line = lang::start_line(node);
    SyntaxIssue {
        start_line,
        // A zero-width MISSING node "ends" where it starts.
        end_line: lang::end_line(node).max(start_line),
        start_col: u32::try_from(node.start_position().column)
            .unwrap_or(u32::MAX - 1)
            .saturating_add(1),
        kind: kind.to_string(),
        text,
    }
}

fn one_line(text: &str) -> String {
    let squashed = lang::squash(text);
    if squashed.len() <= MAX_TEXT {
        return squashed;
    }
    let mut cut = MAX_TEXT;
    while !squashed.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &squashed[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_code_has_no_issues() {
        assert!(syntax_issues(Lang::Python, "def f():\n    return 1\n").is_empty());
        assert!(syntax_issues(Lang::Rust, "fn f() -> u32 { 1 }\n").is_empty());
    }

    #[test]
    fn error_has_its_line() {
        let src = "def f():\n    return 1\n\ndef g(:\n    pass\n";
        let issues = syntax_issues(Lang::Python, src);
        assert!(!issues.is_empty());
        assert_eq!(issues[0].start_line, 4, "{issues:?}");
    }

    #[test]
    fn old_error_is_not_new_even_if_shifted() {
        let before = "fn a() {}\nfn b() { let x = ; }\n";
        let after = "// header\n\nfn a() {}\nfn b() { let x = ; }\n";
        assert!(!syntax_issues(Lang::Rust, after).is_empty());
        assert!(new_syntax_issues(Lang::Rust, Some(before), after).is_empty());
        assert!(!new_syntax_issues(Lang::Rust, None, after).is_empty());
    }
}
