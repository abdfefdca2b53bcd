//! Anthropic Messages. Structured output travels as a forced tool call; the request's own
//! tools as `tool_use` / `tool_result` content blocks.

use serde_json::{json, Value};

use super::tools::{self, Streamed};
use super::wire::{str_at, u64_at, AdapterError, Auth, StreamAccumulator, WireRequest};
use crate::model::sse::SseEvent;
use crate::model::types::{ChatRequest, ChatResponse, Message, Speaker, ToolCall, Usage};

/// The API version header every request carries.
pub const API_VERSION: &str = "2023-06-01";

/// Builds `POST {base}/messages`.
pub fn build(base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    let messages: Vec<Value> = tools::wire_turns(&req.messages)
        .into_iter()
        .map(turn)
        .collect();
    let mut body = json!({"model": model_id, "max_tokens": req.max_tokens, "messages": messages});
    if let Some(system) = &req.system {
        body["system"] = json!(system);
    }
    if let Some(t) = req.temperature {
        body["temperature"] = json!(t);
    }
    let mut tools: Vec<Value> = req
        .tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema()}))
        .collect();
    if let Some(schema) = &req.schema {
        tools.push(json!({
            "name": schema.name,
            "description": "Record your answer. Call this tool exactly once with the complete answer.",
            "input_schema": schema.schema,
        }));
        body["tool_choice"] = json!({"type": "tool", "name": schema.name});
    }
    if !tools.is_empty() {
        body["tools"] = json!(tools);
    }
    if req.stream {
        body["stream"] = json!(true);
    }
    WireRequest {
        url: format!("{}/messages", base_url.trim_end_matches('/')),
        headers: vec![("anthropic-version", API_VERSION.to_string())],
        auth: Auth::Header("x-api-key"),
        body,
        answer_tool: req.schema.as_ref().map(|s| s.name.clone()),
    }
}

/// One wire turn (see [`tools::wire_turns`]): a lone plain message keeps its text as the
/// content, anything with tools becomes content blocks.
fn turn(msgs: &[Message]) -> Value {
    let role = match msgs[0].role {
        Speaker::Assistant => "assistant",
        Speaker::User | Speaker::Tool => "user",
    };
    if let [m] = msgs {
        if m.tool_calls.is_empty() && m.role != Speaker::Tool {
            return json!({"role": role, "content": m.content});
        }
    }
    let blocks: Vec<Value> = msgs.iter().flat_map(blocks).collect();
    json!({"role": role, "content": blocks})
}

/// A message's content blocks: a tool result is a `tool_result` block; any other turn is its
/// text (left out when empty, which the API refuses) and then a `tool_use` block per call.
fn blocks(m: &Message) -> Vec<Value> {
    if m.role == Speaker::Tool {
        let mut block = json!({"type": "tool_result",
            "tool_use_id": m.tool_result.as_ref().map(|r| &r.call_id), "content": m.content});
        if m.tool_result.as_ref().is_some_and(|r| r.is_error) {
            block["is_error"] = json!(true);
        }
        return vec![block];
    }
    let text = Some(&m.content)
        .filter(|t| !t.is_empty())
        .map(|t| json!({"type": "text", "text": t}));
    let calls = m
        .tool_calls
        .iter()
        .map(|c| json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
    text.into_iter().chain(calls).collect()
}

/// A `usage` object: the input tokens include what was read from and written to the cache.
fn usage(u: Option<&Value>) -> Usage {
    let Some(u) = u else {
        return Usage::default();
    };
    let cache_read = u64_at(u, &["cache_read_input_tokens"]);
    let cache_creation = u64_at(u, &["cache_creation_input_tokens"]);
    Usage {
        input_tokens: u64_at(u, &["input_tokens"]) + cache_read + cache_creation,
        output_tokens: u64_at(u, &["output_tokens"]),
        cache_read_input_tokens: cache_read,
        cache_creation_input_tokens: cache_creation,
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
    let mut tool_calls = Vec::new();
    for block in content {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(block.get("text").and_then(Value::as_str).unwrap_or("")),
            Some("tool_use") => {
                let name = str_at(block, &["name"]).ok_or_else(|| {
                    AdapterError::Malformed("a `tool_use` block has no `name`".into())
                })?;
                tool_calls.push(ToolCall {
                    id: str_at(block, &["id"])
                        .unwrap_or_else(|| tools::made_up_id(tool_calls.len())),
                    arguments: tools::arguments(&name, block.get("input"))?,
                    name,
                    signature: None,
                });
            }
            _ => {}
        }
    }
    Ok(ChatResponse {
        text,
        structured: None,
        tool_calls,
        usage: usage(v.get("usage")),
        model: str_at(v, &["model"]),
        finish_reason: str_at(v, &["stop_reason"]),
    })
}

/// Accumulates the Messages event stream until `message_stop`; a tool call is a
/// `content_block_start` of type `tool_use` whose input arrives as `input_json_delta`
/// fragments of that block's index.
#[derive(Default)]
pub struct Acc(Streamed);

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
                self.0.reply.model = str_at(&v, &["message", "model"]);
                let u = usage(v.pointer("/message/usage"));
                self.0.reply.usage = Usage {
                    output_tokens: 0,
                    ..u
                };
            }
            "content_block_start"
                if str_at(&v, &["content_block", "type"]).as_deref() == Some("tool_use") =>
            {
                self.0.calls.start(
                    block_index(&v),
                    str_at(&v, &["content_block", "id"]),
                    str_at(&v, &["content_block", "name"]),
                );
            }
            "content_block_delta" => match str_at(&v, &["delta", "type"]).as_deref() {
                Some("text_delta") => {
                    self.0
                        .reply
                        .text
                        .push_str(&str_at(&v, &["delta", "text"]).unwrap_or_default());
                }
                Some("input_json_delta") => {
                    let piece = str_at(&v, &["delta", "partial_json"]).unwrap_or_default();
                    self.0.calls.push_arguments(block_index(&v), &piece);
                }
                _ => {}
            },
            "message_delta" => {
                if let Some(r) = str_at(&v, &["delta", "stop_reason"]) {
                    self.0.reply.finish_reason = Some(r);
                }
                let out = u64_at(&v, &["usage", "output_tokens"]);
                if out > 0 {
                    self.0.reply.usage.output_tokens = out;
                }
            }
            "message_stop" => {
                self.0.done = true;
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

    fn finish(self: Box<Self>) -> Result<ChatResponse, AdapterError> {
        self.0.finish()
    }
}

/// The content block an event is about.
fn block_index(v: &Value) -> u64 {
    v.get("index").and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::adapter::tools::settle;
    use crate::model::adapter::tools::tests::{
        assert_grep_then_stop, calls, conversation, grep_parameters, stream,
    };
    use crate::model::types::OutputSchema;

    #[test]
    fn encodes_tools_as_tool_use_and_tool_result_blocks() {
        let w = build("http://h/v1", "m", &conversation());
        let b = &w.body;
        let grep = json!({"name": "grep", "description": "Search the files.",
            "input_schema": grep_parameters()});
        let stop = json!({"name": "stop", "description": "End the session.",
            "input_schema": {"type": "object", "properties": {}}});
        assert_eq!(b["tools"], json!([grep, stop]));
        assert!(b.get("tool_choice").is_none());
        assert_eq!(w.answer_tool, None);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(
            msgs.len(),
            3,
            "the results and the note share one user turn: {msgs:#?}"
        );
        assert_eq!(msgs[0], json!({"role": "user", "content": "find main"}));
        assert_eq!(
            msgs[1],
            json!({"role": "assistant", "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "c1", "name": "grep", "input": {"pattern": "fn main"}},
                {"type": "tool_use", "id": "c2", "name": "grep", "input": {"pattern": "["}}]})
        );
        assert_eq!(
            msgs[2],
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "src/main.rs:1"},
                {"type": "tool_result", "tool_use_id": "c2", "content": "bad pattern", "is_error": true},
                {"type": "text", "text": "[context 70% full]"}]})
        );
    }

    #[test]
    fn a_schema_is_one_more_tool_and_the_forced_one() {
        let mut req = conversation();
        req.schema = Some(OutputSchema {
            name: "answer".into(),
            schema: json!({"type": "object"}),
        });
        let w = build("http://h/v1", "m", &req);
        let names: Vec<&str> = w.body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert_eq!(names, vec!["grep", "stop", "answer"]);
        assert_eq!(
            w.body["tool_choice"],
            json!({"type": "tool", "name": "answer"})
        );
        assert_eq!(w.answer_tool.as_deref(), Some("answer"));
    }

    #[test]
    fn tool_use_blocks_become_calls_and_the_answer_tool_structured() {
        let v = json!({"type": "message", "model": "claude-x", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_1", "name": "grep", "input": {"pattern": "x"}},
                {"type": "tool_use", "id": "toolu_2", "name": "answer", "input": {"a": 1}}],
            "usage": {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 100,
                      "cache_creation_input_tokens": 20}});
        let r = parse(&v).unwrap();
        assert_eq!(r.text, "Let me look.");
        assert_eq!(r.structured, None);
        assert_eq!(
            calls(&r),
            vec![
                ("toolu_1", "grep", json!({"pattern": "x"})),
                ("toolu_2", "answer", json!({"a": 1}))
            ]
        );
        let u = r.usage;
        assert_eq!(
            (
                u.context_tokens(),
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens
            ),
            (123, 100, 20)
        );
        assert_eq!(u.output_tokens, 4);
        let settled = settle(r, Some("answer"));
        assert_eq!(settled.structured, Some(json!({"a": 1})));
        assert_eq!(settled.text, r#"{"a":1}"#);
        assert_eq!(
            calls(&settled),
            vec![("toolu_1", "grep", json!({"pattern": "x"}))]
        );

        let mut bad = v.clone();
        bad["content"][1]["input"] = json!("pattern=x");
        assert!(matches!(parse(&bad), Err(AdapterError::Malformed(_))));
    }

    #[test]
    fn streamed_tool_use_joins_partial_json() {
        let ev = |kind: &'static str, data: Value| (Some(kind), data);
        let delta = |index: u64, partial: &str| {
            ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": partial}}),
            )
        };
        let start_tool = |index: u64, id: &str, name: &str| {
            ev(
                "content_block_start",
                json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            )
        };
        let events = |partial: &str| {
            vec![
                ev(
                    "message_start",
                    json!({"type": "message_start", "message": {"model": "claude-x",
                        "usage": {"input_tokens": 5, "cache_read_input_tokens": 7, "output_tokens": 1}}}),
                ),
                ev(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
                ),
                ev(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": "Looking."}}),
                ),
                start_tool(1, "toolu_1", "grep"),
                delta(1, "{\"pattern\""),
                delta(1, partial),
                start_tool(2, "toolu_2", "stop"),
                ev(
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                        "usage": {"output_tokens": 9}}),
                ),
                ev("message_stop", json!({"type": "message_stop"})),
            ]
        };
        let r = stream(Box::<Acc>::default(), &events(": \"fn main\"}")).unwrap();
        assert_eq!(r.text, "Looking.");
        assert_grep_then_stop(&r, ["toolu_1", "toolu_2"], "fn main");
        assert_eq!(
            (
                r.usage.input_tokens,
                r.usage.cache_read_input_tokens,
                r.usage.output_tokens
            ),
            (12, 7, 9)
        );
        let e = stream(Box::<Acc>::default(), &events(": fn main")).unwrap_err();
        assert!(
            e.to_string().contains("`grep` tool call are not JSON"),
            "{e}"
        );
    }
}
