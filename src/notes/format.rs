//! The line format of a verdict note: canonical JSON, timestamps, parsing, the effective verdict.

use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// The only line format version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// The record kinds this build understands; lines of other kinds are skipped.
pub const KINDS: &[&str] = &["review", "reconciliation", "override"];

/// The field a copied line carries: the commit it was copied from.
pub const REATTACHED_FROM: &str = "reattached_from";

/// Serializes `v` as canonical JSON: object keys sorted (by bytes) at every depth, no
/// whitespace, so equal records are equal lines and `cat_sort_uniq` can merge them.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
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

/// The current time as RFC 3339 UTC with milliseconds, e.g. `2026-11-22T02:54:30.123Z`.
pub fn now_ts() -> String {
    format_ts(SystemTime::now())
}

/// Formats a time as RFC 3339 UTC with milliseconds (fixed width, so strings sort by time).
pub fn format_ts(t: SystemTime) -> String {
    // Times before 1970 do not occur in verdicts; clamp rather than fail.
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let millis = d.subsec_millis();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Parses one note line; `None` for blank lines, invalid JSON, an unknown `v` or kind.
pub fn parse_line(line: &str) -> Option<Value> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    let obj = value.as_object()?;
    if obj.get("v").and_then(Value::as_u64) != Some(FORMAT_VERSION) {
        return None;
    }
    let kind = obj.get("kind").and_then(Value::as_str)?;
    KINDS.contains(&kind).then_some(value)
}

/// Parses a whole note: the known lines in note order, identical records only once.
pub fn parse_note(text: &str) -> Vec<Value> {
    let mut seen = HashSet::new();
    text.lines()
        .filter_map(parse_line)
        .filter(|v| seen.insert(canonical_json(v)))
        .collect()
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

/// How a kind ranks when two records carry the same timestamp: a human override beats the
/// reconciliation, which beats a stage review.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "override" => 2,
        "reconciliation" => 1,
        _ => 0,
    }
}

/// The effective verdict: that of the latest record by `ts` (ties: override > reconciliation >
/// review, then the later line). Records without a verdict are ignored.
pub fn effective(lines: &[Value]) -> Option<Effective> {
    let heads = lines.iter().map(|line| RecordHead {
        kind: str_field(line, "kind"),
        ts: str_field(line, "ts"),
        verdict: str_field(line, "verdict"),
    });
    latest(heads).map(|i| {
        let line = &lines[i];
        Effective {
            verdict: str_field(line, "verdict").unwrap_or_default().to_string(),
            line: line.clone(),
        }
    })
}

/// The fields of a record that decide which one is in force.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RecordHead<'a> {
    /// `review`, `reconciliation` or `override`.
    pub kind: Option<&'a str>,
    /// RFC 3339 UTC timestamp.
    pub ts: Option<&'a str>,
    /// The verdict the record sets, if any.
    pub verdict: Option<&'a str>,
}

/// The index of the record in force: the latest by `ts`, ties broken by kind rank, then by
/// position. Records without a known verdict do not count.
pub(crate) fn latest<'a>(records: impl Iterator<Item = RecordHead<'a>>) -> Option<usize> {
    records
        .enumerate()
        .filter(|(_, r)| matches!(r.verdict, Some("APPROVE" | "FLAG" | "REJECT" | "HALT")))
        // `ts` is fixed-width RFC 3339 UTC, so byte order is time order.
        .max_by_key(|(i, r)| (r.ts.unwrap_or(""), kind_rank(r.kind.unwrap_or("")), *i))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn canonical_sorts_keys_at_every_depth() {
        let v = json!({"z": 1, "a": {"y": [ {"b": 2, "a": 1} ], "x": null}, "m": "é\n"});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"x":null,"y":[{"a":1,"b":2}]},"m":"é\n","z":1}"#
        );
    }

    #[test]
    fn timestamps_are_rfc3339_millis_utc() {
        assert_eq!(format_ts(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_795_316_070_123);
        assert_eq!(format_ts(t), "2026-11-22T02:54:30.123Z");
        // A leap day.
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(format_ts(t), "2000-02-29T00:00:00.000Z");
        assert_eq!(now_ts().len(), 24);
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
    fn latest_wins_and_ties_prefer_override() {
        let review =
            json!({"v":1,"kind":"review","ts":"2026-01-01T00:00:00.000Z","verdict":"HALT"});
        let recon = json!({"v":1,"kind":"reconciliation","ts":"2026-01-01T00:00:00.000Z","verdict":"REJECT"});
        let over =
            json!({"v":1,"kind":"override","ts":"2026-01-01T00:00:00.000Z","verdict":"APPROVE"});
        let later = json!({"v":1,"kind":"review","ts":"2026-01-02T00:00:00.000Z","verdict":"FLAG"});
        let e = effective(&[over.clone(), recon.clone(), review.clone()]).unwrap();
        assert_eq!(e.verdict, "APPROVE");
        assert_eq!(
            effective(&[review.clone(), recon]).unwrap().verdict,
            "REJECT"
        );
        assert_eq!(effective(&[later, over, review]).unwrap().verdict, "FLAG");
        assert!(effective(&[]).is_none());
    }
}
