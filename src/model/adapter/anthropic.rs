//! Anthropic Messages. Structured output travels as a forced tool call.

use serde_json::{json, Value};

use super::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Speaker, Usage};

/// The API version header every request carries.
pub const API_VERSION: &str = "2023-06-01";

/// Builds `POST {base}/messages`.
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let messages: Vec<Value> = req
        .messages
        .iter()
        .map(|m| {
            let role = match m.role {
                Speaker::User => "user",
                Speaker::Assistant => "assistant",
            };
            json!({"role": role, "content": m.content})
        })
        .collect();
    let mut body = json!({"model": model_id, "max_tokens": req.max_tokens, "messages": messages});
    if let Some(system) = &req.system {
        body["system"] = json!(system);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(schema) = &req.schema {
        body["tools"] = json!([{
            "name": schema.name,
            "description": "Record your answer. Call this tool exactly once with the complete answer.",
            "input_schema": schema.schema,
        }]);
        body["tool_choice"] = json!({"type": "tool", "name": schema.name});
    }
    if req.stream {
        body["stream"] = json!(true);
    }
    WireRequest {
        url: format!("{}/messages", base_url.trim_end_matches('/')),
        headers: vec![("anthropic-version", API_VERSION.to_string())],
        auth: Auth::Header("x-api-key"),
        body,
    }
}

/// Parses a `message` object.
pub fn parse(v: &Value) -> Result<ChatResponse, AdapterError> {
    if v.get("type").and_then(Value::as_str) == Some("error") {
        return Err(AdapterError::api(
            str_at(v, &["error", "message"]).unwrap_or_else(|| v.to_string()),
        ));
    }
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| AdapterError::Malformed("no `content` array in the answer".into()))?;
    let mut text = String::new();
    let mut structured = None;
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => structured = block.get("input").cloned(),
            _ => {}
        }
    }
    if let Some(s) = &structured {
        text = s.to_string();
    }
    Ok(ChatResponse {
        text,
        structured,
        usage: Usage {
            input_tokens: u64_at(v, &["usage", "input_tokens"])
                + u64_at(v, &["usage", "cache_read_input_tokens"])
                + u64_at(v, &["usage", "cache_creation_input_tokens"]),
            output_tokens: u64_at(v, &["usage", "output_tokens"]),
        },
        model: str_at(v, &["model"]),
        finish_reason: str_at(v, &["stop_reason"]),
    })
}

/// Accumulates the Messages event stream until `message_stop`.
#[derive(Default)]
pub struct Acc {
    r: ChatResponse,
    tool_json: String,
    is_tool: bool,
    done: bool,
}

impl StreamAccumulator for Acc {
    fn event(&mut self, ev: &SseEvent) -> Result<bool, AdapterError> {
        if ev.data.trim().is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| AdapterError::Malformed(format!("stream event is not JSON: {e}")))?;
        let kind = v
            .get("type")
            .and_then(Value::as_str)
            .or(ev.event.as_deref())
            .unwrap_or("");
        match kind {
            "message_start" => {
                self.r.model = str_at(&v, &["message", "model"]);
                self.r.usage.input_tokens = u64_at(&v, &["message", "usage", "input_tokens"])
                    + u64_at(&v, &["message", "usage", "cache_read_input_tokens"])
                    + u64_at(&v, &["message", "usage", "cache_creation_input_tokens"]);
            }
            "content_block_start"
                if str_at(&v, &["content_block", "type"]).as_deref() == Some("tool_use") =>
            {
                self.is_tool = true;
            }
            "content_block_delta" => match str_at(&v, &["delta", "type"]).as_deref() {
                Some("text_delta") => {
                    self.r
                        .text
                        .push_str(&str_at(&v, &["delta", "text"]).unwrap_or_default());
                }
                Some("input_json_delta") => {
                    self.tool_json
                        .push_str(&str_at(&v, &["delta", "partial_json"]).unwrap_or_default());
                }
                _ => {}
            },
            "message_delta" => {
                if let Some(r) = str_at(&v, &["delta", "stop_reason"]) {
                    self.r.finish_reason = Some(r);
                }
                let out = u64_at(&v, &["usage", "output_tokens"]);
                if out > 0 {
                    self.r.usage.output_tokens = out;
                }
            }
            "message_stop" => {
                self.done = true;
                return Ok(true);
            }
            "error" => {
                return Err(AdapterError::api(
                    str_at(&v, &["error", "message"]).unwrap_or_else(|| v.to_string()),
                ))
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(mut self: Box<Self>) -> Result<ChatResponse, AdapterError> {
        if !self.done {
            return Err(AdapterError::Incomplete);
        }
        if self.is_tool {
            let input: Value = serde_json::from_str(&self.tool_json).map_err(|e| {
                AdapterError::Malformed(format!("streamed tool input is not JSON: {e}"))
            })?;
            self.r.text = input.to_string();
            self.r.structured = Some(input);
        }
        Ok(self.r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_becomes_structured() {
        let v = json!({"type": "message", "model": "claude-x", "stop_reason": "tool_use",
            "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}],
            "usage": {"input_tokens": 3, "output_tokens": 4}});
        let r = parse(&v).unwrap();
        assert_eq!(r.structured, Some(json!({"a": 1})));
        assert_eq!(r.usage.output_tokens, 4);
    }
}
