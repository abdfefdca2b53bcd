//! Verdicts as git notes on the reviewed commit (`refs/notes/triad`).
//!
//! A note is UTF-8 text, one canonical JSON object per line, each with `"v":1` and a `kind`
//! (`review`, `reconciliation`, `override`), written and read as one type, [`NoteLine`]
//! ([`line`]); a line that is not a valid known one is refused ([`InvalidLine`]), kept in a
//! note read whole as [`NoteLine::Invalid`], and the gate blocks on it when it
//! mentions a blocking verdict. Notes are append-only: nothing is ever edited, and two copies
//! of a note merge by the union of their lines (`cat_sort_uniq`). The effective verdict is
//! the worst one no counted override answers ([`effective`]): a timestamp never shadows a
//! verdict, an override names the lines it answers, and lines fetched from a remote the user
//! does not trust only tighten ([`source`]). Every verdict line carries the commit's
//! `patch_id`, so a verdict can be found again after a squash or cherry-pick.

pub mod display;
mod effective;
pub mod fold;
mod format;
pub mod gate;
mod line;
pub mod merge;
pub mod origin;
mod patch;
pub mod reviewed;
pub mod rewrite;
pub mod setup;
pub mod source;
pub mod start;
mod store;
pub mod sync;
mod write;

pub use effective::{answered, effective, Effective, Uncounted};
pub use format::{canonical_json, contains_word, FORMAT_VERSION, REATTACHED_FROM};
pub use line::{
    exact_word, read_note, reattached, without_reattached, Answers, Head, InvalidLine, LineId,
    NoteLine, OverrideNote, OverrideRecord, Problem, ReadIssue, ReadLine, ReadSymbol,
    ReconciliationRecord, Record, ReviewRecord, Stored, VerdictKind, VerdictNote, READ_RULES,
};
pub use patch::{patch_id, patch_id_between};
pub use source::{Source, SourcedLine, Trust};
pub use store::{
    blob_text, identity, note_map, note_map_of, read, read_everywhere, NoteMap, MAX_APPEND_TRIES,
};
pub use write::{append, outcome_recorded, record, record_change};

/// The notes ref holding every verdict.
pub const NOTES_REF: &str = "refs/notes/triad";

/// Why a notes operation failed.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    /// A libgit2 operation failed.
    #[error("{context}")]
    Git {
        /// What was being done.
        context: String,
        /// The libgit2 error.
        #[source]
        source: git2::Error,
    },
    /// Other writers kept moving the notes ref; the update was given up.
    #[error(
        "refs/notes/triad kept changing under concurrent writers; gave up after {tries} tries"
    )]
    Contended {
        /// How many times the update was rebuilt.
        tries: u32,
    },
    /// A line of pre-push input is not `<local ref> <local oid> <remote ref> <remote oid>`.
    #[error("unexpected pre-push input line: {0:?}")]
    BadPushLine(String),
    /// A line of post-rewrite input is not `<old oid> <new oid> [extra]`.
    #[error("unexpected post-rewrite input line: {0:?}")]
    BadRewriteLine(String),
    /// A line to be written would not read back as a valid line.
    #[error("a note line git triad built would not read back, so nothing was written: {0}")]
    Unwritable(Box<InvalidLine>),
    /// A repository operation of the shared git layer failed.
    #[error(transparent)]
    Repo(#[from] crate::git::GitError),
    /// The git command line failed.
    #[error("`git {args}` failed: {message}")]
    GitCli {
        /// The arguments, space-joined.
        args: String,
        /// What git printed on stderr (or why it could not start).
        message: String,
    },
}

impl NotesError {
    /// Wraps a libgit2 error with what was being done.
    pub fn git(context: impl Into<String>, source: git2::Error) -> NotesError {
        NotesError::Git {
            context: context.into(),
            source,
        }
    }
}
