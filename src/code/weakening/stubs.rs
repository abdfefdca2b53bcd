//! Stubs: the function an assertion calls, replaced inside the tests, so the assertion
//! checks the stub instead of the code.
//!
//! `def add(a, b): return 5` under `from calc import add`, `calc.add = lambda a, b: 5`,
//! `monkeypatch.setattr(calc, "add", …)`, `mock.patch("calc.add", return_value=5)`, or a
//! Rust `fn add` in the test module that shadows the `add` of `use super::*`: each keeps
//! every assertion written and makes it pass whatever the code does. Mocking is a normal
//! tool, so a replacement is a finding only when it replaces what an assertion itself
//! calls (its computed side: `add` in `assert add(2, 3) == 5`), read from the syntax tree:
//!
//! - a bare name rebound (`def`, `=`) that the file imports, or that the base's assertions
//!   called without the base's file defining it, matches the calls through that name;
//! - an attribute replaced (`X.f = …`, `setattr`/`monkeypatch.setattr(X, "f", …)`,
//!   `patch.object(X, "f")`) where `X` is an imported module or class, or a patch target
//!   string (`"calc.add"`), matches the calls of that function of that module (`add`
//!   imported from `calc`, or `calc.add`); a patch with `wraps=` still runs the code and
//!   is none;
//! - in Rust, a non-test `fn` of a test module (or test file) whose name its assertions
//!   call, that the same file's code outside the tests defines or that the base's tests
//!   called without defining.
//!
//! A replacement inside one test counts for that test's assertions only; one at module
//! level, in a fixture or helper, or in a `conftest.py` (for the changed test files below
//! it) counts for all. A replacement the base already had, by meaning, is no finding. A
//! test file new in the change is held to the same rules: they need an import or a call
//! to tell what the code under test is, so a helper the new tests define for themselves
//! is never taken for a stub.

use std::collections::{HashMap, HashSet};

use tree_sitter::Node;

use super::tree::{quoted, File, Side};
use super::weakened_finding;
use crate::code::assertions::{read_assertions, test_nodes, test_path, Assertion};
use crate::code::lang::{self, Lang};
use crate::code::rust::{use_leaves, Leaf};
use crate::code::Finding;

/// A replacement of a function, as the tests write it.
struct Stub {
    /// Its line.
    line: u32,
    /// What it says, by meaning (the base's replacements are no finding).
    key: String,
    /// How it is written.
    shown: String,
    /// What it replaces.
    target: Target,
    /// The line range of the test it is confined to, or `None` for the whole file.
    scope: Option<(u32, u32)>,
}

/// What a replacement replaces.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// Every call through a bare name (`add`, or `calc` of `calc.add`).
    Name(String),
    /// The function `name` of the module or class `owner` (`calc`, `pkg.calc`, `Calc`).
    Member { owner: String, name: String },
}

/// A call an assertion makes on its computed side.
struct Call {
    /// The callee as written (`add`, `calc.add`).
    written: String,
    /// Its first segment.
    first: String,
    /// Its owner through the file's imports (`calc` for `add` imported from `calc`), and
    /// its last segment.
    member: Option<(String, String)>,
    /// The assertion, as written.
    assertion: String,
    /// The assertion's line.
    line: u32,
    /// The assertion's `path:line`.
    at: String,
}

impl Call {
    /// Whether a replacement of `target` is what this call reaches.
    fn replaced_by(&self, target: &Target) -> bool {
        match target {
            Target::Name(n) => self.first == *n,
            Target::Member { owner, name } => self.member.as_ref().is_some_and(|(o, m)| {
                m == name
                    && (o == owner
                        || o.ends_with(&format!(".{owner}"))
                        || owner.ends_with(&format!(".{o}")))
            }),
        }
    }
}

/// What one side of a test file says: its replacements and its assertions' calls.
struct Read {
    /// The replacements it writes.
    stubs: Vec<Stub>,
    /// The calls its assertions make.
    calls: Vec<Call>,
    /// The first segments of calls that reach the code under test: names imported from
    /// a module that is not a test module (explicitly or by `*`); a later version that
    /// defines one of them replaces it.
    foreign: HashSet<String>,
}

/// Finds the replacements the change adds for functions the tests' assertions call.
pub(super) fn check(files: &[File<'_>], out: &mut Vec<Finding>) {
    let reads: Vec<(Option<Read>, Option<Read>)> = files
        .iter()
        .map(|f| {
            if f.lang != Lang::Python {
                return (None, None);
            }
            let before = f
                .before
                .as_ref()
                .map(|s| python(f.path, s, &HashSet::new()));
            let foreign = before
                .as_ref()
                .map(|b| b.foreign.clone())
                .unwrap_or_default();
            (
                before,
                f.after.as_ref().map(|s| python(f.path, s, &foreign)),
            )
        })
        .collect();
    for (f, (before, after)) in files.iter().zip(&reads) {
        if f.lang == Lang::Rust {
            rust(f, out);
            continue;
        }
        let Some(after) = after else {
            continue;
        };
        let had: Vec<&str> = before
            .iter()
            .flat_map(|b| b.stubs.iter().map(|s| s.key.as_str()))
            .collect();
        // A conftest.py replaces for the changed test files below it.
        let conftest = super::runner::is_conftest(f.path);
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        let calls: Vec<&Call> = if conftest {
            files
                .iter()
                .zip(&reads)
                .filter(|(g, _)| {
                    g.lang == Lang::Python
                        && !super::runner::is_conftest(g.path)
                        && (dir.is_empty() || g.path.starts_with(&format!("{dir}/")))
                })
                .flat_map(|(_, r)| r.1.iter().flat_map(|a| a.calls.iter()))
                .collect()
        } else {
            after.calls.iter().collect()
        };
        for stub in after
            .stubs
            .iter()
            .filter(|s| !had.contains(&s.key.as_str()))
        {
            let hit = calls.iter().find(|c| {
                c.replaced_by(&stub.target)
                    && stub
                        .scope
                        .is_none_or(|(from, to)| (from..=to).contains(&c.line))
            });
            if let Some(call) = hit {
                out.push(replaced(f.path, stub, call));
            }
        }
    }
}

/// The finding of a replacement that an assertion's call goes through.
fn replaced(path: &str, stub: &Stub, call: &Call) -> Finding {
    weakened_finding(
        path,
        stub.line,
        format!(
            "the change replaces `{}`, which the assertion {} ({}) calls, with {} in the tests: the assertion checks the stub, not the code",
            call.written, call.assertion, call.at, stub.shown
        ),
    )
}

/// Reads one side of the Python test file `path`; `foreign` is what the base's calls
/// took from the code under test.
fn python(path: &str, side: &Side<'_>, foreign: &HashSet<String>) -> Read {
    let src = side.text;
    let root = side.tree.root_node();
    let imports = python_imports(root, src);
    let tests: Vec<(u32, u32)> = test_nodes(Lang::Python, root, src)
        .into_iter()
        .map(|t| (lang::start_line(t), lang::end_line(t)))
        .collect();
    // Names the file defines at module level (a call through them is its own helper).
    let mut defined: HashSet<String> = HashSet::new();
    for stmt in super::tree::statements(root) {
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
    for a in super::tree::statements(args) {
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

/// Rust: non-test functions of a test module that shadow what its assertions call.
fn rust(file: &File<'_>, out: &mut Vec<Finding>) {
    let Some(after) = &file.after else {
        return;
    };
    let old_modules = file
        .before
        .as_ref()
        .map(|b| test_modules(b.text, &b.tree))
        .unwrap_or_default();
    // The functions each test module gains: most changes add none, and then the
    // assertions are never read.
    let mut gained = Vec::new();
    for module in test_modules(after.text, &after.tree) {
        let old = old_modules.iter().find(|o| o.path == module.path);
        let new_fns: Vec<(String, Node<'_>)> = module
            .fns
            .iter()
            .filter(|(name, _)| !old.is_some_and(|o| o.fns.iter().any(|(n, _)| n == name)))
            .cloned()
            .collect();
        if !new_fns.is_empty() {
            gained.push((module, old, new_fns));
        }
    }
    if gained.is_empty() {
        return;
    }
    let src = after.text;
    let new_asserts = read_assertions(Lang::Rust, after.tree.root_node(), src);
    let old_asserts = file
        .before
        .as_ref()
        .map(|b| read_assertions(Lang::Rust, b.tree.root_node(), b.text))
        .unwrap_or_default();
    for (module, old, new_fns) in gained {
        let now = reach(file.path, &module, src, &after.tree, &new_asserts);
        let base = old
            .zip(file.before.as_ref())
            .map(|(o, b)| reach(file.path, o, b.text, &b.tree, &old_asserts));
        for (name, node) in new_fns {
            // A glob `use` (`use super::*`) makes the file's free functions visible, and a
            // local function shadows them; one that calls the real function through a
            // path (`super::check(…)`) wraps it rather than replacing it.
            let shadows = (now.star && now.outside.contains(&name))
                || base.as_ref().is_some_and(|b| b.foreign.contains(&name));
            if !shadows || calls_through_path(node, &name, src) {
                continue;
            }
            let Some(call) = now.calls.iter().find(|c| c.first == name) else {
                continue;
            };
            {
                let shown = src
                    .get(node.start_byte()..)
                    .and_then(|s| s.split('{').next())
                    .unwrap_or("");
                let stub = Stub {
                    line: lang::start_line(node),
                    key: String::new(),
                    shown: quoted(shown.trim()),
                    target: Target::Name(name.clone()),
                    scope: None,
                };
                out.push(replaced(file.path, &stub, call));
            }
        }
    }
}

/// A Rust module (or file) that holds tests.
struct TestModule<'t> {
    /// The `mod_item`, or the file's root for tests at top level.
    node: Node<'t>,
    /// The module path (`tests`, `a::tests`; empty for the file).
    path: String,
    /// The non-test functions defined directly in it.
    fns: Vec<(String, Node<'t>)>,
}

/// The test modules of a Rust file (the file itself when it has tests at top level).
fn test_modules<'t>(src: &'t str, tree: &'t tree_sitter::Tree) -> Vec<TestModule<'t>> {
    let tests = test_nodes(Lang::Rust, tree.root_node(), src);
    let test_ids: HashSet<usize> = tests.iter().map(|t| t.id()).collect();
    let mut out: Vec<TestModule<'t>> = Vec::new();
    for t in &tests {
        let Some(h) = t
            .parent()
            .map(|p| p.parent().filter(|m| m.kind() == "mod_item").unwrap_or(p))
        else {
            continue;
        };
        if out.iter().any(|m| m.node.id() == h.id()) {
            continue;
        }
        let body = if h.kind() == "mod_item" {
            h.child_by_field_name("body").unwrap_or(h)
        } else {
            h
        };
        let fns = super::tree::statements(body)
            .into_iter()
            .filter(|n| n.kind() == "function_item" && !test_ids.contains(&n.id()))
            .filter_map(|n| {
                let name = n.child_by_field_name("name")?;
                Some((lang::text(name, src).to_string(), n))
            })
            .collect();
        let mut mods = Vec::new();
        let mut n = Some(h);
        while let Some(m) = n {
            if m.kind() == "mod_item" {
                if let Some(name) = m.child_by_field_name("name") {
                    mods.push(lang::text(name, src));
                }
            }
            n = m.parent();
        }
        mods.reverse();
        out.push(TestModule {
            node: h,
            path: mods.join("::"),
            fns,
        });
    }
    out
}

/// What a test module's assertions reach.
struct Reach {
    /// The bare-name calls its assertions make.
    calls: Vec<Call>,
    /// The free functions the file defines outside the module.
    outside: HashSet<String>,
    /// Whether the module has a glob `use` from outside the tests (`use super::*`).
    star: bool,
    /// The names its assertions call that reach the code under test: defined outside
    /// the module in the file, or brought by a `use` of a path that is not one of the
    /// file's own modules (`mod common;`).
    foreign: HashSet<String>,
}

/// What the assertions (`asserts`, of the whole file at `path`) of one test module reach.
fn reach(
    path: &str,
    module: &TestModule<'_>,
    src: &str,
    tree: &tree_sitter::Tree,
    asserts: &[Assertion],
) -> Reach {
    let h = module.node;
    let inside = |n: Node<'_>| n.start_byte() >= h.start_byte() && n.end_byte() <= h.end_byte();
    let mut outside = HashSet::new();
    let mut modules: HashSet<&str> = HashSet::from(["self"]);
    lang::walk(tree.root_node(), &mut |n| {
        let name = n.child_by_field_name("name").map(|m| lang::text(m, src));
        match (n.kind(), name) {
            ("function_item", Some(name)) if !inside(n) && free(n) => {
                outside.insert(name.to_string());
            }
            ("mod_item", Some(name)) => {
                modules.insert(name);
            }
            _ => {}
        }
        true
    });
    // What the module's own `use`s bring from outside the tests.
    let body = if h.kind() == "mod_item" {
        h.child_by_field_name("body").unwrap_or(h)
    } else {
        h
    };
    let mut leaves = Vec::new();
    for u in super::tree::statements(body)
        .into_iter()
        .filter(|u| u.kind() == "use_declaration")
    {
        if let Some(arg) = u.child_by_field_name("argument") {
            use_leaves(arg, src, &[], &mut leaves);
        }
    }
    let from_code = |leaf: &&Leaf<'_>| {
        leaf.path
            .first()
            .is_some_and(|m| !modules.contains(m.as_str()))
    };
    let used: HashSet<String> = leaves
        .iter()
        .filter(from_code)
        .filter_map(|l| l.binds.clone())
        .collect();
    let star = leaves
        .iter()
        .filter(from_code)
        .any(|l| l.path.last().is_some_and(|s| s == "*"));
    let (from, to) = (lang::start_line(h), lang::end_line(h));
    let calls: Vec<Call> = asserts
        .iter()
        .filter(|a| (from..=to).contains(&a.line))
        .flat_map(|a| {
            a.callees
                .iter()
                .filter(|c| !c.contains("::"))
                .map(|c| Call {
                    written: c.clone(),
                    first: c.clone(),
                    member: None,
                    assertion: quoted(&a.text),
                    line: a.line,
                    at: format!("{path}:{}", a.line),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let local: HashSet<&str> = module.fns.iter().map(|(n, _)| n.as_str()).collect();
    let foreign = calls
        .iter()
        .map(|c| c.first.clone())
        .filter(|c| {
            outside.contains(c) || used.contains(c) || (star && !local.contains(c.as_str()))
        })
        .collect();
    Reach {
        calls,
        outside,
        star,
        foreign,
    }
}

/// Whether a Rust `fn` is a free function of a module or file (not a method, which a free
/// function never shadows).
fn free(function: Node<'_>) -> bool {
    match function.parent() {
        Some(p) if p.kind() == "source_file" => true,
        Some(p) if p.kind() == "declaration_list" => {
            p.parent().is_some_and(|m| m.kind() == "mod_item")
        }
        _ => false,
    }
}

/// Whether a function's body calls `name` through a path (`super::name`,
/// `crate::calc::name`): the real function, wrapped.
fn calls_through_path(function: Node<'_>, name: &str, src: &str) -> bool {
    let mut found = false;
    lang::walk(function, &mut |n| {
        if n.kind() == "scoped_identifier"
            && n.child_by_field_name("name")
                .is_some_and(|last| lang::text(last, src) == name)
        {
            found = true;
        }
        !found
    });
    found
}
