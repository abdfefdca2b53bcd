//! Why an edit block did not apply: the one shape that applying blocks produces and that the
//! reports to the model and to the user render, below both.

use super::parse::EditBlock;
use super::path::shown;

/// Why one block did not apply, with what the model needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockFailure {
    /// The path as written.
    pub path: String,
    /// Line of the block in the answer.
    pub answer_line: usize,
    /// What went wrong.
    pub reason: String,
    /// The closest real lines, when SEARCH did not match.
    pub nearest: Option<String>,
    /// The replacement is already in the file.
    pub already_applied: bool,
    /// The block aimed at a private file.
    pub private: bool,
}

impl BlockFailure {
    /// A failure of `block` for `reason`, without nearest lines.
    pub fn of(block: &EditBlock, reason: String) -> Self {
        BlockFailure {
            path: shown(&block.path),
            answer_line: block.answer_line,
            reason,
            nearest: None,
            already_applied: false,
            private: false,
        }
    }
}
