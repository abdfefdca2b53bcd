//! Edits from model answers: parse SEARCH/REPLACE blocks, check paths, apply in memory.

pub mod apply;
pub mod grammar;
pub mod parse;
pub mod path;

pub use apply::{
    apply_blocks, render_failures, summarize_failures, Applied, BaseFiles, BlockFailure, EntryKind,
};
pub use parse::{metadata_json, parse_edit_blocks, parse_whole_files, EditBlock, ParseError};
pub use path::{check_path, PathError};
