//! Google Gemini generateContent.

use serde_json::{json, Map, Value};

use super::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Speaker, Usage};

/// Builds `POST {base}/models/{model}:generateContent` (or the SSE stream variant).
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let contents: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Speaker::User => "user",
                Speaker::Assistant => "model",
            };
            json!({"role": role, "parts": [{"text": m.content}]})
        })
        .collect();
    let mut gen = json!({"maxOutputTokens": req.max_tokens});
    if let Some(t) = req.temperature {
        gen["temperature"] = json!(t);
    }
    if let Some(schema) = &req.schema {
        gen["responseMimeType"] = json!("application/json");
        gen["responseSchema"] = openapi_subset(&schema.schema);
    }
    let mut body = json!({"contents": contents, "generationConfig": gen});
    if let Some(system) = &req.system {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    let base = base_url.trim_end_matches('/');
    let url = if req.stream {
        format!("{base}/models/{model_id}:streamGenerateContent?alt=sse")
    } else {
        format!("{base}/models/{model_id}:generateContent")
    };
    WireRequest {
        url,
        headers: vec![],
        auth: Auth::Header("x-goog-api-key"),
        body,
    }
}

/// Converts a JSON schema into the OpenAPI subset Gemini's `responseSchema` accepts:
/// no `$schema`, `additionalProperties`, `$defs` or `title`; `["T", "null"]` types become
/// `nullable`.
pub fn openapi_subset(schema: &Value) -> Value {
    const KEEP: &[&str] = &[
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "items",
        "anyOf",
        "minimum",
        "maximum",
        "maxLength",
        "minLength",
        "propertyOrdering",
    ];
    match schema {
        Value::Object(obj) => {
            let mut out = Map::new();
            for (k, v) in obj {
                if !KEEP.contains(&k.as_str()) {
                    continue;
                }
                match (k.as_str(), v) {
                    ("type", Value::Array(types)) => {
                        let non_null: Vec<&Value> = types
                            .iter()
                            .filter(|t| t.as_str() != Some("null"))
                            .collect();
                        if non_null.len() < types.len() {
                            out.insert("nullable".into(), json!(true));
                        }
                        if let Some(t) = non_null.first() {
                            out.insert("type".into(), (*t).clone());
                        }
                    }
                    ("properties", Value::Object(props)) => {
                        let mapped: Map<String, Value> = props
                            .iter()
                            .map(|(name, s)| (name.clone(), openapi_subset(s)))
                            .collect();
                        out.insert(k.clone(), Value::Object(mapped));
                    }
                    ("items", s) => {
                        out.insert(k.clone(), openapi_subset(s));
                    }
                    ("anyOf", Value::Array(alts)) => {
                        out.insert(
                            k.clone(),
                            Value::Array(alts.iter().map(openapi_subset).collect()),
                        );
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

/// Parses a `GenerateContentResponse`.
pub fn parse(v: &Value) -> Result<ChatResponse, AdapterError> {
    if let Some(msg) = str_at(v, &["error", "message"]) {
        return Err(AdapterError::api(msg));
    }
    let candidate = v.get("candidates").and_then(|c| c.get(0)).ok_or_else(|| {
        let why = str_at(v, &["promptFeedback", "blockReason"])
            .map(|r| format!(" (prompt blocked: {r})"))
            .unwrap_or_default();
        AdapterError::Malformed(format!("no `candidates[0]` in the answer{why}"))
    })?;
    Ok(ChatResponse {
        text: candidate_text(candidate),
        structured: None,
        usage: usage(v),
        model: str_at(v, &["modelVersion"]),
        finish_reason: str_at(candidate, &["finishReason"]),
    })
}

fn candidate_text(candidate: &Value) -> String {
    candidate
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array)
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<String>()
        })
        .unwrap_or_default()
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(v, &["usageMetadata", "promptTokenCount"]),
        output_tokens: u64_at(v, &["usageMetadata", "candidatesTokenCount"])
            + u64_at(v, &["usageMetadata", "thoughtsTokenCount"]),
    }
}

/// Accumulates `streamGenerateContent?alt=sse` chunks; the stream is complete at a chunk
/// that carries a `finishReason`.
#[derive(Default)]
pub struct Acc {
    r: ChatResponse,
}

impl StreamAccumulator for Acc {
    fn event(&mut self, ev: &SseEvent) -> Result<bool, AdapterError> {
        if ev.data.trim().is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| AdapterError::Malformed(format!("stream chunk is not JSON: {e}")))?;
        if let Some(msg) = str_at(&v, &["error", "message"]) {
            return Err(AdapterError::api(msg));
        }
        if let Some(c) = v.get("candidates").and_then(|c| c.get(0)) {
            self.r.text.push_str(&candidate_text(c));
            if let Some(f) = str_at(c, &["finishReason"]) {
                self.r.finish_reason = Some(f);
            }
        }
        if v.get("usageMetadata").is_some() {
            self.r.usage = usage(&v);
        }
        if let Some(m) = str_at(&v, &["modelVersion"]) {
            self.r.model = Some(m);
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ChatResponse, AdapterError> {
        // Gemini has no terminal event: a missing finishReason means the stream was cut.
        if self.r.finish_reason.is_none() {
            return Err(AdapterError::Incomplete);
        }
        Ok(self.r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_is_reduced_to_the_openapi_subset() {
        let s = json!({"$schema": "x", "title": "T", "type": "object", "additionalProperties": false,
            "properties": {"a": {"type": ["string", "null"], "maxLength": 3}}, "required": ["a"]});
        let out = openapi_subset(&s);
        assert_eq!(
            out,
            json!({"type": "object", "properties": {"a": {"type": "string", "nullable": true, "maxLength": 3}}, "required": ["a"]})
        );
    }

    #[test]
    fn stream_url_uses_sse() {
        let mut req = ChatRequest::new(None, "hi", 5);
        req.stream = true;
        let w = build("http://h/v1beta", "g", &req);
        assert_eq!(
            w.url,
            "http://h/v1beta/models/g:streamGenerateContent?alt=sse"
        );
    }
}
