//! What one import is, for every reader and resolver of the evidence engine: the
//! [`Import`] as written, the `Site` that places it in its syntax tree, and the `Outcome` a
//! resolver concludes about it.
//!
//! Below both sides: the per-language readers (`python/imports.rs`, `rust/imports.rs`)
//! build these shapes, and the resolvers and `imports.rs`, which dispatches to the readers,
//! read them.

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// One import, as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Import {
    /// Python: the dotted module (`a.b`; empty for `from . import x`). Rust: the path
    /// without its last segment (`std::collections` for `use std::collections::HashMap`),
    /// or the whole path if it has one segment (`use serde;`, `extern crate foo;`); an
    /// absolute path keeps its leading `::`.
    pub module: String,
    /// The imported names without aliases: Python `from m import x as y` → `["x"]`,
    /// `from m import *` → `["*"]`, empty for `import m`; Rust the last segment
    /// (`HashMap`, `*`, `self`), empty for single-segment paths.
    pub names: Vec<String>,
    /// First line of the statement (Python) or of the leaf path (Rust), 1-based.
    pub line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// Python: inside `try:` with an `except` that catches `ImportError` or
    /// `ModuleNotFoundError` (bare `except:`, `Exception`, a tuple containing either),
    /// inside such a handler (a fallback), inside `with suppress(ImportError):`, or under
    /// a Python-version or platform check, so a missing module is handled at run time or
    /// never imported on some interpreters. `if TYPE_CHECKING:` does not count.
    pub optional: bool,
    /// The whole statement, whitespace collapsed to one line.
    pub text: String,
    /// Python relative-import level: the number of leading dots (0 for absolute).
    pub level: u32,
}

/// An import plus where it sits in the tree, for the resolvers.
pub(crate) struct Site<'t> {
    /// The public view.
    pub import: Import,
    /// The whole statement (`use_declaration`, `import_from_statement`, …).
    pub decl: Node<'t>,
    /// Rust: every segment of the leaf path (`["", "serde", "Serialize"]` for
    /// `::serde::Serialize`); Python: unused.
    pub path: Vec<String>,
    /// Rust: `extern crate` rather than `use`.
    pub extern_crate: bool,
}

/// What a resolver concluded about one import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// It exists (or we cannot prove it does not).
    Resolved,
    /// It does not exist; the reason says where we looked.
    Unresolved(String),
}
