//! Code evidence for a generated 200-file change (100 Python + 100 Rust files of about
//! 150 lines) against plain tree-sitter parsing of the same files' new versions.
//!
//! Evidence must stay within 1.25× of parsing: it parses every new version once anyway, so
//! everything else (queries, manifests, module lookups, resolution) has to be cheap.
//! Prints both medians and the ratio; exits non-zero if the ratio exceeds 1.25.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use git_triad::code::{evidence, ChangedFile, FileSource};

const FILES_PER_LANG: usize = 100;
const REPS: usize = 9;
const MAX_RATIO: f64 = 1.25;

/// The repository in memory, so that disk noise does not blur the comparison.
struct MemSource {
    files: BTreeMap<String, String>,
    dirs: BTreeSet<String>,
}

impl MemSource {
    fn new(files: BTreeMap<String, String>) -> MemSource {
        let mut dirs = BTreeSet::from([String::new()]);
        for path in files.keys() {
            let mut p = path.as_str();
            while let Some((dir, _)) = p.rsplit_once('/') {
                dirs.insert(dir.to_string());
                p = dir;
            }
        }
        MemSource { files, dirs }
    }
}

impl FileSource for MemSource {
    fn read(&self, path: &str) -> Option<String> {
        self.files.get(path).cloned()
    }

    fn is_file(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }

    fn is_dir(&self, path: &str) -> bool {
        self.dirs.contains(path)
    }

    fn list(&self, dir: &str) -> Vec<String> {
        let prefix = if dir.is_empty() {
            String::new()
        } else {
            format!("{dir}/")
        };
        let mut out: BTreeSet<String> = BTreeSet::new();
        for path in self.files.keys().chain(self.dirs.iter()) {
            if let Some(rest) = path.strip_prefix(&prefix) {
                if let Some(name) = rest.split('/').next().filter(|n| !n.is_empty()) {
                    out.insert(name.to_string());
                }
            }
        }
        out.into_iter().collect()
    }
}

/// A Python module of about 150 lines; `extra` adds the change's new function.
fn python_module(i: usize, extra: bool) -> String {
    let next = (i + 1) % FILES_PER_LANG;
    let mut s = format!(
        "\"\"\"Module {i}: order handling.\"\"\"\n\
         from __future__ import annotations\n\n\
         import json\nimport logging\nimport os.path\nfrom dataclasses import dataclass, field\n\
         from typing import Iterable, Optional\n\n\
         import requests\nimport yaml\n\n\
         from . import mod_{next:03}\nfrom .mod_{next:03} import Record{next}\nfrom app.util import helpers\n\n\
         try:\n    import ujson as fastjson\nexcept ImportError:\n    fastjson = json\n\n\
         log = logging.getLogger(__name__)\n\n\n"
    );
    for c in 0..3 {
        s.push_str(&format!(
            "@dataclass\nclass Record{i}{c}:\n    \"\"\"A record.\"\"\"\n\n    name: str\n    \
             values: list = field(default_factory=list)\n\n    @property\n    def total(self) -> int:\n        \
             return sum(self.values)\n\n    @staticmethod\n    def parse(text: str) -> \"Record{i}{c}\":\n        \
             data = json.loads(text)\n        return Record{i}{c}(data[\"name\"], data.get(\"values\", []))\n\n    \
             def render(self, indent: int = 2) -> str:\n        def line(k, v):\n            \
             return f\"{{k}}={{v}}\"\n        parts = [line(k, v) for k, v in vars(self).items()]\n        \
             return (\" \" * indent).join(parts)\n\n\n"
        ));
    }
    s.push_str(&format!(
        "class Record{i}:\n    pass\n\n\n\
         def load(path: str) -> Optional[dict]:\n    if not os.path.exists(path):\n        return None\n    \
         with open(path) as fh:\n        return yaml.safe_load(fh)\n\n\n\
         def fetch(url: str, retries: int = 3) -> dict:\n    for attempt in range(retries):\n        \
         try:\n            resp = requests.get(url, timeout=10)\n            resp.raise_for_status()\n            \
         return resp.json()\n        except requests.RequestException as exc:\n            \
         log.warning(\"attempt %d failed: %s\", attempt, exc)\n    raise RuntimeError(url)\n\n\n\
         def summarize(items: Iterable[int]) -> dict:\n    items = list(items)\n    return {{\n        \
         \"count\": len(items),\n        \"sum\": sum(items),\n        \"max\": max(items, default=0),\n    }}\n\n\n"
    ));
    for f in 0..6 {
        s.push_str(&format!(
            "def step_{f}(value: int) -> int:\n    if value < 0:\n        raise ValueError(value)\n    \
             result = value * {f} + helpers.offset()\n    return mod_{next:03}.adjust(result)\n\n\n"
        ));
    }
    if extra {
        s.push_str(
            "def added(values):\n    \"\"\"New in this change.\"\"\"\n    import statistics\n    \
             return statistics.mean(values)\n",
        );
    }
    s
}

/// A Rust module of about 150 lines; `extra` adds the change's new function.
fn rust_module(i: usize, extra: bool) -> String {
    let next = (i + 1) % FILES_PER_LANG;
    let mut s = format!(
        "//! Module {i}: order handling.\n\n\
         use std::collections::{{BTreeMap, HashMap}};\nuse std::fmt::{{self, Display}};\n\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         use crate::m{next:03}::{{Item{next}, helper_{next}}};\nuse crate::util::offset;\nuse super::m{next:03} as neighbour;\n\n\
         /// An item.\n#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]\npub struct Item{i} {{\n    \
         pub name: String,\n    pub values: Vec<u64>,\n}}\n\n\
         /// Kinds.\n#[derive(Debug, Clone, Copy)]\npub enum Kind{i} {{\n    A,\n    B(u32),\n    C {{ x: i64 }},\n}}\n\n\
         impl Item{i} {{\n    /// Builds an item.\n    pub fn new(name: &str) -> Self {{\n        \
         Item{i} {{ name: name.to_string(), values: Vec::new() }}\n    }}\n\n    \
         /// The total.\n    pub fn total(&self) -> u64 {{\n        self.values.iter().sum()\n    }}\n\n    \
         /// Groups values.\n    pub fn group(&self) -> BTreeMap<u64, usize> {{\n        \
         let mut m = BTreeMap::new();\n        for v in &self.values {{\n            \
         *m.entry(*v % 10).or_insert(0) += 1;\n        }}\n        m\n    }}\n}}\n\n\
         impl Display for Item{i} {{\n    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {{\n        \
         write!(f, \"{{}}: {{}}\", self.name, self.total())\n    }}\n}}\n\n\
         /// A trait.\npub trait Score{i} {{\n    /// The score.\n    fn score(&self) -> f64;\n}}\n\n\
         impl Score{i} for Item{i} {{\n    fn score(&self) -> f64 {{\n        self.total() as f64 / 2.0\n    }}\n}}\n\n\
         /// Exposed to the neighbour.\npub fn helper_{i}(x: u64) -> u64 {{\n    x + offset()\n}}\n\n"
    );
    for f in 0..8 {
        s.push_str(&format!(
            "/// Step {f}.\npub fn step_{f}(input: &[u64]) -> HashMap<u64, u64> {{\n    \
             let mut out = HashMap::new();\n    for (k, v) in input.iter().enumerate() {{\n        \
             if *v > {f} {{\n            out.insert(k as u64, helper_{next}(*v));\n        }}\n    }}\n    \
             let _ = Item{next}::new(\"x\");\n    let _ = neighbour::helper_{next}(1);\n    out\n}}\n\n"
        ));
    }
    s.push_str(&format!(
        "#[cfg(test)]\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn total() {{\n        \
         let mut it = Item{i}::new(\"a\");\n        it.values = vec![1, 2, 3];\n        \
         assert_eq!(it.total(), 6);\n    }}\n}}\n"
    ));
    if extra {
        s.push_str(&format!(
            "\n/// New in this change.\npub fn added_{i}(v: &[u64]) -> u64 {{\n    \
             use std::cmp::max;\n    v.iter().fold(0, |a, b| max(a, *b))\n}}\n"
        ));
    }
    s
}

/// The repository before the change, and the change (every module modified; two
/// hallucinated imports and one syntax error, so that the findings path runs too).
fn generate() -> (MemSource, Vec<ChangedFile>) {
    let mut files = BTreeMap::new();
    files.insert(
        "pyproject.toml".to_string(),
        "[project]\nname = \"app\"\ndependencies = [\"requests>=2\", \"PyYAML>=6\"]\n\n\
         [project.optional-dependencies]\nfast = [\"ujson\"]\n"
            .to_string(),
    );
    files.insert("app/__init__.py".to_string(), String::new());
    files.insert(
        "app/util/helpers.py".to_string(),
        "def offset():\n    return 1\n".to_string(),
    );
    files.insert(
        "Cargo.toml".to_string(),
        "[package]\nname = \"app\"\nedition = \"2021\"\n\n[dependencies]\n\
         serde = { version = \"1\", features = [\"derive\"] }\n"
            .to_string(),
    );
    let mut lib = String::from("//! The crate.\npub mod util;\n");
    for i in 0..FILES_PER_LANG {
        lib.push_str(&format!("pub mod m{i:03};\n"));
    }
    files.insert("src/lib.rs".to_string(), lib);
    files.insert(
        "src/util.rs".to_string(),
        "/// An offset.\npub fn offset() -> u64 {\n    1\n}\n".to_string(),
    );
    let mut changes = Vec::new();
    for i in 0..FILES_PER_LANG {
        let py = format!("app/mod_{i:03}.py");
        let rs = format!("src/m{i:03}.rs");
        let (py_before, rs_before) = (python_module(i, false), rust_module(i, false));
        let (mut py_after, mut rs_after) = (python_module(i, true), rust_module(i, true));
        match i {
            7 => py_after = py_after.replacen("import yaml\n", "import yaml\nimport requets\n", 1),
            8 => {
                rs_after =
                    rs_after.replacen("use serde::", "use serde_jsonn::Value;\nuse serde::", 1)
            }
            9 => py_after.push_str("\ndef broken(:\n    pass\n"),
            _ => {}
        }
        files.insert(py.clone(), py_before.clone());
        files.insert(rs.clone(), rs_before.clone());
        changes.push(ChangedFile {
            path: py,
            before: Some(py_before),
            after: Some(py_after),
        });
        changes.push(ChangedFile {
            path: rs,
            before: Some(rs_before),
            after: Some(rs_after),
        });
    }
    (MemSource::new(files), changes)
}

fn parse_all(changes: &[ChangedFile]) -> usize {
    let mut py = tree_sitter::Parser::new();
    let mut rs = tree_sitter::Parser::new();
    let ok = py
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .and(rs.set_language(&tree_sitter_rust::LANGUAGE.into()));
    if let Err(e) = ok {
        eprintln!("cannot load grammars: {e}");
        std::process::exit(2);
    }
    let mut nodes = 0;
    for c in changes {
        let Some(text) = &c.after else { continue };
        let parser = if c.path.ends_with(".py") {
            &mut py
        } else {
            &mut rs
        };
        if let Some(tree) = parser.parse(text, None) {
            nodes += tree.root_node().descendant_count();
        }
    }
    nodes
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let (source, changes) = generate();
    let lines: usize = changes
        .iter()
        .filter_map(|c| c.after.as_ref())
        .map(|t| t.lines().count())
        .sum();
    println!(
        "evidence bench: {} changed files ({} Python + {} Rust), {} lines, {} repetitions",
        changes.len(),
        FILES_PER_LANG,
        FILES_PER_LANG,
        lines,
        REPS
    );
    // Warm up: compile queries, fault in pages, fill allocator caches.
    let findings = evidence(&source, &changes);
    let _ = parse_all(&changes);
    let (mut parse_times, mut evidence_times) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let t = Instant::now();
        std::hint::black_box(parse_all(&changes));
        parse_times.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(evidence(&source, &changes));
        evidence_times.push(t.elapsed());
    }
    let (parse, ev) = (median(parse_times), median(evidence_times));
    let ratio = ev.as_secs_f64() / parse.as_secs_f64();
    println!("findings:                 {}", findings.len());
    for f in &findings {
        println!("  {} {}:{} {}", f.kind, f.path, f.line, f.reason);
    }
    println!("plain tree-sitter parse:  {:>10.2?} (median)", parse);
    println!("code evidence:            {:>10.2?} (median)", ev);
    println!("ratio:                    {ratio:>10.2} (limit {MAX_RATIO})");
    if findings.len() < 3 {
        eprintln!("expected the seeded findings (2 imports, 1 syntax error)");
        std::process::exit(1);
    }
    if ratio > MAX_RATIO {
        eprintln!("code evidence is {ratio:.2}× plain parsing, over the {MAX_RATIO}× budget");
        std::process::exit(1);
    }
}
