//! A note line parsed once, into what every reader decides on: [`NoteLine`].
//!
//! The gate, `show`, `log`, the effective-verdict rules and reattaching all read lines
//! through [`read_note`]. A line is a valid known line when it is a JSON object with `"v":1`
//! (the integer), a known `kind`, a verdict word, no key written twice, and the fields a
//! decision rests on well typed; everything else it carries is display data, read leniently
//! ([`ReadLine`]). Any other line is [`NoteLine::Invalid`], with what is wrong and the
//! verdicts it mentions, so the gate can fail closed on it.
//!
//! A verdict word is ASCII and exact ([`exact_word`]): `"HALT"` or `"halt"`, never
//! `"ＨＡＬＴ"`, `"HA\u200dLT"`, `" HALT"` or a word with a byte that is not UTF-8 in it. A
//! line whose verdict field is anything else, or one record spread over lines that holds
//! another record inside it, says something no reader can decide on, and always blocks
//! ([`InvalidLine::fails_closed`]).

use std::cell::OnceCell;
use std::collections::HashSet;
use std::fmt;

use serde::Deserialize;
use serde_json::Value;

use super::format::{
    canonical_json, contains_word, each_string, entries, Entry, Json, FORMAT_VERSION,
    REATTACHED_FROM,
};
use crate::arbiter::{Coverage, Floor};
use crate::verdict::Verdict;

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

/// The kinds of line that carry a verdict on the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictKind {
    /// An arbiter's review (a stage, `git triad review --note`, a stopped run's tip).
    Review,
    /// The reconciliation of a finished run against its TaskSpec.
    Reconciliation,
}

impl VerdictKind {
    /// The `kind` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Review => "review",
            VerdictKind::Reconciliation => "reconciliation",
        }
    }
}

/// What every valid line has besides its decision fields. Its id and display fields are
/// worked out when first asked for: the pre-push gate decides most commits without either.
#[derive(Debug, Clone, PartialEq)]
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

    /// The commit it was copied from, if it is a copy (`reattached_from`).
    pub fn reattached_from(&self) -> Option<&str> {
        self.value.get(REATTACHED_FROM).and_then(Value::as_str)
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

/// A line that is not a valid line of a kind this build knows.
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidLine {
    /// The text, trimmed.
    pub text: String,
    /// What is wrong with it.
    pub problem: Problem,
    /// The verdicts it mentions anywhere (any case, escapes decoded), mildest first: the gate
    /// blocks on it when one of them is one the policy blocks.
    pub mentions: Vec<Verdict>,
    /// The patch ids it carries (`patch_id`, `change_patch_id`), when it is an object
    /// with them: a copy of its commit (cherry-pick, squash) is blocked by it as by the
    /// original.
    pub patch_ids: Vec<String>,
    /// A verdict field (`verdict`, `overrides`, also when written twice) whose value is not
    /// exactly a verdict word, as written: what it means cannot be told, so it blocks.
    pub odd_verdict: Option<String>,
}

impl InvalidLine {
    /// Whether the line blocks whatever the policy: text that is not JSON, a record
    /// spread over lines that holds another record, a verdict field that is not exactly a
    /// verdict word (or, on a line of a known kind, none at all). Other invalid lines block
    /// when they mention a verdict the policy blocks.
    pub fn fails_closed(&self) -> bool {
        self.odd_verdict.is_some()
            || match &self.problem {
                Problem::NotJson | Problem::SpansRecords(_) => true,
                Problem::Field { field, .. } => VERDICT_FIELDS.contains(field),
                _ => false,
            }
    }
}

/// The version of what [`read_note`] decides: bump it whenever a text reads differently (a
/// line valid before is not, a verdict reads otherwise), so summaries the pre-push gate kept
/// from an earlier build are not believed (`gate-cache`).
pub const READ_RULES: u32 = 2;

/// The fields a line's verdict is decided by.
const VERDICT_FIELDS: [&str; 2] = ["verdict", "overrides"];

/// The verdict `word` names when it is exactly a verdict word: ASCII, in any case, nothing
/// around it. A fullwidth `ＨＡＬＴ`, `HA\u200dLT`, a replacement character where a byte was
/// not UTF-8, or a blank around the word name none (and the line holding it blocks).
pub fn exact_word(word: &str) -> Option<Verdict> {
    Verdict::ALL
        .into_iter()
        .find(|v| v.as_str().eq_ignore_ascii_case(word))
}

/// What makes a line invalid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// It is not JSON at all: what it says is unknown, so it blocks whatever it mentions.
    NotJson,
    /// It is JSON, but not an object.
    NotAnObject,
    /// A key is written twice in one object.
    RepeatedKey(String),
    /// It has no `v`.
    NoVersion,
    /// Its `v` is not the integer 1 (as written: `"1"`, `1.0`, `2`).
    Version(String),
    /// It has no `kind`, or one that is not a string.
    NoKind,
    /// Its `kind` is not one this build knows (kinds are lowercase).
    Kind(String),
    /// One record spread over several lines holds, on a line of its own, another record
    /// (the line, trimmed): read as one, it would swallow the one inside.
    SpansRecords(String),
    /// A field a decision rests on is missing or of the wrong type.
    Field {
        /// The field.
        field: &'static str,
        /// What it should be.
        wanted: &'static str,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotJson => f.write_str("it is not JSON"),
            Problem::NotAnObject => f.write_str("it is not a JSON object"),
            Problem::RepeatedKey(k) => write!(f, "the key \"{k}\" is written twice"),
            Problem::NoVersion => f.write_str("it has no \"v\""),
            Problem::Version(v) => write!(
                f,
                "its \"v\" is {v}, and this git triad reads only the integer {FORMAT_VERSION}"
            ),
            Problem::NoKind => f.write_str("it has no \"kind\""),
            Problem::Kind(k) => write!(
                f,
                "its kind \"{k}\" is not review, reconciliation or override"
            ),
            Problem::SpansRecords(inner) => write!(
                f,
                "it is spread over several lines and holds another record: {inner}"
            ),
            Problem::Field { field, wanted } => write!(f, "its \"{field}\" is not {wanted}"),
        }
    }
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

    /// Reads one entry of a note.
    fn of(entry: Entry) -> NoteLine {
        match entry {
            Entry::NotJson(text) => {
                let mentions = mentioned(|f| f(&text));
                NoteLine::Invalid(InvalidLine {
                    text,
                    problem: Problem::NotJson,
                    mentions,
                    odd_verdict: None,
                    patch_ids: Vec::new(),
                })
            }
            Entry::Json(json) => match shape(&json) {
                Ok(shape) => shape.line(canonical_words(json.value)),
                Err(problem) => {
                    let odd_verdict = odd_verdict(&json);
                    let Json {
                        value,
                        dropped,
                        text,
                        ..
                    } = json;
                    let mentions = mentioned(|f| {
                        each_string(&value, f);
                        dropped.iter().for_each(|d| each_string(d, f));
                    });
                    let patch_ids = carried_patch_ids(&value)
                        .into_iter()
                        .map(str::to_string)
                        .collect();
                    NoteLine::Invalid(InvalidLine {
                        text,
                        problem,
                        mentions,
                        patch_ids,
                        odd_verdict,
                    })
                }
            },
        }
    }
}

/// The fields a line carries patch ids in: its commit's, and the run's whole change's.
const PATCH_ID_FIELDS: [&str; 2] = ["patch_id", "change_patch_id"];

/// The patch ids `value` carries, each once.
fn carried_patch_ids(value: &Value) -> Vec<&str> {
    let mut ids: Vec<&str> = PATCH_ID_FIELDS
        .iter()
        .filter_map(|k| value.get(*k).and_then(Value::as_str))
        .collect();
    ids.dedup();
    ids
}

/// The first verdict field of `json`'s object (a repeated one too) whose value is not
/// exactly a verdict word, as written.
fn odd_verdict(json: &Json) -> Option<String> {
    let fields = json
        .value
        .as_object()
        .into_iter()
        .chain(json.dropped.iter().filter_map(Value::as_object))
        .flat_map(|obj| VERDICT_FIELDS.iter().filter_map(|k| obj.get(*k)));
    fields
        .filter(|v| !matches!(v, Value::String(w) if exact_word(w).is_some()))
        .map(|v| v.to_string())
        .next()
}

/// The verdicts the strings `walk` feeds mention (as substrings, any case), mildest first.
fn mentioned(walk: impl FnOnce(&mut dyn FnMut(&str))) -> Vec<Verdict> {
    let mut found = [false; 4];
    walk(&mut |s: &str| {
        for (i, v) in Verdict::ALL.iter().enumerate() {
            found[i] |= contains_word(s, v.as_str());
        }
    });
    Verdict::ALL
        .into_iter()
        .zip(found)
        .filter_map(|(v, f)| f.then_some(v))
        .collect()
}

/// The decision fields of a valid line, read before its value is moved into it.
enum Shape {
    Verdict(VerdictKind, Verdict, String),
    Override(Verdict, String, Answers),
}

impl Shape {
    /// The line with `value` as its record.
    fn line(self, value: Value) -> NoteLine {
        let record = Stored::new(value);
        match self {
            Shape::Verdict(kind, verdict, ts) => NoteLine::Verdict(VerdictNote {
                kind,
                verdict,
                ts,
                record,
            }),
            Shape::Override(verdict, ts, answers) => NoteLine::Override(OverrideNote {
                verdict,
                ts,
                answers,
                record,
            }),
        }
    }
}

/// The decision fields of `json`, or why it is not a valid known line.
fn shape(json: &Json) -> Result<Shape, Problem> {
    if let Some(inner) = &json.spans {
        return Err(Problem::SpansRecords(inner.clone()));
    }
    let obj = json.value.as_object().ok_or(Problem::NotAnObject)?;
    if let Some(key) = &json.repeated {
        return Err(Problem::RepeatedKey(key.clone()));
    }
    match obj.get("v") {
        None => return Err(Problem::NoVersion),
        Some(Value::Number(n)) if n.as_u64() == Some(FORMAT_VERSION) => {}
        Some(other) => return Err(Problem::Version(other.to_string())),
    }
    let kind = match obj.get("kind") {
        Some(Value::String(k)) => k.as_str(),
        _ => return Err(Problem::NoKind),
    };
    let verdict_of = |field: &'static str| match obj.get(field) {
        Some(Value::String(w)) => exact_word(w).ok_or(Problem::Field {
            field,
            wanted: Verdict::choices(),
        }),
        _ => Err(Problem::Field {
            field,
            wanted: "a verdict word",
        }),
    };
    let ts = match obj.get("ts") {
        None => String::new(),
        Some(Value::String(ts)) => ts.clone(),
        Some(_) => {
            return Err(Problem::Field {
                field: "ts",
                wanted: "a string",
            })
        }
    };
    let not_ids = || Problem::Field {
        field: "answers",
        wanted: "a list of line ids",
    };
    match kind {
        "review" => Ok(Shape::Verdict(
            VerdictKind::Review,
            verdict_of("verdict")?,
            ts,
        )),
        "reconciliation" => Ok(Shape::Verdict(
            VerdictKind::Reconciliation,
            verdict_of("verdict")?,
            ts,
        )),
        "override" => {
            let verdict = verdict_of("verdict")?;
            let answers = match obj.get("answers") {
                Some(Value::Array(keys)) => Answers::Named(
                    keys.iter()
                        .map(|k| k.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(not_ids)?,
                ),
                Some(_) => return Err(not_ids()),
                None => Answers::Unnamed(verdict_of("overrides")?),
            };
            Ok(Shape::Override(verdict, ts, answers))
        }
        other => Err(Problem::Kind(other.to_string())),
    }
}

/// `value` with its verdict words canonical (`"Halt"` → `"HALT"`), as every reader sees them.
fn canonical_words(mut value: Value) -> Value {
    if let Some(obj) = value.as_object_mut() {
        for key in ["verdict", "overrides", "model_verdict"] {
            canonical_word(obj.get_mut(key));
        }
        if let Some(floor) = obj.get_mut("floor").and_then(Value::as_object_mut) {
            canonical_word(floor.get_mut("verdict"));
        }
    }
    value
}

fn canonical_word(field: Option<&mut Value>) {
    if let Some(Value::String(word)) = field {
        if let Some(v) = Verdict::from_word(word) {
            *word = v.as_str().to_string();
        }
    }
}

/// Reads a whole note: every line, in note order; the same text written twice (a record
/// copied to the same commit twice) is read once.
pub fn read_note(text: &str) -> Vec<NoteLine> {
    let mut seen = HashSet::new();
    entries(text)
        .into_iter()
        .filter(|e| match e {
            Entry::Json(j) => seen.insert(j.text.clone()),
            Entry::NotJson(t) => seen.insert(t.clone()),
        })
        .map(NoteLine::of)
        .collect()
}

/// A stored line's display fields as every reader shows them (`show`, the pre-push gate's
/// explanation, the rewrite copier). Lines written by git triad carry them all; a
/// hand-written line may leave most out, and a field of the wrong type reads as absent, so
/// a reader never falls back to poking at JSON by string keys.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadLine {
    /// `review`, `reconciliation` or `override`.
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// When it was written.
    #[serde(deserialize_with = "lenient")]
    pub ts: Option<String>,
    /// The commit it was written on.
    #[serde(deserialize_with = "lenient")]
    pub commit: Option<String>,
    /// That commit's patch id.
    #[serde(deserialize_with = "lenient")]
    pub patch_id: Option<String>,
    /// Its verdict (read in any case, see [`read_note`]).
    #[serde(deserialize_with = "lenient")]
    pub verdict: Option<Verdict>,
    /// What the model answered, when a floor raised it.
    #[serde(deserialize_with = "lenient")]
    pub model_verdict: Option<Verdict>,
    /// The floor the facts imposed.
    #[serde(deserialize_with = "lenient")]
    pub floor: Option<Floor>,
    /// What the issues that count support, with why, when it differs from what the model
    /// answered (a review lowered to what its evidence stands on).
    #[serde(deserialize_with = "lenient")]
    pub derived: Option<Floor>,
    /// The stage reviewed (`architect` … `verify`, `review`, `run`, `reconcile`).
    #[serde(deserialize_with = "lenient")]
    pub stage: Option<String>,
    /// Which attempt at the stage.
    #[serde(deserialize_with = "lenient")]
    pub attempt: Option<u64>,
    /// The arbiter.
    #[serde(deserialize_with = "lenient")]
    pub arbiter_model: Option<String>,
    /// The model reviewed.
    #[serde(deserialize_with = "lenient")]
    pub reviewed_model: Option<String>,
    /// The arbiter's confidence, 0–1.
    #[serde(deserialize_with = "lenient")]
    pub confidence: Option<f64>,
    /// The arbiter's reasoning.
    #[serde(deserialize_with = "lenient")]
    pub reasoning: Option<String>,
    /// The issues, each read as leniently as the line.
    #[serde(deserialize_with = "lenient")]
    pub issues: Option<Vec<ReadIssue>>,
    /// What the review saw: the files reviewed and those not reviewed, with why.
    #[serde(deserialize_with = "lenient")]
    pub coverage: Option<Coverage>,
    /// An override: the verdict it clears.
    #[serde(deserialize_with = "lenient")]
    pub overrides: Option<String>,
    /// An override: who wrote it.
    #[serde(deserialize_with = "lenient")]
    pub who: Option<String>,
    /// An override: why.
    #[serde(deserialize_with = "lenient")]
    pub reason: Option<String>,
    /// An override: the lines it answers.
    #[serde(deserialize_with = "lenient")]
    pub answers: Option<Vec<String>>,
    /// A copy: the commit it was copied from.
    #[serde(deserialize_with = "lenient")]
    pub reattached_from: Option<String>,
}

/// One issue of a [`ReadLine`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadIssue {
    /// `critical`, `warning`, `suggestion` (or a synonym).
    #[serde(deserialize_with = "lenient")]
    pub severity: Option<String>,
    /// What kind of defect.
    #[serde(deserialize_with = "lenient")]
    pub category: Option<String>,
    /// The file.
    #[serde(deserialize_with = "lenient")]
    pub path: Option<String>,
    /// First line.
    #[serde(deserialize_with = "lenient")]
    pub start_line: Option<u64>,
    /// Last line.
    #[serde(deserialize_with = "lenient")]
    pub end_line: Option<u64>,
    /// The enclosing symbol.
    #[serde(deserialize_with = "lenient")]
    pub symbol: Option<ReadSymbol>,
    /// What is wrong.
    #[serde(deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The lines the model quoted (what pins a finding to code wherever it moves).
    #[serde(deserialize_with = "lenient")]
    pub quote: Option<String>,
    /// Why the finding does not count toward the verdict (its quote is not in the file, its
    /// probe passes, a person overrode it before), when it does not.
    #[serde(deserialize_with = "lenient")]
    pub demoted: Option<String>,
}

impl ReadIssue {
    /// How serious, most serious first (seed 000: critical, warning, suggestion; common
    /// synonyms ranked alike; unknown last).
    pub fn rank(&self) -> u8 {
        match self
            .severity
            .as_deref()
            .unwrap_or("")
            .to_ascii_lowercase()
            .as_str()
        {
            "critical" | "blocker" | "error" | "high" => 0,
            "warning" | "major" | "medium" => 1,
            "suggestion" | "minor" | "low" | "info" => 2,
            _ => 3,
        }
    }

    /// Whether it counts toward the verdict (it was not demoted).
    pub fn counts(&self) -> bool {
        self.demoted.is_none()
    }

    /// Where it is: `path:line`, the path alone, or `(no file)`.
    pub fn place(&self) -> String {
        match (&self.path, self.start_line) {
            (Some(p), Some(l)) => format!("{p}:{l}"),
            (Some(p), None) => p.to_string(),
            _ => "(no file)".into(),
        }
    }
}

/// The enclosing symbol of a [`ReadIssue`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadSymbol {
    /// `function`, `class`, …
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// A field that reads as `None` when absent, null or of another type.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

impl ReadLine {
    /// Reads a stored line's display fields; a value that is not an object reads as a line
    /// with no fields.
    pub fn of(line: &Value) -> ReadLine {
        ReadLine::deserialize(line).unwrap_or_default()
    }

    /// Whether it is a human override.
    pub fn is_override(&self) -> bool {
        self.kind.as_deref() == Some("override")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> NoteLine {
        let mut lines = read_note(text);
        assert_eq!(lines.len(), 1, "{lines:?}");
        lines.remove(0)
    }

    fn problem(text: &str) -> (Problem, Vec<Verdict>) {
        match one(text) {
            NoteLine::Invalid(i) => (i.problem, i.mentions),
            valid => panic!("read as valid: {valid:?}"),
        }
    }

    #[test]
    fn verdict_words_a_bom_and_a_spread_object_read_as_written_by_git_triad() {
        let text = "\u{feff}{\"v\":1,\"kind\":\"review\",\"ts\":\"t1\",\"verdict\":\"halt\"}\n\
                    {\n  \"v\": 1,\n  \"kind\": \"override\",\n  \"ts\": \"t2\",\n  \"verdict\": \"Approve\",\n  \"overrides\": \"hAlT\"\n}\n";
        let lines = read_note(text);
        let [NoteLine::Verdict(v), NoteLine::Override(o)] = &lines[..] else {
            panic!("{lines:?}")
        };
        assert_eq!((v.kind, v.verdict), (VerdictKind::Review, Verdict::Halt));
        assert_eq!(v.record.value["verdict"], "HALT");
        assert_eq!(o.verdict, Verdict::Approve);
        assert_eq!(o.answers, Answers::Unnamed(Verdict::Halt));
        assert_eq!(v.legacy_key(), "t1 review HALT");
    }

    #[test]
    fn unknown_shapes_are_invalid_and_say_what_they_mention() {
        let cases = [
            (
                r#"{"v":1,"kind":"Review","verdict":"HALT"}"#,
                "kind \"Review\"",
            ),
            (
                r#"{"v":"1","kind":"review","verdict":"HALT"}"#,
                "\"v\" is \"1\"",
            ),
            (
                r#"{"v":1.0,"kind":"review","verdict":"HALT"}"#,
                "\"v\" is 1.0",
            ),
            (r#"{"v":2,"kind":"review","verdict":"HALT"}"#, "\"v\" is 2"),
            (r#"{"kind":"review","verdict":"HALT"}"#, "no \"v\""),
            (
                r#"{"v":1,"kind":"review","verdict":"HALT","verdict":"APPROVE"}"#,
                "\"verdict\" is written twice",
            ),
            (r#"{"v":1,"kind":"review","verdict":"STOP"}"#, "\"verdict\""),
            (r#"["HALT"]"#, "not a JSON object"),
            ("verdict: HALT", "not JSON"),
        ];
        for (text, says) in cases {
            let (p, mentions) = problem(text);
            assert!(p.to_string().contains(says), "{text}: {p}");
            if text.contains("HALT") {
                assert!(mentions.contains(&Verdict::Halt), "{text}");
            }
        }
        // An escape hides nothing, and a repeated key hides nothing either.
        let (_, m) = problem(r#"{"v":2,"kind":"review","verdict":"\u0048alt"}"#);
        assert_eq!(m, [Verdict::Halt]);
        let (_, m) = problem(r#"{"v":1,"kind":"review","verdict":"APPROVE","verdict":"HALT"}"#);
        assert_eq!(m, [Verdict::Approve, Verdict::Halt]);
        let (p, _) = problem(r#"{"v":1,"kind":"override","verdict":"APPROVE","answers":"x"}"#);
        assert!(matches!(
            p,
            Problem::Field {
                field: "answers",
                ..
            }
        ));
    }

    #[test]
    fn ids_ignore_where_a_line_was_copied_and_read_once() {
        let line = r#"{"v":1,"kind":"review","ts":"t","verdict":"FLAG"}"#;
        let copy = r#"{"v":1,"kind":"review","ts":"t","verdict":"flag","reattached_from":"abc"}"#;
        let (a, b) = (one(line), one(copy));
        assert_eq!(a.id(), b.id());
        assert!(LineId::looks_like(a.id().unwrap().as_str()));
        // The id is git's blob id of the canonical line.
        let canonical = r#"{"kind":"review","ts":"t","v":1,"verdict":"FLAG"}"#;
        let blob = git2::Oid::hash_object(git2::ObjectType::Blob, canonical.as_bytes()).unwrap();
        assert_eq!(a.id().unwrap().as_str(), blob.to_string());
        assert_eq!(read_note(&format!("{line}\n{line}\n{copy}\n")).len(), 2);
    }

    #[test]
    fn display_fields_of_full_and_hand_written_lines() {
        let full = include_str!("../../tests/fixtures/v1/notes.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["kind"] == "review")
            .unwrap();
        let read = ReadLine::of(&full);
        assert_eq!(read.kind.as_deref(), Some("review"));
        assert!(read.verdict.is_some() && read.arbiter_model.is_some() && read.issues.is_some());
        let hand = one(
            r#"{"v":1,"kind":"review","verdict":"HALT","attempt":"two","issues":[{"path":7}]}"#,
        );
        let read = hand.fields();
        assert_eq!(read.verdict, Some(Verdict::Halt));
        assert_eq!(
            read.attempt, None,
            "a field of the wrong type reads as absent"
        );
        assert_eq!(read.issues.unwrap()[0].path, None);
        assert_eq!(ReadLine::of(&Value::Null), ReadLine::default());
    }
}
