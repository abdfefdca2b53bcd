//! Rust `use` declarations and `extern crate` as [`Import`]s: use trees flattened into one
//! leaf path each, so the resolver can point at exactly the leaf that does not exist.

use tree_sitter::Node;

use crate::code::import::{Import, Site};
use crate::code::lang;

/// The [`Site`]s of one Rust `use` declaration (one per leaf of its use tree) or
/// `extern crate`, appended to `out`.
pub(crate) fn rust_sites<'t>(decl: Node<'t>, source: &str, out: &mut Vec<Site<'t>>) {
    let text = lang::squash(lang::text(decl, source));
    match decl.kind() {
        "use_declaration" => {
            let Some(arg) = decl.child_by_field_name("argument") else {
                return;
            };
            let mut leaves = Vec::new();
            use_leaves(arg, source, &[], &mut leaves);
            for leaf in leaves {
                let (module, names) = split_path(&leaf.path);
                out.push(Site {
                    import: Import {
                        module,
                        names,
                        line: lang::start_line(leaf.node),
                        end_line: lang::end_line(leaf.node),
                        optional: false,
                        text: text.clone(),
                        level: 0,
                    },
                    decl,
                    path: leaf.path,
                    extern_crate: false,
                });
            }
        }
        "extern_crate_declaration" => {
            let Some(name) = decl.child_by_field_name("name") else {
                return;
            };
            let name = lang::text(name, source).to_string();
            out.push(Site {
                import: Import {
                    module: name.clone(),
                    names: Vec::new(),
                    line: lang::start_line(decl),
                    end_line: lang::end_line(decl),
                    optional: false,
                    text,
                    level: 0,
                },
                decl,
                path: vec![name],
                extern_crate: true,
            });
        }
        _ => {}
    }
}

/// `(module, names)` of a Rust leaf path, as documented on [`Import`].
fn split_path(path: &[String]) -> (String, Vec<String>) {
    match path.split_last() {
        // `::serde` alone (init `[""]`) is a single-segment path.
        Some((last, init)) if init.iter().any(|seg| !seg.is_empty()) => {
            (join(init), vec![last.clone()])
        }
        _ => (join(path), Vec::new()),
    }
}

fn join(segs: &[String]) -> String {
    segs.join("::")
}

/// One leaf of a use tree.
pub(crate) struct Leaf<'t> {
    /// Every segment, prefix included (`*` for a glob, `self` for `{self}`).
    pub path: Vec<String>,
    /// The name it binds (`e` for `d as e`; `None` for globs and `as _`).
    pub binds: Option<String>,
    /// The leaf's own node, for its line range.
    pub node: Node<'t>,
}

/// Flattens a use tree below `node` with the segments of the enclosing prefix.
pub(crate) fn use_leaves<'t>(
    node: Node<'t>,
    source: &str,
    prefix: &[String],
    out: &mut Vec<Leaf<'t>>,
) {
    let with = |extra: Vec<String>| {
        let mut p = prefix.to_vec();
        p.extend(extra);
        p
    };
    match node.kind() {
        "scoped_use_list" => {
            let p = with(
                node.child_by_field_name("path")
                    .map(|n| segments(n, source))
                    .unwrap_or_default(),
            );
            if let Some(list) = node.child_by_field_name("list") {
                use_leaves(list, source, &p, out);
            }
        }
        "use_list" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                use_leaves(child, source, prefix, out);
            }
        }
        "use_as_clause" => {
            let Some(path) = node.child_by_field_name("path") else {
                return;
            };
            let alias = node
                .child_by_field_name("alias")
                .map(|a| lang::text(a, source).to_string())
                .filter(|a| a != "_");
            out.push(Leaf {
                path: with(segments(path, source)),
                binds: alias,
                node,
            });
        }
        "use_wildcard" => {
            let mut cursor = node.walk();
            let path = node
                .named_children(&mut cursor)
                .next()
                .map(|n| segments(n, source))
                .unwrap_or_default();
            let mut p = with(path);
            p.push("*".to_string());
            out.push(Leaf {
                path: p,
                binds: None,
                node,
            });
        }
        "identifier" | "scoped_identifier" | "crate" | "self" | "super" => {
            let p = with(segments(node, source));
            // `a::{self}` binds `a`; anything else binds its last segment.
            let binds = match p.as_slice() {
                [.., parent, last] if last == "self" => Some(parent.clone()),
                [.., last] => Some(last.clone()),
                [] => None,
            };
            out.push(Leaf {
                path: p,
                binds,
                node,
            });
        }
        _ => {}
    }
}

/// The `::`-separated segments of a path node; an absolute path starts with `""`.
fn segments(node: Node<'_>, source: &str) -> Vec<String> {
    let flat: String = lang::text(node, source)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    flat.split("::").map(str::to_string).collect()
}
