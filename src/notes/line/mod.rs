//! A line of a verdict note: the one type git triad writes lines as and reads them into,
//! [`NoteLine`].
//!
//! A valid line is a JSON object with `"v":1` (the integer), a known `kind`, a verdict word,
//! no key written twice, and the fields a decision rests on well typed; everything else it
//! carries is display data, read leniently ([`ReadLine`]). Writing and reading meet in the
//! same checks: a writer builds the line from the record of its kind ([`Record`],
//! [`NoteLine::written`]), a reader parses text ([`NoteLine::parse`], [`read_note`]), and
//! both go through [`parse`]'s rules, so what is written reads back as the same line and its
//! text ([`Stored::text`]) is the same bytes. Text that is not a valid line is refused with
//! what is wrong ([`InvalidLine`]); in a whole note it is kept, in note order, as
//! [`NoteLine::Invalid`], so the gate can fail closed on it.
//!
//! The modules answer one question each: what a line is and what every reader asks of it
//! (here), how text is read into one ([`parse`]), what a writer puts in one ([`record`]), and
//! the display fields read leniently from one ([`fields`]).

use std::cell::OnceCell;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::format::{canonical_json, REATTACHED_FROM};
use crate::arbiter::ArbiterReview;
use crate::verdict::Verdict;

mod fields;
mod kind;
mod parse;
mod record;
#[cfg(test)]
mod tests;

pub use fields::{ReadIssue, ReadLine, ReadSymbol};
pub use kind::VerdictKind;
pub use parse::{exact_word, read_note, InvalidLine, Problem, READ_RULES};
pub use record::{Head, OverrideRecord, ReconciliationRecord, Record, ReviewRecord};

/// A line's id: the git blob id (SHA-1) of its canonical JSON without `reattached_from`, so
/// a copy of a line on another commit has the id of the original. An override names the
/// lines it answers by these ids; `git triad show` prints them, and
/// `printf %s '<canonical line>' | git hash-object --stdin` computes one.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LineId(String);

impl LineId {
    /// The id of the record `value` (verdict words as read, see [`read_note`]).
    pub fn of(value: &Value) -> LineId {
        let text = canonical_json(&without_reattached(value));
        // Hashing bytes as a blob cannot fail.
        let oid = git2::Oid::hash_object(git2::ObjectType::Blob, text.as_bytes())
            .map_or_else(|_| String::new(), |o| o.to_string());
        LineId(oid)
    }

    /// The id as 40 hex digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `text` has the shape of an id (40 hex digits), as opposed to the
    /// `"<ts> <kind> <verdict>"` key older overrides name lines by.
    pub fn looks_like(text: &str) -> bool {
        text.len() == 40 && text.bytes().all(|b| b.is_ascii_hexdigit())
    }
}

impl fmt::Display for LineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `line` without its `reattached_from` field: the identity of a record wherever it is attached.
pub fn without_reattached(line: &Value) -> Value {
    let mut line = line.clone();
    if let Some(obj) = line.as_object_mut() {
        obj.remove(REATTACHED_FROM);
    }
    line
}

/// A copy of `line` marked as copied from commit `from`.
pub fn reattached(line: &Value, from: &str) -> Value {
    let mut line = line.clone();
    if let Some(obj) = line.as_object_mut() {
        obj.insert(REATTACHED_FROM.into(), Value::String(from.into()));
    }
    line
}

/// One line of a verdict note, parsed once.
#[derive(Debug, Clone, PartialEq)]
pub enum NoteLine {
    /// A review or reconciliation: a verdict on the change.
    Verdict(VerdictNote),
    /// A person overruling verdicts it names.
    Override(OverrideNote),
    /// Not a valid line of a kind this build knows.
    Invalid(InvalidLine),
}

/// What every valid line has besides its decision fields. Its id and display fields are
/// worked out when first asked for: the pre-push gate decides most commits without either;
/// two records are equal when their values are, whatever was worked out of either.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The record as stored, verdict words canonical: what is copied and printed as JSON.
    pub value: Value,
    id: OnceCell<LineId>,
    fields: OnceCell<ReadLine>,
}

impl Stored {
    /// The record `value` (verdict words already canonical).
    fn new(value: Value) -> Stored {
        Stored {
            value,
            id: OnceCell::new(),
            fields: OnceCell::new(),
        }
    }

    /// Its id ([`LineId`]).
    pub fn id(&self) -> &LineId {
        self.id.get_or_init(|| LineId::of(&self.value))
    }

    /// Its display fields, read leniently.
    pub fn fields(&self) -> &ReadLine {
        self.fields.get_or_init(|| ReadLine::of(&self.value))
    }

    /// The record as stored: its canonical JSON, the bytes of its line in the note.
    pub fn text(&self) -> String {
        canonical_json(&self.value)
    }

    /// The commit it was copied from, if it is a copy (`reattached_from`).
    pub fn reattached_from(&self) -> Option<&str> {
        self.value.get(REATTACHED_FROM).and_then(Value::as_str)
    }
}

impl PartialEq for Stored {
    fn eq(&self, other: &Stored) -> bool {
        self.value == other.value
    }
}

/// A review or reconciliation line.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictNote {
    /// Which kind.
    pub kind: VerdictKind,
    /// The verdict it records.
    pub verdict: Verdict,
    /// When it was written (empty when a hand-written line leaves it out).
    pub ts: String,
    /// The rest of it.
    pub record: Stored,
}

impl VerdictNote {
    /// The review a review line records, read into the arbiter's own type; `None` for a
    /// reconciliation, or a hand-written line that does not carry a whole review.
    pub fn review(&self) -> Option<ArbiterReview> {
        match self.kind {
            VerdictKind::Review => ArbiterReview::deserialize(&self.record.value).ok(),
            VerdictKind::Reconciliation => None,
        }
    }

    /// The key overrides written before line ids named it by: `"<ts> <kind> <verdict>"`.
    pub fn legacy_key(&self) -> String {
        format!("{} {} {}", self.ts, self.kind.as_str(), self.verdict)
    }
}

/// An override line.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideNote {
    /// The verdict the person sets.
    pub verdict: Verdict,
    /// When it was written.
    pub ts: String,
    /// Which lines it answers.
    pub answers: Answers,
    /// The rest of it.
    pub record: Stored,
}

/// How an override says which lines it answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Answers {
    /// The lines it names: by [`LineId`], or, as git triad wrote them before ids, by
    /// [`VerdictNote::legacy_key`].
    Named(Vec<String>),
    /// Written before overrides named lines: only the verdict it cleared. Such an override
    /// never clears a HALT (time would be all that orders it above one); see
    /// [`super::effective`].
    Unnamed(Verdict),
}

impl NoteLine {
    /// The stored record of a valid line.
    pub fn stored(&self) -> Option<&Stored> {
        match self {
            NoteLine::Verdict(v) => Some(&v.record),
            NoteLine::Override(o) => Some(&o.record),
            NoteLine::Invalid(_) => None,
        }
    }

    /// The id of a valid line.
    pub fn id(&self) -> Option<&LineId> {
        self.stored().map(Stored::id)
    }

    /// The record of a valid line as stored.
    pub fn value(&self) -> Option<&Value> {
        self.stored().map(|s| &s.value)
    }

    /// The display fields of a valid line; empty ones for an invalid line.
    pub fn fields(&self) -> ReadLine {
        self.stored()
            .map(|s| s.fields().clone())
            .unwrap_or_default()
    }

    /// When it was written (empty when unknown).
    pub fn ts(&self) -> &str {
        match self {
            NoteLine::Verdict(v) => &v.ts,
            NoteLine::Override(o) => &o.ts,
            NoteLine::Invalid(_) => "",
        }
    }

    /// The patch ids the line carries (an invalid line's too): its commit's
    /// (`patch_id`), and on a run's outcome that of the run's whole change
    /// (`change_patch_id`), by which a squash of the run is found.
    pub fn patch_ids(&self) -> Vec<&str> {
        match self {
            NoteLine::Invalid(bad) => bad.patch_ids.iter().map(String::as_str).collect(),
            _ => self
                .stored()
                .map(|s| carried_patch_ids(&s.value))
                .unwrap_or_default(),
        }
    }

    /// The verdict it records (a verdict line's or an override's).
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            NoteLine::Verdict(v) => Some(v.verdict),
            NoteLine::Override(o) => Some(o.verdict),
            NoteLine::Invalid(_) => None,
        }
    }
}

/// The fields a line carries patch ids in: its commit's, and the run's whole change's.
const PATCH_ID_FIELDS: [&str; 2] = ["patch_id", "change_patch_id"];

/// The patch ids `value` carries, each once.
pub(super) fn carried_patch_ids(value: &Value) -> Vec<&str> {
    let mut ids: Vec<&str> = PATCH_ID_FIELDS
        .iter()
        .filter_map(|k| value.get(*k).and_then(Value::as_str))
        .collect();
    ids.dedup();
    ids
}
