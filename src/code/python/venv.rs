//! What a virtualenv has installed, as import names.
//!
//! Read straight from disk (a venv is never committed): every top-level entry of
//! `site-packages`, each distribution's `top_level.txt` and `RECORD`, and the directories
//! that `.pth` files and egg-links add (editable installs).

use std::collections::HashSet;
use std::path::Path;

/// Import names installed in the virtualenvs (`.venv`, `venv`, `env`) under `root`:
/// every top-level entry of `site-packages`, each distribution's `top_level.txt` and
/// `RECORD`, and the directories that `.pth` files and egg-links add.
pub(crate) fn venv_imports(root: &Path) -> Option<(String, HashSet<String>)> {
    let mut names = HashSet::new();
    let mut found = Vec::new();
    for venv in [".venv", "venv", "env", ".env"] {
        let base = root.join(venv);
        if !base.is_dir() {
            continue;
        }
        let mut site_dirs = Vec::new();
        for lib in ["lib", "lib64", "Lib"] {
            let Ok(rd) = std::fs::read_dir(base.join(lib)) else {
                continue;
            };
            for e in rd.filter_map(Result::ok) {
                let n = e.file_name().to_string_lossy().into_owned();
                if n.starts_with("python") || n == "site-packages" {
                    let sp = if n == "site-packages" {
                        e.path()
                    } else {
                        e.path().join("site-packages")
                    };
                    if sp.is_dir() {
                        site_dirs.push(sp);
                    }
                }
            }
        }
        if site_dirs.is_empty() {
            continue;
        }
        found.push(venv.to_string());
        for sp in site_dirs {
            scan_site_packages(&sp, &mut names);
        }
    }
    (!found.is_empty()).then(|| (found.join(", "), names))
}

fn module_name(entry: &str) -> Option<&str> {
    if entry.ends_with(".dist-info") || entry.ends_with(".egg-info") || entry == "__pycache__" {
        return None;
    }
    let stem = entry.split('.').next()?;
    (!stem.is_empty() && stem.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(stem)
}

fn scan_site_packages(sp: &Path, names: &mut HashSet<String>) {
    let Ok(rd) = std::fs::read_dir(sp) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let entry = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if entry.ends_with(".dist-info") || entry.ends_with(".egg-info") {
            if let Ok(t) = std::fs::read_to_string(path.join("top_level.txt")) {
                names.extend(
                    t.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .map(str::to_string),
                );
            }
            if let Ok(t) = std::fs::read_to_string(path.join("RECORD")) {
                for line in t.lines() {
                    let file = line.split(',').next().unwrap_or("");
                    if file.starts_with("..") || file.contains(".dist-info/") {
                        continue;
                    }
                    let top = file.split('/').next().unwrap_or("");
                    if let Some(m) = module_name(top) {
                        names.insert(m.to_string());
                    }
                }
            }
        } else if entry.ends_with(".pth") || entry.ends_with(".egg-link") {
            // Editable installs: each plain line is a directory added to sys.path.
            if let Ok(t) = std::fs::read_to_string(&path) {
                for line in t.lines().map(str::trim) {
                    if line.is_empty() || line.starts_with('#') || line.starts_with("import ") {
                        continue;
                    }
                    if let Ok(rd2) = std::fs::read_dir(Path::new(line)) {
                        for e2 in rd2.filter_map(Result::ok) {
                            if let Some(m) = module_name(&e2.file_name().to_string_lossy()) {
                                names.insert(m.to_string());
                            }
                        }
                    }
                }
            }
        } else if let Some(m) = module_name(&entry) {
            if path.is_dir()
                || entry.ends_with(".py")
                || entry.ends_with(".so")
                || entry.ends_with(".pyd")
            {
                names.insert(m.to_string());
            }
        }
    }
}
