//! Scripted tool calls: the script forms, and each protocol's rendering, whole and streamed,
//! checked both as raw JSON and through the client's own decoders.

use serde_json::{json, Value};

use super::tests::{json_of, post, sse_json};
use super::*;
use crate::config::Protocol;
use crate::model::adapter;
use crate::model::sse::SseDecoder;
use crate::model::ChatResponse;

const TOML_TOOLS: &str = r#"
[[rules]]
[[rules.responses]]
text = "Looking."
tool_calls = [{ name = "grep", arguments = { pattern = "fn main" } }, { name = "stop" }]
"#;

#[test]
fn tool_calls_have_a_script_form_and_exclude_json() {
    let script = Script::from_toml_str(TOML_TOOLS).expect("parses");
    let expected = Reply::tool_calls(vec![
        ("grep", json!({"pattern": "fn main"})),
        ("stop", json!({})),
    ])
    .with_text("Looking.");
    assert_eq!(script.rules[0].responses, vec![expected]);
    let json = serde_json::to_string(&script).unwrap();
    assert_eq!(Script::from_json_str(&json).unwrap(), script);

    let both =
        "[[rules]]\n[[rules.responses]]\njson = { a = 1 }\ntool_calls = [{ name = \"t\" }]\n";
    let err = Script::from_toml_str(both).unwrap_err();
    assert!(err.to_string().contains("pick one"), "{err}");
}

/// The answer to `body` POSTed to `path`, raw (the whole body, or the SSE events' JSON) and
/// decoded by the client's adapter for `protocol`.
async fn exchange(
    server: &FakeServer,
    protocol: Protocol,
    path: &str,
    body: Value,
) -> (Vec<Value>, ChatResponse) {
    let streamed = body["stream"] == true || path.contains("alt=sse");
    let text = post(server, path, body).await.text().await.unwrap();
    if !streamed {
        let raw: Value = serde_json::from_str(&text).unwrap();
        return (
            vec![raw],
            adapter::parse(protocol, text.as_bytes()).unwrap(),
        );
    }
    let mut acc = adapter::stream_accumulator(protocol);
    let mut decoder = SseDecoder::default();
    for ev in decoder
        .push(text.as_bytes())
        .into_iter()
        .chain(decoder.finish())
    {
        acc.event(&ev).unwrap();
    }
    (sse_json(&text), acc.finish().unwrap())
}

fn names_and_arguments(r: &ChatResponse) -> Vec<(&str, Value)> {
    r.tool_calls
        .iter()
        .map(|c| (c.name.as_str(), c.arguments.clone()))
        .collect()
}

/// How many raw events hold a fragment found at `pointer`.
fn fragments(events: &[Value], pointer: &str) -> usize {
    events
        .iter()
        .filter(|e| e.pointer(pointer).is_some())
        .count()
}

#[tokio::test]
async fn tool_calls_render_in_every_protocol_whole_and_streamed() {
    let reply = Reply::tool_calls(vec![
        (
            "grep",
            json!({"pattern": "fn main", "paths": ["src", "tests"]}),
        ),
        ("stop", json!({})),
    ])
    .with_text("Looking.");
    let server = FakeServer::start(Script::default().rule(Rule::named("t").reply(reply)))
        .await
        .unwrap();
    let expected = vec![
        (
            "grep",
            json!({"pattern": "fn main", "paths": ["src", "tests"]}),
        ),
        ("stop", json!({})),
    ];
    let gemini = "/v1beta/models/g:generateContent";
    let gemini_sse = "/v1beta/models/g:streamGenerateContent?alt=sse";
    let cases = [
        (Protocol::Openai, "/v1/chat/completions", false),
        (Protocol::Openai, "/v1/chat/completions", true),
        (Protocol::Anthropic, "/v1/messages", false),
        (Protocol::Anthropic, "/v1/messages", true),
        (Protocol::Gemini, gemini, false),
        (Protocol::Gemini, gemini_sse, false),
    ];
    for (protocol, path, stream) in cases {
        let body = json!({"model": "m", "messages": [], "stream": stream});
        let (raw, r) = exchange(&server, protocol, path, body).await;
        let case = format!("{protocol:?} {path} stream={stream}");
        assert_eq!(r.text, "Looking.", "{case}");
        assert_eq!(names_and_arguments(&r), expected, "{case}");
        match (protocol, raw.len() > 1) {
            (Protocol::Openai, false) => {
                let call = &raw[0]["choices"][0]["message"]["tool_calls"][0];
                assert_eq!(call["type"], "function");
                assert!(call["function"]["arguments"].is_string(), "{call}");
                assert_eq!(raw[0]["choices"][0]["finish_reason"], "tool_calls");
            }
            (Protocol::Openai, true) => {
                let args = fragments(&raw, "/choices/0/delta/tool_calls/0/function/arguments");
                assert!(args >= 4, "arguments come in fragments: {raw:#?}");
                assert!(r.tool_calls[0].id.starts_with("call_fake"), "{case}");
            }
            (Protocol::Anthropic, false) => {
                assert_eq!(raw[0]["content"][1]["type"], "tool_use");
                assert_eq!(raw[0]["stop_reason"], "tool_use");
            }
            (Protocol::Anthropic, true) => {
                let partial = fragments(&raw, "/delta/partial_json");
                assert!(partial >= 4, "input comes in fragments: {raw:#?}");
                assert!(r.tool_calls[0].id.starts_with("toolu_fake"), "{case}");
            }
            (Protocol::Gemini, _) => {
                let call_parts = fragments(&raw, "/candidates/0/content/parts/0/functionCall")
                    + fragments(&raw, "/candidates/0/content/parts/1/functionCall");
                assert!(call_parts >= 1, "{raw:#?}");
                assert!(
                    !raw.iter().any(|e| e.to_string().contains("\"id\"")),
                    "{case}"
                );
            }
        }
    }

    // Only calls, no text: OpenAI sends `content: null`, Anthropic no text block.
    let server = FakeServer::start(
        Script::default()
            .rule(Rule::named("t").reply(Reply::tool_calls(vec![("stop", json!({}))]))),
    )
    .await
    .unwrap();
    let v = json_of(post(&server, "/v1/chat/completions", json!({"model": "m"})).await).await;
    assert_eq!(v["choices"][0]["message"]["content"], Value::Null);
    let v = json_of(post(&server, "/v1/messages", json!({"model": "m"})).await).await;
    assert_eq!(v["content"].as_array().map(Vec::len), Some(1), "{v}");
}
