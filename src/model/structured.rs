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
pub fn validate(schema: &Value, value: &Value) -> Result<(), Vec<String>> {
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => return Err(vec![format!("the schema itself is invalid: {e}")]),
    };
    let errors: Vec<String> = validator
        .iter_errors(value)
        .take(20)
        .map(|e| {
            let path = e.instance_path.to_string();
            format!("{}: {e}", if path.is_empty() { "/" } else { &path })
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
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
