//! The response to a scripted reply ([`build`]): its raw text or body as written, the
//! protocol's error, or a success body — what the assistant says (text, tool calls) shaped the
//! way each of the three services sends it, whole or streamed.

use serde_json::{json, Value};

use super::script::{Reply, Usage, WireProtocol};
use super::wire::{error_body, Built, Ctx, Delivery, JSON, SSE};

/// Builds the response for a reply, honouring the `raw` > `body` > error > success order.
pub(crate) fn build(ctx: &Ctx<'_>, reply: &Reply) -> Built {
    let streaming = ctx.delivery == Delivery::Sse;
    let content_type = if streaming { SSE } else { JSON };
    if let Some(raw) = &reply.raw {
        return Built::whole(reply.status, content_type, raw.clone().into_bytes());
    }
    if let Some(body) = &reply.body {
        return Built::whole(reply.status, JSON, body.to_string().into_bytes());
    }
    if reply.status >= 400 {
        let message = reply
            .text
            .clone()
            .unwrap_or_else(|| format!("fake-llm: scripted error {}", reply.status));
        let body = error_body(ctx.protocol, reply.status, &message);
        return Built::whole(reply.status, JSON, body.to_string().into_bytes());
    }
    let mut built = success(ctx, reply);
    built.status = reply.status;
    built
}

/// What the assistant says: text, then tool calls.
struct Answer {
    text: String,
    calls: Vec<Call>,
}

/// One tool call as sent: the id the server gave it, the tool and its arguments.
struct Call {
    id: String,
    name: String,
    arguments: Value,
}

impl Answer {
    /// The reply's answer in `ctx`'s protocol. A reply's `json` is text, except on Anthropic
    /// where it is a call of the tool the request forces (or offers first), as the real API
    /// delivers structured output.
    fn of(ctx: &Ctx<'_>, reply: &Reply) -> Answer {
        let text = reply.text.clone().unwrap_or_default();
        let forced = match ctx.protocol {
            WireProtocol::Anthropic => anthropic_tool_name(ctx.request),
            _ => None,
        };
        let calls: Vec<(String, Value)> = match (&reply.json, forced) {
            (Some(input), Some(name)) => vec![(name, input.clone())],
            (Some(json), None) => {
                return Answer {
                    text: json.to_string(),
                    calls: Vec::new(),
                }
            }
            (None, _) => reply
                .tool_calls
                .iter()
                .map(|c| (c.name.clone(), c.arguments.clone()))
                .collect(),
        };
        let prefix = match ctx.protocol {
            WireProtocol::OpenAi => "call_fake",
            WireProtocol::Anthropic => "toolu_fake",
            // Gemini gives calls no ids; this one is never sent.
            WireProtocol::Gemini => "",
        };
        let calls = calls
            .into_iter()
            .enumerate()
            .map(|(i, (name, arguments))| Call {
                id: format!("{prefix}{}_{i}", ctx.seq),
                name,
                arguments,
            })
            .collect();
        Answer { text, calls }
    }

    fn chars(&self) -> usize {
        self.text.chars().count()
            + self
                .calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum::<usize>()
    }

    /// The text, unless the answer is only tool calls.
    fn has_text(&self) -> bool {
        !self.text.is_empty() || self.calls.is_empty()
    }
}

/// The tool an Anthropic request forces (`tool_choice.name`) or offers first.
fn anthropic_tool_name(request: Option<&Value>) -> Option<String> {
    let request = request?;
    let forced = request
        .get("tool_choice")
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str);
    let first = request
        .get("tools")
        .and_then(Value::as_array)
        .and_then(|t| t.first())
        .and_then(|t| t.get("name"))
        .and_then(Value::as_str);
    forced.or(first).map(str::to_string)
}

/// Splits text into 2–4 pieces (fewer only when it has fewer chars) on char boundaries, so
/// clients must really concatenate deltas.
pub(crate) fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let n = (2 + chars.len() % 3).min(chars.len());
    let size = chars.len().div_ceil(n);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

fn sse_data(value: &Value) -> String {
    format!("data: {value}\n\n")
}

fn sse_event(name: &str, value: &Value) -> String {
    format!("event: {name}\ndata: {value}\n\n")
}

/// The 200 answer to a reply without a body override.
pub(crate) fn success(ctx: &Ctx<'_>, reply: &Reply) -> Built {
    let answer = Answer::of(ctx, reply);
    let usage = reply.usage.unwrap_or(Usage {
        input_tokens: (ctx.request_chars as u64 / 4).max(1),
        output_tokens: (answer.chars() as u64 / 4).max(1),
    });
    let model = reply
        .model
        .clone()
        .or_else(|| ctx.model.map(str::to_string))
        .unwrap_or_else(|| "fake-model".to_string());
    match ctx.protocol {
        WireProtocol::OpenAi => openai(ctx, &answer, usage, &model),
        WireProtocol::Anthropic => anthropic(ctx, &answer, usage, &model),
        WireProtocol::Gemini => gemini(ctx, &answer, usage, &model),
    }
}

/// OpenAI: calls in `message.tool_calls` with their arguments as JSON text; streamed, each
/// call starts with its id and name and its arguments follow in fragments by `index`.
fn openai(ctx: &Ctx<'_>, answer: &Answer, usage: Usage, model: &str) -> Built {
    let id = format!("chatcmpl-fake{}", ctx.seq);
    let finish = if answer.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    let usage_json = json!({"prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.input_tokens + usage.output_tokens});
    if ctx.delivery != Delivery::Sse {
        let content = Some(&answer.text).filter(|_| answer.has_text());
        let mut message = json!({"role": "assistant", "content": content, "refusal": null});
        if !answer.calls.is_empty() {
            let calls: Vec<Value> = answer
                .calls
                .iter()
                .map(|c| openai_call(c, c.arguments.to_string()))
                .collect();
            message["tool_calls"] = json!(calls);
        }
        let body = json!({
            "id": id, "object": "chat.completion", "created": 1_700_000_000u64, "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish}],
            "usage": usage_json,
        });
        return Built::whole(200, JSON, body.to_string().into_bytes());
    }
    let include_usage = ctx
        .request
        .and_then(|r| r.pointer("/stream_options/include_usage"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let chunk = |choices: Value| {
        let mut c = json!({"id": id, "object": "chat.completion.chunk",
            "created": 1_700_000_000u64, "model": model, "choices": choices});
        if include_usage {
            c["usage"] = Value::Null;
        }
        c
    };
    let mut deltas: Vec<Value> = Vec::new();
    if answer.has_text() {
        deltas.extend(pieces(&answer.text).iter().map(|p| json!({ "content": p })));
    }
    for (index, c) in answer.calls.iter().enumerate() {
        let mut first = openai_call(c, String::new());
        first["index"] = json!(index);
        deltas.push(json!({ "tool_calls": [first] }));
        for piece in pieces(&c.arguments.to_string()) {
            deltas
                .push(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}));
        }
    }
    // The first chunk names the role before anything else, as OpenAI's do.
    if let Some(Value::Object(first)) = deltas.first_mut() {
        let rest = std::mem::take(first);
        first.insert("role".into(), json!("assistant"));
        first.extend(rest);
    }
    let mut events: Vec<String> = deltas
        .into_iter()
        .map(|delta| {
            sse_data(&chunk(
                json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": null}]),
            ))
        })
        .collect();
    events.push(sse_data(&chunk(
        json!([{"index": 0, "delta": {}, "logprobs": null, "finish_reason": finish}]),
    )));
    if include_usage {
        let mut last = chunk(json!([]));
        last["usage"] = usage_json;
        events.push(sse_data(&last));
    }
    events.push("data: [DONE]\n\n".to_string());
    Built::events(events)
}

/// One entry of OpenAI's `tool_calls`, with `arguments` as JSON text (empty in the first
/// chunk of a streamed call, which also carries the call's `index`).
fn openai_call(c: &Call, arguments: String) -> Value {
    json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}})
}

/// Anthropic: a text block, then a `tool_use` block per call; streamed, a tool block starts
/// with an empty `input` and its JSON follows as `input_json_delta` fragments.
fn anthropic(ctx: &Ctx<'_>, answer: &Answer, usage: Usage, model: &str) -> Built {
    let id = format!("msg_fake{}", ctx.seq);
    let mut blocks: Vec<Value> = Vec::new();
    if answer.has_text() {
        blocks.push(json!({"type": "text", "text": answer.text}));
    }
    for c in &answer.calls {
        blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
    }
    let stop_reason = if answer.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    if ctx.delivery != Delivery::Sse {
        let body = json!({
            "id": id, "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": stop_reason, "stop_sequence": null,
            "usage": {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens},
        });
        return Built::whole(200, JSON, body.to_string().into_bytes());
    }
    let mut events = vec![
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": usage.input_tokens, "output_tokens": 1}}}),
        ),
        sse_event("ping", &json!({"type": "ping"})),
    ];
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas): (Value, Vec<Value>) = if block["type"] == "tool_use" {
            let mut start = block.clone();
            start["input"] = json!({});
            let partial = block["input"].to_string();
            let deltas = pieces(&partial)
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect();
            (start, deltas)
        } else {
            let text = block["text"].as_str().unwrap_or_default();
            let deltas = pieces(text)
                .into_iter()
                .map(|p| json!({"type": "text_delta", "text": p}))
                .collect();
            (json!({"type": "text", "text": ""}), deltas)
        };
        events.push(sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push(sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push(sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    events.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": usage.output_tokens}}),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    Built::events(events)
}

/// Gemini: a text part, then a `functionCall` part per call (no ids, finish reason `STOP`);
/// streamed, text comes in pieces and each call whole in a chunk of its own.
fn gemini(ctx: &Ctx<'_>, answer: &Answer, usage: Usage, model: &str) -> Built {
    let usage_json = json!({"promptTokenCount": usage.input_tokens,
        "candidatesTokenCount": usage.output_tokens,
        "totalTokenCount": usage.input_tokens + usage.output_tokens});
    let response_id = format!("fake{}", ctx.seq);
    let calls = answer
        .calls
        .iter()
        .map(|c| json!({"functionCall": {"name": c.name, "args": c.arguments}}));
    if ctx.delivery == Delivery::Whole {
        let text = Some(json!({"text": answer.text})).filter(|_| answer.has_text());
        let parts: Vec<Value> = text.into_iter().chain(calls).collect();
        let body = json!({
            "candidates": [{"content": {"role": "model", "parts": parts},
                "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage_json, "modelVersion": model, "responseId": response_id,
        });
        return Built::whole(200, JSON, body.to_string().into_bytes());
    }
    let texts = if answer.has_text() {
        pieces(&answer.text)
    } else {
        Vec::new()
    };
    let parts: Vec<Value> = texts
        .iter()
        .map(|piece| json!({ "text": piece }))
        .chain(calls)
        .collect();
    let last = parts.len() - 1;
    let chunks: Vec<Value> = parts
        .into_iter()
        .enumerate()
        .map(|(i, part)| {
            let mut candidate = json!({"content": {"role": "model", "parts": [part]}, "index": 0});
            let mut chunk = json!({"modelVersion": model, "responseId": response_id});
            if i == last {
                candidate["finishReason"] = json!("STOP");
                chunk["usageMetadata"] = usage_json.clone();
            }
            chunk["candidates"] = json!([candidate]);
            chunk
        })
        .collect();
    if ctx.delivery == Delivery::JsonArray {
        let body = Value::Array(chunks).to_string().into_bytes();
        return Built::whole(200, JSON, body);
    }
    // Gemini really separates SSE events with CRLF pairs; clients must cope.
    Built::events(
        chunks
            .iter()
            .map(|c| format!("data: {c}\r\n\r\n"))
            .collect(),
    )
}
