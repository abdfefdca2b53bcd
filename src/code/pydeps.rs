//! What a Python project declares it depends on, and what a virtualenv has installed,
//! both as *import names* (`PyYAML` → `yaml`).
//!
//! Distribution names and import names differ often enough that a naive comparison would
//! flag correct code; the table below covers the well-known cases, and the rules in
//! [`Declared::provides`] cover the families (`python-foo` → `foo`, namespace
//! distributions like `google-cloud-storage` → `google`).

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use super::source::{join, View};

/// Well-known distributions whose import name is not their normalized name.
/// Keys are normalized (lowercase, `-`/`.` → `_`).
const RENAMES: &[(&str, &[&str])] = &[
    ("pyyaml", &["yaml", "_yaml"]),
    ("pillow", &["PIL"]),
    ("scikit_learn", &["sklearn"]),
    ("sklearn", &["sklearn"]),
    ("beautifulsoup4", &["bs4"]),
    ("beautifulsoup", &["BeautifulSoup"]),
    ("python_dateutil", &["dateutil"]),
    ("opencv_python", &["cv2"]),
    ("opencv_python_headless", &["cv2"]),
    ("opencv_contrib_python", &["cv2"]),
    ("opencv_contrib_python_headless", &["cv2"]),
    ("protobuf", &["google"]),
    ("googleapis_common_protos", &["google"]),
    ("attrs", &["attr", "attrs"]),
    ("pyzmq", &["zmq"]),
    ("psycopg2_binary", &["psycopg2"]),
    ("psycopg_binary", &["psycopg"]),
    ("msgpack_python", &["msgpack"]),
    ("python_dotenv", &["dotenv"]),
    ("pyjwt", &["jwt"]),
    ("pycryptodome", &["Crypto"]),
    ("pycryptodomex", &["Cryptodome"]),
    ("pycrypto", &["Crypto"]),
    ("scikit_image", &["skimage"]),
    ("typing_extensions", &["typing_extensions"]),
    ("pyserial", &["serial"]),
    ("pyopenssl", &["OpenSSL"]),
    ("pygithub", &["github"]),
    ("gitpython", &["git"]),
    ("mysqlclient", &["MySQLdb"]),
    ("mysql_connector_python", &["mysql"]),
    ("djangorestframework", &["rest_framework"]),
    ("django_cors_headers", &["corsheaders"]),
    ("django_filter", &["django_filters"]),
    ("pyusb", &["usb"]),
    (
        "pywin32",
        &[
            "win32api",
            "win32con",
            "win32com",
            "win32gui",
            "pythoncom",
            "pywintypes",
            "win32file",
            "win32event",
            "win32process",
        ],
    ),
    ("pycairo", &["cairo"]),
    ("pygobject", &["gi"]),
    (
        "setuptools",
        &["setuptools", "pkg_resources", "_distutils_hack"],
    ),
    ("dnspython", &["dns"]),
    ("python_ldap", &["ldap"]),
    ("ruamel_yaml", &["ruamel"]),
    (
        "google_api_python_client",
        &["googleapiclient", "apiclient"],
    ),
    ("grpcio", &["grpc"]),
    ("grpcio_tools", &["grpc_tools"]),
    ("grpcio_status", &["grpc_status"]),
    ("faiss_cpu", &["faiss"]),
    ("faiss_gpu", &["faiss"]),
    ("tensorflow_gpu", &["tensorflow"]),
    ("tensorflow_cpu", &["tensorflow"]),
    ("python_multipart", &["multipart", "python_multipart"]),
    ("websocket_client", &["websocket"]),
    ("python_socketio", &["socketio"]),
    ("python_engineio", &["engineio"]),
    ("discord_py", &["discord"]),
    ("pyinstaller", &["PyInstaller"]),
    ("pyqt5", &["PyQt5"]),
    ("pyqt6", &["PyQt6"]),
    ("pyside2", &["PySide2"]),
    ("pyside6", &["PySide6"]),
    ("pytest", &["pytest", "_pytest", "py"]),
    ("levenshtein", &["Levenshtein"]),
    ("python_levenshtein", &["Levenshtein"]),
    ("antlr4_python3_runtime", &["antlr4"]),
    ("pynacl", &["nacl"]),
    ("pysocks", &["socks", "sockshandler"]),
    ("python_docx", &["docx"]),
    ("python_pptx", &["pptx"]),
    ("pymupdf", &["fitz", "pymupdf"]),
    ("pdfminer_six", &["pdfminer"]),
    ("llama_cpp_python", &["llama_cpp"]),
    ("mkdocs_material", &["material"]),
    ("jinja2", &["jinja2"]),
    ("markupsafe", &["markupsafe"]),
    ("python_jose", &["jose"]),
    ("python_slugify", &["slugify"]),
    ("python_magic", &["magic"]),
    ("pyyaml_include", &["yamlinclude", "yaml_include"]),
    ("tree_sitter_languages", &["tree_sitter_languages"]),
    ("apache_airflow", &["airflow"]),
    ("apache_beam", &["apache_beam"]),
    ("azure_core", &["azure"]),
    ("backports_zoneinfo", &["backports"]),
    ("importlib_metadata", &["importlib_metadata"]),
    ("pyasn1_modules", &["pyasn1_modules"]),
    ("python_json_logger", &["pythonjsonlogger"]),
    ("sentry_sdk", &["sentry_sdk"]),
    ("ipython", &["IPython"]),
    ("pyarrow", &["pyarrow"]),
    ("pywavelets", &["pywt"]),
    ("pyopengl", &["OpenGL"]),
    ("pygments", &["pygments"]),
    ("docopt_ng", &["docopt"]),
    ("pytz", &["pytz"]),
    ("tzdata", &["tzdata"]),
    ("rpi_gpio", &["RPi"]),
    ("pyhamcrest", &["hamcrest"]),
    ("python_gnupg", &["gnupg"]),
    ("pysaml2", &["saml2"]),
    ("mypy_protobuf", &["mypy_protobuf"]),
    ("types_requests", &["requests"]),
    ("lxml_stubs", &["lxml"]),
    ("pkginfo", &["pkginfo"]),
    ("shapely", &["shapely"]),
    ("xlsxwriter", &["xlsxwriter"]),
];

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
        let is_req =
            lower.contains("requirements") && (lower.ends_with(".txt") || lower.ends_with(".in"));
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
        } else if (name == "requirements" || name == "reqs") && view.is_dir(&path) {
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

fn lookup<'v>(v: &'v toml::Value, path: &[&str]) -> Option<&'v toml::Value> {
    path.iter().try_fold(v, |cur, key| cur.get(key))
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
    if let Some(name) = lookup(&v, &["project", "name"]).and_then(|n| n.as_str()) {
        d.add_dist(name);
    }
    reqs.extend(str_items(lookup(&v, &["project", "dependencies"])));
    reqs.extend(str_items(lookup(&v, &["build-system", "requires"])));
    reqs.extend(str_items(lookup(&v, &["tool", "uv", "dev-dependencies"])));
    for table in [
        &["project", "optional-dependencies"][..],
        &["dependency-groups"][..],
        &["tool", "pdm", "dev-dependencies"][..],
    ] {
        if let Some(t) = lookup(&v, table).and_then(|t| t.as_table()) {
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
    if let Some(poetry) = lookup(&v, &["tool", "poetry"]) {
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
                    d.roots.extend(super::source::normalize(dir, from));
                }
            }
        }
    }
    if let Some(pd) = lookup(&v, &["tool", "setuptools", "package-dir"]).and_then(|p| p.as_table())
    {
        for target in pd.values().filter_map(|t| t.as_str()) {
            d.roots.extend(super::source::normalize(dir, target));
        }
    }
    for w in str_items(lookup(
        &v,
        &["tool", "setuptools", "packages", "find", "where"],
    )) {
        d.roots.extend(super::source::normalize(dir, &w));
    }
    for p in str_items(lookup(
        &v,
        &["tool", "hatch", "build", "targets", "wheel", "packages"],
    )) {
        if let Some(full) = super::source::normalize(dir, &p) {
            d.roots.insert(super::source::parent(&full).to_string());
        }
    }
    for key in [
        &["tool", "setuptools_scm", "write_to"][..],
        &["tool", "setuptools_scm", "version_file"][..],
        &["tool", "hatch", "build", "hooks", "vcs", "version-file"][..],
        &["tool", "pdm", "version", "write_to"][..],
    ] {
        if let Some(f) = lookup(&v, key).and_then(|f| f.as_str()) {
            d.generated.extend(super::source::normalize(dir, f));
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
    let mut section = String::new();
    let mut key = String::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        let continuation = line.starts_with([' ', '\t']);
        let value = if continuation {
            trimmed
        } else if let Some(s) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            section = s.trim().to_string();
            key.clear();
            continue;
        } else if let Some((k, v)) = trimmed.split_once(['=', ':']) {
            key = k.trim().to_string();
            v.trim()
        } else {
            continue;
        };
        match (section.as_str(), key.as_str()) {
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
                    d.roots.extend(super::source::normalize(dir, target));
                }
            }
            _ => {}
        }
    }
}

/// `setup.py`: string literals inside the `install_requires`, `extras_require`,
/// `tests_require` and `setup_requires` arguments, and the `name` argument. A parse, not
/// an execution: computed requirement lists are missed.
fn setup_py(text: &str, d: &mut Declared) {
    let Some(tree) = super::lang::parse(super::lang::Lang::Python, text) else {
        return;
    };
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if node.kind() == "keyword_argument" {
            let name = node
                .child_by_field_name("name")
                .map(|n| super::lang::text(n, text))
                .unwrap_or("");
            let Some(value) = node.child_by_field_name("value") else {
                continue;
            };
            match name {
                "install_requires" | "extras_require" | "tests_require" | "setup_requires" => {
                    let mut inner = vec![value];
                    while let Some(n) = inner.pop() {
                        if n.kind() == "string_content" {
                            if let Some(req) = requirement_name(super::lang::text(n, text)) {
                                d.add_dist(&req);
                            }
                        }
                        // In a dict (`extras_require`) only values are requirements.
                        if n.kind() == "pair" {
                            inner.extend(n.child_by_field_name("value"));
                            continue;
                        }
                        let mut c = n.walk();
                        inner.extend(n.named_children(&mut c));
                    }
                }
                "name" if value.kind() == "string" => {
                    let lit = super::lang::text(value, text).trim_matches(['"', '\'']);
                    d.add_dist(lit);
                }
                _ => {}
            }
            continue;
        }
        let mut c = node.walk();
        stack.extend(node.named_children(&mut c));
    }
}

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
