//! The one verdict-line type and its one writer.
//!
//! Every line git triad appends to a note — a stage review, a `git triad review --note`, the
//! mark on a stopped run's tip, a reconciliation, a human override — is a [`VerdictLine`]:
//! a common head (`v`, `kind`, `ts`, `commit`, `patch_id`) and the record of its kind.
//! [`record`] stamps the head and appends; nothing else builds note lines by hand.

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::format::FORMAT_VERSION;
use super::NotesError;
use crate::arbiter::reconciliation::{CheckResult, Facts, RequirementStatus};
use crate::arbiter::{ArbiterReview, Floor, Issue, Verdict};
use crate::clock::now_ts;

/// One line of a verdict note, as written and as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictLine {
    /// The line format version ([`FORMAT_VERSION`]).
    pub v: u64,
    /// When the line was written (RFC 3339 UTC, milliseconds).
    pub ts: String,
    /// The full id of the commit the note is on.
    pub commit: String,
    /// The commit's stable patch id, so the verdict can be found again after a squash.
    pub patch_id: Option<String>,
    /// On a run's outcome: the stable patch id of the run's whole change (its base to this
    /// commit), so a squash of the run, or a rebase of that squash, is found by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_patch_id: Option<String>,
    /// What kind of record, and its fields.
    #[serde(flatten)]
    pub record: Record,
}

/// The record a line carries, tagged by `kind` on the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReviewRecord {
    /// The run it belongs to (`null` for `git triad review --note`).
    pub run: Option<String>,
    /// The task of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Which attempt at the stage (0 for a run-outcome mark).
    pub attempt: u32,
    /// The stage reviewed (`architect` … `verify`, `review`, or `run` for a stop mark).
    pub stage_reviewed: String,
    /// The chamber session that deliberated a doubtful verdict (`git triad chamber show`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chamber: Option<String>,
    /// The review.
    #[serde(flatten)]
    pub review: ArbiterReview,
}

/// A reconciliation line (seed 000 §B11.5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverrideRecord {
    /// The new verdict: APPROVE or FLAG.
    pub verdict: Verdict,
    /// The verdict it clears (the one in force when it was written).
    pub overrides: Verdict,
    /// The review and reconciliation lines it answers, by [`super::LineId`]: the lines on
    /// the commit the person saw when overriding. Absent on overrides written before this
    /// field; those never clear a HALT (see [`super::effective`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<String>>,
    /// Why, in the words of the person overriding.
    pub reason: String,
    /// `Name <email>` of the person overriding.
    pub who: String,
}

impl VerdictLine {
    /// A line for `commit`, stamped now with its patch id.
    pub fn new(repo: &Repository, commit: Oid, record: Record) -> Result<VerdictLine, NotesError> {
        Ok(VerdictLine {
            v: FORMAT_VERSION,
            ts: now_ts(),
            commit: commit.to_string(),
            patch_id: super::patch_id(repo, commit)?,
            change_patch_id: None,
            record,
        })
    }

    /// The line as the JSON object that is stored.
    pub fn to_value(&self) -> Value {
        // Every field is plain data (strings, numbers, enums with string names), which
        // serde_json always serializes.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a stored line; `None` when it is not a line of this format.
    pub fn from_value(line: &Value) -> Option<VerdictLine> {
        serde_json::from_value(line.clone()).ok()
    }
}

/// Writes `record` on `commit`: the one writer of verdict lines.
pub fn record(repo: &Repository, commit: Oid, record: Record) -> Result<VerdictLine, NotesError> {
    let line = VerdictLine::new(repo, commit, record)?;
    super::write::append(repo, commit, &[line.to_value()])?;
    Ok(line)
}

/// Writes `record` on `commit`, the tip of a run's change from `base`, with the patch id of
/// that whole change (`change_patch_id`): the outcome of a run, which the pre-push gate finds
/// on a squash of the run and on a rebase of that squash as on the tip itself.
pub fn record_change(
    repo: &Repository,
    base: Oid,
    commit: Oid,
    record: Record,
) -> Result<VerdictLine, NotesError> {
    let mut line = VerdictLine::new(repo, commit, record)?;
    line.change_patch_id = super::patch_id_between(repo, base, commit)?;
    super::write::append(repo, commit, &[line.to_value()])?;
    Ok(line)
}

/// Whether `tip` already carries the outcome `verdict` of a run from `base`: a line with
/// that verdict and the patch id of the run's whole change (with no base known, the verdict
/// in force being that one), so a stopped run marked again writes nothing new.
pub fn outcome_recorded(
    repo: &Repository,
    base: Option<Oid>,
    tip: Oid,
    verdict: Verdict,
) -> Result<bool, NotesError> {
    let lines = super::read(repo, tip)?;
    let Some(base) = base else {
        return Ok(super::effective(&lines).is_some_and(|e| e.verdict == verdict));
    };
    let change = super::patch_id_between(repo, base, tip)?;
    Ok(lines.iter().any(|l| {
        l.line.verdict() == Some(verdict)
            && l.line.value().and_then(|v| v.get("change_patch_id"))
                == change.as_ref().map(|c| Value::String(c.clone())).as_ref()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::canonical_json;

    #[test]
    fn every_kind_written_by_the_first_release_round_trips() {
        let fixtures = [
            include_str!("../../tests/fixtures/v1/notes.jsonl"),
            include_str!("../../tests/fixtures/v1/notes-halted.jsonl"),
        ];
        let mut kinds = std::collections::BTreeSet::new();
        for text in fixtures {
            for raw in text.lines().filter(|l| !l.trim().is_empty()) {
                let value: Value = serde_json::from_str(raw).unwrap();
                let line = VerdictLine::from_value(&value)
                    .unwrap_or_else(|| panic!("a stored line does not read: {raw}"));
                assert_eq!(
                    canonical_json(&line.to_value()),
                    raw,
                    "round trip changed it"
                );
                kinds.insert(match &line.record {
                    Record::Review(r) if r.stage_reviewed == "run" => "stop-mark",
                    Record::Review(_) => "review",
                    Record::Reconciliation(_) => "reconciliation",
                    Record::Override(_) => "override",
                });
            }
        }
        assert_eq!(
            kinds.into_iter().collect::<Vec<_>>(),
            ["override", "reconciliation", "review", "stop-mark"]
        );
    }
}
