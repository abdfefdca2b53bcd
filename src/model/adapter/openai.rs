//! OpenAI chat completions, the protocol most servers speak.

use serde_json::{json, Value};

use super::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Speaker, Usage};

/// Builds `POST {base}/chat/completions`.
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    for m in &req.messages {
        let role = match m.role {
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
        };
        messages.push(json!({"role": role, "content": m.content}));
    }
    let mut body = json!({"model": model_id, "messages": messages});
    // OpenAI's own API refuses `max_tokens` for its newer models; every other compatible
    // server (llama.cpp, vLLM, Ollama, ...) knows `max_tokens`.
    let limit_field = if base_url.contains("api.openai.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body[limit_field] = json!(req.max_tokens);
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    if let Some(grammar) = &req.grammar {
        // llama.cpp's server extension: decoding is constrained to the grammar.
        body["grammar"] = json!(grammar);
    }
    if let Some(schema) = &req.schema {
        body["response_format"] = json!({
            "type": "json_schema",
            "json_schema": {"name": schema.name, "schema": schema.schema, "strict": false},
        });
    }
    if req.stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    WireRequest {
        url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
        headers: vec![],
        auth: Auth::Bearer,
        body,
    }
}

/// Parses a `chat.completion` object.
pub fn parse(v: &Value) -> Result<ChatResponse, AdapterError> {
    if let Some(msg) = str_at(v, &["error", "message"]) {
        return Err(AdapterError::api(msg));
    }
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| AdapterError::Malformed("no `choices[0]` in the answer".into()))?;
    let message = choice
        .get("message")
        .ok_or_else(|| AdapterError::Malformed("no `choices[0].message` in the answer".into()))?;
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => {
            return Err(AdapterError::Malformed(format!(
                "`message.content` is not text: {}",
                crate::bounded::clip(&other.to_string(), crate::bounded::ITEM_BYTES)
            )))
        }
    };
    Ok(ChatResponse {
        text,
        structured: None,
        usage: Usage {
            input_tokens: u64_at(v, &["usage", "prompt_tokens"]),
            output_tokens: u64_at(v, &["usage", "completion_tokens"]),
        },
        model: str_at(v, &["model"]),
        finish_reason: str_at(choice, &["finish_reason"]),
    })
}

/// Accumulates `chat.completion.chunk` events until `[DONE]`.
#[derive(Default)]
pub struct Acc {
    r: ChatResponse,
    done: bool,
}

impl StreamAccumulator for Acc {
    fn event(&mut self, ev: &SseEvent) -> Result<bool, AdapterError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let v: Value = serde_json::from_str(data)
            .map_err(|e| AdapterError::Malformed(format!("stream chunk is not JSON: {e}")))?;
        if let Some(msg) = str_at(&v, &["error", "message"]) {
            return Err(AdapterError::api(msg));
        }
        if self.r.model.is_none() {
            self.r.model = str_at(&v, &["model"]);
        }
        if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
            if let Some(piece) = str_at(choice, &["delta", "content"]) {
                self.r.text.push_str(&piece);
            }
            if let Some(f) = str_at(choice, &["finish_reason"]) {
                self.r.finish_reason = Some(f);
            }
        }
        if v.get("usage").is_some_and(|u| !u.is_null()) {
            self.r.usage = Usage {
                input_tokens: u64_at(&v, &["usage", "prompt_tokens"]),
                output_tokens: u64_at(&v, &["usage", "completion_tokens"]),
            };
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ChatResponse, AdapterError> {
        if !self.done {
            return Err(AdapterError::Incomplete);
        }
        Ok(self.r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::types::OutputSchema;

    #[test]
    fn builds_schema_and_stream_fields() {
        let mut req = ChatRequest::new(Some("sys".into()), "hi", 100);
        req.schema = Some(OutputSchema {
            name: "x".into(),
            schema: json!({"type": "object"}),
        });
        req.stream = true;
        let w = build("http://h/v1/", "m", &req);
        assert_eq!(w.url, "http://h/v1/chat/completions");
        assert_eq!(w.body["messages"][0]["role"], "system");
        assert_eq!(w.body["max_tokens"], 100);
        assert_eq!(w.body["response_format"]["type"], "json_schema");
        assert_eq!(w.body["stream_options"]["include_usage"], true);
        let w = build("https://api.openai.com/v1", "m", &req);
        assert_eq!(w.body["max_completion_tokens"], 100);
    }

    #[test]
    fn parses_a_completion() {
        let v = json!({"model": "m-2024", "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 5, "completion_tokens": 1}});
        let r = parse(&v).unwrap();
        assert_eq!(
            (r.text.as_str(), r.usage.input_tokens, r.model.as_deref()),
            ("ok", 5, Some("m-2024"))
        );
        assert!(parse(&json!({"choices": []})).is_err());
    }
}
