//! Python: what one side of a test file replaces (a name rebound, an attribute set, a
//! patch) and the calls its assertions make.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::super::tree::{quoted, Side};
use super::stub::{Call, Stub, Target};
use crate::code::assertions::{read_assertions, test_nodes, test_path};
use crate::code::lang::{self, Lang};

/// What one side of a test file says: its replacements and its assertions' calls.
pub(super) struct Read {
    /// The replacements it writes.
    pub(super) stubs: Vec<Stub>,
    /// The calls its assertions make.
    pub(super) calls: Vec<Call>,
    /// The first segments of calls that reach the code under test: names imported from
    /// a module that is not a test module (explicitly or by `*`); a later version that
    /// defines one of them replaces it.
    pub(super) foreign: HashSet<String>,
}

/// Reads one side of the Python test file `path`; `foreign` is what the base's calls
/// took from the code under test.
pub(super) fn python(path: &str, side: &Side<'_>, foreign: &HashSet<String>) -> Read {
    let src = side.text;
    let root = side.tree.root_node();
    let imports = python_imports(root, src);
    let tests: Vec<(u32, u32)> = test_nodes(Lang::Python, root, src)
        .into_iter()
        .map(|t| (lang::start_line(t), lang::end_line(t)))
        .collect();
    // Names the file defines at module level (a call through them is its own helper).
    let mut defined: HashSet<String> = HashSet::new();
    for stmt in super::super::tree::statements(root) {
        let def = match stmt.kind() {
            "decorated_definition" => stmt.child_by_field_name("definition"),
            "function_definition" | "class_definition" => Some(stmt),
            _ => None,
        };
        if let Some(name) = def.and_then(|d| d.child_by_field_name("name")) {
            defined.insert(lang::text(name, src).to_string());
        }
    }
    let star = imports.wildcards.iter().any(|m| !test_module(m));
    let mut calls = Vec::new();
    let mut own_foreign = HashSet::new();
    for a in read_assertions(Lang::Python, root, src) {
        for written in &a.callees {
            let first = written.split('.').next().unwrap_or("").to_string();
            let from_code = match imports.names.get(&first) {
                Some(bound) => !test_module(&bound.module),
                None => star && !defined.contains(&first),
            };
            if from_code {
                own_foreign.insert(first.clone());
            }
            let resolved = resolve(written, &imports);
            calls.push(Call {
                written: written.clone(),
                first,
                member: resolved
                    .rsplit_once('.')
                    .map(|(o, m)| (o.to_string(), m.to_string())),
                assertion: quoted(&a.text),
                line: a.line,
                at: format!("{path}:{}", a.line),
            });
        }
    }
    let replaceable = |name: &str, at: u32| {
        foreign.contains(name) || imports.names.get(name).is_some_and(|b| b.line < at)
    };
    let scope_of = |line: u32| {
        tests
            .iter()
            .copied()
            .find(|(a, b)| (*a..=*b).contains(&line))
    };
    let mut stubs = Vec::new();
    lang::walk(root, &mut |n| {
        let line = lang::start_line(n);
        let target = match n.kind() {
            "function_definition" => n
                .child_by_field_name("name")
                .map(|name| lang::text(name, src))
                .filter(|name| !name.starts_with("test") && replaceable(name, line))
                .filter(|name| !in_class_body(n) && !wraps(n, name, src))
                .map(|name| Target::Name(name.to_string())),
            "assignment" => assigned(n, src, &imports, &replaceable),
            "call" => patched(n, src, &imports),
            _ => None,
        };
        if let Some(target) = target {
            // A def shows its decorators with it; a patch in a decorator is the test's.
            let node = match n.parent() {
                Some(p) if p.kind() == "decorated_definition" && n.kind() != "call" => p,
                _ => n,
            };
            stubs.push(Stub {
                line: lang::start_line(node),
                key: lang::meaning(node, src),
                shown: quoted(lang::text(node, src)),
                target,
                scope: scope_of(line).or_else(|| decorated_test(n, &tests)),
            });
        }
        true
    });
    Read {
        stubs,
        calls,
        foreign: own_foreign,
    }
}

/// Whether a Python module is part of the tests (`tests.helpers`, `conftest`, a relative
/// import from a test package), not the code under test.
fn test_module(module: &str) -> bool {
    module.starts_with('.')
        || test_path(&module.replace('.', "/"))
        || module.split('.').any(|m| m == "conftest")
}

/// For a patch in a test's decorator (`@mock.patch("calc.add")`), the test's lines.
fn decorated_test(node: Node<'_>, tests: &[(u32, u32)]) -> Option<(u32, u32)> {
    let mut n = node.parent();
    while let Some(p) = n {
        if p.kind() == "decorated_definition" {
            let def = p.child_by_field_name("definition")?;
            let line = lang::start_line(def);
            return tests.iter().copied().find(|(a, _)| *a == line);
        }
        n = p.parent();
    }
    None
}

/// Whether a Python function calls `name` through a module or object
/// (`return calc.add(a, b)`): the real function, wrapped.
fn wraps(def: Node<'_>, name: &str, src: &str) -> bool {
    let mut found = false;
    lang::walk(def, &mut |n| {
        if n.kind() == "call" {
            let attribute = n
                .child_by_field_name("function")
                .filter(|f| f.kind() == "attribute")
                .and_then(|f| f.child_by_field_name("attribute"));
            found |= attribute.is_some_and(|a| lang::text(a, src) == name);
        }
        !found
    });
    found
}

/// Whether a definition is a method (its calls go through an object, not the name).
fn in_class_body(def: Node<'_>) -> bool {
    let mut n = def.parent();
    while let Some(p) = n {
        match p.kind() {
            "class_definition" => return true,
            "function_definition" | "module" => return false,
            _ => n = p.parent(),
        }
    }
    false
}

/// What an assignment replaces: a bare name the file imported or the base called
/// (`add = lambda a, b: 5`, not `add = calc.add`), or a member of an imported module or
/// class (`calc.add = …`).
fn assigned(
    node: Node<'_>,
    src: &str,
    imports: &Imports,
    replaceable: &dyn Fn(&str, u32) -> bool,
) -> Option<Target> {
    let left = node.child_by_field_name("left")?;
    let right = node.child_by_field_name("right")?;
    match left.kind() {
        "identifier" => {
            let name = lang::text(left, src);
            let alias = matches!(right.kind(), "identifier" | "attribute")
                && lang::text(right, src).rsplit('.').next() == Some(name);
            (!alias && replaceable(name, lang::start_line(node)))
                .then(|| Target::Name(name.to_string()))
        }
        "attribute" => {
            let owner = lang::text(left.child_by_field_name("object")?, src);
            let name = lang::text(left.child_by_field_name("attribute")?, src);
            member(owner, name, imports)
        }
        _ => None,
    }
}

/// What a patch call replaces: `setattr`/`monkeypatch.setattr(X, "f", …)`,
/// `patch.object(X, "f")`, or a target string (`patch("calc.add")`,
/// `monkeypatch.setattr("calc.add", …)`); none with `wraps=`.
fn patched(call: Node<'_>, src: &str, imports: &Imports) -> Option<Target> {
    let function: String = lang::text(call.child_by_field_name("function")?, src)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let setattr = function == "setattr" || function.ends_with(".setattr");
    let patch = function == "patch" || function.ends_with(".patch");
    let object = function.ends_with("patch.object");
    if !(setattr || patch || object) {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    let mut positional = Vec::new();
    for a in super::super::tree::statements(args) {
        if a.kind() == "keyword_argument" {
            let key = a.child_by_field_name("name").map(|k| lang::text(k, src));
            if key == Some("wraps") {
                return None;
            }
        } else {
            positional.push(a);
        }
    }
    let string = |n: Option<&Node<'_>>| {
        n.filter(|n| n.kind() == "string")
            .map(|n| lang::text(*n, src).trim_matches(['"', '\'']).to_string())
    };
    match (string(positional.first()), string(positional.get(1))) {
        (Some(target), _) if !object => {
            let (owner, name) = target.rsplit_once('.')?;
            Some(Target::Member {
                owner: owner.to_string(),
                name: name.to_string(),
            })
        }
        (None, Some(name)) => {
            let owner = lang::text(*positional.first()?, src);
            member(owner, &name, imports)
        }
        _ => None,
    }
}

/// A member of `owner` as a target, when `owner` is (or starts with) an imported name.
fn member(owner: &str, name: &str, imports: &Imports) -> Option<Target> {
    let first = owner.split('.').next()?;
    imports.names.contains_key(first).then(|| Target::Member {
        owner: resolve(owner, imports),
        name: name.to_string(),
    })
}

/// A dotted name with its first segment replaced by what the file imports under it
/// (`add` → `calc.add` after `from calc import add`).
fn resolve(dotted: &str, imports: &Imports) -> String {
    let (first, rest) = match dotted.split_once('.') {
        Some((f, r)) => (f, Some(r)),
        None => (dotted, None),
    };
    match (imports.names.get(first), rest) {
        (Some(bound), Some(rest)) => format!("{}.{rest}", bound.target),
        (Some(bound), None) => bound.target.clone(),
        (None, _) => dotted.to_string(),
    }
}

/// What a name bound by a Python import refers to.
struct Bound {
    /// The dotted name it stands for (`calc.add` for `from calc import add`).
    target: String,
    /// The module it comes from (`calc`; `a.b` for `import a.b as c`).
    module: String,
    /// The import's line.
    line: u32,
}

/// The names a Python file's imports bind, and the modules it imports `*` from.
struct Imports {
    names: HashMap<String, Bound>,
    wildcards: Vec<String>,
}

/// Reads a Python file's imports.
fn python_imports(root: Node<'_>, src: &str) -> Imports {
    let mut names = HashMap::new();
    let mut wildcards = Vec::new();
    let squeeze = |n: Node<'_>| -> String {
        lang::text(n, src)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    lang::walk(root, &mut |n| {
        if !matches!(n.kind(), "import_statement" | "import_from_statement") {
            return true;
        }
        let line = lang::start_line(n);
        let from = n.child_by_field_name("module_name").map(squeeze);
        let mut cursor = n.walk();
        if let Some(m) = &from {
            if n.named_children(&mut cursor)
                .any(|c| c.kind() == "wildcard_import")
            {
                wildcards.push(m.clone());
            }
        }
        for name in n.children_by_field_name("name", &mut cursor) {
            let (original, alias) = match name.kind() {
                "aliased_import" => (
                    name.child_by_field_name("name").map(squeeze),
                    name.child_by_field_name("alias").map(squeeze),
                ),
                _ => (Some(squeeze(name)), None),
            };
            let Some(original) = original else { continue };
            let (bound, target, module) = match (&from, alias) {
                (Some(m), alias) => (
                    alias.unwrap_or_else(|| original.clone()),
                    format!("{m}.{original}"),
                    m.clone(),
                ),
                (None, Some(alias)) => (alias, original.clone(), original.clone()),
                (None, None) => {
                    let top = original.split('.').next().unwrap_or("").to_string();
                    (top.clone(), top.clone(), top)
                }
            };
            names.insert(
                bound,
                Bound {
                    target,
                    module,
                    line,
                },
            );
        }
        false
    });
    Imports { names, wildcards }
}
