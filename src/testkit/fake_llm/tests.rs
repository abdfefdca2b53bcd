//! Over-the-wire tests of the happy paths: body shapes, streams, matching, recording.

use serde_json::{json, Value};

use super::answer::pieces;
use super::*;

/// A client that never goes through a proxy, whatever the environment says.
pub(super) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client builds")
}

pub(super) async fn post(server: &FakeServer, path: &str, body: Value) -> reqwest::Response {
    post_url(format!("{}{}", server.base_url(), path), &body).await
}

/// POSTs `body` as JSON to `url`.
async fn post_url(url: String, body: &Value) -> reqwest::Response {
    client()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

async fn get(url: String) -> reqwest::Response {
    client().get(url).send().await.expect("request sent")
}

/// The body of `resp`, parsed as JSON.
pub(super) async fn json_of(resp: reqwest::Response) -> Value {
    resp.json().await.expect("the body is JSON")
}

/// The `data:` payloads of an SSE body, parsed as JSON where possible.
fn sse_data(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("data: "))
        .map(str::to_string)
        .collect()
}

pub(super) fn sse_json(text: &str) -> Vec<Value> {
    sse_data(text)
        .iter()
        .filter(|d| d.as_str() != "[DONE]")
        .map(|d| serde_json::from_str(d).expect("data is JSON"))
        .collect()
}

/// The [`sse_json`] events of the streamed answer to `body` POSTed to `path`.
async fn streamed_events(server: &FakeServer, path: &str, body: Value) -> Vec<Value> {
    sse_json(&post(server, path, body).await.text().await.unwrap())
}

const TOML_EXAMPLE: &str = r#"
[[rules]]
name = "arch"
protocol = "openai"
model = "model-a"
contains = ["ROLE: architect"]
[[rules.responses]]
status = 429
headers = { "retry-after" = "0" }
[[rules.responses]]
text = "hello"
usage = { input_tokens = 12, output_tokens = 3 }
"#;

#[test]
fn toml_example_parses_and_json_round_trips() {
    let script = Script::from_toml_str(TOML_EXAMPLE).expect("parses");
    let rule = &script.rules[0];
    assert_eq!(rule.name.as_deref(), Some("arch"));
    assert_eq!(rule.protocol, Some(WireProtocol::OpenAi));
    assert!(rule.repeat_last);
    assert_eq!(rule.responses[0].status, 429);
    assert_eq!(rule.responses[0].headers["retry-after"], "0");
    assert_eq!(rule.responses[1].status, 200);
    assert_eq!(
        rule.responses[1].usage,
        Some(Usage {
            input_tokens: 12,
            output_tokens: 3
        })
    );

    let json = serde_json::to_string(&script).unwrap();
    assert_eq!(Script::from_json_str(&json).unwrap(), script);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.toml");
    std::fs::write(&path, TOML_EXAMPLE).unwrap();
    assert_eq!(Script::load(&path).unwrap(), script);
    let path = dir.path().join("s.json");
    std::fs::write(&path, &json).unwrap();
    assert_eq!(Script::load(&path).unwrap(), script);
    assert!(matches!(
        Script::load(dir.path().join("s.yaml")),
        Err(ScriptError::Extension(_))
    ));
}

#[test]
fn bad_scripts_are_rejected() {
    let typo = "[[rules]]\nmodle = \"x\"\n[[rules.responses]]\ntext = \"a\"\n";
    assert!(matches!(
        Script::from_toml_str(typo),
        Err(ScriptError::Toml(_))
    ));
    let empty = "[[rules]]\nname = \"lonely\"\n";
    assert!(matches!(
        Script::from_toml_str(empty),
        Err(ScriptError::Invalid(_))
    ));
    let fault = "[[rules]]\n[[rules.responses]]\nfault = \"explode\"\n";
    assert!(Script::from_toml_str(fault).is_err());
}

#[test]
fn pieces_split_on_char_boundaries() {
    assert_eq!(pieces(""), vec![String::new()]);
    assert_eq!(pieces("a"), vec!["a".to_string()]);
    for text in ["hello", "héllo wörld ✓", "abcdefgh", "ab"] {
        let p = pieces(text);
        assert!(p.len() >= 2 && p.len() <= 4, "{text}: {p:?}");
        assert_eq!(p.concat(), text);
    }
}

#[tokio::test]
async fn openai_whole_and_stream() {
    let script =
        Script::default().rule(Rule::named("a").reply(Reply::text("hello world").usage(7, 2)));
    let server = FakeServer::start(script).await.unwrap();

    let resp = post(
        &server,
        "/v1/chat/completions",
        json!({"model": "m1", "messages": []}),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let v = json_of(resp).await;
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["model"], "m1");
    assert_eq!(v["choices"][0]["message"]["role"], "assistant");
    assert_eq!(v["choices"][0]["message"]["content"], "hello world");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        v["usage"],
        json!({"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9})
    );

    let body = json!({"model": "m1", "stream": true, "stream_options": {"include_usage": true}});
    let resp = post(&server, "/v1/chat/completions", body).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    assert_eq!(sse_data(&text).last().map(String::as_str), Some("[DONE]"));
    let chunks = sse_json(&text);
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "hello world");
    let deltas = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["content"].is_string())
        .count();
    assert!((2..=4).contains(&deltas), "{deltas} pieces");
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk"));
    let n = chunks.len();
    assert_eq!(chunks[n - 2]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[n - 1]["choices"], json!([]));
    assert_eq!(chunks[n - 1]["usage"]["total_tokens"], 9);

    // Without include_usage there is no usage chunk.
    let chunks = streamed_events(
        &server,
        "/v1/chat/completions",
        json!({"model": "m1", "stream": true}),
    )
    .await;
    assert!(chunks.iter().all(|c| c.get("usage").is_none()));
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert!(!reqs[0].stream && reqs[1].stream);
    assert_eq!(reqs[0].protocol, Some(WireProtocol::OpenAi));
}

#[tokio::test]
async fn anthropic_text_tool_use_and_streams() {
    let script = Script::default()
        .rule(
            Rule::named("tool")
                .contains("give json")
                .reply(Reply::json(json!({"verdict": "ok", "n": 1}))),
        )
        .rule(Rule::named("text").reply(Reply::text("bonjour").reported_model("other-model")));
    let server = FakeServer::start(script).await.unwrap();

    let plain = json!({"model": "claude-x", "messages": []});
    let v = json_of(post(&server, "/v1/messages", plain).await).await;
    assert_eq!(v["type"], "message");
    assert_eq!(v["role"], "assistant");
    assert_eq!(v["model"], "other-model");
    assert_eq!(v["content"], json!([{"type": "text", "text": "bonjour"}]));
    assert_eq!(v["stop_reason"], "end_turn");
    assert!(v["usage"]["input_tokens"].as_u64().unwrap() >= 1);
    assert!(v["usage"]["output_tokens"].as_u64().unwrap() >= 1);

    let tools =
        json!([{"name": "first_tool", "input_schema": {}}, {"name": "emit", "input_schema": {}}]);
    let request = json!({"model": "claude-x", "messages": [{"role": "user", "content": "give json"}],
        "tools": tools, "tool_choice": {"type": "tool", "name": "emit"}});
    let v = json_of(post(&server, "/v1/messages", request.clone()).await).await;
    assert_eq!(v["stop_reason"], "tool_use");
    assert_eq!(v["content"][0]["type"], "tool_use");
    assert_eq!(v["content"][0]["name"], "emit");
    assert_eq!(v["content"][0]["input"], json!({"verdict": "ok", "n": 1}));
    assert!(v["content"][0]["id"]
        .as_str()
        .unwrap()
        .starts_with("toolu_"));

    // Streamed tool use: partial_json pieces reassemble into the input.
    let mut streamed = request.clone();
    streamed["stream"] = json!(true);
    let resp = post(&server, "/v1/messages", streamed).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let text = resp.text().await.unwrap();
    let names: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(names.last(), Some(&"message_stop"));
    for needed in [
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
    ] {
        assert!(names.contains(&needed), "{needed} missing in {names:?}");
    }
    let events = sse_json(&text);
    assert!(
        events[0]["message"]["usage"]["input_tokens"]
            .as_u64()
            .unwrap()
            >= 1
    );
    let partial: String = events
        .iter()
        .filter(|e| e["type"] == "content_block_delta")
        .map(|e| {
            assert_eq!(e["delta"]["type"], "input_json_delta");
            e["delta"]["partial_json"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&partial).unwrap(),
        json!({"verdict": "ok", "n": 1})
    );
    let delta = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert!(delta["usage"]["output_tokens"].as_u64().unwrap() >= 1);

    // Streamed text.
    let events = streamed_events(
        &server,
        "/v1/messages",
        json!({"model": "claude-x", "stream": true}),
    )
    .await;
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "content_block_delta")
        .map(|e| e["delta"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "bonjour");
    assert!(events
        .iter()
        .any(|e| e["delta"]["stop_reason"] == "end_turn"));
}

#[tokio::test]
async fn gemini_whole_sse_and_array() {
    let script = Script::default().rule(
        Rule::named("g")
            .protocol(WireProtocol::Gemini)
            .model("gemini-x")
            .reply(Reply::json(json!({"a": [1, 2]})).usage(5, 4)),
    );
    let server = FakeServer::start(script).await.unwrap();
    let base = server.gemini_base_url();
    let body = json!({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]});

    let v = json_of(post_url(format!("{base}/models/gemini-x:generateContent"), &body).await).await;
    let text = v["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({"a": [1, 2]})
    );
    assert_eq!(v["candidates"][0]["content"]["role"], "model");
    assert_eq!(v["candidates"][0]["finishReason"], "STOP");
    assert_eq!(
        v["usageMetadata"],
        json!({"promptTokenCount": 5, "candidatesTokenCount": 4, "totalTokenCount": 9})
    );
    assert_eq!(v["modelVersion"], "gemini-x");

    let resp = post_url(
        format!("{base}/models/gemini-x:streamGenerateContent?alt=sse"),
        &body,
    )
    .await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let raw = resp.text().await.unwrap();
    assert!(
        raw.contains("\r\n\r\n"),
        "Gemini separates events with CRLF pairs"
    );
    let chunks = sse_json(&raw);
    let joined: String = chunks
        .iter()
        .map(|c| {
            c["candidates"][0]["content"]["parts"][0]["text"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(joined, r#"{"a":[1,2]}"#);
    let last = chunks.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["totalTokenCount"], 9);
    assert!(chunks[0].get("usageMetadata").is_none());

    let v = json_of(
        post_url(
            format!("{base}/models/gemini-x:streamGenerateContent"),
            &body,
        )
        .await,
    )
    .await;
    assert!(v.as_array().unwrap().len() >= 2);

    let reqs = server.requests();
    assert_eq!(reqs[0].model.as_deref(), Some("gemini-x"));
    assert_eq!(reqs[0].protocol, Some(WireProtocol::Gemini));
    assert!(!reqs[0].stream && reqs[1].stream && reqs[2].stream);
    assert!(reqs[1].path.ends_with(":streamGenerateContent?alt=sse"));
}

#[tokio::test]
async fn ordered_replies_repeat_last_and_no_match() {
    let script = Script::from_toml_str(TOML_EXAMPLE).unwrap().rule(
        Rule::named("once")
            .model("model-b")
            .reply(Reply::text("one"))
            .repeat_last(false),
    );
    let server = FakeServer::start(script).await.unwrap();
    let ask =
        json!({"model": "model-a", "messages": [{"role": "system", "content": "ROLE: architect"}]});

    let resp = post(&server, "/v1/chat/completions", ask.clone()).await;
    assert_eq!(resp.status(), 429);
    assert_eq!(resp.headers()["retry-after"], "0");
    let v = json_of(resp).await;
    assert_eq!(v["error"]["code"], "rate_limit_exceeded");
    for _ in 0..2 {
        let v = json_of(post(&server, "/v1/chat/completions", ask.clone()).await).await;
        assert_eq!(v["choices"][0]["message"]["content"], "hello");
        assert_eq!(v["usage"]["prompt_tokens"], 12);
    }

    let b = json!({"model": "model-b"});
    let v = json_of(post(&server, "/v1/chat/completions", b.clone()).await).await;
    assert_eq!(v["choices"][0]["message"]["content"], "one");
    let resp = post(&server, "/v1/chat/completions", b).await;
    assert_eq!(resp.status(), 500);
    let v = json_of(resp).await;
    assert_eq!(v["error"]["type"], "no_rule");
    assert_eq!(
        v["error"]["message"],
        "fake-llm: no rule matched openai model=model-b"
    );

    // The contains filter and the protocol filter both exclude.
    let resp = post(&server, "/v1/chat/completions", json!({"model": "model-a"})).await;
    assert_eq!(resp.status(), 500);
    let resp = post(&server, "/v1/messages", ask).await;
    assert_eq!(resp.status(), 500);

    let rules: Vec<Option<String>> = server.requests().into_iter().map(|r| r.rule).collect();
    let expect = |s: &str| Some(s.to_string());
    assert_eq!(
        rules,
        vec![
            expect("arch"),
            expect("arch"),
            expect("arch"),
            expect("once"),
            None,
            None,
            None
        ]
    );
}

#[tokio::test]
async fn error_bodies_delay_models_and_recording() {
    let script = Script::default()
        .rule(
            Rule::named("anth-err")
                .protocol(WireProtocol::Anthropic)
                .reply(Reply::status(529)),
        )
        .rule(
            Rule::named("slow")
                .model("slow-model")
                .reply(Reply::text("late").delay_ms(300)),
        )
        .rule(Rule::named("raw-body").model("m2").reply(Reply {
            body: Some(json!({"custom": true})),
            status: 418,
            ..Reply::default()
        }))
        // Markers with escapes match against decoded JSON strings too.
        .rule(
            Rule::named("quoted")
                .contains("say \"hi\"\nnow")
                .reply(Reply::text("q")),
        );
    let server = FakeServer::start(script).await.unwrap();

    let resp = post(&server, "/v1/messages", json!({"model": "c"})).await;
    assert_eq!(resp.status(), 529);
    let v = json_of(resp).await;
    assert_eq!(
        v,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "fake-llm: scripted error 529"}})
    );

    let start = std::time::Instant::now();
    let resp = post(
        &server,
        "/v1/chat/completions",
        json!({"model": "slow-model"}),
    )
    .await;
    assert!(start.elapsed() >= std::time::Duration::from_millis(300));
    assert_eq!(resp.status(), 200);

    let resp = post(&server, "/v1/chat/completions", json!({"model": "m2"})).await;
    assert_eq!(resp.status(), 418);
    assert_eq!(resp.json::<Value>().await.unwrap(), json!({"custom": true}));

    let resp = post(
        &server,
        "/v1/chat/completions",
        json!({"messages": [{"content": "say \"hi\"\nnow"}]}),
    )
    .await;
    assert_eq!(resp.status(), 200);

    let v = json_of(get(format!("{}/models", server.openai_base_url())).await).await;
    let ids: Vec<&str> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["slow-model", "m2"]);
    let v = json_of(get(format!("{}/models", server.gemini_base_url())).await).await;
    assert_eq!(v["models"][0]["name"], "models/slow-model");

    let resp = get(format!("{}/nope", server.base_url())).await;
    assert_eq!(resp.status(), 404);

    let reqs = server.requests();
    assert_eq!(reqs.len(), 7);
    let first = &reqs[0];
    assert_eq!(first.method, "POST");
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.headers["content-type"], "application/json");
    assert_eq!(first.json, Some(json!({"model": "c"})));
    assert_eq!(first.body, r#"{"model":"c"}"#);
    assert_eq!(first.rule.as_deref(), Some("anth-err"));
    assert_eq!(reqs[4].method, "GET");
    assert_eq!(reqs[4].protocol, None);
}

#[test]
fn blocking_server_records_to_file() {
    let dir = tempfile::tempdir().unwrap();
    let record = dir.path().join("rec.jsonl");
    let script = Script::default().rule(Rule::named("any").reply(Reply::text("x")));
    let options = ServerOptions {
        port: 0,
        record: Some(record.clone()),
    };
    let server = FakeServer::start_blocking_with(script, options).unwrap();
    assert!(server.base_url().starts_with("http://127.0.0.1:"));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for model in ["m1", "m2"] {
            let resp = post(&server, "/v1/chat/completions", json!({"model": model})).await;
            assert_eq!(resp.status(), 200);
        }
    });
    let addr = server.addr();
    server.shutdown();

    let lines: Vec<RecordedRequest> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1].model.as_deref(), Some("m2"));
    assert_eq!(lines[0].rule.as_deref(), Some("any"));
    // After shutdown the port no longer accepts.
    assert!(std::net::TcpStream::connect(addr).is_err());
}

#[tokio::test]
async fn invalid_script_is_refused_at_start() {
    let script = Script::default().rule(Rule::named("empty"));
    let err = FakeServer::start(script).await.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
