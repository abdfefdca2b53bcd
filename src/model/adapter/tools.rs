//! What the three adapters share about tool calls: checking arguments, assembling calls
//! streamed in fragments, grouping tool results into wire turns, and taking a forced answer
//! tool's call out of the list of calls.

use serde_json::{Map, Value};

use super::wire::AdapterError;
use crate::model::types::{ChatResponse, Message, Speaker, ToolCall};

/// Arguments sent as JSON text (OpenAI's `function.arguments`, a stream's joined fragments):
/// empty text means no arguments, anything else must be a JSON object.
pub(crate) fn arguments_from_text(tool: &str, text: &str) -> Result<Value, AdapterError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| {
        AdapterError::Malformed(format!(
            "the arguments of the `{tool}` tool call are not JSON ({e}): {}",
            crate::bounded::clip(text, crate::bounded::ITEM_BYTES)
        ))
    })?;
    arguments(tool, Some(&value))
}

/// Arguments sent as a JSON value (Anthropic's `input`, Gemini's `args`, some OpenAI-compatible
/// servers): missing or `null` means no arguments, anything else must be an object.
pub(crate) fn arguments(tool: &str, value: Option<&Value>) -> Result<Value, AdapterError> {
    match value {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(v @ Value::Object(_)) => Ok(v.clone()),
        Some(other) => Err(AdapterError::Malformed(format!(
            "the arguments of the `{tool}` tool call are not a JSON object: {}",
            crate::bounded::clip(&other.to_string(), crate::bounded::ITEM_BYTES)
        ))),
    }
}

/// The id given to the `n`th call (from 0) of an answer whose provider sent none.
pub(crate) fn made_up_id(n: usize) -> String {
    format!("call_{n}")
}

/// Tool calls arriving in pieces over a stream, keyed by the index the protocol gives each
/// call (OpenAI's `tool_calls[].index`, Anthropic's content block index), kept in the order
/// they started.
#[derive(Debug, Default)]
pub(crate) struct PartialCalls {
    calls: Vec<(u64, Partial)>,
}

#[derive(Debug, Default)]
struct Partial {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

impl PartialCalls {
    fn entry(&mut self, index: u64) -> &mut Partial {
        let at = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(at) => at,
            None => {
                self.calls.push((index, Partial::default()));
                self.calls.len() - 1
            }
        };
        &mut self.calls[at].1
    }

    /// Notes call `index`'s id and name; the first of each that is not empty wins, since
    /// some servers repeat them on every fragment.
    pub(crate) fn start(&mut self, index: u64, id: Option<String>, name: Option<String>) {
        let call = self.entry(index);
        if call.id.is_none() {
            call.id = id.filter(|s| !s.is_empty());
        }
        if call.name.is_none() {
            call.name = name.filter(|s| !s.is_empty());
        }
    }

    /// Appends a fragment of call `index`'s JSON arguments.
    pub(crate) fn push_arguments(&mut self, index: u64, fragment: &str) {
        self.entry(index).arguments.push_str(fragment);
    }

    /// The finished calls; a call without a name, or whose joined arguments are not a JSON
    /// object, is a malformed stream.
    pub(crate) fn finish(self) -> Result<Vec<ToolCall>, AdapterError> {
        self.calls
            .into_iter()
            .enumerate()
            .map(|(n, (_, p))| {
                let name = p.name.ok_or_else(|| {
                    AdapterError::Malformed("a streamed tool call has no name".into())
                })?;
                Ok(ToolCall {
                    id: p.id.unwrap_or_else(|| made_up_id(n)),
                    arguments: arguments_from_text(&name, &p.arguments)?,
                    name,
                    signature: None,
                })
            })
            .collect()
    }
}

/// A streamed answer being put together, for the protocols that send tool calls in
/// fragments and close the stream with a terminal event (OpenAI's `[DONE]`, Anthropic's
/// `message_stop`): the reply so far, its calls' fragments, and whether that event came.
#[derive(Default)]
pub(crate) struct Streamed {
    /// Text, usage, model and finish reason as they arrived.
    pub(crate) reply: ChatResponse,
    /// The tool calls, still in fragments.
    pub(crate) calls: PartialCalls,
    /// The terminal event came.
    pub(crate) done: bool,
}

impl Streamed {
    /// The whole answer; a stream cut before its terminal event is incomplete, however
    /// much text it carried.
    pub(crate) fn finish(self) -> Result<ChatResponse, AdapterError> {
        if !self.done {
            return Err(AdapterError::Incomplete);
        }
        let mut reply = self.reply;
        reply.tool_calls = self.calls.finish()?;
        Ok(reply)
    }
}

/// The conversation cut into wire turns, for the protocols that carry tool results inside a
/// user turn (Anthropic, Gemini): a tool result joins the turn before it when that turn is
/// made of tool results, and so does a user turn right after them, so every result of one
/// assistant turn (and a note after them) travels as one user turn, as those APIs require.
/// Every other message is a turn of its own, exactly as it was sent before tools existed.
pub(crate) fn wire_turns(messages: &[Message]) -> Vec<&[Message]> {
    let mut turns = Vec::new();
    let mut start = 0;
    for (i, m) in messages.iter().enumerate().skip(1) {
        let joins = messages[start].role == Speaker::Tool
            && matches!(m.role, Speaker::Tool | Speaker::User);
        if !joins {
            turns.push(&messages[start..i]);
            start = i;
        }
    }
    if !messages.is_empty() {
        turns.push(&messages[start..]);
    }
    turns
}

/// Moves the call of `answer_tool` (the tool a structured request forced, on protocols that
/// deliver structured output that way) out of the calls: its arguments become the structured
/// answer and the text. Every other call stays a call.
pub fn settle(mut r: ChatResponse, answer_tool: Option<&str>) -> ChatResponse {
    let Some(tool) = answer_tool else {
        return r;
    };
    if let Some(at) = r.tool_calls.iter().position(|c| c.name == tool) {
        let call = r.tool_calls.remove(at);
        r.text = call.arguments.to_string();
        r.structured = Some(call.arguments);
    }
    r
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::adapter::StreamAccumulator;
    use crate::model::sse::SseEvent;
    use crate::model::types::{ChatRequest, ToolSpec};
    use serde_json::json;

    /// The argument schema of [`conversation`]'s `grep` tool.
    pub(crate) fn grep_parameters() -> Value {
        json!({"type": "object", "properties": {"pattern": {"type": "string"}},
               "required": ["pattern"], "additionalProperties": false})
    }

    /// A request offering `grep` (with arguments) and `stop` (without), whose history holds
    /// an assistant turn that called `grep` twice, both results (the second an error), and a
    /// user note after them.
    pub(crate) fn conversation() -> ChatRequest {
        let grep = |id: &str, pattern: &str| ToolCall {
            id: id.into(),
            name: "grep".into(),
            arguments: json!({ "pattern": pattern }),
            signature: Some(format!("sig-{id}")),
        };
        let (first, second) = (grep("c1", "fn main"), grep("c2", "["));
        let mut req = ChatRequest::new(Some("sys".into()), "find main", 100);
        req.tools = vec![
            ToolSpec::new("grep", "Search the files.", grep_parameters()),
            ToolSpec::new("stop", "End the session.", Value::Null),
        ];
        req.messages.extend([
            Message::assistant_with_calls("Looking.", vec![first.clone(), second.clone()]),
            Message::tool_result(&first, "src/main.rs:1"),
            Message::tool_error(&second, "bad pattern"),
            Message::user("[context 70% full]"),
        ]);
        req
    }

    /// Feeds SSE events (`event:` name, `data:` JSON; a JSON string is sent as its bare text,
    /// like `[DONE]`) to `acc` and finishes it.
    pub(crate) fn stream(
        mut acc: Box<dyn StreamAccumulator>,
        events: &[(Option<&str>, Value)],
    ) -> Result<ChatResponse, AdapterError> {
        for (event, data) in events {
            acc.event(&SseEvent {
                event: event.map(str::to_string),
                data: data
                    .as_str()
                    .map_or_else(|| data.to_string(), str::to_string),
            })?;
        }
        acc.finish()
    }

    /// Asserts that `r` called `grep` with `pattern`, then `stop` without arguments, under
    /// these ids (the calls every adapter test decodes).
    pub(crate) fn assert_grep_then_stop(r: &ChatResponse, ids: [&str; 2], pattern: &str) {
        let expected = vec![
            (ids[0], "grep", json!({ "pattern": pattern })),
            (ids[1], "stop", json!({})),
        ];
        assert_eq!(calls(r), expected);
    }

    /// The calls of a response as (id, name, arguments).
    pub(crate) fn calls(r: &ChatResponse) -> Vec<(&str, &str, Value)> {
        r.tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.clone()))
            .collect()
    }

    #[test]
    fn arguments_must_be_a_json_object() {
        assert_eq!(arguments_from_text("t", " ").unwrap(), json!({}));
        assert_eq!(
            arguments_from_text("t", r#"{"a":1}"#).unwrap(),
            json!({"a": 1})
        );
        let e = arguments_from_text("grep", r#"{"a":"#).unwrap_err();
        assert!(
            e.to_string().contains("`grep` tool call are not JSON"),
            "{e}"
        );
        let e = arguments("grep", Some(&json!([1]))).unwrap_err();
        assert!(e.to_string().contains("not a JSON object"), "{e}");
        assert_eq!(arguments("t", None).unwrap(), json!({}));
    }

    #[test]
    fn partial_calls_join_fragments_in_start_order() {
        let mut p = PartialCalls::default();
        p.start(3, Some("b".into()), Some("second".into()));
        p.start(1, None, Some("first".into()));
        p.push_arguments(3, r#"{"x""#);
        p.start(3, Some("ignored".into()), Some("ignored".into()));
        p.push_arguments(3, ":2}");
        let r = ChatResponse {
            tool_calls: p.finish().unwrap(),
            ..ChatResponse::default()
        };
        assert_eq!(
            calls(&r),
            vec![
                ("b", "second", json!({"x": 2})),
                ("call_1", "first", json!({}))
            ]
        );
        let mut p = PartialCalls::default();
        p.push_arguments(0, "{}");
        assert!(p.finish().is_err(), "a call without a name is malformed");
    }

    #[test]
    fn tool_results_and_a_note_after_them_share_a_turn() {
        let call = ToolCall {
            id: "c".into(),
            name: "t".into(),
            arguments: json!({}),
            signature: None,
        };
        let msgs = vec![
            Message::user("a"),
            Message::user("b"),
            Message::assistant_with_calls("", vec![call.clone(), call.clone()]),
            Message::tool_result(&call, "1"),
            Message::tool_error(&call, "2"),
            Message::user("note"),
            Message::assistant("done"),
        ];
        let sizes: Vec<usize> = wire_turns(&msgs).iter().map(|t| t.len()).collect();
        assert_eq!(sizes, vec![1, 1, 1, 3, 1]);
        assert!(wire_turns(&[]).is_empty());
    }

    #[test]
    fn settle_takes_out_only_the_answer_tool() {
        let call = |name: &str| ToolCall {
            id: name.into(),
            name: name.into(),
            arguments: json!({"n": name}),
            signature: None,
        };
        let r = ChatResponse {
            text: "preamble".into(),
            tool_calls: vec![call("other"), call("answer")],
            ..ChatResponse::default()
        };
        let settled = settle(r.clone(), Some("answer"));
        assert_eq!(settled.structured, Some(json!({"n": "answer"})));
        assert_eq!(settled.text, r#"{"n":"answer"}"#);
        assert_eq!(settled.tool_calls, vec![call("other")]);
        assert_eq!(settle(r.clone(), None), r);
    }
}
