//! The line format of a verdict note: canonical JSON, parsing, the effective verdict.

use std::collections::HashSet;

use serde_json::Value;

/// The only line format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// The record kinds this build understands; lines of other kinds are skipped.
pub const KINDS: &[&str] = &["review", "reconciliation", "override"];

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

/// Parses one note line; `None` for blank lines, invalid JSON, an unknown `v` or kind.
pub fn parse_line(line: &str) -> Option<Value> {
    match read_value(line)? {
        Ok(value) => record_of(value),
        Err(_) => None,
    }
}

/// A note as read: its records, and the text that could not be read as JSON at all.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadNote {
    /// The known records in note order, identical ones once, verdict words canonical.
    pub records: Vec<Value>,
    /// Lines (or runs of lines) that are not JSON: a hand edit gone wrong, or worse. The
    /// pre-push gate blocks a commit whose note has one, since it cannot tell what it says.
    pub unreadable: Vec<String>,
}

/// Reads a whole note, as every reader does: a byte order mark is ignored, one JSON object
/// may be spread over several lines, and verdict words are read whatever their case
/// (`"halt"` is HALT). Lines of another format version or kind, and JSON that is not an
/// object, are skipped (a newer git triad may write them); text that is not JSON at all is
/// kept in [`ReadNote::unreadable`].
pub fn read_note(text: &str) -> ReadNote {
    let mut note = ReadNote::default();
    let mut seen = HashSet::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let value = match read_value(line) {
            None => continue,
            Some(Ok(v)) => v,
            Some(Err(_)) => {
                // An object spread over several lines: the shortest run that reads as one.
                let start = line.trim_start_matches(BOM).trim_start();
                let spread = start.starts_with('{').then(|| {
                    (i..lines.len().min(i - 1 + MAX_RECORD_LINES)).find_map(|end| {
                        let joined = lines[i - 1..=end].join("\n");
                        match read_value(&joined) {
                            Some(Ok(v)) => Some((v, end + 1)),
                            _ => None,
                        }
                    })
                });
                match spread.flatten() {
                    Some((v, next)) => {
                        i = next;
                        v
                    }
                    None => {
                        note.unreadable.push(line.trim().to_string());
                        continue;
                    }
                }
            }
        };
        if let Some(record) = record_of(value) {
            if seen.insert(canonical_json(&record)) {
                note.records.push(record);
            }
        }
    }
    note
}

/// Parses a whole note: the known records in note order, identical records only once (see
/// [`read_note`], whose unreadable lines this drops).
pub fn parse_note(text: &str) -> Vec<Value> {
    read_note(text).records
}

/// The JSON of `text` without a byte order mark; `None` for blank text.
fn read_value(text: &str) -> Option<Result<Value, serde_json::Error>> {
    let text = text.trim().trim_start_matches(BOM).trim();
    (!text.is_empty()).then(|| serde_json::from_str(text))
}

/// `value` as a record of this format with its verdict words canonical, or `None` when it
/// is no record of this build (not an object, another `v`, an unknown kind).
fn record_of(mut value: Value) -> Option<Value> {
    let obj = value.as_object_mut()?;
    if obj.get("v").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return None;
    }
    let kind = obj.get("kind").and_then(Value::as_str)?;
    if !KINDS.contains(&kind) {
        return None;
    }
    for key in ["verdict", "overrides", "model_verdict"] {
        canonical_verdict(obj.get_mut(key));
    }
    if let Some(floor) = obj.get_mut("floor").and_then(Value::as_object_mut) {
        canonical_verdict(floor.get_mut("verdict"));
    }
    Some(value)
}

/// Writes a verdict word in any case as the canonical one (`"Halt"` → `"HALT"`).
fn canonical_verdict(field: Option<&mut Value>) {
    if let Some(Value::String(word)) = field {
        if let Some(v) = VERDICTS
            .iter()
            .find(|v| v.eq_ignore_ascii_case(word.trim()))
        {
            *word = (*v).to_string();
        }
    }
}

/// Whether `text` contains `word`, ASCII case ignored.
pub fn contains_word(text: &str, word: &str) -> bool {
    let (t, w) = (text.as_bytes(), word.as_bytes());
    !w.is_empty() && t.windows(w.len()).any(|win| win.eq_ignore_ascii_case(w))
}

/// A string field of a record, if present.
pub fn str_field<'a>(line: &'a Value, key: &str) -> Option<&'a str> {
    line.get(key).and_then(Value::as_str)
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

/// The verdict in force for a commit and the record that set it.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// `APPROVE`, `FLAG`, `REJECT` or `HALT`.
    pub verdict: String,
    /// The record the verdict comes from (a review, reconciliation or override line).
    pub line: Value,
}

/// The field of an override line listing the verdict lines it answers ([`answer_key`]).
pub const ANSWERS: &str = "answers";

/// The verdicts a record may carry, mildest first.
const VERDICTS: [&str; 4] = ["APPROVE", "FLAG", "REJECT", "HALT"];

/// How serious a verdict is (`APPROVE` 0 … `HALT` 3); `None` for anything else.
fn severity(verdict: &str) -> Option<usize> {
    VERDICTS.iter().position(|v| *v == verdict)
}

/// The known verdict of a record, if it carries one.
fn verdict_of(line: &Value) -> Option<&str> {
    str_field(line, "verdict").filter(|v| severity(v).is_some())
}

/// How an override names a review or reconciliation line it answers: `"<ts> <kind> <verdict>"`
/// of that line, e.g. `"2026-01-01T00:00:00.000Z review HALT"`. `None` for overrides and for
/// lines without a known verdict, which nothing answers.
///
/// The key survives `reattached_from` copies and the union merge of notes, and it names a
/// line by the fields that decide the verdict, so a line forged later with another `ts` or
/// verdict is never answered by an override written before it.
pub fn answer_key(line: &Value) -> Option<String> {
    let kind = str_field(line, "kind").filter(|k| *k == "review" || *k == "reconciliation")?;
    Some(format!(
        "{} {kind} {}",
        str_field(line, "ts").unwrap_or(""),
        verdict_of(line)?
    ))
}

/// Whether override `o` answers the review or reconciliation line `line` (key `key`).
///
/// An override with an `answers` list answers exactly the lines it names. An override
/// written before that field existed (no `answers`) answers every line whose verdict is the
/// one it names in `overrides` and whose `ts` is not later than the override's own `ts`:
/// what was in force when it was written, never a verdict recorded after it.
fn answers(o: &Value, line: &Value, key: &str) -> bool {
    match o.get(ANSWERS) {
        Some(Value::Array(keys)) => keys.iter().any(|k| k.as_str() == Some(key)),
        Some(_) => false,
        None => {
            str_field(o, "overrides").is_some()
                && str_field(o, "overrides") == verdict_of(line)
                && str_field(line, "ts").unwrap_or("") <= str_field(o, "ts").unwrap_or("")
        }
    }
}

/// The review and reconciliation lines of a commit's records that an override answers, each
/// with the override that answers it.
pub fn answered(lines: &[Value]) -> Vec<(&Value, &Value)> {
    let overrides: Vec<&Value> = lines
        .iter()
        .filter(|l| str_field(l, "kind") == Some("override") && verdict_of(l).is_some())
        .collect();
    lines
        .iter()
        .filter_map(|l| {
            let key = answer_key(l)?;
            let o = overrides.iter().find(|o| answers(o, l, &key))?;
            Some((l, *o))
        })
        .collect()
}

/// The effective verdict of a commit's records.
///
/// The worst verdict (HALT > REJECT > FLAG > APPROVE) among the review and reconciliation
/// lines that no override answers (see [`answers`]); among equals the latest by `ts`, then
/// the later line. When every such line is answered, the latest override's verdict (by
/// `ts`, then position). Timestamps therefore never let one review shadow another: a line
/// dated in the future cannot hide a HALT, only an override naming that HALT clears it.
/// Records without a known verdict are ignored.
pub fn effective(lines: &[Value]) -> Option<Effective> {
    let is_override = |l: &&Value| str_field(l, "kind") == Some("override");
    let overrides: Vec<&Value> = lines
        .iter()
        .filter(is_override)
        .filter(|l| verdict_of(l).is_some())
        .collect();
    let ts = |l: &Value| str_field(l, "ts").unwrap_or("").to_string();
    let open = lines.iter().enumerate().filter(|(_, l)| {
        answer_key(l).is_some_and(|key| !overrides.iter().any(|o| answers(o, l, &key)))
    });
    let chosen = open
        .max_by_key(|(i, l)| (verdict_of(l).and_then(severity), ts(l), *i))
        .map(|(_, l)| l)
        .or_else(|| {
            overrides
                .iter()
                .enumerate()
                .max_by_key(|(i, l)| (ts(l), *i))
                .map(|(_, l)| *l)
        })?;
    Some(Effective {
        verdict: verdict_of(chosen).unwrap_or_default().to_string(),
        line: chosen.clone(),
    })
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
    fn verdict_words_a_bom_and_a_spread_object_read_as_written_by_git_triad() {
        let text = "\u{feff}{\"v\":1,\"kind\":\"review\",\"ts\":\"t1\",\"verdict\":\"halt\"}\n\
                    {\n  \"v\": 1,\n  \"kind\": \"override\",\n  \"ts\": \"t2\",\n  \"verdict\": \"Approve\",\n  \"overrides\": \"hAlT\"\n}\n\
                    not json at all\n";
        let note = read_note(text);
        assert_eq!(note.records.len(), 2, "{note:?}");
        assert_eq!(note.records[0]["verdict"], "HALT");
        assert_eq!(note.records[1]["verdict"], "APPROVE");
        assert_eq!(note.records[1]["overrides"], "HALT");
        assert_eq!(note.unreadable, ["not json at all"]);
        // An object that never closes is unreadable, and hides nothing after it.
        let broken = "{\"v\":1,\"kind\":\"review\",\n{\"v\":1,\"kind\":\"review\",\"ts\":\"t\",\"verdict\":\"FLAG\"}\n";
        let note = read_note(broken);
        assert_eq!(note.unreadable.len(), 1, "{note:?}");
        assert_eq!(note.records.len(), 1, "{note:?}");
    }

    #[test]
    fn parse_skips_unknown_and_broken_lines() {
        let text = "\n{\"v\":1,\"kind\":\"review\",\"verdict\":\"HALT\"}\nnot json\n\
                    {\"v\":2,\"kind\":\"review\"}\n{\"v\":1,\"kind\":\"gossip\"}\n[1]\n\
                    { \"kind\" : \"review\", \"verdict\":\"HALT\", \"v\":1 }\n";
        let lines = parse_note(text);
        assert_eq!(lines.len(), 1, "{lines:?}");
    }

    #[test]
    fn the_worst_unanswered_line_is_in_force() {
        let line = |kind: &str, ts: &str, verdict: &str| json!({"v":1,"kind":kind,"ts":ts,"verdict":verdict});
        let halt = line("review", "2026-01-01T00:00:00.000Z", "HALT");
        let recon = line("reconciliation", "2026-01-01T00:00:00.000Z", "REJECT");
        let later = line("review", "2026-01-02T00:00:00.000Z", "FLAG");
        let future = line("review", "2099-01-01T00:00:00.000Z", "APPROVE");
        assert_eq!(
            effective(&[later.clone(), halt.clone()]).unwrap().verdict,
            "HALT"
        );
        // A line dated in the future does not shadow a HALT.
        assert_eq!(
            effective(&[halt.clone(), future.clone()]).unwrap().verdict,
            "HALT"
        );
        // An override answers only the lines it names.
        let mut o = line("override", "2026-01-03T00:00:00.000Z", "APPROVE");
        o["overrides"] = json!("HALT");
        o[ANSWERS] = json!([answer_key(&halt).unwrap()]);
        let lines = [halt.clone(), recon.clone(), o.clone()];
        assert_eq!(effective(&lines).unwrap().verdict, "REJECT");
        let e = effective(&[halt.clone(), o.clone(), future.clone()]).unwrap();
        assert_eq!(e.verdict, "APPROVE");
        assert_eq!(str_field(&e.line, "kind"), Some("review"));
        let e = effective(&[halt.clone(), o.clone()]).unwrap();
        assert_eq!(
            (e.verdict.as_str(), str_field(&e.line, "kind")),
            ("APPROVE", Some("override"))
        );
        // A HALT written after the override (another ts) is not answered by it.
        let again = line("review", "2026-01-04T00:00:00.000Z", "HALT");
        assert_eq!(
            effective(&[halt.clone(), o, again]).unwrap().verdict,
            "HALT"
        );
        // An old override (no `answers`) answers its verdict up to its own ts.
        let mut old = line("override", "2026-01-03T00:00:00.000Z", "APPROVE");
        old["overrides"] = json!("HALT");
        assert_eq!(
            effective(&[halt.clone(), old.clone()]).unwrap().verdict,
            "APPROVE"
        );
        let dated = line("review", "2099-01-01T00:00:00.000Z", "HALT");
        assert_eq!(effective(&[halt, old, dated]).unwrap().verdict, "HALT");
        assert!(effective(&[]).is_none());
    }
}
