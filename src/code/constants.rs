//! Names that hold literal values, so that code is read by the values it uses, not by how
//! it spells them.
//!
//! `EXPECTED = 5` then `assert add(2, 3) == EXPECTED` asserts what `assert add(2, 3) == 5`
//! asserts: a change that moves an expected value into a constant, or edits the constant an
//! unchanged assertion reads, changes what is asserted, and one that only names the same
//! value changes nothing. A name is a constant where it is bound exactly once in its scope,
//! to a literal (a number, a string, a boolean, `None`, a negative number, a collection of
//! those, or another such constant): Python module-level and function-local assignments,
//! Rust `const` and `static` items and `let` bindings. Anything else (a parameter, a loop
//! variable, a name bound twice, a value computed by a call) stays a name.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use tree_sitter::Node;

use super::lang::{self, Lang};

/// How deep a constant may refer to other constants before it is left as a name (a guard
/// against `A = B` / `B = A` too).
const MAX_DEPTH: usize = 8;

/// A constant that an expression read, told to the reader of a finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Used {
    /// The name as written.
    pub(crate) name: String,
    /// Its value, itself resolved, whitespace folded.
    pub(crate) value: String,
    /// The 1-based line of the value.
    pub(crate) line: u32,
}

impl Used {
    /// `` `EXPECTED` = -1 (line 3) ``.
    pub(crate) fn describe(&self) -> String {
        format!("`{}` = {} (line {})", self.name, self.value, self.line)
    }
}

/// An expression with the constants it reads replaced by their values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resolved {
    /// The text, whitespace folded.
    pub(crate) text: String,
    /// The constants it read, in source order.
    pub(crate) used: Vec<Used>,
}

/// The names one scope binds: the ones bound once to a literal-looking value, and every
/// name bound at all (which hides a constant of an outer scope).
#[derive(Default)]
struct Scope<'t> {
    consts: HashMap<String, Node<'t>>,
    bound: HashSet<String>,
}

impl<'t> Scope<'t> {
    /// Builds a scope from every binding `(name, value if a plain assignment)` in it.
    fn of(bindings: Vec<(String, Option<Node<'t>>)>) -> Scope<'t> {
        let mut count: HashMap<String, (usize, Option<Node<'t>>)> = HashMap::new();
        for (name, value) in bindings {
            let e = count.entry(name).or_insert((0, value));
            e.0 += 1;
        }
        let mut scope = Scope::default();
        for (name, (n, value)) in count {
            if let (1, Some(v)) = (n, value) {
                scope.consts.insert(name.clone(), v);
            }
            scope.bound.insert(name);
        }
        scope
    }
}

/// The constants of one parsed file, scope by scope (function scopes are read on first
/// use).
pub(crate) struct Constants<'t> {
    lang: Lang,
    source: &'t str,
    module: Scope<'t>,
    functions: HashMap<usize, Scope<'t>>,
}

impl<'t> Constants<'t> {
    /// The constants of the file whose syntax tree is rooted at `root`.
    pub(crate) fn new(lang: Lang, root: Node<'t>, source: &'t str) -> Constants<'t> {
        let mut bindings = Vec::new();
        match lang {
            Lang::Python => python_bindings(root, source, &mut bindings),
            Lang::Rust => lang::walk(root, &mut |n| {
                if matches!(n.kind(), "const_item" | "static_item") {
                    if let Some(name) = n.child_by_field_name("name") {
                        bindings.push((
                            lang::text(name, source).to_string(),
                            n.child_by_field_name("value"),
                        ));
                    }
                }
                true
            }),
        }
        Constants {
            lang,
            source,
            module: Scope::of(bindings),
            functions: HashMap::new(),
        }
    }

    /// The text of `range` (inside `node`) with every constant it reads replaced by its
    /// value.
    pub(crate) fn resolve(&mut self, node: Node<'t>, range: Range<usize>) -> Resolved {
        let mut used = Vec::new();
        let text = self.substitute(node, range, 0, &mut used);
        Resolved { text, used }
    }

    /// [`Constants::resolve`] of a whole node.
    pub(crate) fn resolve_node(&mut self, node: Node<'t>) -> Resolved {
        self.resolve(node, node.byte_range())
    }

    /// The value node of the constant `name` as seen from `at`, if it is one: the
    /// innermost function that binds the name decides, then the module.
    pub(crate) fn lookup(&mut self, at: Node<'t>, name: &str) -> Option<Node<'t>> {
        let mut node = at.parent();
        while let Some(n) = node {
            if is_function(self.lang, n) {
                let scope = self.function_scope(n);
                if let Some(v) = scope.consts.get(name) {
                    return Some(*v);
                }
                if scope.bound.contains(name) {
                    return None;
                }
            }
            node = n.parent();
        }
        self.module.consts.get(name).copied()
    }

    fn function_scope(&mut self, function: Node<'t>) -> &Scope<'t> {
        let (lang, source) = (self.lang, self.source);
        self.functions.entry(function.id()).or_insert_with(|| {
            let mut bindings = Vec::new();
            if let Some(params) = function.child_by_field_name("parameters") {
                identifiers(params, source, &mut bindings);
            }
            if let Some(body) = function.child_by_field_name("body") {
                match lang {
                    Lang::Python => python_bindings(body, source, &mut bindings),
                    Lang::Rust => rust_bindings(body, source, &mut bindings),
                }
            }
            Scope::of(bindings)
        })
    }

    fn substitute(
        &mut self,
        node: Node<'t>,
        range: Range<usize>,
        depth: usize,
        used: &mut Vec<Used>,
    ) -> String {
        let mut refs = Vec::new();
        let lang = self.lang;
        lang::walk(node, &mut |n| {
            if n.end_byte() <= range.start || n.start_byte() >= range.end {
                return false;
            }
            if n.kind() == "identifier" && is_reference(lang, n) {
                refs.push(n);
            }
            true
        });
        let mut out = String::new();
        let mut at = range.start;
        for r in refs {
            let name = lang::text(r, self.source);
            let Some(value) = self.lookup(r, name) else {
                continue;
            };
            if depth >= MAX_DEPTH || !self.literal(value, depth + 1) {
                continue;
            }
            let text = self.substitute(value, value.byte_range(), depth + 1, &mut Vec::new());
            out.push_str(self.source.get(at..r.start_byte()).unwrap_or(""));
            out.push_str(&text);
            at = r.end_byte();
            used.push(Used {
                name: name.to_string(),
                value: text,
                line: lang::start_line(value),
            });
        }
        out.push_str(self.source.get(at..range.end).unwrap_or(""));
        lang::squash(&out)
    }

    /// Whether `node` is a literal value, its names being constants themselves.
    fn literal(&mut self, node: Node<'t>, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        let kind = node.kind();
        let atom = match self.lang {
            Lang::Python => matches!(kind, "integer" | "float" | "true" | "false" | "none"),
            Lang::Rust => matches!(
                kind,
                "integer_literal"
                    | "float_literal"
                    | "string_literal"
                    | "raw_string_literal"
                    | "char_literal"
                    | "boolean_literal"
                    | "negative_literal"
            ),
        };
        if atom {
            return true;
        }
        if kind == "string" {
            // An f-string computes its value.
            let mut interpolated = false;
            lang::walk(node, &mut |n| {
                interpolated |= n.kind() == "interpolation";
                !interpolated
            });
            return !interpolated;
        }
        if kind == "identifier" {
            let name = lang::text(node, self.source);
            return match self.lookup(node, name) {
                Some(value) => self.literal(value, depth + 1),
                None => false,
            };
        }
        let composite = matches!(
            kind,
            "concatenated_string"
                | "unary_operator"
                | "unary_expression"
                | "parenthesized_expression"
                | "tuple"
                | "list"
                | "set"
                | "dictionary"
                | "pair"
                | "array_expression"
                | "tuple_expression"
                | "reference_expression"
        );
        if !composite {
            return false;
        }
        if matches!(kind, "unary_operator" | "unary_expression") {
            let op = node.child(0).map(|o| lang::text(o, self.source));
            if op != Some("-") {
                return false;
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'t>> = node
            .named_children(&mut cursor)
            .filter(|c| !c.kind().ends_with("comment"))
            .collect();
        children.into_iter().all(|c| self.literal(c, depth + 1))
    }
}

/// Whether `node` is a Python function or a Rust `fn`: a scope of its own.
fn is_function(lang: Lang, node: Node<'_>) -> bool {
    match lang {
        Lang::Python => node.kind() == "function_definition",
        Lang::Rust => node.kind() == "function_item",
    }
}

/// Whether an identifier names a value (`x` in `f(x)`), not an attribute, a keyword
/// argument, a called function, a path segment or a macro.
fn is_reference(lang: Lang, node: Node<'_>) -> bool {
    let Some(parent) = node.parent() else {
        return false;
    };
    let is_field = |field: &str| parent.child_by_field_name(field) == Some(node);
    match lang {
        Lang::Python => match parent.kind() {
            "attribute" => !is_field("attribute"),
            "keyword_argument" => !is_field("name"),
            "call" => !is_field("function"),
            "function_definition" | "class_definition" | "parameters" => false,
            _ => true,
        },
        Lang::Rust if parent.kind() == "token_tree" => {
            let before = node.prev_sibling().map(|p| p.kind());
            let after = node.next_sibling();
            let called = after.is_some_and(|a| {
                matches!(a.kind(), "::" | "!")
                    || (a.kind() == "token_tree" && a.child(0).is_some_and(|c| c.kind() == "("))
            });
            !matches!(before, Some("." | "::")) && !called
        }
        Lang::Rust => match parent.kind() {
            "field_expression" => !is_field("field"),
            "call_expression" => !is_field("function"),
            "scoped_identifier" | "macro_invocation" | "function_item" | "const_item"
            | "static_item" | "let_declaration" => false,
            _ => true,
        },
    }
}

/// Every identifier below `node`, as a binding without a known value (parameters,
/// patterns): they hide a constant of an outer scope. Type names and defaults come along,
/// which only ever hides more.
fn identifiers<'t>(node: Node<'t>, source: &str, out: &mut Vec<(String, Option<Node<'t>>)>) {
    lang::walk(node, &mut |n| {
        if n.kind() == "identifier" {
            out.push((lang::text(n, source).to_string(), None));
        }
        true
    });
}

/// The names a Python scope binds (`body`, not descending into nested functions, classes
/// and lambdas), each with its value when it is a plain `name = value` assignment.
fn python_bindings<'t>(body: Node<'t>, source: &str, out: &mut Vec<(String, Option<Node<'t>>)>) {
    let text = |n: Node<'_>| lang::text(n, source).to_string();
    lang::walk(body, &mut |n| match n.kind() {
        "function_definition" | "class_definition" => {
            if let Some(name) = n.child_by_field_name("name") {
                out.push((text(name), None));
            }
            false
        }
        "lambda" => false,
        "assignment" => {
            match (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ) {
                (Some(left), Some(right)) if left.kind() == "identifier" => {
                    out.push((text(left), Some(right)));
                }
                (Some(left), Some(_)) => pattern_names(left, source, out),
                _ => {}
            }
            true
        }
        "augmented_assignment" | "for_statement" => {
            if let Some(left) = n.child_by_field_name("left") {
                pattern_names(left, source, out);
            }
            true
        }
        "as_pattern_target" | "global_statement" | "nonlocal_statement" => {
            identifiers(n, source, out);
            false
        }
        "named_expression" => {
            if let Some(name) = n.child_by_field_name("name") {
                out.push((text(name), None));
            }
            true
        }
        "import_statement" | "import_from_statement" => {
            let mut cursor = n.walk();
            for name in n.children_by_field_name("name", &mut cursor) {
                let bound = match name.kind() {
                    "aliased_import" => name.child_by_field_name("alias").map(text),
                    _ if n.kind() == "import_statement" => {
                        text(name).split('.').next().map(str::to_string)
                    }
                    _ => Some(text(name)),
                };
                out.extend(bound.map(|b| (b, None)));
            }
            false
        }
        _ => true,
    });
}

/// The identifiers an assignment target binds (`a, b = …`, `x[i] = …` binds nothing).
fn pattern_names<'t>(target: Node<'t>, source: &str, out: &mut Vec<(String, Option<Node<'t>>)>) {
    lang::walk(target, &mut |n| match n.kind() {
        "attribute" | "subscript" => false,
        "identifier" => {
            out.push((lang::text(n, source).to_string(), None));
            false
        }
        _ => true,
    });
}

/// The names a Rust function body binds: `let` bindings (with their value when the
/// pattern is a plain name), every name in another pattern, and every name assigned to.
fn rust_bindings<'t>(body: Node<'t>, source: &str, out: &mut Vec<(String, Option<Node<'t>>)>) {
    lang::walk(body, &mut |n| {
        match n.kind() {
            "function_item" => return false,
            "let_declaration" => match n.child_by_field_name("pattern") {
                Some(p) if p.kind() == "identifier" => {
                    out.push((
                        lang::text(p, source).to_string(),
                        n.child_by_field_name("value"),
                    ));
                }
                Some(p) => identifiers(p, source, out),
                None => {}
            },
            "assignment_expression" | "compound_assignment_expr" => {
                if let Some(left) = n.child_by_field_name("left") {
                    identifiers(left, source, out);
                }
            }
            "for_expression" | "let_condition" | "match_pattern" | "closure_parameters" => {
                if let Some(p) = n.child_by_field_name("pattern") {
                    identifiers(p, source, out);
                } else {
                    identifiers(n, source, out);
                }
            }
            _ => {}
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The resolved text of the first node of `kind` in `source`.
    fn resolved(lang: Lang, source: &str, kind: &str) -> Resolved {
        let tree = lang::parse(lang, source).unwrap();
        let mut found = None;
        lang::walk(tree.root_node(), &mut |n| {
            if found.is_none() && n.kind() == kind {
                found = Some(n);
            }
            found.is_none()
        });
        let mut c = Constants::new(lang, tree.root_node(), source);
        c.resolve_node(found.unwrap())
    }

    #[test]
    fn python_module_and_local_constants_resolve() {
        let src = "EXPECTED = -1\nPAIR = (EXPECTED, 'a')\n\ndef test_a():\n    local = 5\n    assert add(2, 3) == EXPECTED + local + len(PAIR)\n";
        let r = resolved(Lang::Python, src, "assert_statement");
        assert_eq!(r.text, "assert add(2, 3) == -1 + 5 + len((-1, 'a'))");
        assert_eq!(
            r.used.iter().map(Used::describe).collect::<Vec<_>>(),
            [
                "`EXPECTED` = -1 (line 1)",
                "`local` = 5 (line 5)",
                "`PAIR` = (-1, 'a') (line 2)"
            ]
        );
    }

    #[test]
    fn python_names_bound_twice_computed_or_hidden_stay_names() {
        let src = "A = 1\nA = 2\nB = f()\nC = 3\nD = f'{C}'\n\ndef test_a(C):\n    for x in y:\n        pass\n    assert g(A, B, C, D, x) == 0\n";
        let r = resolved(Lang::Python, src, "assert_statement");
        assert_eq!(r.text, "assert g(A, B, C, D, x) == 0");
        assert!(r.used.is_empty());
    }

    #[test]
    fn rust_consts_and_lets_resolve_in_macro_arguments() {
        let src = "const E: i32 = -1;\n#[test]\nfn t() {\n    let n = 5;\n    let mut m = 1;\n    m += 1;\n    assert_eq!(add(n, m), E);\n}\n";
        let r = resolved(Lang::Rust, src, "macro_invocation");
        assert_eq!(r.text, "assert_eq!(add(5, m), -1)");
        assert_eq!(r.used.len(), 2);
    }
}
