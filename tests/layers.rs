//! The layering of `src/`, read from the source itself so it cannot rot silently.
//!
//! The layer order is written once, in the `Layers` section of the design comment of
//! `src/lib.rs`; this test reads it from there. It then reads every import of `src/` (each
//! `use crate::…`, `use super::…`, `use self::…` tree, each relative `use child::…` tree
//! whose first name is a module the file declares, and every `crate::x::…`, `super::x::…`
//! or `self::x::…` path in code, macro bodies and macro arguments included, `$crate::…`
//! too), follows re-exports however they are written (`pub use child::Y` in a `mod.rs`
//! stands for `Y` in the child's file, `pub use child::Y as Z` for `Z`, `pub use child::*`
//! for every name the child declares), and fails on:
//!
//! - an import of a top-level module that is not on a line above the importer's own;
//! - a `cli/` subcommand module importing another subcommand's module (they share only
//!   `cli` itself, its command helper and its error type);
//! - an import circle between files of one module, unless that module's doc comment names
//!   the files after the words "Import circle" and says why.
//!
//! - an import circle between the modules of one parent at any level (the parent's own
//!   file is one of them), each module standing for every file below it, where a
//!   re-export of another module's item counts as depending on it; explained the same way.
//!
//! A call in code through a child's name (`run::run(ctx, args)`) is the parent depending on
//! that child, as an import is; so is a path through a name a `use` bound (`use
//! super::stock;` then `stock::count::left()` depends on `stock/count.rs`, not only on
//! `stock/mod.rs`). A path through a macro's metavariable (`super::$folder::Record`,
//! `$folder::step()`) stands for every module the variable could name there. Each kind
//! (a parent's call into its child, a name a `use` bound, a macro's variable, a macro's
//! body and arguments, a re-export by name and by glob) is proven by a planted tree in
//! `tests/fixtures/layers/` on which the checker must find the circle.
//!
//! There are no exceptions: a rule that needs one is a rule to change here and in `lib.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules of `cli/` that every subcommand may use: the context and how a command
/// speaks (`context`, and `capture`, which keeps its words for a session), the shared
/// plumbing and the error type with its hints.
const CLI_SHARED: &[&str] = &[
    "context", "capture", "helper", "error", "explain", "progress",
];

/// A module path below the crate root (`["notes", "gate", "cli"]`); the root is empty.
type ModPath = Vec<String>;

/// One source file of the library, read and stripped.
#[derive(Clone)]
struct File {
    /// Path relative to the package root, `/`-separated.
    rel: String,
    /// The module the file is.
    module: ModPath,
    /// The text without comments, string and character literals (same byte offsets).
    code: String,
    /// The doc comment at the top of the file (`//!` lines), as written.
    doc: String,
    /// The modules the file declares at its top level (`mod x;`, `pub(crate) mod y { … }`):
    /// the names a relative path (`use x::…`, `y::f()`) starts from.
    children: BTreeSet<String>,
}

impl File {
    /// The file at `rel` (from the package root) holding `module`, with source `text`.
    fn new(rel: &str, module: ModPath, text: &str) -> File {
        let code = strip(text);
        File {
            rel: rel.to_string(),
            module,
            children: declared_children(&code),
            doc: text
                .lines()
                .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
                .collect::<Vec<_>>()
                .join("\n"),
            code,
        }
    }
}

/// One import: where it is and the path it names, resolved against its module.
struct Import {
    /// 1-based line.
    line: usize,
    /// The absolute path (from the crate root) it names.
    path: ModPath,
    /// A `pub use`: a re-export, not a dependence of the file on its target.
    reexport: bool,
    /// What a `use` binds (a name, or a glob's every name); `None` for a path in code.
    binds: Option<Binds>,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file of the library crate (the binaries in `src/bin/` and `src/main.rs` use
/// it as `git_triad::…`, and are not part of it).
fn library_files() -> Vec<File> {
    files_under(&src_dir())
}

/// Every `.rs` file below `src` (a crate's `src/`, or a planted tree of the tests below),
/// each as the module it is; `bin/` and `main.rs` are left out.
fn files_under(src: &Path) -> Vec<File> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    let src = src.to_path_buf();
    let mut paths = Vec::new();
    walk(&src, &mut paths);
    let root = src.parent().unwrap();
    let mut files: Vec<File> = paths
        .into_iter()
        .filter(|p| !p.starts_with(src.join("bin")) && *p != src.join("main.rs"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            File::new(&rel, module_of(p.strip_prefix(&src).unwrap()), &text)
        })
        .collect();
    // `#[path = "x.rs"] mod name;` puts a file elsewhere in the tree than its name says.
    let mut moved = Vec::new();
    for f in &files {
        let mut at = 0;
        while let Some(i) = f.code[at..].find("#[path") {
            let start = at + i;
            at = start + 6;
            let original = std::fs::read_to_string(root.join(&f.rel)).unwrap();
            let attr = &original[start..];
            let Some(q) = attr.find('"') else { continue };
            let Some(len) = attr[q + 1..].find('"') else {
                continue;
            };
            let target = &attr[q + 1..q + 1 + len];
            let after = &f.code[start..];
            let Some(m) = after.find("mod ") else {
                continue;
            };
            let name: String = after[m + 4..]
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let dir = Path::new(&f.rel).parent().unwrap().join(target);
            let mut module = f.module.clone();
            module.push(name);
            moved.push((dir.to_string_lossy().replace('\\', "/"), module));
        }
    }
    for (rel, module) in moved {
        if let Some(f) = files.iter_mut().find(|f| f.rel == rel) {
            f.module = module;
        }
    }
    files
}

/// `notes/gate/mod.rs` → `["notes", "gate"]`; `lib.rs` → `[]`.
fn module_of(rel: &Path) -> ModPath {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The text with comments, string literals and character literals blanked out (newlines
/// kept, so offsets and line numbers stay those of the file).
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (b[i] == b'r' || b[i..].starts_with(b"br")) && (i == 0 || !ident(b[i - 1])) && {
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|c| **c == b'#').count();
            b.get(k + hashes) == Some(&b'"')
        } {
            let k = i + if b[i] == b'b' { 2 } else { 1 };
            let hashes = b[k..].iter().take_while(|c| **c == b'#').count();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = k + hashes + 1;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, body, end - close.len().min(end - body));
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
            let rest = &b[i + 1..];
            let len = if rest.first() == Some(&b'\\') {
                rest.iter().position(|c| *c == b'\'').map(|p| p + 1)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(ch) == Some(&b'\'')).then_some(ch + 1)
            };
            match len {
                Some(n) => {
                    blank(&mut out, i + 1, i + n);
                    i += n + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The byte ranges of inline modules (`mod tests { … }`), in which `super` means the file.
fn inline_modules(code: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("mod ") {
        let start = at + i;
        at = start + 4;
        if start > 0 && code[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let rest = &code[start + 4..];
        let name_len = rest
            .trim_start()
            .chars()
            .take_while(|c| is_ident(*c))
            .count();
        let after = rest.trim_start()[name_len..].trim_start();
        if name_len == 0 || !after.starts_with('{') {
            continue;
        }
        let open = code.len() - after.len();
        let mut depth = 0;
        for (k, c) in code[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        ranges.push((open, open + k));
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    ranges
}

/// The names of the modules `code` declares outside any inline module: `mod x;` (a file)
/// and `mod y { … }` (inline), with any visibility.
fn declared_children(code: &str) -> BTreeSet<String> {
    let inline = inline_modules(code);
    let mut names = BTreeSet::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("mod ") {
        let start = at + i;
        at = start + 4;
        if (start > 0 && code[..start].chars().next_back().is_some_and(is_ident))
            || inline.iter().any(|(a, b)| *a < start && start < *b)
        {
            continue;
        }
        let rest = code[start + 4..].trim_start();
        let name: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        let after = rest[name.len()..].trim_start();
        if !name.is_empty() && (after.starts_with(';') || after.starts_with('{')) {
            names.insert(name);
        }
    }
    names
}

/// What a path of a use tree binds in the file: a name (its last segment, or what follows
/// `as`), or every public name of a module (`x::*`).
#[derive(Clone, PartialEq)]
enum Binds {
    Name(String),
    Glob,
}

/// Expands a use tree (`a::{b, c::{d as e, self}}`) into its paths, each with what it binds.
fn expand(prefix: &[String], tree: &str, out: &mut Vec<(ModPath, Binds)>) {
    let tree = tree.trim();
    if tree.is_empty() {
        return;
    }
    if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
        let (mut depth, mut start) = (0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(prefix, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(prefix, &inner[start..], out);
        return;
    }
    match tree.find("::") {
        Some(i) if !tree[..i].contains('{') => {
            let mut p = prefix.to_vec();
            p.push(tree[..i].trim().to_string());
            expand(&p, &tree[i + 2..], out);
        }
        _ => {
            let mut parts = tree.split(" as ");
            let name = parts.next().unwrap().trim();
            let alias = parts.next().map(str::trim);
            let mut p = prefix.to_vec();
            if name != "*" && name != "self" {
                p.push(name.to_string());
            }
            let binds = match (name, alias) {
                ("*", _) => Binds::Glob,
                (_, Some(alias)) => Binds::Name(alias.to_string()),
                _ => Binds::Name(p.last().cloned().unwrap_or_default()),
            };
            out.push((p, binds));
        }
    }
}

/// Resolves a path written in `file` (`super::x`, `self::y`, `crate::z`, or `child::w`
/// where `child` is a module the file declares) to an absolute one; `None` for anything
/// else (std, other crates, a local name). `inline` is how many inline modules the path is
/// written in: there a relative name is one of the inline module's, not the file's.
fn absolute(file: &File, inline: usize, path: &[String]) -> Option<ModPath> {
    let module = &file.module;
    let first = path.first()?.as_str();
    if first == "crate" {
        return Some(path[1..].to_vec());
    }
    // A metavariable first (`$folder::step`) names a module the file declares.
    if inline == 0 && (file.children.contains(first) || first.starts_with('$')) {
        let mut p = module.clone();
        p.extend(path.iter().cloned());
        return Some(p);
    }
    if first != "super" && first != "self" {
        return None;
    }
    // Inside an inline module `self` is that module and each `super` climbs one level of
    // inline modules before it leaves the file.
    let mut climbs = inline;
    let mut base = module.clone();
    let mut rest = path;
    while let Some(seg) = rest.first() {
        match seg.as_str() {
            "self" => {}
            "super" if climbs > 0 => climbs -= 1,
            "super" => {
                base.pop()?;
            }
            _ => break,
        }
        rest = &rest[1..];
    }
    // A path into the inline module itself (`self::helper` in `mod tests`) stays in the file.
    if climbs > 0 {
        return Some(module.clone());
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// Every import of `file`, resolved.
fn imports(file: &File) -> Vec<Import> {
    let code = &file.code;
    let inline = inline_modules(code);
    let depth = |at: usize| inline.iter().filter(|(a, b)| *a <= at && at < *b).count();
    // The inline module a position is in, innermost first: the scope of a `use` there.
    let scope = |at: usize| {
        inline
            .iter()
            .filter(|(a, b)| *a <= at && at < *b)
            .max_by_key(|(a, _)| *a)
            .copied()
    };
    let line = |at: usize| code[..at].matches('\n').count() + 1;
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let boundary =
        |at: usize| at == 0 || !(is_ident(bytes[at - 1] as char) || bytes[at - 1] == b'$');
    // Use trees, and the names they bind to a path of the crate, by scope.
    let mut trees = Vec::new();
    let mut bound: BTreeMap<(Option<(usize, usize)>, String), ModPath> = BTreeMap::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("use ") {
        let start = at + i;
        at = start + 4;
        if !boundary(start) {
            continue;
        }
        let Some(end) = code[start..].find(';') else {
            break;
        };
        trees.push((start, start + end));
        let tree = code[start + 4..start + end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let head = code[..start].trim_end();
        let tail = &head[head.rfind("pub").unwrap_or(0)..];
        let reexport = tail == "pub"
            || (tail.starts_with("pub(") && tail.ends_with(')') && !tail.contains('\n'));
        let mut paths = Vec::new();
        expand(&[], &tree, &mut paths);
        for (p, binds) in paths {
            if let Some(path) = absolute(file, depth(start), &p) {
                if let Binds::Name(name) = &binds {
                    bound.insert((scope(start), name.clone()), path.clone());
                }

                out.push(Import {
                    line: line(start),
                    path,
                    reexport,
                    binds: Some(binds),
                });
            }
        }
    }
    // Paths in code: `crate::a::b`, `super::c`, `self::d::e`; a parent's call into a child
    // it declares (`child::f()`); a path through a name a `use` bound (`use super::stock;`
    // then `stock::count::left()` is a call into `stock/count.rs`, not only into
    // `stock/mod.rs`); a path through a macro's metavariable (`super::$folder::T`,
    // `$folder::step()`), which stands for every module the variable could name (see
    // [`Resolver::files_of`]).
    let mut roots: BTreeSet<String> = ["crate::", "super::", "self::", "$crate::"]
        .map(String::from)
        .into();
    roots.extend(file.children.iter().map(|c| format!("{c}::")));
    roots.extend(bound.keys().map(|(_, name)| format!("{name}::")));
    roots.insert("$".to_string());
    for root in &roots {
        let mut at = 0;
        while let Some(i) = code[at..].find(root.as_str()) {
            let start = at + i;
            at = start + root.len();
            let before = code[..start].trim_end();
            if !boundary(start)
                || code[..start].ends_with("::")
                || code[..start].ends_with('.')
                || before.ends_with("(in")
                || trees.iter().any(|(a, b)| *a <= start && start < *b)
            {
                continue;
            }
            let chain: String = code[start..]
                .chars()
                .take_while(|c| is_ident(*c) || *c == ':' || *c == '$')
                .collect();
            let mut segs: Vec<String> = chain
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect();
            if root == "$" {
                // Only a metavariable that starts a path (`$folder::step`); `$crate` is
                // the crate.
                if segs.len() < 2 || segs[0] == "$crate" || segs[0].len() < 2 {
                    continue;
                }
            }
            if segs.first().is_some_and(|s| s == "$crate") {
                segs[0] = "crate".to_string();
            }
            let through_use = segs
                .first()
                .and_then(|first| bound.get(&(scope(start), first.clone())));
            let path = match through_use {
                Some(base) => {
                    let mut p = base.clone();
                    p.extend(segs[1..].iter().cloned());
                    Some(p)
                }
                None => absolute(file, depth(start), &segs),
            };
            if let Some(path) = path {
                out.push(Import {
                    line: line(start),
                    path,
                    reexport: false,
                    binds: None,
                });
            }
        }
    }
    out
}

/// The layers written in the design comment of `src/lib.rs`: the lines of its `Layers`
/// block, lowest first, each a list of top-level modules.
fn layers_of_lib() -> Vec<Vec<String>> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    let doc: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let start = doc
        .iter()
        .position(|l| *l == "## Layers")
        .expect("src/lib.rs has a `## Layers` section");
    let open = start
        + doc[start..]
            .iter()
            .position(|l| l.starts_with("```"))
            .expect("the Layers section has a ```text block");
    doc[open + 1..]
        .iter()
        .take_while(|l| !l.starts_with("```"))
        .map(|l| {
            l.split(" — ")
                .next()
                .unwrap()
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .collect()
}

/// The top-level modules `src/lib.rs` declares.
fn declared_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(src_dir().join("lib.rs")).unwrap();
    strip(&lib)
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';').trim().to_string())
        .collect()
}

/// The file that holds the item an absolute path names: the deepest module file on the
/// path, followed through re-exports (`pub use x::Y` in a `mod.rs`, `pub use x::Y as Z`,
/// and `pub use x::*` for a name the file does not define itself) to where `Y` lives.
struct Resolver {
    by_module: BTreeMap<ModPath, usize>,
    /// Per file: re-exported name → the absolute path it stands for; `*` for globs (the
    /// path is then the module whose names are re-exported).
    reexports: BTreeMap<usize, Vec<(String, ModPath)>>,
    /// Per file: the names it declares itself (`struct X`, `fn f`, `mod m`, …).
    defined: Vec<BTreeSet<String>>,
}

/// The names `code` declares as items, anywhere in it: each identifier after `struct`,
/// `enum`, `union`, `trait`, `type`, `fn`, `const`, `static`, `mod` or `macro_rules!`.
fn declared_names(code: &str) -> BTreeSet<String> {
    const ITEM: &[&str] = &[
        "struct",
        "enum",
        "union",
        "trait",
        "type",
        "fn",
        "const",
        "static",
        "mod",
        "macro_rules",
    ];
    let words: Vec<&str> = code
        .split(|c: char| !is_ident(c))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter(|w| ITEM.contains(&w[0]))
        .map(|w| w[1].to_string())
        .collect()
}

impl Resolver {
    fn new(files: &[File], all: &[Vec<Import>]) -> Self {
        let by_module = files
            .iter()
            .enumerate()
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        let mut reexports: BTreeMap<usize, Vec<(String, ModPath)>> = BTreeMap::new();
        for (i, imports) in all.iter().enumerate() {
            for imp in imports.iter().filter(|imp| imp.reexport) {
                let name = match &imp.binds {
                    Some(Binds::Name(name)) => name.clone(),
                    Some(Binds::Glob) => "*".to_string(),
                    None => imp.path.last().cloned().unwrap_or_default(),
                };
                reexports
                    .entry(i)
                    .or_default()
                    .push((name, imp.path.clone()));
            }
        }
        Resolver {
            by_module,
            reexports,
            defined: files.iter().map(|f| declared_names(&f.code)).collect(),
        }
    }

    /// Whether `file` has `name` to give: it declares or re-exports it by name.
    fn provides(&self, file: usize, name: &str) -> bool {
        self.defined[file].contains(name)
            || self
                .reexports
                .get(&file)
                .is_some_and(|r| r.iter().any(|(n, _)| n == name))
    }

    /// The file defining what `path` names.
    fn file_of(&self, path: &[String]) -> Option<usize> {
        self.follow(path, 0)
    }

    /// The files defining what `path` may name: one, unless a segment is a macro's
    /// metavariable (`$folder`), which may stand for any module declared where it stands,
    /// so the path names each of them (and, where none is declared, what is before it).
    fn files_of(&self, path: &[String]) -> BTreeSet<usize> {
        let Some(w) = path.iter().position(|s| s.starts_with('$')) else {
            return self.file_of(path).into_iter().collect();
        };
        let names: BTreeSet<&String> = self
            .by_module
            .keys()
            .filter(|m| m.len() > w && m[..w] == path[..w])
            .map(|m| &m[w])
            .collect();
        if names.is_empty() {
            return self.file_of(&path[..w]).into_iter().collect();
        }
        let mut out = BTreeSet::new();
        for name in names {
            let mut p = path.to_vec();
            p[w] = name.clone();
            out.extend(self.files_of(&p));
        }
        out
    }

    fn follow(&self, path: &[String], hops: usize) -> Option<usize> {
        let k = (0..=path.len())
            .rev()
            .find(|k| self.by_module.contains_key(&path[..*k]))?;
        let file = self.by_module[&path[..k]];
        let Some(name) = path.get(k) else {
            return Some(file);
        };
        if hops > 8 {
            return Some(file);
        }
        let reexports = self.reexports.get(&file).map_or(&[][..], Vec::as_slice);
        if let Some((_, target)) = reexports.iter().find(|(n, _)| n == name) {
            if target.as_slice() != path {
                return self.follow(target, hops + 1);
            }
        }
        // A name the file does not declare may be one a glob re-export brings in.
        if !self.defined[file].contains(name) {
            for (_, module) in reexports.iter().filter(|(n, _)| n == "*") {
                let from = self.follow(module, hops + 1);
                if from.is_some_and(|f| f != file && self.provides(f, name)) {
                    let mut target = module.clone();
                    target.extend(path[k..].iter().cloned());
                    return self.follow(&target, hops + 1);
                }
            }
        }
        Some(file)
    }
}

#[test]
fn every_import_points_down_the_documented_layers() {
    let layers = layers_of_lib();
    let mut level = BTreeMap::new();
    for (i, layer) in layers.iter().enumerate() {
        for m in layer {
            assert!(
                level.insert(m.clone(), i).is_none(),
                "`{m}` is on two lines of the Layers block of src/lib.rs"
            );
        }
    }
    let declared = declared_modules();
    let listed: BTreeSet<String> = level.keys().cloned().collect();
    assert_eq!(
        declared, listed,
        "the Layers block of src/lib.rs must list every `pub mod` of src/lib.rs once"
    );
    let files = library_files();
    let mut wrong = Vec::new();
    for f in &files {
        let Some(own) = f.module.first() else {
            continue; // lib.rs declares the modules and imports none
        };
        for imp in imports(f) {
            let Some(target) = imp.path.first() else {
                continue;
            };
            if target == own || !level.contains_key(target) {
                continue;
            }
            if level[target] >= level[own] {
                wrong.push(format!(
                    "{}:{}: `{own}` imports `crate::{}`, which is not on a line above it",
                    f.rel,
                    imp.line,
                    imp.path.join("::")
                ));
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(
        wrong.is_empty(),
        "imports against the layer order of src/lib.rs:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_subcommand_imports_another() {
    let files = library_files();
    // The modules below `cli`: a path into one of them (not a name of `cli` itself).
    let children: BTreeSet<&str> = files
        .iter()
        .filter_map(|f| match f.module.as_slice() {
            [cli, name, ..] if cli == "cli" => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let subcommand = |path: &[String]| -> Option<String> {
        match path {
            [cli, name, ..]
                if cli == "cli"
                    && children.contains(name.as_str())
                    && !CLI_SHARED.contains(&name.as_str()) =>
            {
                Some(name.clone())
            }
            _ => None,
        }
    };
    let mut wrong = Vec::new();
    for f in &files {
        let Some(own) = subcommand(&f.module) else {
            continue;
        };
        for imp in imports(f) {
            if let Some(other) = subcommand(&imp.path) {
                if other != own {
                    wrong.push(format!(
                        "{}:{}: `cli::{own}` imports `crate::{}`; shared plumbing belongs in \
                         cli::helper, library logic below cli",
                        f.rel,
                        imp.line,
                        imp.path.join("::")
                    ));
                }
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn files_of_a_module_import_each_other_one_way() {
    let wrong = unexplained_circles(&library_files());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The imports between files, resolved: per file, the files it depends on and the names
/// it takes from each. A re-export forwards a name and is no dependence of its own.
fn file_edges(files: &[File]) -> (Resolver, Vec<BTreeMap<usize, BTreeSet<String>>>) {
    let all: Vec<Vec<Import>> = files.iter().map(imports).collect();
    let resolver = Resolver::new(files, &all);
    let mut edges: Vec<BTreeMap<usize, BTreeSet<String>>> = vec![BTreeMap::new(); files.len()];
    for (i, imports) in all.iter().enumerate() {
        for imp in imports.iter().filter(|imp| !imp.reexport) {
            for j in resolver.files_of(&imp.path) {
                if j != i {
                    edges[i]
                        .entry(j)
                        .or_default()
                        .insert(imp.path.last().cloned().unwrap_or_default());
                }
            }
        }
    }
    (resolver, edges)
}

/// Every import circle between `files` that the doc comment of the module holding them
/// does not explain, each said with its edges (`a.rs -> b.rs: Name`).
fn unexplained_circles(files: &[File]) -> Vec<String> {
    let (resolver, edges) = file_edges(files);
    let mut wrong = Vec::new();
    for circle in circles(&edges) {
        let names: Vec<&File> = circle.iter().map(|i| &files[*i]).collect();
        // The module holding them all: the longest common prefix of their modules.
        let mut common = names[0].module.clone();
        for f in &names {
            let shared = common
                .iter()
                .zip(&f.module)
                .take_while(|(a, b)| a == b)
                .count();
            common.truncate(shared);
        }
        let explained = resolver.by_module.get(&common).is_some_and(|m| {
            let doc = &files[*m].doc;
            doc.contains("Import circle")
                && names.iter().all(|f| {
                    let stem = Path::new(&f.rel).file_stem().unwrap().to_string_lossy();
                    doc.contains(stem.as_ref())
                })
        });
        if !explained {
            let mut text = format!("import circle in `crate::{}`:", common.join("::"));
            for &i in &circle {
                for (j, what) in &edges[i] {
                    if circle.contains(j) {
                        text.push_str(&format!(
                            "\n  {} -> {}: {}",
                            files[i].rel,
                            files[*j].rel,
                            what.iter().cloned().collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
            wrong.push(text);
        }
    }
    wrong
}

/// Every circle between the modules of one parent, at every level of the tree, that the
/// parent's doc comment does not explain (as for files: "Import circle" and each name). A
/// module stands for every file below it, the parent's own file (`self`) for itself. A
/// re-export counts here: a module that re-exports another's item depends on it as its
/// users see it, though no file of it reads the item; re-exporting its own child does not.
fn unexplained_module_circles(files: &[File]) -> Vec<String> {
    let all: Vec<Vec<Import>> = files.iter().map(imports).collect();
    let resolver = Resolver::new(files, &all);
    // Per parent: node → node → the imports that make the edge (`file:line`).
    type Level = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;
    let mut levels: BTreeMap<ModPath, Level> = BTreeMap::new();
    for (i, imports) in all.iter().enumerate() {
        let from = &files[i].module;
        for imp in imports {
            if imp.reexport && imp.path.starts_with(from) {
                continue;
            }
            for j in resolver.files_of(&imp.path) {
                let to = &files[j].module;
                let shared = from.iter().zip(to).take_while(|(a, b)| a == b).count();
                let node = |m: &ModPath| m.get(shared).cloned().unwrap_or("self".into());
                let (a, b) = (node(from), node(to));
                if a != b {
                    levels
                        .entry(from[..shared].to_vec())
                        .or_default()
                        .entry(a)
                        .or_default()
                        .entry(b)
                        .or_default()
                        .insert(format!("{}:{}", files[i].rel, imp.line));
                }
            }
        }
    }
    let mut wrong = Vec::new();
    for (parent, level) in levels {
        let mut names: BTreeSet<&String> = level.keys().collect();
        names.extend(level.values().flat_map(|e| e.keys()));
        let names: Vec<&String> = names.into_iter().collect();
        let index = |n: &String| names.iter().position(|m| *m == n).unwrap();
        let mut edges = vec![BTreeMap::new(); names.len()];
        for (a, targets) in &level {
            for (b, at) in targets {
                edges[index(a)].insert(index(b), at.clone());
            }
        }
        for circle in circles(&edges) {
            let explained = resolver.by_module.get(&parent).is_some_and(|m| {
                let doc = &files[*m].doc;
                doc.contains("Import circle")
                    && circle.iter().all(|n| doc.contains(names[*n].as_str()))
            });
            if explained {
                continue;
            }
            let mut text = format!("module circle in `crate::{}`:", parent.join("::"));
            for &a in &circle {
                for (b, at) in &edges[a] {
                    if circle.contains(b) {
                        let at: Vec<&str> = at.iter().take(3).map(String::as_str).collect();
                        text.push_str(&format!(
                            "\n  {} -> {}: {}",
                            names[a],
                            names[*b],
                            at.join(", ")
                        ));
                    }
                }
            }
            wrong.push(text);
        }
    }
    wrong
}

#[test]
fn modules_of_a_parent_import_each_other_one_way() {
    let wrong = unexplained_module_circles(&library_files());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The strongly connected components of more than one file (Tarjan's algorithm).
fn circles(edges: &[BTreeMap<usize, BTreeSet<String>>]) -> Vec<Vec<usize>> {
    struct Walk<'e> {
        edges: &'e [BTreeMap<usize, BTreeSet<String>>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        found: Vec<Vec<usize>>,
    }
    impl Walk<'_> {
        fn visit(&mut self, v: usize) {
            self.index[v] = Some(self.next);
            self.low[v] = self.next;
            self.next += 1;
            self.stack.push(v);
            self.on_stack[v] = true;
            for &w in self.edges[v].keys() {
                match self.index[w] {
                    None => {
                        self.visit(w);
                        self.low[v] = self.low[v].min(self.low[w]);
                    }
                    Some(iw) if self.on_stack[w] => self.low[v] = self.low[v].min(iw),
                    Some(_) => {}
                }
            }
            if Some(self.low[v]) == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let n = edges.len();
    let mut walk = Walk {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        found: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn the_reader_sees_what_the_compiler_sees() {
    // The reader is part of the rule: a stripped comment or string must not hide an import,
    // and one inside a comment or string must not count.
    let text =
        "use crate::a::{b, c::{d as e, self}};\n// use crate::x;\nlet s = \"crate::y::z\";\n\
                let r = r#\"crate::q\"#; let c = '\"'; let l: &'static str = \"\";\n\
                mod tests { use super::*; fn f() { super::g(); crate::w::v(); } }\n\
                macro_rules! m { ($f:ident) => { super::$f::T }; }\n";
    let file = File::new("src/m/n.rs", vec!["m".into(), "n".into()], text);
    let mut got: Vec<String> = imports(&file).iter().map(|i| i.path.join("::")).collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        ["a::b", "a::c", "a::c::d", "m::$f::T", "m::n", "m::n::g", "w::v"],
        "{}",
        file.code
    );
    assert_eq!(
        module_of(Path::new("notes/gate/mod.rs")),
        ["notes".to_string(), "gate".to_string()]
    );
}

#[test]
fn relative_paths_resolve_from_the_modules_a_file_declares() {
    // `use child::…` starts from a module the file declares; inside an inline module a
    // relative name is that module's, and an undeclared one (a crate, a local item) is not
    // followed. A call through a child's name (`child::h()`) is the parent depending on
    // its child, as much as a `use` is.
    let text = "mod child;\npub(crate) mod inner { fn f() {} }\nuse child::{A, deep::B};\n\
                use serde::Serialize;\nuse Kind::*;\nfn g() { child::h(); inner::f(); other::x(); }\n\
                mod tests { use child::Z; }\n";
    let file = File::new("src/m/mod.rs", vec!["m".into()], text);
    assert_eq!(
        file.children,
        BTreeSet::from([
            "child".to_string(),
            "inner".to_string(),
            "tests".to_string()
        ])
    );
    let mut got: Vec<String> = imports(&file).iter().map(|i| i.path.join("::")).collect();
    got.sort();
    got.dedup();
    assert_eq!(
        got,
        [
            "m::child::A",
            "m::child::deep::B",
            "m::child::h",
            "m::inner::f"
        ],
        "{}",
        file.code
    );
}

#[test]
fn a_path_through_a_name_a_use_binds_is_followed() {
    // `use super::x as y;` binds `y` to `x` in the scope the `use` is in: `y::deep::f()`
    // there is a call into `x::deep`; in an inline module that did not import it, `y` is
    // another name. A path to a crate or std module is not followed.
    let text = "use super::stock as s;\nuse std::fmt;\nfn g() { s::count::left(); fmt::x(); }\n\
                mod tests { fn h() { s::gone(); } }\n";
    let file = File::new("src/m/n.rs", vec!["m".into(), "n".into()], text);
    let mut got: Vec<String> = imports(&file).iter().map(|i| i.path.join("::")).collect();
    got.sort();
    got.dedup();
    assert_eq!(got, ["m::stock", "m::stock::count::left"], "{}", file.code);
}

#[test]
fn a_re_export_under_another_name_or_by_glob_is_followed() {
    // `pub use inner::Y as Z` gives `Z`; `pub use deep::*` gives what `deep` declares, and
    // a name the re-exporting file declares itself stays there.
    let m = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<ModPath>();
    let files = [
        File::new(
            "src/a/mod.rs",
            m(&["a"]),
            "mod inner;\nmod deep;\npub use inner::Y as Z;\npub use deep::*;\npub struct Own;\n",
        ),
        File::new("src/a/inner.rs", m(&["a", "inner"]), "pub struct Y;\n"),
        File::new("src/a/deep.rs", m(&["a", "deep"]), "pub fn f() {}\n"),
    ];
    let all: Vec<Vec<Import>> = files.iter().map(imports).collect();
    let resolver = Resolver::new(&files, &all);
    let file = |p: &[&str]| resolver.file_of(&m(p)).map(|i| files[i].rel.as_str());
    assert_eq!(file(&["a", "Z"]), Some("src/a/inner.rs"));
    assert_eq!(file(&["a", "f"]), Some("src/a/deep.rs"));
    assert_eq!(file(&["a", "Own"]), Some("src/a/mod.rs"));
    assert_eq!(file(&["a", "Nowhere"]), Some("src/a/mod.rs"));
}

#[test]
fn a_circle_through_relative_re_exports_is_found() {
    // The shape `src/code/` had: `imports.rs` takes a reader through `python/mod.rs`'s
    // `pub(crate) use imports::sites`, and the reader takes `Import` from `imports.rs`.
    // Without following the relative re-export, the edge ends at `python/mod.rs`, which
    // imports nothing, and the circle is invisible.
    let code = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<ModPath>();
    let files = [
        File::new(
            "src/code/mod.rs",
            code(&["code"]),
            "mod imports;\nmod python;\npub use imports::Import;\n",
        ),
        File::new(
            "src/code/imports.rs",
            code(&["code", "imports"]),
            "use super::python::sites;\npub struct Import;\n",
        ),
        File::new(
            "src/code/python/mod.rs",
            code(&["code", "python"]),
            "mod imports;\npub(crate) use imports::sites;\n",
        ),
        File::new(
            "src/code/python/imports.rs",
            code(&["code", "python", "imports"]),
            "use crate::code::imports::Import;\npub(crate) fn sites() {}\n",
        ),
    ];
    let wrong = unexplained_circles(&files);
    assert_eq!(
        wrong,
        ["import circle in `crate::code`:\n  \
          src/code/imports.rs -> src/code/python/imports.rs: sites\n  \
          src/code/python/imports.rs -> src/code/imports.rs: Import"],
    );
    // Broken as `src/code/` breaks it: the shape both sides need lives below both.
    let mut files = files.to_vec();
    files[3] = File::new(
        "src/code/python/imports.rs",
        code(&["code", "python", "imports"]),
        "use crate::code::import::Import;\npub(crate) fn sites() {}\n",
    );
    files.push(File::new(
        "src/code/import.rs",
        code(&["code", "import"]),
        "pub struct Import;\n",
    ));
    assert!(unexplained_circles(&files).is_empty(), "the circle is gone");
}

/// Asserts the circles the checker finds in the planted tree
/// `tests/fixtures/layers/<name>/src`: exactly `files` between its files and `modules`
/// between its modules.
fn assert_planted_circles(name: &str, files: &[&str], modules: &[&str]) {
    let tree = files_under(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/layers")
            .join(name)
            .join("src"),
    );
    assert_eq!(unexplained_circles(&tree), files, "between files of {name}");
    assert_eq!(
        unexplained_module_circles(&tree),
        modules,
        "between modules of {name}"
    );
}

#[test]
fn a_planted_parent_to_child_call_circle_fails() {
    // `shop/mod.rs` calls `till::ring()` and `till.rs` takes `Basket` from `shop/mod.rs`:
    // no `use` goes down, yet the two files need each other.
    assert_planted_circles(
        "parent_call",
        &["import circle in `crate::shop`:\n  \
          src/shop/mod.rs -> src/shop/till.rs: ring\n  \
          src/shop/till.rs -> src/shop/mod.rs: Basket"],
        &["module circle in `crate::shop`:\n  \
          self -> till: src/shop/mod.rs:7\n  \
          till -> self: src/shop/till.rs:2"],
    );
}

#[test]
fn a_planted_macro_path_circle_fails() {
    // `registry.rs` names each folder's record only as `super::$folder::Record`; `alpha.rs`
    // takes the registry's trait.
    assert_planted_circles(
        "macro_path",
        &["import circle in `crate::kinds`:\n  \
          src/kinds/alpha.rs -> src/kinds/registry.rs: Kind\n  \
          src/kinds/registry.rs -> src/kinds/alpha.rs: Record"],
        &["module circle in `crate::kinds`:\n  \
          alpha -> registry: src/kinds/alpha.rs:2\n  \
          registry -> alpha: src/kinds/registry.rs:7"],
    );
}

#[test]
fn a_planted_re_export_circle_fails() {
    // `a` re-exports `b::Thing` as its own, `b` uses `a::Other`: no file of `a` reads `b`,
    // so the files show no circle, but the modules need each other.
    assert_planted_circles(
        "re_export",
        &[],
        &["module circle in `crate::`:\n  \
          a -> b: src/a/mod.rs:4\n  \
          b -> a: src/b/mod.rs:2"],
    );
}

#[test]
fn a_planted_circle_through_an_imported_module_name_fails() {
    // `till.rs` imports the module `stock` by name and calls `stock::count::left()`: the
    // call is into `stock/count.rs`, which takes `Sale` from `till.rs`. Read as an edge to
    // `stock/mod.rs` only (what the `use` names), the files show no circle.
    assert_planted_circles(
        "module_alias",
        &["import circle in `crate::shop`:\n  \
          src/shop/stock/count.rs -> src/shop/till.rs: Sale\n  \
          src/shop/till.rs -> src/shop/stock/count.rs: left"],
        &["module circle in `crate::shop`:\n  \
          stock -> till: src/shop/stock/count.rs:2\n  \
          till -> stock: src/shop/till.rs:2, src/shop/till.rs:7"],
    );
}

#[test]
fn a_planted_circle_behind_a_glob_re_export_fails() {
    // `conf/mod.rs` re-exports all of `schema` (`pub use schema::*`); `repo.rs` takes
    // `Role` as `super::Role`, which is `schema.rs`'s, and `schema.rs` takes `repo.rs`'s
    // `Loaded`. Ending the edge at `conf/mod.rs`, which imports nothing, hides the circle.
    assert_planted_circles(
        "glob_re_export",
        &["import circle in `crate::conf`:\n  \
          src/conf/repo.rs -> src/conf/schema.rs: Role\n  \
          src/conf/schema.rs -> src/conf/repo.rs: Loaded"],
        &["module circle in `crate::conf`:\n  \
          repo -> schema: src/conf/repo.rs:2\n  \
          schema -> repo: src/conf/schema.rs:2"],
    );
}

#[test]
fn a_planted_circle_through_macro_bodies_and_arguments_fails() {
    // `switch.rs` reaches the bulb only inside a `macro_rules!` body (`$crate::lamp::bulb`),
    // `bulb.rs` names the switch's toggle only in a macro invocation's arguments.
    assert_planted_circles(
        "macro_crate",
        &["import circle in `crate::lamp`:\n  \
          src/lamp/bulb.rs -> src/lamp/switch.rs: Toggle\n  \
          src/lamp/switch.rs -> src/lamp/bulb.rs: on"],
        &["module circle in `crate::lamp`:\n  \
          bulb -> switch: src/lamp/bulb.rs:9\n  \
          switch -> bulb: src/lamp/switch.rs:4"],
    );
}
