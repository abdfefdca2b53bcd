//! Google Gemini generateContent. Tools are `functionDeclarations`; calls and results travel
//! as `functionCall` / `functionResponse` parts, matched by name and order. Gemini usually
//! gives calls no ids, so a [`ToolCall`]'s id is the server's when it sent one, else made up
//! here; either way ids are never sent back, since order and name are what Gemini matches.

use serde_json::{json, Map, Value};

use super::tools;
use super::wire::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Message, Speaker, ToolCall, ToolSpec, Usage};

/// Builds `POST {base}/models/{model}:generateContent` (or the SSE stream variant).
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let contents: Vec<Value> = tools::wire_turns(&req.messages)
        .into_iter()
        .map(|turn| {
            let role = match turn[0].role {
                Speaker::Assistant => "model",
                Speaker::User | Speaker::Tool => "user",
            };
            let parts: Vec<Value> = turn.iter().flat_map(parts).collect();
            json!({"role": role, "parts": parts})
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
    if !req.tools.is_empty() {
        let declarations: Vec<Value> = req.tools.iter().map(declaration).collect();
        body["tools"] = json!([{ "functionDeclarations": declarations }]);
    }
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
        answer_tool: None,
    }
}

/// A message's parts: a tool result is a `functionResponse` (the text as its `output`, or as
/// its `error`); any other turn is its text and then a `functionCall` per call (with the
/// `thoughtSignature` the call came with). A plain turn is one text part, as always.
fn parts(m: &Message) -> Vec<Value> {
    if m.role == Speaker::Tool {
        let result = m.tool_result.as_ref();
        let key = if result.is_some_and(|r| r.is_error) {
            "error"
        } else {
            "output"
        };
        return vec![json!({"functionResponse": {
            "name": result.map(|r| &r.name), "response": {key: m.content}}})];
    }
    if m.tool_calls.is_empty() {
        return vec![json!({"text": m.content})];
    }
    let text = Some(&m.content)
        .filter(|t| !t.is_empty())
        .map(|t| json!({ "text": t }));
    let calls = m.tool_calls.iter().map(|c| {
        let mut part = json!({"functionCall": {"name": c.name, "args": c.arguments}});
        if let Some(sig) = &c.signature {
            part["thoughtSignature"] = json!(sig);
        }
        part
    });
    text.into_iter().chain(calls).collect()
}

/// A `functionDeclaration`: the schema in the OpenAPI subset, and none at all for a tool
/// without arguments (Gemini refuses an object schema with no properties).
fn declaration(t: &ToolSpec) -> Value {
    let mut d = json!({"name": t.name, "description": t.description});
    let params = openapi_subset(&t.schema());
    if params
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty())
    {
        d["parameters"] = params;
    }
    d
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
        tool_calls: candidate_calls(candidate, 0)?,
        usage: usage(v),
        model: str_at(v, &["modelVersion"]),
        finish_reason: str_at(candidate, &["finishReason"]),
    })
}

fn candidate_parts(candidate: &Value) -> &[Value] {
    candidate
        .pointer("/content/parts")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn candidate_text(candidate: &Value) -> String {
    candidate_parts(candidate)
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect()
}

/// The `functionCall` parts of a candidate; `first` is how many calls came before (in earlier
/// stream chunks), so made-up ids stay unique.
fn candidate_calls(candidate: &Value, first: usize) -> Result<Vec<ToolCall>, AdapterError> {
    candidate_parts(candidate)
        .iter()
        .filter_map(|p| Some((p, p.get("functionCall")?)))
        .enumerate()
        .map(|(n, (part, call))| {
            let name = str_at(call, &["name"]).ok_or_else(|| {
                AdapterError::Malformed("a `functionCall` part has no `name`".into())
            })?;
            Ok(ToolCall {
                id: str_at(call, &["id"]).unwrap_or_else(|| tools::made_up_id(first + n)),
                arguments: tools::arguments(&name, call.get("args"))?,
                name,
                signature: str_at(part, &["thoughtSignature"]),
            })
        })
        .collect()
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(v, &["usageMetadata", "promptTokenCount"]),
        output_tokens: u64_at(v, &["usageMetadata", "candidatesTokenCount"])
            + u64_at(v, &["usageMetadata", "thoughtsTokenCount"]),
        cache_read_input_tokens: u64_at(v, &["usageMetadata", "cachedContentTokenCount"]),
        cache_creation_input_tokens: 0,
    }
}

/// Accumulates `streamGenerateContent?alt=sse` chunks; the stream is complete at a chunk
/// that carries a `finishReason`. Function calls arrive whole, each in some chunk's parts.
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
            let calls = candidate_calls(c, self.r.tool_calls.len())?;
            self.r.tool_calls.extend(calls);
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
    use crate::model::adapter::tools::tests::{assert_grep_then_stop, conversation, stream};

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

    #[test]
    fn encodes_function_declarations_calls_and_responses() {
        let w = build("http://h/v1beta", "g", &conversation());
        let b = &w.body;
        assert_eq!(
            b["tools"],
            json!([{"functionDeclarations": [
                {"name": "grep", "description": "Search the files.",
                 "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}},
                    "required": ["pattern"]}},
                {"name": "stop", "description": "End the session."}]}])
        );
        let contents = b["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3, "{contents:#?}");
        assert_eq!(
            contents[0],
            json!({"role": "user", "parts": [{"text": "find main"}]})
        );
        assert_eq!(
            contents[1],
            json!({"role": "model", "parts": [{"text": "Looking."},
                {"functionCall": {"name": "grep", "args": {"pattern": "fn main"}},
                 "thoughtSignature": "sig-c1"},
                {"functionCall": {"name": "grep", "args": {"pattern": "["}},
                 "thoughtSignature": "sig-c2"}]})
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "grep", "response": {"output": "src/main.rs:1"}}},
                {"functionResponse": {"name": "grep", "response": {"error": "bad pattern"}}},
                {"text": "[context 70% full]"}]})
        );
    }

    #[test]
    fn parses_function_calls_with_made_up_ids_and_cached_tokens() {
        let v = json!({"modelVersion": "g", "candidates": [{"finishReason": "STOP", "content": {
            "role": "model", "parts": [
                {"functionCall": {"name": "grep", "args": {"pattern": "x"}}, "thoughtSignature": "s1"},
                {"functionCall": {"name": "stop"}}]}}],
            "usageMetadata": {"promptTokenCount": 30, "candidatesTokenCount": 2,
                              "cachedContentTokenCount": 16}});
        let r = parse(&v).unwrap();
        assert_grep_then_stop(&r, ["call_0", "call_1"], "x");
        assert_eq!(r.tool_calls[0].signature.as_deref(), Some("s1"));
        assert_eq!(
            (r.usage.context_tokens(), r.usage.cache_read_input_tokens),
            (30, 16)
        );
        let mut bad = v.clone();
        bad["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = json!([1]);
        assert!(matches!(parse(&bad), Err(AdapterError::Malformed(_))));
    }

    #[test]
    fn streamed_function_calls_arrive_whole_in_any_chunk() {
        let chunk = |parts: Value, finish: Option<&str>| {
            let mut c = json!({"modelVersion": "g",
                "candidates": [{"content": {"role": "model", "parts": parts}}]});
            if let Some(f) = finish {
                c["candidates"][0]["finishReason"] = json!(f);
                c["usageMetadata"] = json!({"promptTokenCount": 9, "candidatesTokenCount": 3});
            }
            (None, c)
        };
        let events = vec![
            chunk(json!([{"text": "Look"}]), None),
            chunk(
                json!([{"functionCall": {"name": "grep", "args": {"pattern": "x"}}}]),
                None,
            ),
            chunk(
                json!([{"functionCall": {"name": "stop", "args": {}}}]),
                Some("STOP"),
            ),
        ];
        let r = stream(Box::<Acc>::default(), &events).unwrap();
        assert_eq!(r.text, "Look");
        assert_grep_then_stop(&r, ["call_0", "call_1"], "x");
        assert_eq!(r.usage.input_tokens, 9);
    }
}
