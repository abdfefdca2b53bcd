//! What a Rust module (or block) defines, read from its syntax tree: the names `use`
//! paths are checked against, and the macro-related leniency that keeps real crates
//! free of false positives.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::imports::use_leaves;
use crate::code::lang;

/// Attributes that never change what a module defines.
pub(crate) const INERT_ATTRIBUTES: &[&str] = &[
    "cfg",
    "cfg_attr",
    "allow",
    "warn",
    "deny",
    "forbid",
    "expect",
    "doc",
    "path",
    "macro_use",
    "rustfmt",
    "clippy",
    "deprecated",
    "test",
    "must_use",
    "non_exhaustive",
    "inline",
    "coverage",
    "automatically_derived",
];

/// A `mod name …` declaration.
#[derive(Debug, Clone)]
pub(crate) struct ModDecl {
    pub(crate) path_attr: Option<String>,
    pub(crate) inline: bool,
}

/// The names one module (or block) defines.
#[derive(Debug, Default)]
pub(crate) struct Items {
    /// Functions, types, traits, consts, statics, macros, extern crates, and identifiers
    /// inside item-position macro calls (which may define items).
    pub(crate) names: HashSet<String>,
    /// Names bound by `use`, with the start byte of each declaring `use`, so that a use
    /// never resolves through its own binding.
    pub(crate) use_names: HashMap<String, Vec<usize>>,
    /// Start bytes of glob `use`s, which may bring any name.
    pub(crate) globs: Vec<usize>,
    pub(crate) mods: HashMap<String, Vec<ModDecl>>,
    /// Names bound by `extern crate` (at a crate root they join the extern prelude).
    pub(crate) extern_crates: HashSet<String>,
    /// `include!`, an opaque item macro, or an unreadable module: anything may be there.
    pub(crate) opaque: bool,
}

impl Items {
    pub(crate) fn opaque() -> Items {
        Items {
            opaque: true,
            ..Items::default()
        }
    }

    /// Whether `name` is defined here, ignoring bindings made by the `use` at `except`.
    pub(crate) fn has(&self, name: &str, except: Option<usize>) -> bool {
        self.opaque
            || self.names.contains(name)
            || self.mods.contains_key(name)
            || self
                .use_names
                .get(name)
                .is_some_and(|v| v.iter().any(|&d| Some(d) != except))
            || self.globs.iter().any(|&d| Some(d) != except)
    }
}

/// Records the names defined directly in a module body or block.
pub(crate) fn collect_items(container: Node<'_>, source: &str, items: &mut Items) {
    let mut path_attr: Option<String> = None;
    let mut automock = false;
    let mut cursor = container.walk();
    for child in container.named_children(&mut cursor) {
        let kind = child.kind();
        if kind == "attribute_item" {
            let text = lang::text(child, source);
            if let Some(p) = path_attribute(text) {
                path_attr = Some(p);
            }
            // Attribute macros may generate items named in their arguments
            // (`#[strum_discriminants(name(Kind))]`, `#[make_varule(FooULE)]`), and
            // mockall's `#[automock]` generates `Mock<Item>`.
            let head = attribute_head(text);
            if !INERT_ATTRIBUTES.contains(&head) && head != "derive" {
                collect_identifiers(child, source, &mut items.names);
            }
            automock |= text.contains("automock");
            continue;
        }
        if kind.ends_with("comment") {
            continue;
        }
        let pending = path_attr.take();
        if std::mem::take(&mut automock) {
            if let Some(n) = child.child_by_field_name("name") {
                items.names.insert(format!("Mock{}", lang::text(n, source)));
            }
        }
        match kind {
            "function_item"
            | "struct_item"
            | "enum_item"
            | "union_item"
            | "trait_item"
            | "type_item"
            | "associated_type"
            | "const_item"
            | "static_item"
            | "function_signature_item" => {
                if let Some(n) = child.child_by_field_name("name") {
                    items.names.insert(lang::text(n, source).to_string());
                }
            }
            "macro_definition" => {
                // What a local macro generates is spelled out in its body; its
                // identifiers count as names the module may define by invoking it.
                collect_identifiers(child, source, &mut items.names);
            }
            "mod_item" => {
                if let Some(n) = child.child_by_field_name("name") {
                    items
                        .mods
                        .entry(lang::text(n, source).to_string())
                        .or_default()
                        .push(ModDecl {
                            path_attr: pending,
                            inline: child.child_by_field_name("body").is_some(),
                        });
                }
            }
            "use_declaration" => {
                let Some(arg) = child.child_by_field_name("argument") else {
                    continue;
                };
                let mut leaves = Vec::new();
                use_leaves(arg, source, &[], &mut leaves);
                for leaf in leaves {
                    if leaf.path.last().is_some_and(|l| l == "*") {
                        items.globs.push(child.start_byte());
                    } else if let Some(b) = leaf.binds {
                        items
                            .use_names
                            .entry(b)
                            .or_default()
                            .push(child.start_byte());
                    }
                }
            }
            "extern_crate_declaration" => {
                let n = child
                    .child_by_field_name("alias")
                    .or_else(|| child.child_by_field_name("name"));
                if let Some(n) = n {
                    let name = lang::text(n, source).to_string();
                    items.extern_crates.insert(name.clone());
                    items.names.insert(name);
                }
            }
            "foreign_mod_item" => {
                if let Some(body) = child.child_by_field_name("body") {
                    collect_items(body, source, items);
                }
            }
            "macro_invocation" | "expression_statement" => macro_items(child, source, items),
            _ => {}
        }
    }
}

/// An item-position macro call may define anything it mentions (`bitflags! { struct F }`,
/// `lazy_static! { static ref X }`), so its identifiers count as names. A call that
/// declares modules or imports (`cfg_if! { mod imp; pub use imp::*; }`), has no
/// identifiers at all (`crate_root!();`) or includes files can define anything.
fn macro_items(node: Node<'_>, source: &str, items: &mut Items) {
    let call = if node.kind() == "macro_invocation" {
        node
    } else {
        match node.named_child(0) {
            Some(c) if c.kind() == "macro_invocation" => c,
            _ => return,
        }
    };
    let name = call
        .child_by_field_name("macro")
        .map(|m| lang::text(m, source))
        .unwrap_or("");
    let mut idents = HashSet::new();
    let mut cursor = call.walk();
    for tt in call
        .named_children(&mut cursor)
        .filter(|c| c.kind() == "token_tree")
    {
        collect_identifiers(tt, source, &mut idents);
    }
    let words = |w: &str| {
        lang::text(call, source)
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|x| x == w)
    };
    if name.rsplit("::").next() == Some("include")
        || idents.is_empty()
        || words("use")
        || words("mod")
        || words("include")
    {
        items.opaque = true;
    }
    if name.rsplit("::").next() == Some("mock") {
        // mockall's `mock! { pub Foo { … } }` defines `MockFoo`.
        items
            .names
            .extend(idents.iter().map(|i| format!("Mock{i}")));
    }
    items.names.extend(idents);
}

/// The first path segment of an attribute (`cfg` for `#[cfg(test)]`, `tokio` for
/// `#[tokio::main]`).
fn attribute_head(attr: &str) -> &str {
    let inner = attr
        .trim_start_matches("#[")
        .trim_start_matches("#![")
        .trim_start();
    let end = inner
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(inner.len());
    &inner[..end]
}

/// Every identifier below `node`.
pub(crate) fn collect_identifiers(node: Node<'_>, source: &str, out: &mut HashSet<String>) {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "identifier" {
            out.insert(lang::text(n, source).to_string());
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
}

/// Whether a `mod` enclosing `decl` carries an attribute that is not a builtin one, so
/// that a macro may rewrite it.
pub(crate) fn under_macro_attribute(decl: Node<'_>, source: &str) -> bool {
    let mut node = decl.parent();
    while let Some(n) = node {
        if n.kind() == "mod_item"
            && outer_attributes(n)
                .iter()
                .any(|p| !INERT_ATTRIBUTES.contains(&attribute_head(lang::text(*p, source))))
        {
            return true;
        }
        node = n.parent();
    }
    false
}

/// The outer attributes of an item (`#[test]`, `#[cfg(…)]`), nearest first: the
/// `attribute_item` nodes right before it, comments between them skipped (tree-sitter
/// keeps attributes as siblings of the item, not as its children).
pub(crate) fn outer_attributes(item: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut prev = item.prev_sibling();
    while let Some(p) = prev {
        match p.kind() {
            "attribute_item" => out.push(p),
            kind if kind.ends_with("comment") => {}
            _ => break,
        }
        prev = p.prev_sibling();
    }
    out
}

/// The file of `#[path = "…"]`.
pub(crate) fn path_attribute(attr: &str) -> Option<String> {
    let inner = attr.trim().strip_prefix("#[")?.strip_suffix(']')?.trim();
    let value = inner
        .strip_prefix("path")?
        .trim_start()
        .strip_prefix('=')?
        .trim();
    Some(value.trim_matches('"').to_string())
}

pub(crate) fn scan_macro_rules(text: &str, names: &mut HashSet<String>) {
    for (i, _) in text.match_indices("macro_rules!") {
        let rest = text[i + "macro_rules!".len()..].trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            names.insert(name);
        }
    }
}
