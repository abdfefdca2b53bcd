//! Resolving Python imports: the standard library, the repository's own modules, the
//! declared dependencies, an installed virtualenv — in that order.
//!
//! The rule is "zero false positives": every layout Python itself accepts must resolve
//! (flat and `src/` layouts, namespace packages, stubs, extension modules, scripts that
//! import their neighbours, pytest's rootdir insertion). Only what no reasonable run of
//! the code could import is reported.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::OnceLock;

use super::deps::{read_dir_manifests, Declared};
use super::venv::venv_imports;
use crate::code::import::{Import, Outcome};
use crate::code::source::{join, parent, View};

/// Packaging tools every virtualenv and build environment provides, imported by
/// `setup.py` and friends without being declared.
/// `_typeshed` exists only for type checkers, where `if TYPE_CHECKING:` imports it.
const ENVIRONMENT: &[&str] = &[
    "setuptools",
    "pkg_resources",
    "_distutils_hack",
    "pip",
    "_typeshed",
];

const STDLIB_TXT: &str = include_str!("../../../grammars/python/stdlib.txt");

/// Top-level standard-library modules of Python 3.8–3.13.
pub(crate) fn stdlib() -> &'static HashSet<&'static str> {
    static SET: OnceLock<HashSet<&'static str>> = OnceLock::new();
    SET.get_or_init(|| {
        STDLIB_TXT
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect()
    })
}

/// Where a dotted module lookup under one root ended.
enum Found {
    /// A package directory (regular or namespace).
    Dir(String),
    /// A module file (`.py`, `.pyi`, extension, generated).
    File,
    /// The first segment does not exist here.
    Missing,
    /// A prefix exists but segment `.0` does not.
    Partial(usize, String),
}

/// Resolves the Python imports of one evidence run, caching manifests per directory.
pub(crate) struct PyResolver<'v, 'a> {
    view: &'v View<'a>,
    venv_root: Option<PathBuf>,
    venv: Option<Option<(String, HashSet<String>)>>,
    declared: HashMap<String, Rc<Declared>>,
    /// Directories the current file adds to `sys.path` itself.
    extra_roots: Vec<String>,
    roots_cache: HashMap<String, Rc<[String]>>,
}

impl<'v, 'a> PyResolver<'v, 'a> {
    /// A resolver over `view`; `venv_root` is where to look for `.venv/`, `venv/`, `env/`.
    pub(crate) fn new(view: &'v View<'a>, venv_root: Option<PathBuf>) -> Self {
        PyResolver {
            view,
            venv_root,
            venv: None,
            declared: HashMap::new(),
            extra_roots: Vec::new(),
            roots_cache: HashMap::new(),
        }
    }

    /// Starts a new file: `extra_roots` are the directories it adds to `sys.path`
    /// (see [`sys_path_roots`]).
    pub(crate) fn begin_file(&mut self, extra_roots: Vec<String>) {
        self.extra_roots = extra_roots;
    }

    /// Resolves `imp`, found in the file `file`.
    pub(crate) fn resolve(&mut self, file: &str, imp: &Import) -> Outcome {
        if imp.level > 0 {
            return self.relative(file, imp);
        }
        let segs: Vec<&str> = imp.module.split('.').collect();
        let top = segs[0];
        if top.is_empty()
            || top == "__future__"
            || stdlib().contains(top)
            || ENVIRONMENT.contains(&top)
        {
            return Outcome::Resolved;
        }
        let decl = self.declared(parent(file));
        let mut partial: Option<String> = None;
        let roots = match self.roots_cache.get(file) {
            Some(r) => r.clone(),
            None => {
                let r: Rc<[String]> = self.roots(file, &decl).into();
                self.roots_cache.insert(file.to_string(), r.clone());
                r
            }
        };
        for root in roots.iter() {
            match self.find(root, &segs, &decl) {
                Found::File => return Outcome::Resolved,
                // A regular package's `__init__.py` may define any name.
                Found::Dir(dir) if self.has_init(&dir) => return Outcome::Resolved,
                Found::Dir(dir) => match self.missing_name(&dir, &imp.names) {
                    None => return Outcome::Resolved,
                    Some(name) => {
                        partial.get_or_insert(format!(
                            "`{}` is a namespace package in the repository (`{dir}/`, no \
                             `__init__.py`), so `{name}` would have to be a submodule, and \
                             there is no `{dir}/{name}.py` or `{dir}/{name}/`",
                            imp.module
                        ));
                    }
                },
                Found::Partial(i, dir) => {
                    let base = join(&dir, segs[i]);
                    partial.get_or_insert(format!(
                        "`{}` is a package in the repository (`{dir}/`), but it has no module \
                         `{}` (no `{base}.py`, `{base}.pyi` or `{base}/`)",
                        segs[..i].join("."),
                        segs[i]
                    ));
                }
                Found::Missing => {}
            }
        }
        if decl.provides(top) || self.venv_provides(top) {
            return Outcome::Resolved;
        }
        if let Some(reason) = partial {
            return Outcome::Unresolved(reason);
        }
        let manifests = if decl.manifests.is_empty() {
            "no dependency manifest found".to_string()
        } else {
            decl.manifests
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        };
        let venv = match self.venv_name() {
            Some(v) => format!(", nor is it installed in `{v}`"),
            None => String::new(),
        };
        Outcome::Unresolved(format!(
            "no module `{top}` in the standard library, the repository, or the declared \
             dependencies ({manifests}){venv}"
        ))
    }

    /// `from .x import y`, `from .. import z`: resolved against real files next to `file`.
    fn relative(&mut self, file: &str, imp: &Import) -> Outcome {
        let dots = ".".repeat(imp.level as usize);
        let dir = parent(file);
        let decl = self.declared(dir);
        let top = self.sys_path_root(dir, &decl);
        let depth = dir
            .strip_prefix(top.as_str())
            .unwrap_or(dir)
            .split('/')
            .filter(|s| !s.is_empty())
            .count();
        if imp.level as usize > depth {
            return Outcome::Unresolved(format!(
                "relative import `{dots}{}` in `{file}` goes beyond the top-level package",
                imp.module
            ));
        }
        let mut base = dir.to_string();
        for _ in 1..imp.level {
            base = parent(&base).to_string();
        }
        if imp.module.is_empty() {
            // `from . import a, b`: submodules, or names the package's __init__ defines.
            return match self.missing_name(&base, &imp.names) {
                None => Outcome::Resolved,
                Some(_) if self.has_init(&base) => Outcome::Resolved,
                Some(name) => Outcome::Unresolved(format!(
                    "`{}/` has no module `{name}` and no `__init__.py` that could define it",
                    if base.is_empty() { "." } else { &base }
                )),
            };
        }
        let segs: Vec<&str> = imp.module.split('.').collect();
        match self.find(&base, &segs, &decl) {
            Found::File => Outcome::Resolved,
            Found::Dir(d) => match self.missing_name(&d, &imp.names) {
                Some(name) if !self.has_init(&d) => Outcome::Unresolved(format!(
                    "`{d}/` is a namespace package (no `__init__.py`) without a submodule `{name}`"
                )),
                _ => Outcome::Resolved,
            },
            Found::Missing => {
                let b = join(&base, segs[0]);
                Outcome::Unresolved(format!(
                    "no module `{dots}{}` relative to `{file}` (no `{b}.py`, `{b}.pyi` or `{b}/`)",
                    imp.module
                ))
            }
            Found::Partial(i, d) => {
                let b = join(&d, segs[i]);
                Outcome::Unresolved(format!(
                    "no module `{}` in `{d}/` (no `{b}.py`, `{b}.pyi` or `{b}/`)",
                    segs[i]
                ))
            }
        }
    }

    /// Walks `segs` as directories and module files under `root`.
    fn find(&self, root: &str, segs: &[&str], decl: &Declared) -> Found {
        let mut dir = root.to_string();
        for (i, seg) in segs.iter().enumerate() {
            if seg.is_empty() {
                return Found::Missing;
            }
            let base = join(&dir, seg);
            if self.view.is_dir(&base) {
                dir = base;
                continue;
            }
            // A module file ends the walk; deeper segments would be attributes or
            // `sys.modules` tricks, which we do not second-guess.
            if self.is_module_file(&dir, seg, decl) {
                return Found::File;
            }
            if i == 0 {
                return Found::Missing;
            }
            // Generated by protoc at build time and usually not committed.
            if seg.ends_with("_pb2") || seg.ends_with("_pb2_grpc") {
                return Found::File;
            }
            return Found::Partial(i, dir);
        }
        Found::Dir(dir)
    }

    fn is_module_file(&self, dir: &str, name: &str, decl: &Declared) -> bool {
        let base = join(dir, name);
        let py = format!("{base}.py");
        if self.view.is_file(&py)
            || self.view.is_file(&format!("{base}.pyi"))
            || decl.generated.contains(&py)
        {
            return true;
        }
        // Compiled extension modules: `name.cpython-311-x86_64-linux-gnu.so`, `name.pyd`.
        let prefix = format!("{name}.");
        self.view.is_dir(dir)
            && self
                .view
                .list(dir)
                .iter()
                .any(|e| e.starts_with(&prefix) && (e.ends_with(".so") || e.ends_with(".pyd")))
    }

    fn has_init(&self, dir: &str) -> bool {
        self.view.is_file(&join(dir, "__init__.py"))
            || self.view.is_file(&join(dir, "__init__.pyi"))
    }

    /// The first of `names` that is not a submodule (or subpackage) of `dir`.
    fn missing_name(&self, dir: &str, names: &[String]) -> Option<String> {
        let none = Declared::default();
        names
            .iter()
            .filter(|n| n.as_str() != "*")
            .find(|n| {
                let first = n.split('.').next().unwrap_or("");
                !(self.view.is_dir(&join(dir, first)) || self.is_module_file(dir, first, &none))
            })
            .cloned()
    }

    /// The directories a file's absolute imports are looked up in: the repository root,
    /// `src/`, configured package dirs, project roots (a directory with `pyproject.toml`,
    /// `setup.py` or `setup.cfg`) and their `src/`, the file's own directory (scripts),
    /// and pytest's rootdir for test files in packages.
    fn roots(&self, file: &str, decl: &Declared) -> Vec<String> {
        let dir = parent(file);
        let mut roots = vec![String::new()];
        let add = |r: String, roots: &mut Vec<String>| {
            if !roots.contains(&r) {
                roots.push(r);
            }
        };
        add("src".to_string(), &mut roots);
        for r in &decl.roots {
            add(r.clone(), &mut roots);
        }
        let mut ancestor = dir;
        while !ancestor.is_empty() {
            if ["pyproject.toml", "setup.py", "setup.cfg"]
                .iter()
                .any(|m| self.view.is_file(&join(ancestor, m)))
            {
                add(ancestor.to_string(), &mut roots);
                add(join(ancestor, "src"), &mut roots);
            }
            ancestor = parent(ancestor);
        }
        add(dir.to_string(), &mut roots);
        let mut base = dir;
        while !base.is_empty() && self.has_init(base) {
            base = parent(base);
        }
        add(base.to_string(), &mut roots);
        for r in &self.extra_roots {
            add(r.clone(), &mut roots);
        }
        roots
    }

    /// The `sys.path` entry a file's package hangs from: the deepest of the repository
    /// root, `src/`-style roots and project roots that contains the file. Relative imports
    /// may not climb above it.
    fn sys_path_root(&self, dir: &str, decl: &Declared) -> String {
        let mut candidates: Vec<String> = vec![String::new()];
        let layout_root = |r: &str| self.view.is_dir(r) && !self.has_init(r);
        if layout_root("src") {
            candidates.push("src".to_string());
        }
        candidates.extend(decl.roots.iter().filter(|r| layout_root(r)).cloned());
        let mut ancestor = dir;
        while !ancestor.is_empty() {
            if ["pyproject.toml", "setup.py", "setup.cfg"]
                .iter()
                .any(|m| self.view.is_file(&join(ancestor, m)))
            {
                candidates.push(ancestor.to_string());
                let src = join(ancestor, "src");
                if layout_root(&src) {
                    candidates.push(src);
                }
            }
            ancestor = parent(ancestor);
        }
        candidates
            .into_iter()
            .filter(|c| c.is_empty() || dir == c || dir.starts_with(&format!("{c}/")))
            .max_by_key(|c| c.len())
            .unwrap_or_default()
    }

    /// Declarations of `dir`'s manifests merged with every ancestor's, read once each.
    fn declared(&mut self, dir: &str) -> Rc<Declared> {
        if let Some(d) = self.declared.get(dir) {
            return d.clone();
        }
        let mut d = if dir.is_empty() {
            Declared::default()
        } else {
            (*self.declared(parent(dir))).clone()
        };
        d.merge(&read_dir_manifests(self.view, dir));
        let d = Rc::new(d);
        self.declared.insert(dir.to_string(), d.clone());
        d
    }

    fn venv(&mut self) -> Option<&(String, HashSet<String>)> {
        let root = self.venv_root.clone();
        self.venv
            .get_or_insert_with(|| root.as_deref().and_then(venv_imports))
            .as_ref()
    }

    fn venv_provides(&mut self, top: &str) -> bool {
        self.venv().is_some_and(|(_, names)| names.contains(top))
    }

    fn venv_name(&mut self) -> Option<String> {
        self.venv().map(|(n, _)| n.clone())
    }
}

/// Directories a file adds to `sys.path` (`sys.path.insert(0, "lib")`,
/// `sys.path.append(os.path.join(os.path.dirname(__file__), ".."))`,
/// `site.addsitedir(...)`): every string literal in those calls, taken relative to the
/// file's directory and to the repository root (the usual working directory), plus the
/// file's ancestor directories, which `dirname(dirname(__file__))` chains produce.
pub(crate) fn sys_path_roots(tree: &tree_sitter::Tree, source: &str, file: &str) -> Vec<String> {
    if !(source.contains("sys.path") || source.contains("addsitedir")) {
        return Vec::new();
    }
    let dir = parent(file);
    let mut out: Vec<String> = Vec::new();
    let push = |p: Option<String>, out: &mut Vec<String>| {
        if let Some(p) = p {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    };
    let mut stack = vec![tree.root_node()];
    let mut found = false;
    while let Some(node) = stack.pop() {
        if node.kind() == "call" {
            let func = node
                .child_by_field_name("function")
                .map(|f| crate::code::lang::text(f, source))
                .unwrap_or("");
            if func.starts_with("sys.path.") || func.ends_with("addsitedir") {
                found = true;
                let mut inner = vec![node];
                while let Some(n) = inner.pop() {
                    if n.kind() == "string_content" {
                        let lit = crate::code::lang::text(n, source);
                        push(crate::code::source::normalize(dir, lit), &mut out);
                        push(crate::code::source::normalize("", lit), &mut out);
                    }
                    let mut c = n.walk();
                    inner.extend(n.named_children(&mut c));
                }
                continue;
            }
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
    if found {
        let mut a = dir;
        while !a.is_empty() {
            a = parent(a);
            push(Some(a.to_string()), &mut out);
        }
    }
    out
}
