//! Reading text into a [`NoteLine`]: the strict rules that decide whether a line is valid,
//! and what is wrong with one that is not.
//!
//! A verdict word is ASCII and exact ([`exact_word`]): `"HALT"` or `"halt"`, never
//! `"ＨＡＬＴ"`, `"HA\u200dLT"`, `" HALT"` or a word with a byte that is not UTF-8 in it. A
//! line whose verdict field is anything else, or one record spread over lines that holds
//! another record inside it, says something no reader can decide on, and always blocks
//! ([`InvalidLine::fails_closed`]). A line a writer builds passes the same rules
//! ([`NoteLine::of_value`]).

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

use super::kind::{LineKind, VerdictKind};
use super::{carried_patch_ids, Answers, NoteLine, OverrideNote, Stored, VerdictNote};
use crate::notes::format::{
    canonical_json, contains_word, each_string, entries, Entry, Json, FORMAT_VERSION,
};
use crate::verdict::Verdict;

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

impl fmt::Display for InvalidLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "not a valid note line ({}): {}", self.problem, self.text)
    }
}

impl std::error::Error for InvalidLine {}

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
    /// The text given as one line holds no record, or several (how many).
    Records(usize),
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
            Problem::Kind(k) => {
                let [rest @ .., last] = LineKind::NAMES;
                write!(f, "its kind \"{k}\" is not {} or {last}", rest.join(", "))
            }
            Problem::SpansRecords(inner) => write!(
                f,
                "it is spread over several lines and holds another record: {inner}"
            ),
            Problem::Records(0) => f.write_str("it holds no record"),
            Problem::Records(n) => write!(f, "it holds {n} records, not one"),
            Problem::Field { field, wanted } => write!(f, "its \"{field}\" is not {wanted}"),
        }
    }
}

impl NoteLine {
    /// Parses the text of one line (a record spread over several lines, as a hand edit may
    /// leave it, too): the valid line it is, or why it is refused. Reading a whole note,
    /// where refused lines are kept for the gate, is [`read_note`].
    pub fn parse(text: &str) -> Result<NoteLine, Box<InvalidLine>> {
        let mut all = entries(text);
        if all.len() != 1 {
            return Err(Box::new(InvalidLine {
                text: text.trim().to_string(),
                problem: Problem::Records(all.len()),
                mentions: mentioned(|f| f(text)),
                patch_ids: Vec::new(),
                odd_verdict: None,
            }));
        }
        match NoteLine::of(all.remove(0)) {
            NoteLine::Invalid(bad) => Err(Box::new(bad)),
            line => Ok(line),
        }
    }

    /// The line a record `value` makes, by the rules text is read by (its verdict words made
    /// canonical): how a writer's line is checked before it is stored.
    pub(super) fn of_value(value: Value) -> Result<NoteLine, Box<InvalidLine>> {
        let json = Json {
            text: canonical_json(&value),
            value,
            repeated: None,
            dropped: Vec::new(),
            spans: None,
        };
        match NoteLine::of(Entry::Json(json)) {
            NoteLine::Invalid(bad) => Err(Box::new(bad)),
            line => Ok(line),
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
    match LineKind::parse(kind).ok_or_else(|| Problem::Kind(kind.to_string()))? {
        LineKind::Review => Ok(Shape::Verdict(
            VerdictKind::Review,
            verdict_of("verdict")?,
            ts,
        )),
        LineKind::Reconciliation => Ok(Shape::Verdict(
            VerdictKind::Reconciliation,
            verdict_of("verdict")?,
            ts,
        )),
        LineKind::Override => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::LineId;

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
}
