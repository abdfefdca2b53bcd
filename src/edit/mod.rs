//! Edits from model answers: parse SEARCH/REPLACE blocks, check paths, apply in memory.

pub mod apply;
pub mod failure;
pub mod grammar;
pub mod imports;
pub mod merge;
pub mod parse;
pub mod path;
pub mod report;

pub use apply::{apply_blocks, Applied, BaseFiles, EntryKind};
pub use failure::BlockFailure;
pub use parse::{metadata_json, parse_edit_blocks, parse_whole_files, EditBlock, ParseError};
pub use path::{check_path, PathError};
pub use report::{render_failures, summarize_failures};
