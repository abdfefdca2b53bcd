//! The code evidence engine: facts about a change that a model cannot talk away.
//!
//! The arbiter's verdicts rest on what tree-sitter and the repository's real files say:
//!
//! - **symbols** ([`outline`], [`enclosing`], [`innermost`]): which definition a line
//!   belongs to, with exact ranges;
//! - **syntax** ([`syntax_issues`], [`new_syntax_issues`]): `ERROR`/`MISSING` nodes, and
//!   which of them a change introduced;
//! - **imports** ([`imports`], [`added_imports`]) and their **resolution** against the
//!   standard library, the repository's modules and the declared dependencies;
//! - **tests** ([`weakened`], [`weakened_tests`]): the test functions and assertions a
//!   change deletes or rewrites, and the tests it keeps from running, from failing or from
//!   reaching the code (skips, early exits, stubs, narrowed runner configuration), read by
//!   meaning;
//! - **evidence** ([`evidence`], [`evidence_with`]): all of that for a whole change, as
//!   [`Finding`]s.
//!
//! Languages are Python and Rust. Each has a folder under `grammars/` with its
//! tree-sitter queries (compiled once per process) and a folder here with its import
//! reader and resolver (`python/`, `rust/`); the files directly in `src/code/` are
//! language-neutral: `import.rs` holds the shapes the readers build and the resolvers read,
//! below both, and `imports.rs` dispatches to the readers. `weakening/` holds the rules of weakened tests, one file per way of
//! weakening them. `grammars/README.md` explains how to add a language.

mod assertions;
mod calls;
mod constants;
mod evidence;
mod import;
mod imports;
mod lang;
mod python;
mod rust;
mod settings;
mod source;
mod symbols;
mod syntax;
mod weakening;

pub use assertions::{
    assertions, norm, test_functions, test_path, Assertion, TestFn, WEAKENED_TEST,
};
pub use calls::{example_calls, literal_calls, literal_kind, required_params, Param, ValueKind};
pub use evidence::{evidence, evidence_with, ChangedFile, EvidenceOptions, Finding};
pub use import::Import;
pub use imports::{added_imports, imports};
pub use lang::Lang;
pub use source::{DirSource, FileSource, GitTreeSource};
pub use symbols::{enclosing, hunk_label, innermost, outline, Symbol};
pub use syntax::{new_syntax_issues, syntax_issues, SyntaxIssue};
pub use weakening::{weakened, weakened_tests, weakening_reads, Weakened};
