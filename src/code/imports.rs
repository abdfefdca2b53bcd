//! Import extraction: every `import`/`from … import`/`use`/`extern crate` in a file, in
//! a shape the resolvers can check.
//!
//! Python: one [`Import`] per imported module (`import a, b` gives two); `from m import
//! x, y` gives one with `names = ["x", "y"]`. Rust: use trees are flattened into one
//! [`Import`] per leaf path, so that `use a::{b, c::{d as e}}` can report exactly the leaf
//! that does not exist.
//!
//! This module answers which imports a file has, dispatching to the per-language readers
//! in `python/imports.rs` and `rust/imports.rs`, and which of them a change added. The
//! shapes the readers build and the resolvers read ([`Import`], `Site`, `Outcome`) are in
//! `import.rs`, below both sides, so that no reader imports the module that calls it.

use std::collections::HashSet;

use tree_sitter::{Node, QueryCursor, StreamingIterator, Tree};

use super::import::{Import, Site};
use super::lang::{self, Lang};
use super::python::{python_sites, spread_optional};
use super::rust::rust_sites;

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

/// Every import of a parsed file with its tree context, in source order.
///
/// The language's imports query decides what an import is; it is run only where one can
/// be. Matching it against every node of a file cost half as much again as parsing the
/// file, and an import statement holds its keyword as a token of its own (`import`; `use`,
/// `extern`), so the query runs on the statement around each such word of the text,
/// nowhere else.
pub(crate) fn sites<'t>(lang: Lang, tree: &'t Tree, source: &str) -> Vec<Site<'t>> {
    let Some(query) = lang.imports_query() else {
        return Vec::new();
    };
    let mut statements: Vec<Node<'t>> = Vec::new();
    let mut cursor = QueryCursor::new();
    for around in around_keywords(lang, tree, source) {
        let mut matches = cursor.matches(query, around, source.as_bytes());
        while let Some(m) = matches.next() {
            statements.extend(m.captures.iter().map(|c| c.node));
        }
    }
    // In the order of the text, each once: two keywords of one statement (`from … import`
    // in a broken file) find it twice.
    statements.sort_by_key(|n| (n.start_byte(), n.end_byte(), n.id()));
    statements.dedup_by_key(|n| n.id());
    let mut out = Vec::new();
    for node in statements {
        match lang {
            Lang::Python => python_sites(node, source, &mut out),
            Lang::Rust => rust_sites(node, source, &mut out),
        }
    }
    if lang == Lang::Python {
        spread_optional(&mut out);
    }
    out
}

/// The words an import statement of `lang` holds as a token of its own.
fn import_keywords(lang: Lang) -> &'static [&'static str] {
    match lang {
        Lang::Python => &["import"],
        Lang::Rust => &["use", "extern"],
    }
}

/// Where an import of `lang` can be: for each import keyword of `source` that the tree
/// reads as that keyword (not a word in a string, a comment or a longer name), the nearest
/// node above it that is not an error (the statement, or what holds the broken one).
fn around_keywords<'t>(lang: Lang, tree: &'t Tree, source: &str) -> Vec<Node<'t>> {
    let bytes = source.as_bytes();
    let in_word = |i: usize| {
        bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    let root = tree.root_node();
    let mut found: Vec<Node<'t>> = Vec::new();
    for keyword in import_keywords(lang) {
        for (at, _) in source.match_indices(keyword) {
            let end = at + keyword.len();
            if (at > 0 && in_word(at - 1)) || in_word(end) {
                continue;
            }
            let Some(token) = root.descendant_for_byte_range(at, end) else {
                continue;
            };
            if token.is_named() || token.kind() != *keyword {
                continue;
            }
            let mut above = token.parent();
            while let Some(n) = above.filter(|n| n.is_error()) {
                above = n.parent();
            }
            found.extend(above);
        }
    }
    found.sort_by_key(|n| n.id());
    found.dedup_by_key(|n| n.id());
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the whole-tree query finds, as `sites` found it before it looked only around
    /// the keywords: the reference the fast path must equal.
    fn sites_over_the_whole_tree<'t>(lang: Lang, tree: &'t Tree, source: &str) -> Vec<Site<'t>> {
        let query = lang.imports_query().unwrap();
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
            spread_optional(&mut out);
        }
        out
    }

    fn shown(sites: &[Site<'_>]) -> Vec<String> {
        sites
            .iter()
            .map(|s| {
                format!(
                    "{}-{} {:?} {:?} {}",
                    s.decl.start_byte(),
                    s.decl.end_byte(),
                    s.import,
                    s.path,
                    s.extern_crate
                )
            })
            .collect()
    }

    /// Looking for imports only around their keywords finds exactly what the query finds
    /// over the whole tree: on every Rust and Python file of this repository, whole and cut
    /// short at several places (broken files, error nodes), and on imports in strings,
    /// comments, longer names, nested blocks, `try`, macros and `extern "C"`.
    #[test]
    fn imports_found_around_keywords_are_the_whole_trees() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<(Lang, String)> = vec![
            (
                Lang::Python,
                "s = 'import os'\n# import sys\nimportant = 1\nimport_x = 2\ntry:\n    import ujson as j\nexcept ImportError:\n    j = None\ndef f():\n    from . import (a,\n        b)\n    import x.y, z\nfrom __future__ import annotations\nfrom q import *\nif x:\n    from m import (\n".into(),
            ),
            (
                Lang::Rust,
                "// use a::b;\nconst S: &str = \"use c::d;\";\nextern \"C\" { fn f(); }\nextern crate alloc as al;\npub(crate) use x::{y, z::{self, w as v}};\nfn g() { let c = || { use std::cmp::max; max(1, 2) }; use super::h; }\nmacro_rules! m { () => { use k::l; }; }\nmod inner { use crate::q; }\nfn used() { let user = 1; }\nuse broken::{\n".into(),
            ),
        ];
        let mut dirs = vec![root.join("src"), root.join("tests"), root.join("benches")];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if let Some(lang) = Lang::from_path(&path.to_string_lossy()) {
                    if let Ok(text) = std::fs::read_to_string(&path) {
                        texts.push((lang, text));
                    }
                }
            }
        }
        assert!(texts.len() > 100, "the repository's sources were not read");
        let mut checked = 0;
        for (lang, text) in &texts {
            let mut cuts: Vec<usize> = [3, 2, 1]
                .iter()
                .map(|d| text.len() * d / 4)
                .filter(|&c| text.is_char_boundary(c))
                .collect();
            cuts.push(text.len());
            for cut in cuts {
                let text = &text[..cut];
                let Some(tree) = lang::parse(*lang, text) else {
                    continue;
                };
                assert_eq!(
                    shown(&sites(*lang, &tree, text)),
                    shown(&sites_over_the_whole_tree(*lang, &tree, text)),
                    "{lang:?}:\n{text}"
                );
                checked += 1;
            }
        }
        assert!(checked > 400, "{checked}");
    }

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
