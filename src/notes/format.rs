//! The wire format of a verdict note: canonical JSON out, and the text of a note cut into
//! JSON objects read strictly (a key that appears twice is noticed, never silently merged).
//!
//! What the objects mean is [`super::line`]'s question.

use std::cell::RefCell;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The only line format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// The field a copied line carries: the commit it was copied from.
pub const REATTACHED_FROM: &str = "reattached_from";

/// Serializes `v` as canonical JSON: object keys sorted (by bytes) at every depth, no
/// whitespace, so equal records are equal lines and `cat_sort_uniq` can merge them; every
/// character a terminal would obey is a `\u` escape (`git log --notes` prints notes raw).
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    crate::safe::json(&out).into_owned()
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                // A string always serializes; serde_json escapes control characters, so a
                // canonical line never contains a raw newline.
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The byte order mark an editor may put at the start of a note (or of a line pasted in).
const BOM: char = '\u{feff}';

/// Most lines one record may be spread over before the text counts as unreadable.
const MAX_RECORD_LINES: usize = 200;

/// One JSON value of a note, read strictly.
#[derive(Debug, Clone, PartialEq)]
pub struct Json {
    /// The value; of a key written twice, the first value.
    pub value: Value,
    /// The first key written twice in one object (at any depth), if any: such a line says
    /// two things at once, and no reader may pick one.
    pub repeated: Option<String>,
    /// The values of repeated keys that [`Json::value`] does not hold, so that what a line
    /// mentions is judged on everything it says.
    pub dropped: Vec<Value>,
    /// The text it was read from, trimmed (several lines for a spread-out object).
    pub text: String,
    /// For an object spread over several lines: the first of its lines (trimmed) that on
    /// its own is a record ([`is_record`]). Read as one, the spread object would swallow it.
    pub spans: Option<String>,
}

/// One entry of a note's text.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// A JSON value (usually an object: a record).
    Json(Json),
    /// A line (or run of lines) that is not JSON at all: a hand edit gone wrong, or worse.
    NotJson(String),
}

/// Cuts a note's text into entries, as every reader does: a byte order mark is ignored,
/// blank lines are skipped, and one JSON object may be spread over several lines (the
/// shortest run of lines that reads as one; at most [`MAX_RECORD_LINES`]).
pub fn entries(text: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        match read_json(line) {
            None => continue,
            Some(Ok(json)) => out.push(Entry::Json(json)),
            Some(Err(())) => {
                let start = line.trim_start_matches(BOM).trim_start();
                let spread = start.starts_with('{').then(|| {
                    (i..lines.len().min(i - 1 + MAX_RECORD_LINES)).find_map(|end| {
                        match read_json(&lines[i - 1..=end].join("\n")) {
                            Some(Ok(json)) => Some((json, end + 1)),
                            _ => None,
                        }
                    })
                });
                match spread.flatten() {
                    Some((mut json, next)) => {
                        json.spans = lines[i..next]
                            .iter()
                            .find(|l| is_record(l))
                            .map(|l| l.trim().to_string());
                        i = next;
                        out.push(Entry::Json(json));
                    }
                    None => out.push(Entry::NotJson(line.trim().to_string())),
                }
            }
        }
    }
    out
}

/// `text` read strictly as JSON (a byte order mark aside); `None` for blank text.
fn read_json(text: &str) -> Option<Result<Json, ()>> {
    let text = text.trim().trim_start_matches(BOM).trim();
    if text.is_empty() {
        return None;
    }
    let seen = Seen::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let value = match Seed(&seen).deserialize(&mut de).and_then(|v| {
        de.end()?;
        Ok(v)
    }) {
        Ok(v) => v,
        Err(_) => return Some(Err(())),
    };
    Some(Ok(Json {
        value,
        repeated: seen.repeated.into_inner(),
        dropped: seen.dropped.into_inner(),
        text: text.to_string(),
        spans: None,
    }))
}

/// Whether `line` on its own is a record: a JSON object with a `v`, a `kind` or a
/// `verdict`.
fn is_record(line: &str) -> bool {
    matches!(read_json(line), Some(Ok(Json { value: Value::Object(obj), .. }))
        if ["v", "kind", "verdict"].iter().any(|k| obj.contains_key(*k)))
}

/// What the strict reader noticed on the way.
#[derive(Default)]
struct Seen {
    repeated: RefCell<Option<String>>,
    dropped: RefCell<Vec<Value>>,
}

/// Reads any JSON value into a [`Value`], noting keys written twice in [`Seen`].
struct Seed<'s>(&'s Seen);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Seed(self.0))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Seed(self.0))?;
            if out.contains_key(&key) {
                self.0.repeated.borrow_mut().get_or_insert(key.clone());
                // The key itself is kept with what it said, so nothing it says is lost.
                let mut pair = Map::new();
                pair.insert(key, value);
                self.0.dropped.borrow_mut().push(Value::Object(pair));
            } else {
                out.insert(key, value);
            }
        }
        Ok(Value::Object(out))
    }
}

/// Whether `text` contains `word`, ASCII case ignored.
pub fn contains_word(text: &str, word: &str) -> bool {
    let (t, w) = (text.as_bytes(), word.as_bytes());
    !w.is_empty() && t.windows(w.len()).any(|win| win.eq_ignore_ascii_case(w))
}

/// Calls `f` on every string of `v` (object keys too), at every depth.
pub fn each_string(v: &Value, f: &mut dyn FnMut(&str)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter().for_each(|i| each_string(i, f)),
        Value::Object(map) => {
            for (k, v) in map {
                f(k);
                each_string(v, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_sorts_keys_at_every_depth() {
        let v = json!({"z": 1, "a": {"y": [ {"b": 2, "a": 1} ], "x": null}, "m": "é\n"});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"x":null,"y":[{"a":1,"b":2}]},"m":"é\n","z":1}"#
        );
    }

    #[test]
    fn a_bom_a_spread_object_and_text_that_is_not_json() {
        let text = "\u{feff}{\"v\":1}\n\n{\n  \"v\": 1,\n  \"kind\": \"x\"\n}\nnot json at all\n";
        let e = entries(text);
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(matches!(&e[1], Entry::Json(j) if j.value["kind"] == "x"));
        assert_eq!(e[2], Entry::NotJson("not json at all".into()));
        // An object that never closes is not JSON, and hides nothing after it.
        let e = entries("{\"v\":1,\n{\"v\":2}\n");
        assert!(matches!(&e[..], [Entry::NotJson(_), Entry::Json(j)] if j.value["v"] == 2));
        // One that closes after a record of its own holds it, and says so.
        let e = entries("{\"v\":1,\"x\":\n {\"v\":1,\"verdict\":\"HALT\"}\n}\n");
        assert!(
            matches!(&e[..], [Entry::Json(j)] if j.spans.as_deref() == Some("{\"v\":1,\"verdict\":\"HALT\"}")),
            "{e:?}"
        );
        assert!(matches!(&entries(text)[1], Entry::Json(j) if j.spans.is_none()));
    }

    #[test]
    fn a_key_written_twice_is_noticed_with_both_values() {
        let e = entries(r#"{"v":1,"a":{"verdict":"HALT","verdict":"APPROVE"}}"#);
        let [Entry::Json(j)] = &e[..] else {
            panic!("{e:?}")
        };
        assert_eq!(j.repeated.as_deref(), Some("verdict"));
        assert_eq!(j.value["a"]["verdict"], "HALT");
        assert_eq!(j.dropped, [json!({"verdict": "APPROVE"})]);
        // Numbers keep their type: 1.0 is not the integer 1.
        let e = entries(r#"{"v":1.0}"#);
        assert!(matches!(&e[..], [Entry::Json(j)] if j.value["v"].as_u64().is_none()));
        let mut words = Vec::new();
        each_string(&json!({"k": ["HALT", {"x": "y"}]}), &mut |s| {
            words.push(s.to_string())
        });
        assert_eq!(words, ["k", "HALT", "x", "y"]);
    }
}
