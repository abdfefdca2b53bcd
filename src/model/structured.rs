//! Structured output: JSON schemas generated from Rust types, and validation of answers.

use schemars::JsonSchema;
use serde_json::Value;

use super::types::OutputSchema;

/// The JSON schema of `T`, with every reference inlined and every object closed
/// (`additionalProperties: false`) so that small models cannot wander off inside open JSON.
pub fn schema_for<T: JsonSchema>(name: &str) -> OutputSchema {
    let settings = schemars::generate::SchemaSettings::draft2020_12().with(|s| {
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut value = schema.to_value();
    close_objects(&mut value);
    if let Value::Object(obj) = &mut value {
        obj.remove("$schema");
        obj.remove("$defs");
    }
    OutputSchema {
        name: name.to_string(),
        schema: value,
    }
}

fn close_objects(v: &mut Value) {
    match v {
        Value::Object(obj) => {
            let is_object = obj.get("type").and_then(Value::as_str) == Some("object")
                || obj.contains_key("properties");
            if is_object && !obj.contains_key("additionalProperties") {
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (_, child) in obj.iter_mut() {
                close_objects(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close_objects),
        _ => {}
    }
}

/// Tightens `maxLength` and `maxItems` so that a whole answer fits in `max_tokens`.
///
/// Only applies to small budgets (under 4096 tokens). Lists are capped at 3 items; then the
/// character budget (about 4 characters a token, 60% of it for string contents) is shared
/// among every string the schema can hold, so a model that fills each string to its limit
/// still closes the JSON before the token limit cuts it off.
pub fn fit_to_budget(schema: &mut Value, max_tokens: u32) {
    if max_tokens >= 4096 {
        return;
    }
    cap_items(schema, 3);
    let slots = string_slots(schema).max(1);
    let per_slot = (u64::from(max_tokens) * 4 * 6 / 10) / slots;
    cap_strings(schema, per_slot.clamp(16, 600));
}

fn is_type(obj: &serde_json::Map<String, Value>, t: &str) -> bool {
    obj.get("type").and_then(Value::as_str) == Some(t)
}

fn cap_items(v: &mut Value, max_items: u64) {
    match v {
        Value::Object(obj) => {
            if is_type(obj, "array") {
                let current = obj
                    .get("maxItems")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                obj.insert("maxItems".into(), Value::from(current.min(max_items)));
            }
            obj.values_mut().for_each(|c| cap_items(c, max_items));
        }
        Value::Array(items) => items.iter_mut().for_each(|i| cap_items(i, max_items)),
        _ => {}
    }
}

/// How many free-text strings an answer can hold (enums do not count; arrays multiply).
fn string_slots(v: &Value) -> u64 {
    let Value::Object(obj) = v else { return 0 };
    if is_type(obj, "string") {
        return u64::from(!obj.contains_key("enum"));
    }
    if is_type(obj, "array") {
        let n = obj.get("maxItems").and_then(Value::as_u64).unwrap_or(3);
        return n * obj.get("items").map_or(0, string_slots);
    }
    let mut total = 0;
    if let Some(Value::Object(props)) = obj.get("properties") {
        total += props.values().map(string_slots).sum::<u64>();
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(alts)) = obj.get(key) {
            total += alts.iter().map(string_slots).max().unwrap_or(0);
        }
    }
    total
}

fn cap_strings(v: &mut Value, max_chars: u64) {
    match v {
        Value::Object(obj) => {
            if is_type(obj, "string") && !obj.contains_key("enum") {
                let current = obj
                    .get("maxLength")
                    .and_then(Value::as_u64)
                    .unwrap_or(u64::MAX);
                obj.insert("maxLength".into(), Value::from(current.min(max_chars)));
            }
            obj.values_mut().for_each(|c| cap_strings(c, max_chars));
        }
        Value::Array(items) => items.iter_mut().for_each(|i| cap_strings(i, max_chars)),
        _ => {}
    }
}

/// Finds the JSON value in a model's text: the whole text, or a fenced ```json block, or
/// the outermost `{...}`.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str(t) {
        return Some(v);
    }
    if let Some(start) = t.find("```") {
        let after = &t[start + 3..];
        let after = after.strip_prefix("json").unwrap_or(after);
        if let Some(end) = after.find("```") {
            if let Ok(v) = serde_json::from_str(after[..end].trim()) {
                return Some(v);
            }
        }
    }
    let (s, e) = (t.find('{')?, t.rfind('}')?);
    if s < e {
        serde_json::from_str(&t[s..=e]).ok()
    } else {
        None
    }
}

/// Validates `value` against `schema`; returns readable errors (`/path: message`).
///
/// The list is bounded ([`crate::bounded::list`]): a few errors, each at most a few hundred
/// bytes, and a count of the rest. A message never quotes a large part of the answer (an
/// array of 50 000 items "has more than 3 items" without listing them).
pub fn validate(schema: &Value, value: &Value) -> Result<(), Vec<String>> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            let why = format!("the schema itself is invalid: {e}");
            return Err(vec![crate::bounded::clip(&why, crate::bounded::ITEM_BYTES)]);
        }
    };
    let errors = crate::bounded::list(validator.iter_errors(value).map(|e| {
        let path = e.instance_path.to_string();
        let path = if path.is_empty() { "/" } else { &path };
        if quotable(&e.instance) {
            format!("{path}: {e}")
        } else {
            format!("{path}: {}", e.masked_with("the value"))
        }
    }));
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Brings each number outside its schema's `minimum`/`maximum` to the nearest bound and
/// lists the changes (`/path: -1 → 0`). Grammar-constrained decoding (llama.cpp turns the
/// schema into a grammar) enforces an answer's shape but not numeric ranges, so a small
/// model writes a confidence of -1; the bound keeps the rest of a valid answer. The raw
/// answer stays in the transcript.
pub fn clamp_ranges(schema: &Value, value: &mut Value, path: &str, changed: &mut Vec<String>) {
    match value {
        Value::Number(n) => {
            let Some(x) = n.as_f64() else { return };
            let bound = |k: &str| schema.get(k).and_then(Value::as_f64);
            let y = match (bound("minimum"), bound("maximum")) {
                (Some(lo), _) if x < lo => lo,
                (_, Some(hi)) if x > hi => hi,
                _ => return,
            };
            let integer = n.is_i64() || n.is_u64();
            *value = match serde_json::Number::from_f64(y) {
                Some(_) if integer => Value::from(y as i64),
                Some(f) => Value::Number(f),
                None => return,
            };
            changed.push(format!(
                "{}: {x} → {y}",
                if path.is_empty() { "/" } else { path }
            ));
        }
        Value::Object(fields) => {
            for (k, v) in fields.iter_mut() {
                if let Some(sub) = schema.get("properties").and_then(|p| p.get(k)) {
                    clamp_ranges(sub, v, &format!("{path}/{k}"), changed);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter_mut().enumerate() {
                    clamp_ranges(sub, v, &format!("{path}/{i}"), changed);
                }
            }
        }
        _ => {}
    }
}

/// The strings of `value` whose length reached the `maxLength` their `schema` gave them, as
/// (JSON pointer, that length). A server that enforces the schema while it decodes
/// (llama.cpp turns it into a grammar) stops such a text at the limit, usually mid-word, so
/// a record that keeps it must say it was cut ([`mark_cut`]).
pub fn strings_at_limit(schema: &Value, value: &Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    at_limit(schema, value, "", &mut out);
    out
}

fn at_limit(schema: &Value, value: &Value, path: &str, out: &mut Vec<(String, u64)>) {
    match value {
        Value::String(text) => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                if text.chars().count() as u64 >= max {
                    out.push((path.to_string(), max));
                }
            }
        }
        Value::Object(fields) => {
            for (k, v) in fields {
                if let Some(sub) = schema.get("properties").and_then(|p| p.get(k)) {
                    let key = k.replace('~', "~0").replace('/', "~1");
                    at_limit(sub, v, &format!("{path}/{key}"), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(sub) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    at_limit(sub, v, &format!("{path}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

/// Appends to each string of `json` named in `at_limit` (see [`strings_at_limit`]) a marker
/// that says it was cut at its limit, so no stored text ends mid-word without saying so.
pub fn mark_cut(json: &mut Value, at_limit: &[(String, u64)]) {
    for (pointer, max) in at_limit {
        if let Some(Value::String(text)) = json.pointer_mut(pointer) {
            text.push_str(&format!("… [cut at its {max}-character limit]"));
        }
    }
}

/// Whether a value is small enough to quote in an error message.
fn quotable(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
        Value::String(s) => s.len() <= 80,
        _ => true,
    }
}

/// The typed answer and its JSON, or why the answer does not follow `schema` (in words a
/// repair request can quote).
pub(super) fn check_answer<T: serde::de::DeserializeOwned>(
    schema: &Value,
    resp: &super::types::ChatResponse,
) -> Result<(T, Value), Vec<String>> {
    let json = match &resp.structured {
        Some(v) => v.clone(),
        None => extract_json(&resp.text).ok_or_else(|| {
            let mut why = vec!["the answer is not a JSON object".to_string()];
            if resp.truncated() {
                why.push("the answer was cut off by the output token limit".to_string());
            }
            why
        })?,
    };
    let mut json = json;
    if validate(schema, &json).is_err() {
        let mut changed = Vec::new();
        clamp_ranges(schema, &mut json, "", &mut changed);
        if !changed.is_empty() {
            tracing::warn!(
                "numbers outside their schema's range brought to the bound: {}",
                changed.join(", ")
            );
        }
    }
    validate(schema, &json)?;
    // serde's message quotes the offending value, which the model chose the size of.
    let value = serde_json::from_value(json.clone()).map_err(|e| {
        vec![crate::bounded::clip(
            &e.to_string(),
            crate::bounded::ITEM_BYTES,
        )]
    })?;
    Ok((value, json))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        n: u8,
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        #[schemars(length(max = 5))]
        name: String,
        inner: Inner,
        items: Vec<Inner>,
    }

    #[test]
    fn schemas_are_inlined_and_closed() {
        let s = schema_for::<Outer>("outer").schema;
        let text = s.to_string();
        assert!(!text.contains("$ref"), "{text}");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["properties"]["inner"]["additionalProperties"], false);
        assert_eq!(s["properties"]["name"]["maxLength"], 5);
    }

    #[test]
    fn validation_reports_paths() {
        let s = schema_for::<Outer>("outer").schema;
        let good = serde_json::json!({"name": "a", "inner": {"n": 1}, "items": []});
        assert!(validate(&s, &good).is_ok());
        let bad =
            serde_json::json!({"name": "toolong", "inner": {"n": "x"}, "items": [], "extra": 1});
        let errs = validate(&s, &bad).unwrap_err();
        assert!(errs.iter().any(|e| e.starts_with("/inner/n")), "{errs:?}");
        assert!(errs.len() >= 3, "{errs:?}");
    }

    #[test]
    fn huge_answers_give_bounded_errors() {
        let s = schema_for::<Outer>("outer").schema;
        let mut capped = s.clone();
        fit_to_budget(&mut capped, 1024);
        let items: Vec<Value> = (0..50_000).map(|_| serde_json::json!({"n": 1})).collect();
        let flood = serde_json::json!({"name": "a", "inner": {"n": 1}, "items": items});
        let errs = validate(&capped, &flood).unwrap_err();
        assert_eq!(errs, ["/items: the value has more than 3 items"]);
        let bad: Vec<Value> = (0..50_000)
            .map(|_| serde_json::json!({"n": "x".repeat(100)}))
            .collect();
        let flood =
            serde_json::json!({"name": "y".repeat(1_000_000), "inner": {"n": 1}, "items": bad});
        let errs = validate(&s, &flood).unwrap_err();
        assert_eq!(errs.len(), crate::bounded::LIST_ITEMS + 1, "{errs:?}");
        assert!(
            errs.iter().map(String::len).sum::<usize>() < 4096,
            "{errs:?}"
        );
        assert!(errs.last().unwrap().contains("more"), "{errs:?}");
    }

    #[test]
    fn strings_that_reached_their_limit_are_found_and_marked() {
        let mut s = schema_for::<Outer>("outer").schema;
        s["properties"]["items"]["items"]["properties"]["n"] =
            serde_json::json!({"type": "string", "maxLength": 3});
        let mut v = serde_json::json!({"name": "abcde", "inner": {"n": 1}, "items": [{"n": "ab"}, {"n": "abc"}]});
        let cut = strings_at_limit(&s, &v);
        assert_eq!(
            cut,
            [("/name".to_string(), 5), ("/items/1/n".to_string(), 3)]
        );
        mark_cut(&mut v, &cut);
        assert_eq!(v["name"], "abcde… [cut at its 5-character limit]");
        assert_eq!(v["items"][0]["n"], "ab", "a shorter text is left alone");
        assert_eq!(v["items"][1]["n"], "abc… [cut at its 3-character limit]");
    }

    #[test]
    fn small_budgets_tighten_strings_and_lists() {
        let mut s = schema_for::<Outer>("outer").schema;
        fit_to_budget(&mut s, 1024);
        assert_eq!(s["properties"]["name"]["maxLength"], 5, "never loosened");
        assert_eq!(s["properties"]["items"]["maxItems"], 3);
        let mut big = schema_for::<Outer>("outer").schema;
        fit_to_budget(&mut big, 8192);
        assert!(big["properties"]["items"].get("maxItems").is_none());
    }

    #[test]
    fn numbers_out_of_range_are_brought_to_the_bound_and_listed() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Alt {
            #[schemars(range(min = 0.0, max = 1.0))]
            confidence: f64,
        }
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Review {
            #[schemars(range(min = 1, max = 10))]
            score: u8,
            alternatives: Vec<Alt>,
        }
        let s = schema_for::<Review>("review").schema;
        let mut v = serde_json::json!({"score": 12, "alternatives": [{"confidence": -1.0}, {"confidence": 0.5}]});
        assert!(validate(&s, &v).is_err());
        let mut changed = Vec::new();
        clamp_ranges(&s, &mut v, "", &mut changed);
        assert_eq!(
            changed,
            ["/score: 12 → 10", "/alternatives/0/confidence: -1 → 0"]
        );
        assert_eq!(v["score"], 10);
        assert_eq!(v["alternatives"][0]["confidence"], 0.0);
        assert!(validate(&s, &v).is_ok());
    }

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(
            extract_json("```json\n{\"a\":1}\n```"),
            Some(serde_json::json!({"a":1}))
        );
        assert_eq!(
            extract_json("Sure! {\"a\":2} done"),
            Some(serde_json::json!({"a":2}))
        );
        assert_eq!(extract_json("no json"), None);
    }
}
