//! Languages, their tree-sitter grammars, the compiled queries and a per-thread parser.
//!
//! Queries live in `grammars/<lang>/*.scm` so that adding a language is mostly adding a
//! folder; they are embedded with `include_str!` and compiled once per process, because
//! compiling a query costs far more than running it on a typical file.

use std::borrow::Cow;
use std::cell::RefCell;
use std::path::Path;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Language, Node, Parser, Query, Tree};

/// A language the evidence engine understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// Python 3 (`.py`, `.pyi`).
    Python,
    /// Rust (`.rs`).
    Rust,
}

const PY_SYMBOLS: &str = include_str!("../../grammars/python/symbols.scm");
const PY_IMPORTS: &str = include_str!("../../grammars/python/imports.scm");
const RS_SYMBOLS: &str = include_str!("../../grammars/rust/symbols.scm");
const RS_IMPORTS: &str = include_str!("../../grammars/rust/imports.scm");

impl Lang {
    /// The language of a file, by extension (`.py`/`.pyi` → Python, `.rs` → Rust).
    pub fn from_path(path: &str) -> Option<Lang> {
        let ext = Path::new(path).extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("py") || ext.eq_ignore_ascii_case("pyi") {
            Some(Lang::Python)
        } else if ext.eq_ignore_ascii_case("rs") {
            Some(Lang::Rust)
        } else {
            None
        }
    }

    /// A short lowercase name (`"python"`, `"rust"`), as used for the grammar folders.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Rust => "rust",
        }
    }

    /// The tree-sitter grammar.
    pub(crate) fn language(self) -> Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }

    fn index(self) -> usize {
        match self {
            Lang::Python => 0,
            Lang::Rust => 1,
        }
    }

    /// The compiled `symbols.scm` query (`None` only if the shipped query is broken, which
    /// the unit tests rule out; callers then degrade to "no symbols" instead of panicking).
    pub(crate) fn symbols_query(self) -> Option<&'static Query> {
        static CELLS: [OnceLock<Option<Query>>; 2] = [OnceLock::new(), OnceLock::new()];
        let text = match self {
            Lang::Python => PY_SYMBOLS,
            Lang::Rust => RS_SYMBOLS,
        };
        CELLS[self.index()]
            .get_or_init(|| compile(self, "symbols.scm", text))
            .as_ref()
    }

    /// The compiled `imports.scm` query; see [`Lang::symbols_query`].
    pub(crate) fn imports_query(self) -> Option<&'static Query> {
        static CELLS: [OnceLock<Option<Query>>; 2] = [OnceLock::new(), OnceLock::new()];
        let text = match self {
            Lang::Python => PY_IMPORTS,
            Lang::Rust => RS_IMPORTS,
        };
        CELLS[self.index()]
            .get_or_init(|| compile(self, "imports.scm", text))
            .as_ref()
    }
}

fn compile(lang: Lang, file: &str, text: &str) -> Option<Query> {
    match Query::new(&lang.language(), text) {
        Ok(q) => Some(q),
        Err(e) => {
            tracing::error!("grammars/{}/{file} does not compile: {e}", lang.name());
            None
        }
    }
}

thread_local! {
    // One parser per language and thread: creating a parser and loading a grammar is
    // cheap but not free, and evidence parses hundreds of files in a row.
    static PARSERS: RefCell<[Option<Parser>; 2]> = const { RefCell::new([None, None]) };
}

/// Parses `source`; `None` only if the grammar cannot be loaded (ABI mismatch).
pub(crate) fn parse(lang: Lang, source: &str) -> Option<Tree> {
    PARSERS.with(|cell| {
        // A re-entrant call (impossible today) gets a fresh parser instead of a panic.
        let Ok(mut slots) = cell.try_borrow_mut() else {
            return fresh_parser(lang)?.parse(source, None);
        };
        let slot = &mut slots[lang.index()];
        if slot.is_none() {
            *slot = Some(fresh_parser(lang)?);
        }
        slot.as_mut()?.parse(source, None)
    })
}

fn fresh_parser(lang: Lang) -> Option<Parser> {
    let mut parser = Parser::new();
    match parser.set_language(&lang.language()) {
        Ok(()) => Some(parser),
        Err(e) => {
            tracing::error!("cannot load the {} grammar: {e}", lang.name());
            None
        }
    }
}

/// A file's text with its syntax tree, parsed once and shared by every analysis.
pub(crate) struct Parsed<'a> {
    /// The text the tree was parsed from (borrowed for changed files, owned for files
    /// read from the repository).
    pub text: Cow<'a, str>,
    /// Its syntax tree.
    pub tree: Tree,
}

/// The source text of a node; empty if its byte range is not on character boundaries
/// (tree-sitter never does that for valid UTF-8, but the input is untrusted).
pub(crate) fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    source.get(node.byte_range()).unwrap_or("")
}

/// 1-based line of a node's first character.
pub(crate) fn start_line(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row)
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// 1-based line of a node's last character (a node ending at column 0 ends on the line
/// before: tree-sitter's end is exclusive).
pub(crate) fn end_line(node: Node<'_>) -> u32 {
    let end = node.end_position();
    let row = if end.column == 0 && end.row > node.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    u32::try_from(row).unwrap_or(u32::MAX - 1).saturating_add(1)
}

/// Depth-first walk; `visit` returns whether to descend into the node.
pub(crate) fn walk<'t>(node: Node<'t>, visit: &mut dyn FnMut(Node<'t>) -> bool) {
    if !visit(node) {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        walk(child, visit);
    }
}

/// What a piece of code says, read from its syntax tree: its tokens, one space apart,
/// without comments, every string quote made `'`. Two nodes with the same meaning key
/// differ at most in layout, comments and quoting, so a reformatted decorator, hook or
/// statement is the same one and an edit of what it does is not.
pub(crate) fn meaning(node: Node<'_>, source: &str) -> String {
    let mut tokens: Vec<String> = Vec::new();
    walk(node, &mut |n| {
        if n.kind().ends_with("comment") {
            return false;
        }
        // String contents are one token: their escapes are children that leave the
        // plain characters between them out of the tree.
        if n.child_count() > 0 && n.kind() != "string_content" {
            return true;
        }
        let t = text(n, source);
        let token = match n.kind() {
            // Python `"""`, `r'`, `f"`; Rust `"`: a quote is a quote, a prefix stays.
            "string_start" | "string_end" | "\"" => {
                let prefix: String = t.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
                format!("{prefix}'")
            }
            _ => t.to_string(),
        };
        if !token.is_empty() {
            tokens.push(token);
        }
        false
    });
    tokens.join(" ")
}

/// Collapses runs of whitespace into single spaces, for one-line renderings of code.
pub(crate) fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grammars_load_with_this_tree_sitter_abi() {
        for lang in [Lang::Python, Lang::Rust] {
            let mut parser = Parser::new();
            parser
                .set_language(&lang.language())
                .unwrap_or_else(|e| panic!("{}: {e}", lang.name()));
            assert!(parser.parse("x", None).is_some());
        }
    }

    #[test]
    fn shipped_queries_compile() {
        for lang in [Lang::Python, Lang::Rust] {
            assert!(lang.symbols_query().is_some(), "{} symbols", lang.name());
            assert!(lang.imports_query().is_some(), "{} imports", lang.name());
        }
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(Lang::from_path("a/b.py"), Some(Lang::Python));
        assert_eq!(Lang::from_path("stubs/x.pyi"), Some(Lang::Python));
        assert_eq!(Lang::from_path("src/lib.rs"), Some(Lang::Rust));
        assert_eq!(Lang::from_path("dir.rs/README"), None);
        assert_eq!(Lang::from_path("Makefile"), None);
    }
}
