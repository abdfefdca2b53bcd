//! What the formatter step of a run records (seed 001 §9: style is applied by a trusted
//! command after consensus, never left to the models' agreement).

use serde::{Deserialize, Serialize};

use crate::git::{FileStat, ObjectId};
use crate::sandbox::CommandOutcome;

/// One run of the configured formatter (`format.command`) on the run's result. A refactor
/// redone after it (a consensus or reconciliation sending the run back) is formatted again:
/// each time adds one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FormatRecord {
    /// The commit it ran on (the last stage commit before Verify).
    pub input: ObjectId,
    /// How the command ended (its output's tail, masked).
    pub outcome: CommandOutcome,
    /// The formatter's own commit on top of `input`; `None` when it changed nothing, or
    /// failed (a failed formatter's files are never committed).
    pub commit: Option<ObjectId>,
    /// What its commit changed.
    #[serde(default)]
    pub changed: Vec<FileStat>,
    /// Files it changed that the run did not: left as they were, because the run's result
    /// is what is formatted, not the rest of the repository.
    #[serde(default)]
    pub left_out: Vec<String>,
    /// What became of it, in a sentence.
    pub detail: String,
}

impl FormatRecord {
    /// Whether the command failed (non-zero exit, killed, timed out, could not start).
    pub fn failed(&self) -> bool {
        self.outcome.exit_code != Some(0)
    }
}
