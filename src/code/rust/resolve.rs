//! Resolving Rust `use` paths and `extern crate`: external crates against the nearest
//! `Cargo.toml`, `crate::`/`self::`/`super::` paths against the crate's module tree as
//! the real files declare it.
//!
//! Modules are looked up lazily: `use crate::a::b::C` parses the crate root, then `a`'s
//! file, then `b`'s, each at most once per evidence run. Only the first segment that is
//! not a module is checked; what lies below an item (enum variants, associated items) is
//! accepted, and so is anything a glob import or an item-defining macro could provide.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use tree_sitter::Node;

use super::cargo::{crate_for_dir, default_dir, file_module_of, CrateInfo, FileModule};
use super::items::{collect_items, scan_macro_rules, under_macro_attribute, Items, ModDecl};
use crate::code::import::{Outcome, Site};
use crate::code::lang::{self, Lang, Parsed};
use crate::code::source::{join, normalize, parent, View};

/// Crates every Rust program can name without declaring them.
const BUILTIN_CRATES: &[&str] = &["std", "core", "alloc", "proc_macro", "test"];

/// Toolchain crates reachable with `extern crate` under `#![feature(rustc_private)]` or
/// in `no_std` runtimes (besides every `rustc_*`).
const SYSROOT_CRATES: &[&str] = &[
    "compiler_builtins",
    "panic_abort",
    "panic_unwind",
    "unwind",
    "std_detect",
    "libc",
    "getopts",
];

/// Where a module's items live: a file, the inline `mod` blocks inside it, and the
/// directory its `mod x;` children are looked up in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ModLoc {
    file: String,
    inline: Vec<String>,
    dir: String,
}

/// Resolves the Rust imports of one evidence run.
pub(crate) struct RustResolver<'v, 'a> {
    view: &'v View<'a>,
    files: HashMap<String, Option<Rc<Parsed<'a>>>>,
    items: HashMap<(String, Vec<String>), Rc<Items>>,
    crates: HashMap<String, Option<Rc<CrateInfo>>>,
    macros: HashMap<String, Rc<HashSet<String>>>,
    reachable: HashMap<String, bool>,
    modules: HashMap<String, Rc<FileModule>>,
}

impl<'v, 'a> RustResolver<'v, 'a> {
    /// A resolver over `view`.
    pub(crate) fn new(view: &'v View<'a>) -> Self {
        RustResolver {
            view,
            files: HashMap::new(),
            items: HashMap::new(),
            crates: HashMap::new(),
            macros: HashMap::new(),
            reachable: HashMap::new(),
            modules: HashMap::new(),
        }
    }

    /// Registers an already parsed file (a changed file's new version) so that module
    /// lookups reuse its tree instead of parsing it again.
    pub(crate) fn preload(&mut self, path: &str, parsed: Rc<Parsed<'a>>) {
        self.files.insert(path.to_string(), Some(parsed));
    }

    /// Resolves one import site of `file`.
    pub(crate) fn resolve(&mut self, file: &str, site: &Site<'_>, source: &str) -> Outcome {
        let path = &site.path;
        let Some(first) = path.first() else {
            return Outcome::Resolved;
        };
        let krate = self.crate_of(file);
        if site.extern_crate {
            return self.external(first, krate.as_deref());
        }
        // An attribute macro on an enclosing `mod` (e.g. `#[apply(for_each_provider)]`)
        // may rewrite the module and inject names: relative paths are unknowable there.
        let keyword = matches!(first.as_str(), "" | "crate" | "self" | "super" | "Self");
        let external = !keyword && self.is_extern(file, first, krate.as_deref());
        let relative = matches!(first.as_str(), "self" | "super") || (!keyword && !external);
        if relative && under_macro_attribute(site.decl, source) {
            return Outcome::Resolved;
        }
        // `crate::` and `super::` depend on where the file sits in the module tree; a file
        // no root declares is not compiled (or included in ways we do not follow).
        let positional = matches!(first.as_str(), "crate" | "super");
        if positional && !self.reachable(file, krate.as_deref()) {
            return Outcome::Resolved;
        }
        let result = match first.as_str() {
            "" => match path.get(1) {
                Some(name) if self.is_extern(file, name, krate.as_deref()) => Ok(()),
                Some(name) => return self.external(name, krate.as_deref()),
                None => Ok(()),
            },
            "crate" => self.walk_crate(file, krate.as_deref(), &path[1..]),
            "self" => {
                let here = self.here(file, site.decl, source, krate.as_deref());
                self.walk(vec![here], &path[1..], None, "self".to_string())
            }
            "super" => self.walk_super(file, site.decl, source, krate.as_deref(), path),
            "Self" => Ok(()),
            _ if external => Ok(()),
            name => self.uniform(file, site, source, krate.as_deref(), name),
        };
        match result {
            Ok(()) => Outcome::Resolved,
            Err(reason) => Outcome::Unresolved(reason),
        }
    }

    /// Whether `name` is in the extern prelude: a builtin crate, a dependency, the
    /// package itself, or an `extern crate … as name;` at the crate root.
    fn is_extern(&mut self, file: &str, name: &str, krate: Option<&CrateInfo>) -> bool {
        // `kani` is injected by the Kani verifier under `cfg(kani)`.
        if BUILTIN_CRATES.contains(&name) || name == "kani" {
            return true;
        }
        let Some(krate) = krate else {
            return true;
        };
        if krate.knows(name) {
            return true;
        }
        let roots: Vec<String> = self
            .file_module(file, krate)
            .places
            .iter()
            .map(|(r, _)| r.clone())
            .collect();
        roots
            .iter()
            .any(|r| self.items(&root_loc(r)).extern_crates.contains(name))
    }

    /// `extern crate name;` (or `::name::…`): a dependency or a toolchain crate.
    fn external(&self, name: &str, krate: Option<&CrateInfo>) -> Outcome {
        let sysroot = name.starts_with("rustc_") || SYSROOT_CRATES.contains(&name);
        if name == "self"
            || sysroot
            || BUILTIN_CRATES.contains(&name)
            || krate.is_none_or(|k| k.knows(name))
        {
            return Outcome::Resolved;
        }
        Outcome::Unresolved(format!(
            "no crate `{name}` in the dependencies of `{}`",
            krate.map(|k| k.manifest.as_str()).unwrap_or("Cargo.toml")
        ))
    }

    /// `use foo::…` where `foo` is not a crate: since 2018 it must be a name in scope
    /// (an item or `mod` of this module or of an enclosing block, or another `use`); in
    /// 2015 paths are crate-relative.
    fn uniform(
        &mut self,
        file: &str,
        site: &Site<'_>,
        source: &str,
        krate: Option<&CrateInfo>,
        name: &str,
    ) -> Result<(), String> {
        let decl_start = Some(site.decl.start_byte());
        let mut node = site.decl.parent();
        while let Some(n) = node {
            match n.kind() {
                "block" => {
                    let mut items = Items::default();
                    collect_items(n, source, &mut items);
                    if items.has(name, decl_start) {
                        return Ok(());
                    }
                }
                "declaration_list" | "source_file" => break,
                _ => {}
            }
            node = n.parent();
        }
        let here = self.here(file, site.decl, source, krate);
        let items = self.items(&here);
        if items.has(name, decl_start) {
            if items.mods.contains_key(name) {
                return self.walk(vec![here], &site.path, None, "self".to_string());
            }
            return Ok(());
        }
        if krate.is_some_and(|k| k.edition2015)
            && (!self.reachable(file, krate) || self.walk_crate(file, krate, &site.path).is_ok())
        {
            return Ok(());
        }
        Err(match krate {
            Some(k) => format!(
                "no crate `{name}` in the dependencies of `{}`, and no item `{name}` in scope",
                k.manifest
            ),
            None => format!("no crate or item `{name}` in scope"),
        })
    }

    /// `crate::…`: walk from every possible crate root; one success is enough.
    fn walk_crate(
        &mut self,
        file: &str,
        krate: Option<&CrateInfo>,
        segs: &[String],
    ) -> Result<(), String> {
        let Some(krate) = krate else {
            return Ok(());
        };
        let fm = self.file_module(file, krate);
        let roots: Vec<ModLoc> = fm.places.iter().map(|(r, _)| root_loc(r)).collect();
        if roots.is_empty() {
            return Ok(());
        }
        self.walk(roots, segs, Some(krate), "crate".to_string())
    }

    /// `super::…` (any number of leading `super`s).
    fn walk_super(
        &mut self,
        file: &str,
        decl: Node<'_>,
        source: &str,
        krate: Option<&CrateInfo>,
        path: &[String],
    ) -> Result<(), String> {
        let ups = path.iter().take_while(|s| *s == "super").count();
        let rest = &path[ups..];
        let mut here = self.here(file, decl, source, krate);
        if ups <= here.inline.len() {
            for _ in 0..ups {
                here.inline.pop();
                here.dir = parent(&here.dir).to_string();
            }
            return self.walk(vec![here], rest, None, "super".to_string());
        }
        let Some(krate) = krate else {
            return Ok(());
        };
        let beyond = ups - here.inline.len();
        let fm = self.file_module(file, krate);
        if fm.places.is_empty() {
            return Ok(());
        }
        // Any place the file may occupy will do; report the first failure otherwise.
        let mut first_err = None;
        for (root, module) in &fm.places {
            let result = if beyond > module.len() {
                Err(format!(
                    "too many `super`: `{file}` is only {} module(s) below the crate root `{root}`",
                    module.len()
                ))
            } else if !self.declares(root, module, file) {
                // The file is not where Cargo's conventions put it (a `#[path]` module or
                // a dead file): its parent is unknown, so nothing can be proven.
                Ok(())
            } else {
                let target = &module[..module.len() - beyond];
                match self.descend(vec![root_loc(root)], target) {
                    None => Ok(()),
                    Some(locs) => self.walk(locs, rest, None, "super".to_string()),
                }
            };
            match result {
                Ok(()) => return Ok(()),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        Err(first_err.unwrap_or_default())
    }

    /// Whether some crate root declares `file` (through `mod` declarations, `#[path]`
    /// included). A file no root declares is not compiled (or is included in ways we
    /// do not follow), so paths relative to its position cannot be judged.
    fn reachable(&mut self, file: &str, krate: Option<&CrateInfo>) -> bool {
        let Some(krate) = krate else {
            return false;
        };
        if let Some(&known) = self.reachable.get(file) {
            return known;
        }
        let places = self.file_module(file, krate).places.clone();
        let found = places
            .iter()
            .any(|(root, module)| self.declares(root, module, file));
        self.reachable.insert(file.to_string(), found);
        found
    }

    /// Whether following `module` from `root` through real `mod` declarations arrives
    /// at `file`.
    fn declares(&mut self, root: &str, module: &[String], file: &str) -> bool {
        self.descend(vec![root_loc(root)], module)
            .is_some_and(|locs| locs.iter().any(|l| l.file == file && l.inline.is_empty()))
    }

    /// The module a `use` sits in: the file's module plus enclosing inline `mod` blocks.
    fn here(
        &mut self,
        file: &str,
        decl: Node<'_>,
        source: &str,
        krate: Option<&CrateInfo>,
    ) -> ModLoc {
        let dir = match krate {
            Some(k) => self.file_module(file, k).dir.clone(),
            None => default_dir(file),
        };
        let mut inline = Vec::new();
        let mut node = decl.parent();
        while let Some(n) = node {
            if n.kind() == "mod_item" {
                if let Some(name) = n.child_by_field_name("name") {
                    inline.push(lang::text(name, source).to_string());
                }
            }
            node = n.parent();
        }
        inline.reverse();
        let mut loc = ModLoc {
            file: file.to_string(),
            inline: Vec::new(),
            dir,
        };
        for m in inline {
            loc.dir = join(&loc.dir, &m);
            loc.inline.push(m);
        }
        loc
    }

    /// Follows module segments only; `None` if a module cannot be located (then callers
    /// accept, since we cannot prove anything).
    fn descend(&mut self, mut locs: Vec<ModLoc>, segs: &[String]) -> Option<Vec<ModLoc>> {
        for seg in segs {
            let mut next = Vec::new();
            for loc in &locs {
                let items = self.items(loc);
                if let Some(decls) = items.mods.get(seg) {
                    for d in decls.clone() {
                        next.extend(self.child(loc, seg, &d));
                    }
                }
            }
            if next.is_empty() {
                return None;
            }
            locs = next;
        }
        Some(locs)
    }

    /// Checks `segs` starting in the modules `locs` (alternatives, e.g. `lib.rs` and
    /// `main.rs`, or `#[cfg]` variants of one module).
    fn walk(
        &mut self,
        mut locs: Vec<ModLoc>,
        segs: &[String],
        root_of: Option<&CrateInfo>,
        mut label: String,
    ) -> Result<(), String> {
        for (i, seg) in segs.iter().enumerate() {
            if seg == "*" || seg == "self" || seg == "super" {
                return Ok(());
            }
            let mut next = Vec::new();
            let mut found = false;
            for loc in &locs {
                let items = self.items(loc);
                if items.has(seg, None) && !items.mods.contains_key(seg) {
                    found = true;
                }
                if let Some(decls) = items.mods.get(seg) {
                    for d in decls.clone() {
                        match self.child(loc, seg, &d) {
                            Some(l) => next.push(l),
                            // Declared but its file is missing: not ours to judge.
                            None => found = true,
                        }
                    }
                }
            }
            if found {
                return Ok(());
            }
            if next.is_empty() {
                if i == 0 {
                    if let Some(k) = root_of {
                        if self.crate_macros(k).contains(seg) {
                            return Ok(());
                        }
                    }
                }
                let files: Vec<&str> = locs.iter().map(|l| l.file.as_str()).collect();
                return Err(format!(
                    "no `{seg}` in module `{label}` ({})",
                    files.join(", ")
                ));
            }
            label = format!("{label}::{seg}");
            locs = next;
        }
        Ok(())
    }

    /// The location of child module `name` declared by `decl` in `loc`.
    fn child(&self, loc: &ModLoc, name: &str, decl: &ModDecl) -> Option<ModLoc> {
        if decl.inline {
            let mut inline = loc.inline.clone();
            inline.push(name.to_string());
            return Some(ModLoc {
                file: loc.file.clone(),
                inline,
                dir: join(&loc.dir, name),
            });
        }
        if let Some(p) = &decl.path_attr {
            let base = if loc.inline.is_empty() {
                parent(&loc.file)
            } else {
                loc.dir.as_str()
            };
            let file = normalize(base, p)?;
            return self.view.is_file(&file).then(|| ModLoc {
                dir: parent(&file).to_string(),
                file,
                inline: Vec::new(),
            });
        }
        let dir = join(&loc.dir, name);
        [format!("{dir}.rs"), join(&dir, "mod.rs")]
            .into_iter()
            .find(|f| self.view.is_file(f))
            .map(|file| ModLoc {
                file,
                inline: Vec::new(),
                dir,
            })
    }

    /// The items of a module, computed once per run.
    fn items(&mut self, loc: &ModLoc) -> Rc<Items> {
        let key = (loc.file.clone(), loc.inline.clone());
        if let Some(i) = self.items.get(&key) {
            return i.clone();
        }
        let items = Rc::new(match self.parsed(&loc.file) {
            None => Items::opaque(),
            Some(p) => {
                let source: &str = &p.text;
                let mut containers = vec![p.tree.root_node()];
                for name in &loc.inline {
                    let mut next = Vec::new();
                    for c in &containers {
                        let mut cursor = c.walk();
                        for child in c.named_children(&mut cursor) {
                            if child.kind() == "mod_item"
                                && child
                                    .child_by_field_name("name")
                                    .map(|n| lang::text(n, source))
                                    == Some(name)
                            {
                                next.extend(child.child_by_field_name("body"));
                            }
                        }
                    }
                    containers = next;
                }
                if containers.is_empty() {
                    Items::opaque()
                } else {
                    let mut items = Items::default();
                    for c in containers {
                        collect_items(c, source, &mut items);
                        // Items inside a region the parser could not read are lost.
                        items.opaque |= c.has_error();
                    }
                    items
                }
            }
        });
        self.items.insert(key, items.clone());
        items
    }

    fn parsed(&mut self, path: &str) -> Option<Rc<Parsed<'a>>> {
        if let Some(p) = self.files.get(path) {
            return p.clone();
        }
        let parsed = self.view.read(path).and_then(|text| {
            lang::parse(Lang::Rust, &text).map(|tree| {
                Rc::new(Parsed {
                    text: text.into(),
                    tree,
                })
            })
        });
        self.files.insert(path.to_string(), parsed.clone());
        parsed
    }

    fn crate_of(&mut self, file: &str) -> Option<Rc<CrateInfo>> {
        crate_for_dir(self.view, &mut self.crates, parent(file))
    }

    /// Names of every `macro_rules!` in the crate, for `#[macro_export]` macros, which
    /// live at the crate root wherever they are defined. Only computed on a miss.
    fn crate_macros(&mut self, krate: &CrateInfo) -> Rc<HashSet<String>> {
        if let Some(m) = self.macros.get(&krate.dir) {
            return m.clone();
        }
        let mut names = HashSet::new();
        let mut stack = vec![join(&krate.dir, "src")];
        let mut budget = 5000usize;
        while let Some(dir) = stack.pop() {
            for entry in self.view.list(&dir).iter() {
                budget = budget.saturating_sub(1);
                if budget == 0 {
                    break;
                }
                let p = join(&dir, entry);
                if entry.ends_with(".rs") {
                    if let Some(text) = self.view.read(&p) {
                        scan_macro_rules(&text, &mut names);
                    }
                } else if self.view.is_dir(&p) {
                    stack.push(p);
                }
            }
        }
        let names = Rc::new(names);
        self.macros.insert(krate.dir.clone(), names.clone());
        names
    }

    /// [`file_module_of`], memoized per file.
    fn file_module(&mut self, file: &str, krate: &CrateInfo) -> Rc<FileModule> {
        if let Some(m) = self.modules.get(file) {
            return m.clone();
        }
        let m = Rc::new(file_module_of(self.view, file, krate));
        self.modules.insert(file.to_string(), m.clone());
        m
    }
}

fn root_loc(root: &str) -> ModLoc {
    ModLoc {
        file: root.to_string(),
        inline: Vec::new(),
        dir: parent(root).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::items::path_attribute;
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(
            path_attribute("#[path = \"imp/unix.rs\"]").as_deref(),
            Some("imp/unix.rs")
        );
        assert_eq!(path_attribute("#[derive(Debug)]"), None);
        assert_eq!(default_dir("src/a.rs"), "src/a");
        assert_eq!(default_dir("src/a/mod.rs"), "src/a");
        assert_eq!(default_dir("src/lib.rs"), "src");
        let mut names = HashSet::new();
        scan_macro_rules(
            "#[macro_export]\nmacro_rules! my_mac { () => {} }",
            &mut names,
        );
        assert!(names.contains("my_mac"));
    }
}
