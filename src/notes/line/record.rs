//! What a writer puts in a line: the head every line git triad writes carries ([`Head`]) and
//! the record of its kind ([`Record`]). Nothing else builds note lines: every line git
//! triad appends — a stage review, a `git triad review --note`, the mark on a stopped run's
//! tip, a reconciliation, a human override — is a [`NoteLine::written`] from these.
//!
//! These types only serialize: lines are read into [`NoteLine`] (its decision fields, its
//! display fields [`super::ReadLine`], a review's [`super::VerdictNote::review`]), never
//! back into what a writer filled in.

use git2::{Oid, Repository};
use serde::Serialize;

use super::{InvalidLine, NoteLine};
use crate::arbiter::reconciliation::{CheckResult, Facts, RequirementStatus};
use crate::arbiter::{ArbiterReview, Floor, Issue, Verdict};
use crate::clock::now_ts;
use crate::notes::format::FORMAT_VERSION;
use crate::notes::NotesError;

/// What every line git triad writes carries besides its record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Head {
    /// When the line was written (RFC 3339 UTC, milliseconds).
    pub ts: String,
    /// The full id of the commit the note is on.
    pub commit: String,
    /// The commit's stable patch id, so the verdict can be found again after a squash
    /// (`null` for a commit with no patch, such as an empty one).
    pub patch_id: Option<String>,
    /// On a run's outcome: the stable patch id of the run's whole change (its base to this
    /// commit), so a squash of the run, or a rebase of that squash, is found by it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change_patch_id: Option<String>,
}

impl Head {
    /// The head of a line on `commit`, stamped now with its patch id.
    pub fn now(repo: &Repository, commit: Oid) -> Result<Head, NotesError> {
        Ok(Head {
            ts: now_ts(),
            commit: commit.to_string(),
            patch_id: crate::notes::patch_id(repo, commit)?,
            change_patch_id: None,
        })
    }
}

/// A line as it goes on the wire: the format version, the head, the record tagged by kind.
#[derive(Serialize)]
struct Wire<'a> {
    v: u64,
    #[serde(flatten)]
    head: &'a Head,
    #[serde(flatten)]
    record: &'a Record,
}

/// The record a line carries, tagged by `kind` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// An arbiter's review of a change (a stage, a `review --note`, or a stopped run's tip).
    Review(Box<ReviewRecord>),
    /// The reconciliation of a finished run against its TaskSpec.
    Reconciliation(Box<ReconciliationRecord>),
    /// A human overruling the verdict in force.
    Override(OverrideRecord),
}

/// A review line: the review itself plus where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewRecord {
    /// The run it belongs to (`null` for `git triad review --note`).
    pub run: Option<String>,
    /// The task of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Which attempt at the stage (0 for a run-outcome mark).
    pub attempt: u32,
    /// The stage reviewed (`architect` … `verify`, `review`, or `run` for a stop mark).
    pub stage_reviewed: String,
    /// The chamber session that deliberated a doubtful verdict (`git triad chamber show`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chamber: Option<String>,
    /// The review.
    #[serde(flatten)]
    pub review: ArbiterReview,
}

/// A reconciliation line (seed 000 §B11.5).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReconciliationRecord {
    /// The run reconciled.
    pub run: String,
    /// Its task.
    pub task: String,
    /// Always `reconcile`.
    pub stage: String,
    /// The verdict in force (the model's, raised by the facts).
    pub verdict: Verdict,
    /// What the reconciliation model answered.
    pub model_verdict: Verdict,
    /// The floor the facts imposed, with reasons.
    pub floor: Option<Floor>,
    /// The reconciliation arbiter.
    pub arbiter_model: String,
    /// The verifier whose summary was checked.
    pub reviewed_model: String,
    /// The model's confidence, 0–1.
    pub confidence: f64,
    /// The model's reasoning.
    pub reasoning: String,
    /// The five checks, as answered.
    pub checks: Vec<CheckResult>,
    /// Requirement by requirement, as answered.
    pub requirements: Vec<RequirementStatus>,
    /// Where a REJECT rewinds to.
    pub rewind_to: String,
    /// The gaps named.
    pub gaps: Vec<String>,
    /// What tools established.
    pub facts: Facts,
    /// Always empty: reconciliation issues are the gaps.
    pub issues: Vec<Issue>,
    /// USD the reconciliation call cost.
    pub token_cost: f64,
}

/// A human override line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OverrideRecord {
    /// The new verdict: APPROVE or FLAG.
    pub verdict: Verdict,
    /// The verdict it clears (the one in force when it was written).
    pub overrides: Verdict,
    /// The review and reconciliation lines it answers, by [`super::LineId`]: the lines on
    /// the commit the person saw when overriding. Absent on overrides written before this
    /// field; those never clear a HALT (see [`crate::notes::effective`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<String>>,
    /// Why, in the words of the person overriding.
    pub reason: String,
    /// `Name <email>` of the person overriding.
    pub who: String,
}

impl NoteLine {
    /// The line `head` and `record` make, checked by the rules every reader reads by: what
    /// is stored is its [`super::Stored::text`], and parsing that text gives this line
    /// back. Refused (never the case for a record this build fills in, whose verdicts are
    /// verdict words) when it would not read as a valid line.
    pub fn written(head: &Head, record: &Record) -> Result<NoteLine, Box<InvalidLine>> {
        let wire = Wire {
            v: FORMAT_VERSION,
            head,
            record,
        };
        // Every field is plain data (strings, numbers, enums with string names), which
        // serde_json always serializes; a failure reads as a line that is not an object.
        NoteLine::of_value(serde_json::to_value(wire).unwrap_or_default())
    }
}
