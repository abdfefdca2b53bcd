//! Import extraction: every `import`/`from … import`/`use`/`extern crate` in a file, in
//! a shape the resolvers can check.
//!
//! Python: one [`Import`] per imported module (`import a, b` gives two); `from m import
//! x, y` gives one with `names = ["x", "y"]`. Rust: use trees are flattened into one
//! [`Import`] per leaf path, so that `use a::{b, c::{d as e}}` can report exactly the leaf
//! that does not exist.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, QueryCursor, StreamingIterator, Tree};

use super::lang::{self, Lang};

/// One import, as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Import {
    /// Python: the dotted module (`a.b`; empty for `from . import x`). Rust: the path
    /// without its last segment (`std::collections` for `use std::collections::HashMap`),
    /// or the whole path if it has one segment (`use serde;`, `extern crate foo;`); an
    /// absolute path keeps its leading `::`.
    pub module: String,
    /// The imported names without aliases: Python `from m import x as y` → `["x"]`,
    /// `from m import *` → `["*"]`, empty for `import m`; Rust the last segment
    /// (`HashMap`, `*`, `self`), empty for single-segment paths.
    pub names: Vec<String>,
    /// First line of the statement (Python) or of the leaf path (Rust), 1-based.
    pub line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// Python: inside `try:` with an `except` that catches `ImportError` or
    /// `ModuleNotFoundError` (bare `except:`, `Exception`, a tuple containing either),
    /// inside such a handler (a fallback), inside `with suppress(ImportError):`, or under
    /// a Python-version or platform check, so a missing module is handled at run time or
    /// never imported on some interpreters. `if TYPE_CHECKING:` does not count.
    pub optional: bool,
    /// The whole statement, whitespace collapsed to one line.
    pub text: String,
    /// Python relative-import level: the number of leading dots (0 for absolute).
    pub level: u32,
}

/// Every import in `source`, in source order.
pub fn imports(lang: Lang, source: &str) -> Vec<Import> {
    match lang::parse(lang, source) {
        Some(tree) => sites(lang, &tree, source)
            .into_iter()
            .map(|s| s.import)
            .collect(),
        None => Vec::new(),
    }
}

/// Imports in `after` whose (module, names) were not imported in `before` (`None`: a new
/// file). A statement that gained names is returned with only the new names.
pub fn added_imports(lang: Lang, before: Option<&str>, after: &str) -> Vec<Import> {
    let old = before
        .map(|b| import_keys(&imports(lang, b)))
        .unwrap_or_default();
    imports(lang, after)
        .into_iter()
        .filter_map(|i| only_new(i, &old))
        .collect()
}

/// The identity of an import for "was it there before": level, module and one name
/// (empty for a plain module import).
pub(crate) type ImportKey = (u32, String, String);

/// The keys of a set of imports.
pub(crate) fn import_keys(imports: &[Import]) -> HashSet<ImportKey> {
    let mut keys = HashSet::new();
    for i in imports {
        if i.names.is_empty() {
            keys.insert((i.level, i.module.clone(), String::new()));
        }
        for n in &i.names {
            keys.insert((i.level, i.module.clone(), n.clone()));
        }
    }
    keys
}

/// `import` restricted to what `old` lacks, or `None` if nothing is new.
pub(crate) fn only_new(mut import: Import, old: &HashSet<ImportKey>) -> Option<Import> {
    if import.names.is_empty() {
        let key = (import.level, import.module.clone(), String::new());
        return (!old.contains(&key)).then_some(import);
    }
    import
        .names
        .retain(|n| !old.contains(&(import.level, import.module.clone(), n.clone())));
    (!import.names.is_empty()).then_some(import)
}

/// An import plus where it sits in the tree, for the resolvers.
pub(crate) struct Site<'t> {
    /// The public view.
    pub import: Import,
    /// The whole statement (`use_declaration`, `import_from_statement`, …).
    pub decl: Node<'t>,
    /// Rust: every segment of the leaf path (`["", "serde", "Serialize"]` for
    /// `::serde::Serialize`); Python: unused.
    pub path: Vec<String>,
    /// Rust: `extern crate` rather than `use`.
    pub extern_crate: bool,
}

/// Every import of a parsed file with its tree context.
pub(crate) fn sites<'t>(lang: Lang, tree: &'t Tree, source: &str) -> Vec<Site<'t>> {
    let Some(query) = lang.imports_query() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source.as_bytes());
    while let Some(m) = matches.next() {
        for cap in m.captures {
            match lang {
                Lang::Python => python_sites(cap.node, source, &mut out),
                Lang::Rust => rust_sites(cap.node, source, &mut out),
            }
        }
    }
    if lang == Lang::Python {
        // A file that imports a module optionally treats it as optional everywhere
        // (`try: import simplejson … has_simplejson = True` then
        // `if has_simplejson: from simplejson import JSONDecodeError`).
        let optional: HashSet<String> = out
            .iter()
            .filter(|s| s.import.optional && s.import.level == 0)
            .map(|s| top_module(&s.import.module).to_string())
            .collect();
        for site in &mut out {
            if site.import.level == 0 && optional.contains(top_module(&site.import.module)) {
                site.import.optional = true;
            }
        }
    }
    out
}

fn top_module(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

fn python_sites<'t>(decl: Node<'t>, source: &str, out: &mut Vec<Site<'t>>) {
    let text = lang::squash(lang::text(decl, source));
    let optional = python_optional(decl, source);
    let make = |module: String, names: Vec<String>, level: u32| Site {
        import: Import {
            module,
            names,
            line: lang::start_line(decl),
            end_line: lang::end_line(decl),
            optional,
            text: text.clone(),
            level,
        },
        decl,
        path: Vec::new(),
        extern_crate: false,
    };
    let mut cursor = decl.walk();
    match decl.kind() {
        "import_statement" => {
            for name in decl.children_by_field_name("name", &mut cursor) {
                out.push(make(dotted(name, source), Vec::new(), 0));
            }
        }
        "import_from_statement" => {
            let Some(module) = decl.child_by_field_name("module_name") else {
                return;
            };
            let (module, level) = if module.kind() == "relative_import" {
                relative(module, source)
            } else {
                (dotted(module, source), 0)
            };
            let mut names: Vec<String> = decl
                .children_by_field_name("name", &mut cursor)
                .map(|n| dotted(n, source))
                .collect();
            let mut c2 = decl.walk();
            if decl
                .named_children(&mut c2)
                .any(|c| c.kind() == "wildcard_import")
            {
                names.push("*".to_string());
            }
            out.push(make(module, names, level));
        }
        "future_import_statement" => {
            let names = decl
                .children_by_field_name("name", &mut cursor)
                .map(|n| dotted(n, source))
                .collect();
            out.push(make("__future__".to_string(), names, 0));
        }
        _ => {}
    }
}

/// The dotted name of a `dotted_name` or of an `aliased_import`'s original name.
fn dotted(node: Node<'_>, source: &str) -> String {
    let node = if node.kind() == "aliased_import" {
        node.child_by_field_name("name").unwrap_or(node)
    } else {
        node
    };
    lang::text(node, source)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

/// `(module, level)` of a `relative_import` (`..pkg.mod` → `("pkg.mod", 2)`).
fn relative(node: Node<'_>, source: &str) -> (String, u32) {
    let mut level = 0;
    let mut module = String::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        match child.kind() {
            "import_prefix" => {
                level = u32::try_from(lang::text(child, source).matches('.').count())
                    .unwrap_or(u32::MAX);
            }
            "dotted_name" => module = dotted(child, source),
            _ => {}
        }
    }
    (module, level)
}

/// Whether a failing import is handled or never reached on some interpreters: the
/// statement sits in the body of a `try` whose handlers catch `ImportError` (or of
/// `with suppress(ImportError)`), in such a handler (the fallback of
/// `try: import builtins / except ImportError: import __builtin__`, which only runs when
/// the first import failed), or under a Python-version or platform check
/// (`if sys.version_info < (3, 11):`, `if PY2:`, `if sys.platform == "win32":`).
/// `if TYPE_CHECKING:` is not a guard: those imports must exist.
fn python_optional(decl: Node<'_>, source: &str) -> bool {
    let mut child = decl;
    while let Some(parent) = child.parent() {
        let in_body = parent.child_by_field_name("body") == Some(child);
        match parent.kind() {
            "try_statement" if in_body && catches_import_error(parent, source) => return true,
            "except_clause" | "except_group_clause" if clause_catches(parent, source) => {
                return true
            }
            // `try: import a / except ImportError: … / else: import b` runs `b` only
            // when `a` imported.
            "else_clause"
                if parent.parent().is_some_and(|t| {
                    t.kind() == "try_statement" && catches_import_error(t, source)
                }) =>
            {
                return true
            }
            "if_statement" if version_or_platform_gate(parent, source) => return true,
            "with_statement" if in_body => {
                let mut cursor = parent.walk();
                let suppresses = parent.named_children(&mut cursor).any(|c| {
                    c.kind() == "with_clause" && {
                        let t = lang::text(c, source);
                        t.contains("suppress") && names_import_error(t)
                    }
                });
                if suppresses {
                    return true;
                }
            }
            _ => {}
        }
        child = parent;
    }
    false
}

fn catches_import_error(try_stmt: Node<'_>, source: &str) -> bool {
    let mut cursor = try_stmt.walk();
    let clauses: Vec<Node> = try_stmt.named_children(&mut cursor).collect();
    clauses.into_iter().any(|c| clause_catches(c, source))
}

/// Whether one `except` clause catches `ImportError`.
fn clause_catches(clause: Node<'_>, source: &str) -> bool {
    if clause.kind() != "except_clause" && clause.kind() != "except_group_clause" {
        return false;
    }
    let mut cursor = clause.walk();
    let exprs: Vec<Node> = clause
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "block" && n.kind() != "comment")
        .collect();
    let alias = clause.child_by_field_name("alias");
    let caught: Vec<Node> = exprs.into_iter().filter(|n| Some(*n) != alias).collect();
    // A clause with no expression at all is a bare `except:`.
    (clause.kind() == "except_clause" && caught.is_empty())
        || caught
            .iter()
            .any(|n| names_import_error(lang::text(*n, source)))
}

/// Whether an `if` (with its `elif`s) tests the Python version or the platform.
fn version_or_platform_gate(if_stmt: Node<'_>, source: &str) -> bool {
    let mut conditions: Vec<Node> = if_stmt
        .child_by_field_name("condition")
        .into_iter()
        .collect();
    let mut cursor = if_stmt.walk();
    for alt in if_stmt.children_by_field_name("alternative", &mut cursor) {
        conditions.extend(alt.child_by_field_name("condition"));
    }
    conditions.iter().any(|c| {
        let text = lang::text(*c, source);
        [
            "version_info",
            "sys.version",
            "sys.platform",
            "os.name",
            "platform.system",
            "python_implementation",
            "implementation.name",
        ]
        .iter()
        .any(|k| text.contains(k))
            || text
                .split(|ch: char| !(ch.is_alphanumeric() || ch == '_'))
                .any(is_gate_flag)
    })
}

/// Compatibility flags such as `PY2`, `six.PY3`, `IS_PY311`, `PYTHON3`, `WINDOWS`,
/// `IS_PYPY`.
fn is_gate_flag(word: &str) -> bool {
    let w = word.strip_prefix("IS_").unwrap_or(word);
    let w = w.strip_prefix("ON_").unwrap_or(w);
    let version = w
        .strip_prefix("PYTHON")
        .or_else(|| w.strip_prefix("PY"))
        .map(|rest| rest.trim_start_matches('_'))
        .is_some_and(|rest| {
            rest.starts_with(['2', '3']) && rest.chars().all(|c| c.is_ascii_digit() || c == '_')
        });
    version
        || matches!(
            w,
            "WINDOWS"
                | "WIN32"
                | "WIN"
                | "MACOS"
                | "DARWIN"
                | "LINUX"
                | "POSIX"
                | "PYPY"
                | "JYTHON"
                | "CPYTHON"
        )
}

/// Whether an exception expression names a type that catches `ImportError`.
fn names_import_error(expr: &str) -> bool {
    expr.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| {
            matches!(
                w,
                "ImportError" | "ModuleNotFoundError" | "Exception" | "BaseException"
            )
        })
}

fn rust_sites<'t>(decl: Node<'t>, source: &str, out: &mut Vec<Site<'t>>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(lang: Lang, src: &str) -> Vec<(String, Vec<String>, u32, bool)> {
        imports(lang, src)
            .into_iter()
            .map(|i| (i.module, i.names, i.level, i.optional))
            .collect()
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn python_forms() {
        let src = "from __future__ import annotations\nimport a.b as c\nimport x, y\nfrom .m import n as k\nfrom .. import z\nfrom q import *\n";
        assert_eq!(
            summary(Lang::Python, src),
            vec![
                ("__future__".into(), s(&["annotations"]), 0, false),
                ("a.b".into(), vec![], 0, false),
                ("x".into(), vec![], 0, false),
                ("y".into(), vec![], 0, false),
                ("m".into(), s(&["n"]), 1, false),
                ("".into(), s(&["z"]), 2, false),
                ("q".into(), s(&["*"]), 0, false),
            ]
        );
    }

    #[test]
    fn python_optional_imports() {
        let src = "try:\n    import ujson as json\nexcept (ValueError, ImportError):\n    import json\ntry:\n    import a\nexcept KeyError:\n    import b\nif sys.version_info >= (3, 11):\n    import tomllib\nelse:\n    import tomli\nif six.PY2:\n    import urllib2\nif TYPE_CHECKING:\n    import c\n";
        let got: Vec<(String, bool)> = summary(Lang::Python, src)
            .into_iter()
            .map(|(m, _, _, o)| (m, o))
            .collect();
        let want: Vec<(String, bool)> = [
            ("ujson", true),
            ("json", true),
            ("a", false),
            ("b", false),
            ("tomllib", true),
            ("tomli", true),
            ("urllib2", true),
            ("c", false),
        ]
        .iter()
        .map(|(m, o)| (m.to_string(), *o))
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn rust_use_trees() {
        let src = "use a::{b, c::{d as e}, self};\nuse x::*;\nuse ::serde::Serialize;\nextern crate foo;\nuse serde;\n";
        let got: Vec<(String, Vec<String>)> = summary(Lang::Rust, src)
            .into_iter()
            .map(|(m, n, _, _)| (m, n))
            .collect();
        assert_eq!(
            got,
            vec![
                ("a".into(), s(&["b"])),
                ("a::c".into(), s(&["d"])),
                ("a".into(), s(&["self"])),
                ("x".into(), s(&["*"])),
                ("::serde".into(), s(&["Serialize"])),
                ("foo".into(), vec![]),
                ("serde".into(), vec![]),
            ]
        );
    }

    #[test]
    fn added_only_new_names() {
        let before = "from m import a\nimport os\n";
        let after = "from m import a, b\nimport os\nimport sys\n";
        let got = added_imports(Lang::Python, Some(before), after);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].names, s(&["b"]));
        assert_eq!(got[1].module, "sys");
    }
}
