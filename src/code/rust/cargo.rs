//! What a crate's `Cargo.toml` says about the names its code may import.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use crate::code::source::{join, normalize, parent, View};

/// Packages whose library crate has another name.
const LIB_RENAMES: &[(&str, &str)] = &[
    ("redox_syscall", "syscall"),
    ("rustc_std_workspace_core", "core"),
    ("rustc_std_workspace_alloc", "alloc"),
    ("rustc_std_workspace_std", "std"),
    ("pq_sys", "pq_sys"),
    ("mysqlclient_sys", "mysqlclient_sys"),
];

/// One package manifest, as far as import resolution cares.
#[derive(Debug, Clone, Default)]
pub(crate) struct CrateInfo {
    /// The crate directory (where `Cargo.toml` is).
    pub dir: String,
    /// The manifest path, for messages.
    pub manifest: String,
    /// Import names of every dependency kind (normal, dev, build, per-target), keyed by
    /// the dependency's key (which is the import name for renamed packages), `-` → `_`.
    pub deps: HashSet<String>,
    /// The package's own crate names (package name and `[lib] name`), which its bins,
    /// tests, examples and benches import.
    pub own: HashSet<String>,
    /// No `edition` key (2015): `use` paths are crate-relative.
    pub edition2015: bool,
    /// A custom `[lib] path`.
    pub lib: Option<String>,
    /// Custom target roots (`[lib]`, `[[bin]]`, `[[test]]`, `[[example]]`, `[[bench]]`
    /// paths).
    pub roots: Vec<String>,
}

impl CrateInfo {
    /// Whether `name` is an external crate this package may use.
    pub(crate) fn knows(&self, name: &str) -> bool {
        if self.deps.contains(name) || self.own.contains(name) {
            return true;
        }
        // A package's library may be named differently from the package (`md-5` →
        // `md5`, `redox_syscall` → `syscall`); the dependency's own manifest is not at
        // hand, so accept a match that ignores underscores, and the well-known renames.
        let squash = |s: &str| s.replace('_', "");
        let wanted = squash(name);
        self.deps.iter().any(|d| {
            squash(d) == wanted
                || LIB_RENAMES
                    .iter()
                    .any(|(pkg, lib)| pkg == d && *lib == name)
        })
    }
}

/// The crate whose nearest `Cargo.toml` is at or above `dir`, memoized per directory.
/// `None` when there is no manifest or it cannot be parsed: then nothing can be proven
/// about external crates and callers accept them.
pub(crate) fn crate_for_dir(
    view: &View<'_>,
    cache: &mut HashMap<String, Option<Rc<CrateInfo>>>,
    dir: &str,
) -> Option<Rc<CrateInfo>> {
    if let Some(c) = cache.get(dir) {
        return c.clone();
    }
    let manifest = join(dir, "Cargo.toml");
    let found = if view.is_file(&manifest) {
        view.read(&manifest)
            .and_then(|text| parse_manifest(&text, dir, &manifest))
            .map(Rc::new)
    } else if dir.is_empty() {
        None
    } else {
        crate_for_dir(view, cache, parent(dir))
    };
    cache.insert(dir.to_string(), found.clone());
    found
}

fn dep_keys(table: Option<&toml::Value>, out: &mut HashSet<String>) {
    if let Some(t) = table.and_then(|t| t.as_table()) {
        out.extend(t.keys().map(|k| k.replace('-', "_")));
    }
}

const DEP_TABLES: &[&str] = &[
    "dependencies",
    "dev-dependencies",
    "build-dependencies",
    "dev_dependencies",
    "build_dependencies",
];

/// Parses a manifest; `None` if it is not valid TOML.
pub(crate) fn parse_manifest(text: &str, dir: &str, manifest: &str) -> Option<CrateInfo> {
    let v: toml::Value = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!("unparseable {manifest}: {e}");
            return None;
        }
    };
    let mut info = CrateInfo {
        dir: dir.to_string(),
        manifest: manifest.to_string(),
        ..CrateInfo::default()
    };
    for t in DEP_TABLES {
        dep_keys(v.get(t), &mut info.deps);
    }
    if let Some(targets) = v.get("target").and_then(|t| t.as_table()) {
        for cfg in targets.values() {
            for t in DEP_TABLES {
                dep_keys(cfg.get(t), &mut info.deps);
            }
        }
    }
    match v.get("package") {
        Some(pkg) => {
            if let Some(name) = pkg.get("name").and_then(|n| n.as_str()) {
                info.own.insert(name.replace('-', "_"));
            }
            // A missing edition means 2015; `edition.workspace = true` inherits a newer one.
            info.edition2015 = match pkg.get("edition") {
                None => true,
                Some(e) => e.as_str() == Some("2015"),
            };
        }
        None => {
            // A virtual workspace manifest: files next to it belong to no package; accept
            // what the workspace shares.
            dep_keys(
                v.get("workspace").and_then(|w| w.get("dependencies")),
                &mut info.deps,
            );
        }
    }
    if let Some(lib) = v.get("lib") {
        if let Some(name) = lib.get("name").and_then(|n| n.as_str()) {
            info.own.insert(name.replace('-', "_"));
        }
        if let Some(p) = lib.get("path").and_then(|p| p.as_str()) {
            info.lib = normalize(dir, p);
            info.roots.extend(info.lib.clone());
        }
    }
    for kind in ["bin", "test", "example", "bench"] {
        if let Some(targets) = v.get(kind).and_then(|t| t.as_array()) {
            for t in targets {
                if let Some(p) = t.get("path").and_then(|p| p.as_str()) {
                    info.roots.extend(normalize(dir, p));
                }
            }
        }
    }
    Some(info)
}

/// Where a changed file sits in its crate.
pub(crate) struct FileModule {
    /// Crate roots that may own it, each with the file's module path below that root
    /// (`("src/lib.rs", ["a", "b"])` for `src/a/b.rs`; `src/main.rs` too when both
    /// exist). Empty if unknown (e.g. a helper under `tests/` shared by several tests).
    pub(crate) places: Vec<(String, Vec<String>)>,
    /// The directory its `mod x;` children live in.
    pub(crate) dir: String,
}

/// Where `file` sits in its crate, from Cargo's layout conventions and the custom
/// target paths of `Cargo.toml`.
pub(crate) fn file_module_of(view: &View<'_>, file: &str, krate: &CrateInfo) -> FileModule {
    let rel = if krate.dir.is_empty() {
        file
    } else {
        file.strip_prefix(&format!("{}/", krate.dir))
            .unwrap_or(file)
    };
    let at = |r: &str| join(&krate.dir, r);
    let parts: Vec<&str> = rel.split('/').collect();
    let target_tree = matches!(parts.first(), Some(&("tests" | "examples" | "benches")));
    let is_root = krate.roots.iter().any(|r| r == file)
        || matches!(rel, "src/lib.rs" | "src/main.rs" | "build.rs")
        || matches!(parts.as_slice(), ["src", "bin", x] if x.ends_with(".rs"))
        || matches!(parts.as_slice(), ["src", "bin", _, "main.rs"])
        || (target_tree && parts.len() == 2)
        || (target_tree && parts.len() == 3 && parts[2] == "main.rs");
    let mut places: Vec<(String, Vec<String>)> = Vec::new();
    if is_root {
        places.push((file.to_string(), Vec::new()));
    }
    let mut candidates: Vec<String> = Vec::new();
    match parts.as_slice() {
        ["src", "bin", x, _, ..] => candidates.push(at(&format!("src/bin/{x}/main.rs"))),
        ["src", ..] => {
            candidates.extend(krate.lib.iter().cloned());
            candidates.push(at("src/lib.rs"));
            candidates.push(at("src/main.rs"));
        }
        [top, x, _, ..] if target_tree => candidates.push(at(&format!("{top}/{x}/main.rs"))),
        _ => {}
    }
    // A custom target root may declare the file as a module: `[[test]] path =
    // "tests/runner.rs"` with `mod pipeline;` makes `tests/pipeline.rs` a module.
    candidates.extend(krate.roots.iter().cloned());
    for root in candidates {
        let root_dir = parent(&root);
        let Some(below) = (if root_dir.is_empty() {
            Some(file)
        } else {
            file.strip_prefix(&format!("{root_dir}/"))
        }) else {
            continue;
        };
        if root == file || places.iter().any(|(r, _)| *r == root) || !view.is_file(&root) {
            continue;
        }
        places.push((root, module_path(below)));
    }
    FileModule {
        places,
        dir: if is_root {
            parent(file).to_string()
        } else {
            default_dir(file)
        },
    }
}

/// `a/b.rs` → `["a", "b"]`, `a/mod.rs` → `["a"]`.
fn module_path(below_root: &str) -> Vec<String> {
    let mut path: Vec<String> = below_root
        .split('/')
        .map(|s| s.trim_end_matches(".rs").to_string())
        .collect();
    if path.last().is_some_and(|l| l == "mod") {
        path.pop();
    }
    path
}

/// Children of `a/mod.rs` live in `a/`, children of `a.rs` in `a/` next to it; roots
/// (`lib.rs`, `main.rs`) hold theirs beside them.
pub(crate) fn default_dir(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    if matches!(name, "mod.rs" | "lib.rs" | "main.rs" | "build.rs") {
        parent(file).to_string()
    } else {
        file.trim_end_matches(".rs").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_names() {
        let text = r#"
[package]
name = "my-app"
edition = "2021"

[dependencies]
serde_json2 = { package = "serde_json", version = "1" }
tokio.workspace = true
my-util = { path = "../util" }

[target.'cfg(unix)'.dependencies]
nix = "0.29"

[dev-dependencies]
tempfile = "3"

[build-dependencies]
cc = "1"
"#;
        let info = parse_manifest(text, "app", "app/Cargo.toml").expect("parses");
        for n in [
            "serde_json2",
            "tokio",
            "my_util",
            "nix",
            "tempfile",
            "cc",
            "my_app",
        ] {
            assert!(info.knows(n), "{n}");
        }
        assert!(!info.knows("serde_json"));
        assert!(!info.edition2015);
    }
}
