//! Python import statements as [`Import`]s: which modules and names each one imports, and
//! whether a failing import would be handled at run time (`try`/`except ImportError`,
//! `with suppress(ImportError)`, version and platform checks), so the resolver does not
//! report a module some interpreters simply lack.

use std::collections::HashSet;

use tree_sitter::Node;

use crate::code::import::{Import, Site};
use crate::code::lang;

/// Marks every absolute import of a module the file imports optionally somewhere as optional:
/// a file that imports a module optionally treats it as optional everywhere
/// (`try: import simplejson … has_simplejson = True` then
/// `if has_simplejson: from simplejson import JSONDecodeError`).
pub(crate) fn spread_optional(out: &mut [Site<'_>]) {
    let optional: HashSet<String> = out
        .iter()
        .filter(|s| s.import.optional && s.import.level == 0)
        .map(|s| top_module(&s.import.module).to_string())
        .collect();
    for site in out {
        if site.import.level == 0 && optional.contains(top_module(&site.import.module)) {
            site.import.optional = true;
        }
    }
}

fn top_module(module: &str) -> &str {
    module.split('.').next().unwrap_or(module)
}

/// The [`Site`]s of one Python import statement (`import`, `from … import`, `from __future__
/// import`), appended to `out`.
pub(crate) fn python_sites<'t>(decl: Node<'t>, source: &str, out: &mut Vec<Site<'t>>) {
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
