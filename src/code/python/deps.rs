//! What a Python project declares it depends on, and what a virtualenv has installed,
//! both as *import names* (`PyYAML` → `yaml`).
//!
//! Distribution names and import names differ often enough that a naive comparison would
//! flag correct code; the table below covers the well-known cases, and the rules in
//! [`Declared::provides`] cover the families (`python-foo` → `foo`, namespace
//! distributions like `google-cloud-storage` → `google`).

use std::collections::{BTreeSet, HashSet};

use super::names::RENAMES;
use crate::code::settings::{ini, toml_at};
use crate::code::source::{join, View};

/// Normalizes a distribution name per PEP 503, with `_` as separator.
pub(crate) fn normalize_dist(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut sep = false;
    for c in name.trim().chars() {
        if c == '-' || c == '_' || c == '.' {
            sep = true;
        } else {
            if sep && !out.is_empty() {
                out.push('_');
            }
            sep = false;
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The distribution name at the start of a PEP 508 requirement (`foo[x]>=1; python_version
/// < "3.9"` → `foo`), or `None` for something that is not a requirement.
pub(crate) fn requirement_name(req: &str) -> Option<String> {
    let req = req.trim();
    let name: String = req
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    let name = name.trim_end_matches(['.', '-', '_']);
    (!name.is_empty()
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric()))
    .then(|| name.to_string())
}

/// Dependencies declared by the manifests of one or more directories.
#[derive(Debug, Clone, Default)]
pub(crate) struct Declared {
    /// Normalized distribution names.
    pub dists: BTreeSet<String>,
    /// Import names the distributions provide (table and rules), exact case.
    pub imports: HashSet<String>,
    /// The manifest files read (paths), for messages.
    pub manifests: BTreeSet<String>,
    /// Extra import roots the manifests configure (`package-dir`, Poetry `from`, …).
    pub roots: BTreeSet<String>,
    /// Files a build step generates (`setuptools_scm` `version_file`), which are absent
    /// from the repository but importable once installed.
    pub generated: BTreeSet<String>,
}

impl Declared {
    /// Records a distribution.
    pub(crate) fn add_dist(&mut self, name: &str) {
        let norm = normalize_dist(name);
        if norm.is_empty() || norm == "python" {
            return;
        }
        if let Some((_, names)) = RENAMES.iter().find(|(d, _)| *d == norm) {
            self.imports.extend(names.iter().map(|s| s.to_string()));
        }
        for (prefix, suffix) in [
            ("python_", ""),
            ("py_", ""),
            ("", "_python"),
            ("", "_py"),
            ("", "_binary"),
        ] {
            if let Some(core) = norm
                .strip_prefix(prefix)
                .and_then(|s| s.strip_suffix(suffix))
            {
                if !core.is_empty() {
                    self.imports.insert(core.to_string());
                }
            }
        }
        self.imports.insert(norm.clone());
        self.dists.insert(norm);
    }

    /// Merges another directory's declarations.
    pub(crate) fn merge(&mut self, other: &Declared) {
        self.dists.extend(other.dists.iter().cloned());
        self.imports.extend(other.imports.iter().cloned());
        self.manifests.extend(other.manifests.iter().cloned());
        self.roots.extend(other.roots.iter().cloned());
        self.generated.extend(other.generated.iter().cloned());
    }

    /// Whether a top-level import name is provided by a declared distribution.
    pub(crate) fn provides(&self, top: &str) -> bool {
        if self.imports.contains(top) {
            return true;
        }
        let lower = top.to_lowercase();
        if self.imports.contains(&lower) {
            return true;
        }
        // Namespace families: `google-cloud-storage` provides `google`, `zope.interface`
        // provides `zope`, `flask-cors` implies `flask` is installed.
        let prefix = format!("{lower}_");
        self.dists.iter().any(|d| d.starts_with(&prefix))
    }
}

/// Reads every dependency manifest directly in `dir`.
pub(crate) fn read_dir_manifests(view: &View<'_>, dir: &str) -> Declared {
    let mut d = Declared::default();
    let entries = view.list(dir);
    for name in entries.iter() {
        let path = join(dir, name);
        let lower = name.to_lowercase();
        let is_req = (lower.contains("requirements") || lower.contains("constraints"))
            && (lower.ends_with(".txt") || lower.ends_with(".in"));
        if name == "pyproject.toml" {
            if let Some(text) = view.read(&path) {
                pyproject(&text, dir, &mut d);
                d.manifests.insert(path);
            }
        } else if name == "Pipfile" {
            if let Some(text) = view.read(&path) {
                pipfile(&text, &mut d);
                d.manifests.insert(path);
            }
        } else if name == "setup.cfg" {
            if let Some(text) = view.read(&path) {
                setup_cfg(&text, dir, &mut d);
                d.manifests.insert(path);
            }
        } else if name == "noxfile.py" || name == "fabfile.py" || name == "tasks.py" {
            // Session dependencies are installed by the task runner:
            // `session.install("pytest", "mock")` or constants holding such lists.
            if let Some(text) = view.read(&path) {
                python_string_requirements(&text, &mut d);
                d.manifests.insert(path);
            }
            // The runner that executes the file is installed by definition.
            d.add_dist(match name.as_str() {
                "noxfile.py" => "nox",
                "fabfile.py" => "fabric",
                _ => "invoke",
            });
        } else if name == "tox.ini" {
            if let Some(text) = view.read(&path) {
                tox_ini(&text, &mut d);
                d.manifests.insert(path);
            }
        } else if name == "setup.py" {
            if let Some(text) = view.read(&path) {
                setup_py(&text, &mut d);
                d.manifests.insert(path);
            }
        } else if is_req && view.is_file(&path) {
            if let Some(text) = view.read(&path) {
                requirements(&text, &mut d);
                d.manifests.insert(path);
            }
        } else if matches!(name.as_str(), "requirements" | "reqs" | "testing") && view.is_dir(&path)
        {
            for sub in view.list(&path).iter() {
                if sub.ends_with(".txt") || sub.ends_with(".in") {
                    let p = join(&path, sub);
                    if let Some(text) = view.read(&p) {
                        requirements(&text, &mut d);
                        d.manifests.insert(p);
                    }
                }
            }
        }
    }
    d
}

/// `requirements.txt`: one requirement per line; options (`-r`, `--index-url`), comments
/// and bare URLs are skipped; `-e …#egg=name` and `name @ url` keep the name.
pub(crate) fn requirements(text: &str, d: &mut Declared) {
    for raw in text.lines() {
        let line = match raw.find(" #") {
            Some(i) => &raw[..i],
            None => raw,
        }
        .trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(egg) = line.split("#egg=").nth(1) {
            if let Some(name) = requirement_name(egg) {
                d.add_dist(&name);
            }
            continue;
        }
        if line.starts_with('-') || line.contains("://") && !line.contains(" @ ") {
            continue;
        }
        if let Some(name) = requirement_name(line) {
            d.add_dist(&name);
        }
    }
}

fn str_items(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `pyproject.toml`: PEP 621 (`dependencies`, `optional-dependencies`), PEP 735
/// `dependency-groups`, `build-system.requires`, Poetry (main, dev and group tables), PDM
/// and uv dev dependencies, plus layout hints (setuptools `package-dir`/`find.where`,
/// Poetry `packages.from`, Hatch wheel `packages`) and generated version files.
fn pyproject(text: &str, dir: &str, d: &mut Declared) {
    let v: toml::Value = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            tracing::debug!("unparseable pyproject.toml in `{dir}`: {e}");
            return;
        }
    };
    let mut reqs: Vec<String> = Vec::new();
    if let Some(name) = toml_at(&v, &["project", "name"]).and_then(|n| n.as_str()) {
        d.add_dist(name);
    }
    reqs.extend(str_items(toml_at(&v, &["project", "dependencies"])));
    reqs.extend(str_items(toml_at(&v, &["build-system", "requires"])));
    reqs.extend(str_items(toml_at(&v, &["tool", "uv", "dev-dependencies"])));
    for table in [
        &["project", "optional-dependencies"][..],
        &["dependency-groups"][..],
        &["tool", "pdm", "dev-dependencies"][..],
    ] {
        if let Some(t) = toml_at(&v, table).and_then(|t| t.as_table()) {
            for group in t.values() {
                reqs.extend(str_items(Some(group)));
            }
        }
    }
    for r in &reqs {
        if let Some(name) = requirement_name(r) {
            d.add_dist(&name);
        }
    }
    if let Some(poetry) = toml_at(&v, &["tool", "poetry"]) {
        if let Some(name) = poetry.get("name").and_then(|n| n.as_str()) {
            d.add_dist(name);
        }
        let mut tables: Vec<&toml::Value> = Vec::new();
        tables.extend(poetry.get("dependencies"));
        tables.extend(poetry.get("dev-dependencies"));
        if let Some(groups) = poetry.get("group").and_then(|g| g.as_table()) {
            tables.extend(groups.values().filter_map(|g| g.get("dependencies")));
        }
        for t in tables.iter().filter_map(|t| t.as_table()) {
            for key in t.keys() {
                d.add_dist(key);
            }
        }
        if let Some(pkgs) = poetry.get("packages").and_then(|p| p.as_array()) {
            for p in pkgs {
                if let Some(from) = p.get("from").and_then(|f| f.as_str()) {
                    d.roots.extend(crate::code::source::normalize(dir, from));
                }
            }
        }
    }
    if let Some(pd) = toml_at(&v, &["tool", "setuptools", "package-dir"]).and_then(|p| p.as_table())
    {
        for target in pd.values().filter_map(|t| t.as_str()) {
            d.roots.extend(crate::code::source::normalize(dir, target));
        }
    }
    for w in str_items(toml_at(
        &v,
        &["tool", "setuptools", "packages", "find", "where"],
    )) {
        d.roots.extend(crate::code::source::normalize(dir, &w));
    }
    for p in str_items(toml_at(
        &v,
        &["tool", "hatch", "build", "targets", "wheel", "packages"],
    )) {
        if let Some(full) = crate::code::source::normalize(dir, &p) {
            d.roots
                .insert(crate::code::source::parent(&full).to_string());
        }
    }
    for key in [
        &["tool", "setuptools_scm", "write_to"][..],
        &["tool", "setuptools_scm", "version_file"][..],
        &["tool", "hatch", "build", "hooks", "vcs", "version-file"][..],
        &["tool", "pdm", "version", "write_to"][..],
    ] {
        if let Some(f) = toml_at(&v, key).and_then(|f| f.as_str()) {
            d.generated.extend(crate::code::source::normalize(dir, f));
        }
    }
}

/// Every string literal of a Python file that reads as a requirement (`noxfile.py`).
fn python_string_requirements(text: &str, d: &mut Declared) {
    let Some(tree) = crate::code::lang::parse(crate::code::lang::Lang::Python, text) else {
        return;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "string_content" {
            let lit = crate::code::lang::text(n, text);
            if !lit.contains(char::is_whitespace) && !lit.starts_with('-') {
                if let Some(name) = requirement_name(lit) {
                    d.add_dist(&name);
                }
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
}

/// `tox.ini`: the `deps` of every environment (continuation lines included).
fn tox_ini(text: &str, d: &mut Declared) {
    for entry in ini(text).into_iter().filter(|e| e.key == "deps") {
        for line in entry.lines.iter().filter(|l| !l.starts_with('-')) {
            if let Some(name) = requirement_name(line) {
                d.add_dist(&name);
            }
        }
    }
}

/// `Pipfile`: the keys of `[packages]` and `[dev-packages]`.
fn pipfile(text: &str, d: &mut Declared) {
    let Ok(v) = toml::from_str::<toml::Value>(text) else {
        return;
    };
    for table in ["packages", "dev-packages"] {
        if let Some(t) = v.get(table).and_then(|t| t.as_table()) {
            for key in t.keys() {
                d.add_dist(key);
            }
        }
    }
}

/// `setup.cfg` (INI): `[metadata] name`, `[options] install_requires`, `setup_requires`,
/// `tests_require`, `package_dir`, and every key of `[options.extras_require]`.
fn setup_cfg(text: &str, dir: &str, d: &mut Declared) {
    for entry in ini(text) {
        for value in &entry.lines {
            match (entry.section.as_str(), entry.key.as_str()) {
                ("metadata", "name") => d.add_dist(value),
                ("options", "install_requires" | "setup_requires" | "tests_require")
                | ("options.extras_require", _) => {
                    for part in value.split(';').next().into_iter() {
                        if let Some(name) = requirement_name(part) {
                            d.add_dist(&name);
                        }
                    }
                }
                ("options", "package_dir") => {
                    // `package_dir = =src` or continuation lines `=src`.
                    if let Some(target) = value
                        .rsplit('=')
                        .next()
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                    {
                        d.roots.extend(crate::code::source::normalize(dir, target));
                    }
                }
                _ => {}
            }
        }
    }
}

/// `setup.py`: string literals inside the `install_requires`, `extras_require`,
/// `tests_require` and `setup_requires` arguments (following module-level variables:
/// `install_requires=requires`), and the `name` argument. A parse, not an execution:
/// requirement lists computed by code are missed.
fn setup_py(text: &str, d: &mut Declared) {
    let Some(tree) = crate::code::lang::parse(crate::code::lang::Lang::Python, text) else {
        return;
    };
    let src = |n: tree_sitter::Node| crate::code::lang::text(n, text);
    // Module-level `NAME = [...]` / `(...)` / `{...}`, for `install_requires=NAME`.
    let mut vars: std::collections::HashMap<&str, tree_sitter::Node> =
        std::collections::HashMap::new();
    let root = tree.root_node();
    let mut cursor = root.walk();
    for stmt in root.named_children(&mut cursor) {
        if let Some(assign) = stmt.named_child(0).filter(|a| a.kind() == "assignment") {
            if let (Some(left), Some(right)) = (
                assign.child_by_field_name("left"),
                assign.child_by_field_name("right"),
            ) {
                if left.kind() == "identifier" {
                    vars.insert(src(left), right);
                }
            }
        }
    }
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "keyword_argument" {
            let name = node.child_by_field_name("name").map(src).unwrap_or("");
            let Some(value) = node.child_by_field_name("value") else {
                continue;
            };
            match name {
                "install_requires" | "extras_require" | "tests_require" | "setup_requires" => {
                    let mut seen_vars = 0;
                    let mut inner = vec![value];
                    while let Some(n) = inner.pop() {
                        match n.kind() {
                            "string_content" => {
                                if let Some(req) = requirement_name(src(n)) {
                                    d.add_dist(&req);
                                }
                            }
                            // In a dict (`extras_require`) only values are requirements.
                            "pair" => {
                                inner.extend(n.child_by_field_name("value"));
                                continue;
                            }
                            "identifier" if seen_vars < 32 => {
                                seen_vars += 1;
                                inner.extend(vars.get(src(n)).copied());
                            }
                            _ => {}
                        }
                        let mut c = n.walk();
                        inner.extend(n.named_children(&mut c));
                    }
                }
                "name" if value.kind() == "string" => {
                    d.add_dist(src(value).trim_matches(['"', '\'']));
                }
                _ => {}
            }
            continue;
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_requirements() {
        assert_eq!(normalize_dist("Foo.Bar--baz"), "foo_bar_baz");
        assert_eq!(
            requirement_name("requests[socks]>=2; python_version<'3.9'").as_deref(),
            Some("requests")
        );
        assert_eq!(requirement_name("--index-url x"), None);
        let mut d = Declared::default();
        requirements("# c\n-r base.txt\nPyYAML==6\nuvicorn[standard] ; sys_platform != 'win32'\n-e git+https://x/y#egg=mylib\nhttps://x/y.whl\n", &mut d);
        assert!(d.provides("yaml"));
        assert!(d.provides("uvicorn"));
        assert!(d.provides("mylib"));
        assert!(!d.provides("base"));
    }

    #[test]
    fn families_and_renames() {
        let mut d = Declared::default();
        for n in [
            "google-cloud-storage",
            "python-dateutil",
            "Pillow",
            "attrs",
            "opencv-python",
        ] {
            d.add_dist(n);
        }
        for m in ["google", "dateutil", "PIL", "attr", "attrs", "cv2"] {
            assert!(d.provides(m), "{m}");
        }
        assert!(!d.provides("requests"));
    }
}
