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

use tree_sitter::{QueryCursor, StreamingIterator, Tree};

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
        spread_optional(&mut out);
    }
    out
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
