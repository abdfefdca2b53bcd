//! OpenAI chat completions, the protocol most servers speak.

use serde_json::{json, Value};

use super::tools::{self, Streamed};
use super::wire::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Message, Speaker, ToolCall, Usage};

/// Builds `POST {base}/chat/completions`.
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(req.messages.iter().map(message));
    let mut body = json!({"model": model_id, "messages": messages});
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.schema()}})
            })
            .collect();
        body["tools"] = json!(tools);
    }
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
        answer_tool: None,
    }
}

/// One turn in OpenAI's shape: an assistant turn's calls go in `tool_calls` (arguments as
/// JSON text, content `null` when it said nothing else), a tool result is a `tool` turn.
fn message(m: &Message) -> Value {
    match m.role {
        Speaker::User => json!({"role": "user", "content": m.content}),
        Speaker::Assistant if m.tool_calls.is_empty() => {
            json!({"role": "assistant", "content": m.content})
        }
        Speaker::Assistant => {
            let calls: Vec<Value> = m
                .tool_calls
                .iter()
                .map(|c| {
                    json!({"id": c.id, "type": "function",
                        "function": {"name": c.name, "arguments": c.arguments.to_string()}})
                })
                .collect();
            let content = Some(&m.content).filter(|c| !c.is_empty());
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Speaker::Tool => json!({"role": "tool",
            "tool_call_id": m.tool_result.as_ref().map(|r| &r.call_id), "content": m.content}),
    }
}

/// The calls in a `choices[0].message`; arguments come as JSON text (or, from some
/// compatible servers, as an object).
fn tool_calls(message: &Value) -> Result<Vec<ToolCall>, AdapterError> {
    let Some(list) = message.get("tool_calls").and_then(Value::as_array) else {
        return Ok(Vec::new());
    };
    list.iter()
        .enumerate()
        .map(|(n, c)| {
            let name = str_at(c, &["function", "name"]).ok_or_else(|| {
                AdapterError::Malformed("a tool call has no `function.name`".into())
            })?;
            let arguments = match c.pointer("/function/arguments") {
                Some(Value::String(text)) => tools::arguments_from_text(&name, text)?,
                other => tools::arguments(&name, other)?,
            };
            Ok(ToolCall {
                id: str_at(c, &["id"])
                    .filter(|id| !id.is_empty())
                    .unwrap_or_else(|| tools::made_up_id(n)),
                name,
                arguments,
                signature: None,
            })
        })
        .collect()
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(v, &["usage", "prompt_tokens"]),
        output_tokens: u64_at(v, &["usage", "completion_tokens"]),
        cache_read_input_tokens: u64_at(v, &["usage", "prompt_tokens_details", "cached_tokens"]),
        cache_creation_input_tokens: 0,
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
        tool_calls: tool_calls(message)?,
        usage: usage(v),
        model: str_at(v, &["model"]),
        finish_reason: str_at(choice, &["finish_reason"]),
    })
}

/// Accumulates `chat.completion.chunk` events until `[DONE]`; tool calls arrive as
/// `delta.tool_calls` fragments keyed by `index`, their arguments split over many chunks.
#[derive(Default)]
pub struct Acc(Streamed);

impl StreamAccumulator for Acc {
    fn event(&mut self, ev: &SseEvent) -> Result<bool, AdapterError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            self.0.done = true;
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
        if self.0.reply.model.is_none() {
            self.0.reply.model = str_at(&v, &["model"]);
        }
        if let Some(choice) = v.get("choices").and_then(|c| c.get(0)) {
            if let Some(piece) = str_at(choice, &["delta", "content"]) {
                self.0.reply.text.push_str(&piece);
            }
            let fragments = choice
                .pointer("/delta/tool_calls")
                .and_then(Value::as_array);
            for (n, f) in fragments.into_iter().flatten().enumerate() {
                let index = f.get("index").and_then(Value::as_u64).unwrap_or(n as u64);
                self.0
                    .calls
                    .start(index, str_at(f, &["id"]), str_at(f, &["function", "name"]));
                match f.pointer("/function/arguments") {
                    Some(Value::String(piece)) => self.0.calls.push_arguments(index, piece),
                    Some(v @ Value::Object(_)) => {
                        self.0.calls.push_arguments(index, &v.to_string())
                    }
                    _ => {}
                }
            }
            if let Some(f) = str_at(choice, &["finish_reason"]) {
                self.0.reply.finish_reason = Some(f);
            }
        }
        if v.get("usage").is_some_and(|u| !u.is_null()) {
            self.0.reply.usage = usage(&v);
        }
        Ok(false)
    }

    fn finish(self: Box<Self>) -> Result<ChatResponse, AdapterError> {
        self.0.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::adapter::tools::tests::{
        assert_grep_then_stop, conversation, grep_parameters, stream,
    };
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

    #[test]
    fn encodes_tools_calls_and_results() {
        let w = build("http://h/v1", "m", &conversation());
        let b = &w.body;
        let function = |f: Value| json!({"type": "function", "function": f});
        let grep = json!({"name": "grep", "description": "Search the files.",
            "parameters": grep_parameters()});
        let stop = json!({"name": "stop", "description": "End the session.",
            "parameters": {"type": "object", "properties": {}}});
        assert_eq!(b["tools"], json!([function(grep), function(stop)]));
        assert_eq!(
            b["messages"][2],
            json!({"role": "assistant", "content": "Looking.", "tool_calls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "grep", "arguments": r#"{"pattern":"fn main"}"#}},
                {"id": "c2", "type": "function",
                 "function": {"name": "grep", "arguments": r#"{"pattern":"["}"#}}]})
        );
        assert_eq!(
            b["messages"][3],
            json!({"role": "tool", "tool_call_id": "c1", "content": "src/main.rs:1"})
        );
        assert_eq!(
            b["messages"][4],
            json!({"role": "tool", "tool_call_id": "c2", "content": "bad pattern"})
        );
        assert_eq!(
            b["messages"][5],
            json!({"role": "user", "content": "[context 70% full]"})
        );
        assert!(ChatRequest::new(None, "hi", 5).tools.is_empty());
        assert!(build("http://h", "m", &ChatRequest::new(None, "hi", 5))
            .body
            .get("tools")
            .is_none());
    }

    #[test]
    fn parses_tool_calls_and_cached_tokens() {
        let v = json!({"model": "m", "choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "grep", "arguments": "{\"pattern\":\"x\"}"}},
                {"type": "function", "function": {"name": "stop", "arguments": ""}}]}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5,
                      "prompt_tokens_details": {"cached_tokens": 40}}});
        let r = parse(&v).unwrap();
        assert_eq!(r.text, "");
        assert_grep_then_stop(&r, ["call_a", "call_1"], "x");
        assert_eq!(
            (r.usage.context_tokens(), r.usage.cache_read_input_tokens),
            (50, 40)
        );
        let mut bad = v.clone();
        bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = json!("{\"pat");
        let e = parse(&bad).unwrap_err();
        assert!(matches!(e, AdapterError::Malformed(_)), "{e}");
        assert!(e.to_string().contains("`grep` tool call"), "{e}");
    }

    #[test]
    fn streamed_tool_calls_join_their_argument_fragments() {
        let chunk = |delta: Value, finish: Value| {
            (
                None,
                json!({"model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
            )
        };
        let call = |index: u64, f: Value| json!({"tool_calls": [{"index": index, "function": f}]});
        let mut events = vec![
            chunk(json!({"role": "assistant", "content": "Hm."}), Value::Null),
            chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                    "function": {"name": "grep", "arguments": ""}}]}),
                Value::Null,
            ),
            chunk(call(0, json!({"arguments": "{\"pat"})), Value::Null),
            chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_b",
                    "function": {"name": "stop", "arguments": "{}"}}]}),
                Value::Null,
            ),
            chunk(call(0, json!({"arguments": "tern\": \"x\"}"})), Value::Null),
            chunk(json!({}), json!("tool_calls")),
        ];
        let done = (None, json!("[DONE]"));
        let mut all = events.clone();
        all.push(done.clone());
        let r = stream(Box::<Acc>::default(), &all).unwrap();
        assert_eq!(r.text, "Hm.");
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_grep_then_stop(&r, ["call_a", "call_b"], "x");
        events.insert(5, chunk(call(1, json!({"arguments": "}"})), Value::Null));
        events.push(done);
        let e = stream(Box::<Acc>::default(), &events).unwrap_err();
        assert!(
            e.to_string().contains("`stop` tool call are not JSON"),
            "{e}"
        );
    }
}
