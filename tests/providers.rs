//! The provider layer over real HTTP: `ModelClient` against the scripted fake server.
//!
//! Every test loads a real layered `Config` (the fake user config plus `-c` style overrides),
//! builds a `ModelClient` with injected fake keys, and checks both sides: what the client
//! returned and recorded, and what the server actually received (paths, headers, bodies,
//! how many requests). Covers the three adapters plain and streamed, structured output with
//! its one repair round, retry classes, the circuit breaker, fallback, budget, model id
//! mismatches and key redaction.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use git_triad::config::{Config, LoadOptions, LoadedConfig, Role};
use git_triad::model::adapter::gemini::openapi_subset;
use git_triad::model::budget::CallRecord;
use git_triad::model::structured::{schema_for, validate};
use git_triad::model::{ChatRequest, Completion, EnvLookup, ModelClient, ModelError, Structured};
use git_triad::testkit::fake_llm::{
    FakeServer, Fault, RecordedRequest, Reply, Rule, Script, WireProtocol,
};
use serde_json::{json, Value};
use tempfile::TempDir;

use crate::common;

mod tools;

// Keys made of fragments that occur nowhere else: the process-wide redactor masks every
// 8+ character fragment of a registered key, so a key like `fake-openai-...` would garble
// provider names in other tests' messages.
const OPENAI_KEY: &str = "zqOA-4h8s2k7v1n9c";
const ANTHROPIC_KEY: &str = "zqAN-6t3p9x2m5b8d";
const GEMINI_KEY: &str = "zqGE-1r7w4y9q3f6j";
const CANARY_KEY: &str = "sk-canary-5f3a9c1e7d2b4a6f8e0c";

/// A running fake server and a client configured against it.
struct Harness {
    server: FakeServer,
    client: ModelClient,
    _dir: TempDir,
}

impl Harness {
    async fn new(script: Script, overrides: &[&str]) -> Harness {
        Harness::with_env(script, overrides, env_of(&all_keys())).await
    }

    async fn with_env(script: Script, overrides: &[&str], env: EnvLookup) -> Harness {
        let server = FakeServer::start(script).await.expect("fake server starts");
        let (config, dir) = load_config(&server, overrides);
        Harness {
            client: ModelClient::new(&config, env),
            server,
            _dir: dir,
        }
    }

    async fn chat(&self, models: &[&str], req: &ChatRequest) -> Result<Completion, ModelError> {
        self.client
            .chat(Role::Implementer, &names(models), req)
            .await
    }

    /// Asks `model-a`, then `claude-fake`; checks that `claude-fake` answered.
    async fn chat_falling_back_to_claude(&self, user: &str) -> Completion {
        let c = self
            .chat(&["model-a", "claude-fake"], &request(user))
            .await
            .unwrap();
        assert_eq!(c.model, "claude-fake");
        c
    }

    /// Asks `model` for a `Review` through the structured-output path.
    async fn review(&self, model: &str) -> Result<Structured<Review>, ModelError> {
        self.client
            .chat_structured::<Review>(Role::Arbiter, &names(&[model]), &request("review it"))
            .await
    }

    fn requests(&self) -> Vec<RecordedRequest> {
        self.server.requests()
    }

    /// Requests that reached a chat route (model lists and 404s excluded).
    fn chat_requests(&self, protocol: WireProtocol) -> Vec<RecordedRequest> {
        self.requests()
            .into_iter()
            .filter(|r| r.protocol == Some(protocol))
            .collect()
    }

    fn only_record(&self) -> CallRecord {
        let records = self.client.records();
        assert_eq!(records.len(), 1, "{records:#?}");
        records.into_iter().next().unwrap()
    }
}

/// The fake user config at the server's address, plus overrides, through the real loader.
fn load_config(server: &FakeServer, overrides: &[&str]) -> (Config, TempDir) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("config.toml");
    std::fs::write(&path, common::fake_user_config(&server.base_url())).unwrap();
    let loaded = LoadedConfig::load(&LoadOptions {
        user_file: Some(path),
        overrides: overrides.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    })
    .expect("the fake config loads");
    (loaded.config, dir)
}

fn all_keys() -> Vec<(&'static str, &'static str)> {
    vec![
        ("FAKE_OPENAI_KEY", OPENAI_KEY),
        ("FAKE_ANTHROPIC_KEY", ANTHROPIC_KEY),
        ("FAKE_GEMINI_KEY", GEMINI_KEY),
    ]
}

fn env_of(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Arc::new(move |name: &str| map.get(name).cloned())
}

fn names(models: &[&str]) -> Vec<String> {
    models.iter().map(|s| s.to_string()).collect()
}

fn request(user: &str) -> ChatRequest {
    ChatRequest::new(Some("You are terse.".into()), user, 200)
}

fn streamed(user: &str) -> ChatRequest {
    let mut r = request(user);
    r.stream = true;
    r
}

fn body(r: &RecordedRequest) -> &Value {
    r.json.as_ref().expect("request body is JSON")
}

/// The value of the (lowercase) header `name` of a recorded request.
fn header<'a>(r: &'a RecordedRequest, name: &str) -> Option<&'a str> {
    r.headers.get(name).map(String::as_str)
}

fn assert_cost(actual: f64, input: u64, output: u64) {
    // Fake models cost $1/M in and $2/M out.
    let expected = (input as f64 + 2.0 * output as f64) / 1_000_000.0;
    assert!(
        (actual - expected).abs() < 1e-12,
        "cost {actual} != {expected} for {input} in / {output} out"
    );
}

fn one_rule(reply: Reply) -> Script {
    Script::default().rule(Rule::named("only").reply(reply))
}

fn replies(list: Vec<Reply>) -> Script {
    let mut rule = Rule::named("seq");
    for r in list {
        rule = rule.reply(r);
    }
    Script::default().rule(rule)
}

/// Error answers with each of `statuses` in turn, then `last`.
fn statuses_then(statuses: &[u16], last: Reply) -> Script {
    let mut list: Vec<Reply> = statuses.iter().map(|s| Reply::status(*s)).collect();
    list.push(last);
    replies(list)
}

/// One call of `model`, answered with `text` and `usage` (input, output tokens): checks the
/// text, usage and cost that come back and that exactly one request went out; returns the
/// harness, the completion and that request.
async fn call_once(
    model: &str,
    req: &ChatRequest,
    text: &str,
    usage: (u64, u64),
) -> (Harness, Completion, RecordedRequest) {
    let h = Harness::new(one_rule(Reply::text(text).usage(usage.0, usage.1)), &[]).await;
    let c = h.chat(&[model], req).await.unwrap();
    assert_eq!(c.response.text, text);
    let u = &c.response.usage;
    assert_eq!((u.input_tokens, u.output_tokens), usage);
    assert_cost(h.only_record().cost_usd, usage.0, usage.1);
    let mut reqs = h.requests();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    let r = reqs.remove(0);
    (h, c, r)
}

/// A plain (not streamed) call of `model` through `provider`: besides what [`call_once`]
/// checks, the completion and its record name the model the server reported.
async fn plain_call(
    model: &str,
    provider: &str,
    text: &str,
    usage: (u64, u64),
) -> (Harness, RecordedRequest) {
    let (h, c, r) = call_once(model, &request("say hi"), text, usage).await;
    assert_eq!(c.model, model);
    assert_eq!(c.response.model.as_deref(), Some(model));
    let rec = h.only_record();
    assert_eq!(rec.provider, provider);
    assert_eq!(rec.reported_id.as_deref(), Some(model));
    assert!(!r.stream);
    (h, r)
}

// ---------------------------------------------------------------------------------------
// 1. Plain calls through every adapter
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn openai_plain_call_returns_text_usage_model_cost_and_sends_bearer_auth() {
    let (h, r) = plain_call("model-a", "fake-openai", "hello from openai", (120, 30)).await;
    let rec = h.only_record();
    assert_eq!(rec.outcome, "ok");
    assert_eq!(rec.attempts, 1);
    assert_eq!(rec.requested_id, "model-a");
    assert!(!rec.model_mismatch);
    assert_eq!((rec.input_tokens, rec.output_tokens), (120, 30));
    assert_cost(h.client.spent_usd(), 120, 30);

    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(
        header(&r, "authorization"),
        Some(format!("Bearer {OPENAI_KEY}").as_str())
    );
    assert!(!r.headers.contains_key("x-api-key"));
    let b = body(&r);
    assert_eq!(b["model"], "model-a");
    assert_eq!(
        b["messages"][0],
        json!({"role": "system", "content": "You are terse."})
    );
    assert_eq!(
        b["messages"][1],
        json!({"role": "user", "content": "say hi"})
    );
    assert_eq!(b["max_tokens"], 200);
    assert!(b.get("stream").is_none());
}

#[tokio::test]
async fn anthropic_plain_call_returns_text_usage_model_cost_and_sends_x_api_key_and_version() {
    let (_h, r) = plain_call(
        "claude-fake",
        "fake-anthropic",
        "hello from claude",
        (50, 20),
    )
    .await;
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(header(&r, "x-api-key"), Some(ANTHROPIC_KEY));
    assert_eq!(header(&r, "anthropic-version"), Some("2023-06-01"));
    assert!(!r.headers.contains_key("authorization"));
    let b = body(&r);
    assert_eq!(b["model"], "claude-fake");
    assert_eq!(b["system"], "You are terse.");
    assert_eq!(
        b["messages"],
        json!([{"role": "user", "content": "say hi"}])
    );
    assert_eq!(b["max_tokens"], 200);
}

#[tokio::test]
async fn gemini_plain_call_returns_text_usage_model_cost_and_sends_x_goog_api_key() {
    let (_h, r) = plain_call("gemini-fake", "fake-gemini", "hello from gemini", (64, 16)).await;
    assert_eq!(r.path, "/v1beta/models/gemini-fake:generateContent");
    assert_eq!(header(&r, "x-goog-api-key"), Some(GEMINI_KEY));
    assert!(!r.headers.contains_key("authorization"));
    assert!(
        !r.path.contains(GEMINI_KEY),
        "the key never travels in the URL"
    );
    let b = body(&r);
    assert_eq!(b["systemInstruction"]["parts"][0]["text"], "You are terse.");
    assert_eq!(b["contents"][0]["role"], "user");
    assert_eq!(b["contents"][0]["parts"][0]["text"], "say hi");
    assert_eq!(b["generationConfig"]["maxOutputTokens"], 200);
}

// ---------------------------------------------------------------------------------------
// 2. Streaming
// ---------------------------------------------------------------------------------------

const STREAMED: &str = "a streamed answer, reassembled from several deltas ✓";

/// A streamed call of `model` answered with [`STREAMED`]: the text, usage and cost come back
/// whole from one streaming request, which is returned with the completion.
async fn streamed_call(model: &str, usage: (u64, u64)) -> (Completion, RecordedRequest) {
    let (_h, c, r) = call_once(model, &streamed("stream it"), STREAMED, usage).await;
    assert!(r.stream);
    (c, r)
}

#[tokio::test]
async fn openai_stream_is_reassembled_with_usage_and_asks_for_usage() {
    let (c, r) = streamed_call("model-a", (40, 9)).await;
    assert_eq!(c.response.model.as_deref(), Some("model-a"));
    assert_eq!(r.path, "/v1/chat/completions");
    let b = body(&r);
    assert_eq!(b["stream"], true);
    assert_eq!(b["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn anthropic_stream_is_reassembled_with_usage() {
    let (c, r) = streamed_call("claude-fake", (41, 10)).await;
    assert_eq!(c.response.model.as_deref(), Some("claude-fake"));
    assert_eq!(body(&r)["stream"], true);
}

#[tokio::test]
async fn gemini_stream_is_reassembled_with_usage_over_sse() {
    let (_c, r) = streamed_call("gemini-fake", (42, 11)).await;
    assert_eq!(
        r.path,
        "/v1beta/models/gemini-fake:streamGenerateContent?alt=sse"
    );
}

// ---------------------------------------------------------------------------------------
// 3. Structured output
// ---------------------------------------------------------------------------------------

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
enum Verdict {
    Approve,
    Reject,
}

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
struct Review {
    verdict: Verdict,
    score: u8,
    reasons: Vec<String>,
}

fn good_review() -> Value {
    json!({"verdict": "APPROVE", "score": 7, "reasons": ["tests pass"]})
}

fn bad_review() -> Value {
    json!({"verdict": "MAYBE", "score": "high", "reasons": []})
}

/// (speaker, text) of every turn of a request, in the protocol's own words.
fn turns(protocol: WireProtocol, b: &Value) -> Vec<(String, String)> {
    let list = match protocol {
        WireProtocol::Gemini => b["contents"].as_array().unwrap().clone(),
        _ => b["messages"].as_array().unwrap().clone(),
    };
    list.iter()
        .map(|m| {
            let text = match protocol {
                WireProtocol::Gemini => m["parts"][0]["text"].as_str(),
                _ => m["content"].as_str(),
            };
            (
                m["role"].as_str().unwrap().to_string(),
                text.unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Asserts the request carries `Review`'s schema in the protocol's own form, as tightened
/// for the request's small output budget (200 tokens).
fn assert_schema_sent(protocol: WireProtocol, b: &Value) {
    let mut expected = schema_for::<Review>("answer");
    git_triad::model::structured::fit_to_budget(&mut expected.schema, 200);
    match protocol {
        WireProtocol::OpenAi => {
            assert_eq!(b["response_format"]["type"], "json_schema", "{b}");
            assert_eq!(b["response_format"]["json_schema"]["name"], "answer");
            assert_eq!(
                b["response_format"]["json_schema"]["schema"],
                expected.schema
            );
        }
        WireProtocol::Anthropic => {
            assert_eq!(b["tools"][0]["name"], "answer", "{b}");
            assert_eq!(b["tools"][0]["input_schema"], expected.schema);
            assert_eq!(b["tool_choice"], json!({"type": "tool", "name": "answer"}));
        }
        WireProtocol::Gemini => {
            let gen = &b["generationConfig"];
            assert_eq!(gen["responseMimeType"], "application/json", "{b}");
            assert_eq!(gen["responseSchema"], openapi_subset(&expected.schema));
            assert_eq!(gen["responseSchema"]["type"], "object");
            assert!(gen["responseSchema"]["properties"]["score"].is_object());
            assert!(
                !gen["responseSchema"]
                    .to_string()
                    .contains("additionalProperties"),
                "Gemini refuses additionalProperties"
            );
        }
    }
}

async fn structured_first_try(model: &str, protocol: WireProtocol) {
    let h = Harness::new(one_rule(Reply::json(good_review()).usage(30, 12)), &[]).await;
    let s = h.review(model).await.unwrap();
    assert_eq!(
        s.value,
        Review {
            verdict: Verdict::Approve,
            score: 7,
            reasons: vec!["tests pass".into()]
        }
    );
    assert_eq!(s.json, good_review());
    assert_eq!(s.completion.records.len(), 1);
    let reqs = h.chat_requests(protocol);
    assert_eq!(reqs.len(), 1);
    assert_schema_sent(protocol, body(&reqs[0]));
}

async fn structured_repaired_once(model: &str, protocol: WireProtocol) {
    let h = Harness::new(
        replies(vec![
            Reply::json(bad_review()).usage(30, 12),
            Reply::json(good_review()).usage(60, 12),
        ]),
        &[],
    )
    .await;
    let s = h.review(model).await.expect("the repair answer is valid");
    assert_eq!(s.value.verdict, Verdict::Approve);
    assert_eq!(s.completion.model, model);
    assert_eq!(
        s.completion.records.len(),
        2,
        "first call and repair are both accounted"
    );
    assert_eq!(h.client.records().len(), 2);

    let reqs = h.chat_requests(protocol);
    assert_eq!(reqs.len(), 2, "exactly one repair request");
    assert_schema_sent(protocol, body(&reqs[1]));
    let t = turns(protocol, body(&reqs[1]));
    assert!(t.len() >= 3, "{t:?}");
    let (prev_role, prev_text) = &t[t.len() - 2];
    assert_eq!(
        prev_role,
        if protocol == WireProtocol::Gemini {
            "model"
        } else {
            "assistant"
        }
    );
    assert_eq!(
        serde_json::from_str::<Value>(prev_text).unwrap(),
        bad_review(),
        "the invalid answer is quoted back as the assistant's turn"
    );
    let (last_role, repair_text) = t.last().unwrap();
    assert_eq!(last_role, "user");
    let expected_errors = validate(&schema_for::<Review>("answer").schema, &bad_review())
        .expect_err("the bad review is invalid");
    assert!(expected_errors.len() >= 2, "{expected_errors:?}");
    for e in &expected_errors {
        assert!(
            repair_text.contains(e.as_str()),
            "repair prompt lacks `{e}`:\n{repair_text}"
        );
    }
    assert!(
        repair_text.contains("answer"),
        "names the schema: {repair_text}"
    );
}

async fn structured_gives_up_after_one_repair(model: &str, protocol: WireProtocol) {
    let h = Harness::new(one_rule(Reply::json(bad_review())), &[]).await;
    let err = h.review(model).await.expect_err("two invalid answers");
    match &err {
        ModelError::SchemaViolation {
            model: m,
            schema,
            errors,
        } => {
            assert_eq!(m, model);
            assert_eq!(schema, "answer");
            assert!(errors.iter().any(|e| e.contains("/score")), "{errors:?}");
        }
        other => panic!("expected SchemaViolation, got {other:?}"),
    }
    assert_eq!(
        h.chat_requests(protocol).len(),
        2,
        "one call plus one repair, no more"
    );
}

/// The three adapters, each through a model of the fake config that speaks its protocol.
const ADAPTERS: [(&str, WireProtocol); 3] = [
    ("model-a", WireProtocol::OpenAi),
    ("claude-fake", WireProtocol::Anthropic),
    ("gemini-fake", WireProtocol::Gemini),
];

/// OpenAI gets a `json_schema` response format, Anthropic a forced tool, Gemini a response
/// schema; a valid first answer is taken as it is.
#[tokio::test]
async fn structured_output_sends_each_protocols_own_schema_form() {
    for (model, protocol) in ADAPTERS {
        println!("-- {model} ({protocol:?})");
        structured_first_try(model, protocol).await;
    }
}

#[tokio::test]
async fn an_invalid_structured_answer_gets_one_repair_listing_the_errors_on_every_adapter() {
    for (model, protocol) in ADAPTERS {
        println!("-- {model} ({protocol:?})");
        structured_repaired_once(model, protocol).await;
    }
}

#[tokio::test]
async fn two_invalid_structured_answers_are_a_schema_violation_on_every_adapter() {
    for (model, protocol) in ADAPTERS {
        println!("-- {model} ({protocol:?})");
        structured_gives_up_after_one_repair(model, protocol).await;
    }
}

// ---------------------------------------------------------------------------------------
// 4. Fault classes and retries
// ---------------------------------------------------------------------------------------

/// Retries allowed, breaker out of the way: these tests are about the retry policy alone.
const RETRY: &[&str] = &["transport.max_retries=2", "breaker.failure_threshold=100"];

/// A 429 with `retry-after`, then `text`: the call answers `text` after exactly two
/// requests; returns the harness and how long the call took.
async fn after_one_rate_limit(retry_after: &str, text: &str) -> (Harness, Duration) {
    let h = Harness::new(
        replies(vec![
            Reply::status(429).header("retry-after", retry_after),
            Reply::text(text),
        ]),
        RETRY,
    )
    .await;
    let started = Instant::now();
    let c = h.chat(&["model-a"], &request("hi")).await.unwrap();
    let took = started.elapsed();
    assert_eq!(c.response.text, text);
    assert_eq!(h.requests().len(), 2);
    (h, took)
}

#[tokio::test]
async fn rate_limit_with_retry_after_zero_is_retried_once_then_succeeds() {
    let (h, took) = after_one_rate_limit("0", "after the limit").await;
    assert!(took < Duration::from_secs(2));
    let rec = h.only_record();
    assert_eq!((rec.attempts, rec.outcome.as_str()), (2, "ok"));
}

#[tokio::test]
async fn retry_after_of_one_second_is_waited_for() {
    let (_h, waited) = after_one_rate_limit("1", "patience").await;
    assert!(waited >= Duration::from_secs(1), "waited only {waited:?}");
    assert!(waited < Duration::from_millis(2500), "waited {waited:?}");
}

#[tokio::test]
async fn two_server_errors_then_success_takes_three_requests() {
    let h = Harness::new(
        statuses_then(&[500, 500], Reply::text("third time lucky").usage(10, 5)),
        RETRY,
    )
    .await;
    let c = h.chat(&["model-a"], &request("hi")).await.unwrap();
    assert_eq!(c.response.text, "third time lucky");
    assert_eq!(h.requests().len(), 3);
    let rec = h.only_record();
    assert_eq!((rec.attempts, rec.outcome.as_str()), (3, "ok"));
    assert_cost(rec.cost_usd, 10, 5);
}

async fn assert_not_retried(status: u16, expect_in_outcome: &str) {
    let h = Harness::new(one_rule(Reply::status(status)), RETRY).await;
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    assert!(matches!(err, ModelError::AllFailed { .. }), "{err:?}");
    assert!(err.to_string().contains(&format!("HTTP {status}")), "{err}");
    assert_eq!(h.requests().len(), 1, "HTTP {status} must not be retried");
    let rec = h.only_record();
    assert_eq!(rec.attempts, 1);
    assert_ne!(rec.outcome, "ok");
    assert!(rec.outcome.contains(expect_in_outcome), "{}", rec.outcome);
    assert_eq!(rec.cost_usd, 0.0);
}

/// A 400 is the request's fault and a 401 the key's (and the outcome says so): retrying
/// either cannot help.
#[tokio::test]
async fn bad_request_400_and_unauthorized_401_are_not_retried_and_401_blames_the_key() {
    for (status, expect_in_outcome) in [(400, "HTTP 400"), (401, "API key was refused")] {
        assert_not_retried(status, expect_in_outcome).await;
    }
}

/// A fault on every attempt: `max_retries + 1` requests, then a failure recorded once.
async fn assert_retried_then_fails(fault: Fault, expect_in_outcome: &str) {
    let h = Harness::new(one_rule(Reply::fault(fault)), RETRY).await;
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    assert!(matches!(err, ModelError::AllFailed { .. }), "{err:?}");
    assert_eq!(
        h.requests().len(),
        3,
        "{fault:?}: 1 attempt + max_retries (2)"
    );
    let rec = h.only_record();
    assert_eq!(rec.attempts, 3, "{rec:?}");
    assert_ne!(rec.outcome, "ok");
    assert!(rec.outcome.contains("after 3 attempts"), "{}", rec.outcome);
    assert!(
        rec.outcome.contains(expect_in_outcome),
        "{fault:?}: outcome `{}` lacks `{expect_in_outcome}`",
        rec.outcome
    );
}

#[tokio::test]
async fn reset_truncated_and_malformed_answers_are_retried_up_to_max_retries_then_fail() {
    for (fault, expect_in_outcome) in [
        (Fault::Reset, "connection failed"),
        (Fault::Truncate, "reading the answer failed"),
        (Fault::Malformed, "malformed response"),
    ] {
        assert_retried_then_fails(fault, expect_in_outcome).await;
    }
}

#[tokio::test]
async fn a_hanging_server_times_out_on_each_attempt_then_fails() {
    let mut h = Harness::new(one_rule(Reply::fault(Fault::Hang)), RETRY).await;
    h.client
        .set_timeout(Role::Implementer, Duration::from_millis(300));
    let started = Instant::now();
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, ModelError::AllFailed { .. }), "{err:?}");
    assert_eq!(h.requests().len(), 3);
    assert!(
        took >= Duration::from_millis(900),
        "3 timeouts of 300 ms, took {took:?}"
    );
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    let rec = h.only_record();
    assert_eq!(rec.attempts, 3);
    assert!(rec.outcome.contains("no answer within"), "{}", rec.outcome);
}

#[tokio::test]
async fn transport_timeout_secs_from_config_bounds_a_call() {
    let h = Harness::new(
        one_rule(Reply::fault(Fault::Hang)),
        &["transport.timeout_secs=1", "transport.max_retries=0"],
    )
    .await;
    let started = Instant::now();
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    let took = started.elapsed();
    assert!(err.to_string().contains("no answer within 1s"), "{err}");
    assert!(took >= Duration::from_secs(1), "took {took:?}");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
    assert_eq!(h.requests().len(), 1, "max_retries = 0 means one attempt");
}

#[tokio::test]
async fn a_providers_own_timeout_replaces_the_transport_default() {
    let h = Harness::new(
        one_rule(Reply::fault(Fault::Hang)),
        &[
            "transport.timeout_secs=600",
            "transport.max_retries=0",
            "providers.fake-openai.timeout_secs=1",
        ],
    )
    .await;
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    assert!(err.to_string().contains("no answer within 1s"), "{err}");
    assert_eq!(h.requests().len(), 1);
}

// ---------------------------------------------------------------------------------------
// 5. Circuit breaker
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn breaker_opens_after_threshold_and_refuses_without_sending() {
    let h = Harness::new(
        Script::default()
            .rule(
                Rule::named("down")
                    .protocol(WireProtocol::OpenAi)
                    .model("model-a")
                    .reply(Reply::status(500)),
            )
            .rule(
                Rule::named("healthy")
                    .model("model-b")
                    .reply(Reply::text("model-b is fine")),
            )
            .rule(Rule::named("claude").reply(Reply::text("anthropic is fine"))),
        &[
            "breaker.failure_threshold=3",
            "breaker.open_secs=60",
            // More retries than the threshold: the breaker, not the retry limit, stops it.
            "transport.max_retries=5",
        ],
    )
    .await;

    let err = h.chat(&["model-a"], &request("one")).await.unwrap_err();
    assert_eq!(
        h.chat_requests(WireProtocol::OpenAi).len(),
        3,
        "the circuit opened at the 3rd failed attempt"
    );
    assert!(err.to_string().contains("HTTP 500"), "{err}");

    let err = h.chat(&["model-a"], &request("two")).await.unwrap_err();
    let text = err.to_string();
    // The open circuit says the cause it opened on, not only that it is open.
    assert!(
        text.contains("model-a: HTTP 500: fake-llm: scripted error 500 (offline after repeated failures: not called again for 60s)"),
        "{text}"
    );
    assert!(
        text.contains("no model could answer for the implementer role"),
        "{text}"
    );
    assert_eq!(
        h.chat_requests(WireProtocol::OpenAi).len(),
        3,
        "an open circuit sends nothing"
    );

    // The circuit is the model's: another model of the same provider is still called, and
    // so are other providers.
    let c = h.chat(&["model-b"], &request("three")).await.unwrap();
    assert_eq!(c.response.text, "model-b is fine");
    let c = h.chat(&["claude-fake"], &request("four")).await.unwrap();
    assert_eq!(c.response.text, "anthropic is fine");
}

#[tokio::test]
async fn breaker_lets_one_probe_through_after_open_secs_and_closes_on_success() {
    let h = Harness::new(
        Script::default().rule(
            Rule::named("flaky")
                .reply(Reply::status(500))
                .reply(Reply::status(500))
                .reply(Reply::status(500))
                // The probe answers slowly so a concurrent call meets the half-open circuit.
                .reply(Reply::text("back").delay_ms(200))
                .reply(Reply::text("steady")),
        ),
        &[
            "breaker.failure_threshold=3",
            "breaker.open_secs=1",
            "transport.max_retries=2",
        ],
    )
    .await;
    h.chat(&["model-a"], &request("one")).await.unwrap_err();
    assert_eq!(h.requests().len(), 3);
    let err = h.chat(&["model-a"], &request("two")).await.unwrap_err();
    assert!(err.to_string().contains("offline"), "{err}");
    assert_eq!(h.requests().len(), 3);

    tokio::time::sleep(Duration::from_millis(1100)).await;
    let probe_req = request("probe");
    let other_req = request("concurrent");
    let (probe, other) = tokio::join!(
        h.chat(&["model-a"], &probe_req),
        h.chat(&["model-a"], &other_req)
    );
    assert_eq!(probe.unwrap().response.text, "back");
    let other = other.expect_err("only one probe while half-open");
    assert!(other.to_string().contains("offline"), "{other}");
    assert_eq!(h.requests().len(), 4, "exactly one probe request");

    let c = h.chat(&["model-a"], &request("after")).await.unwrap();
    assert_eq!(
        c.response.text, "steady",
        "the circuit closed after the probe"
    );
    assert_eq!(h.requests().len(), 5);
}

#[tokio::test]
async fn breaker_recovers_after_a_probe_that_got_a_client_error() {
    let h = Harness::new(
        statuses_then(&[500, 400], Reply::text("recovered")),
        &[
            "breaker.failure_threshold=1",
            "breaker.open_secs=1",
            "transport.max_retries=0",
        ],
    )
    .await;
    h.chat(&["model-a"], &request("opens")).await.unwrap_err();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let err = h.chat(&["model-a"], &request("probe")).await.unwrap_err();
    assert!(
        err.to_string().contains("HTTP 400"),
        "the probe was sent: {err}"
    );
    assert_eq!(h.requests().len(), 2);
    // Whatever the breaker decides about a 4xx probe (close, or reopen for open_secs), the
    // provider must be callable again once another open period has passed.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let c = h.chat(&["model-a"], &request("later")).await;
    assert_eq!(
        c.map(|c| c.response.text).map_err(|e| e.to_string()),
        Ok("recovered".to_string())
    );
}

// ---------------------------------------------------------------------------------------
// 6. Fallback
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn fallback_answers_from_the_next_model_when_the_first_keeps_failing() {
    let h = Harness::new(
        Script::default()
            .rule(
                Rule::named("a-down")
                    .model("model-a")
                    .reply(Reply::status(503)),
            )
            .rule(
                Rule::named("claude")
                    .model("claude-fake")
                    .reply(Reply::text("claude took over").usage(20, 4)),
            ),
        &["transport.max_retries=2"],
    )
    .await;
    let c = h.chat_falling_back_to_claude("anyone?").await;
    assert_eq!(c.response.text, "claude took over");
    assert_eq!(h.chat_requests(WireProtocol::OpenAi).len(), 3);
    assert_eq!(h.chat_requests(WireProtocol::Anthropic).len(), 1);
    let records = h.client.records();
    assert_eq!(records.len(), 2, "{records:#?}");
    assert_eq!(records[0].model, "model-a");
    assert_eq!(records[0].attempts, 3);
    assert!(
        records[0].outcome.contains("HTTP 503"),
        "{}",
        records[0].outcome
    );
    assert_eq!(records[1].model, "claude-fake");
    assert_eq!(records[1].outcome, "ok");
}

#[tokio::test]
async fn a_candidate_without_its_key_is_skipped_without_any_request() {
    let h = Harness::with_env(
        one_rule(Reply::text("only claude has a key")),
        &[],
        env_of(&[("FAKE_ANTHROPIC_KEY", ANTHROPIC_KEY)]),
    )
    .await;
    h.chat_falling_back_to_claude("hi").await;
    let reqs = h.requests();
    assert_eq!(reqs.len(), 1, "{reqs:#?}");
    assert_eq!(reqs[0].path, "/v1/messages");

    // With no candidate left the error names the missing variable, still without a request.
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();
    assert!(
        err.to_string().contains("FAKE_OPENAI_KEY is not set"),
        "{err}"
    );
    assert_eq!(h.requests().len(), 1);
}

// ---------------------------------------------------------------------------------------
// 7. Budget
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_call_whose_worst_case_exceeds_the_budget_is_never_sent() {
    let h = Harness::new(
        one_rule(Reply::text("unreachable")),
        &["budget.run_usd=0.0001"],
    )
    .await;
    let req = ChatRequest::new(None, "write a novel", 4000);
    let err = h.chat(&["model-a"], &req).await.unwrap_err();
    match &err {
        ModelError::Budget(b) => {
            assert_eq!(b.scope, "run");
            assert_eq!(b.cap, 0.0001);
            assert!(b.estimate > 0.0001, "{b:?}");
        }
        other => panic!("expected a budget error, got {other:?}"),
    }
    assert_eq!(h.requests().len(), 0, "nothing may be sent");
    assert!(h.client.records().is_empty());
}

#[tokio::test]
async fn the_call_that_would_cross_the_cap_is_stopped_before_sending() {
    // First call: worst case ~$0.00025 fits under $0.001, but it really costs $0.003.
    let h = Harness::new(
        one_rule(Reply::text("expensive").usage(1000, 1000)),
        &["budget.run_usd=0.001"],
    )
    .await;
    let req = ChatRequest::new(None, "short", 100);
    h.chat(&["model-a"], &req).await.expect("first call fits");
    assert_cost(h.client.spent_usd(), 1000, 1000);
    let err = h.chat(&["model-a"], &req).await.unwrap_err();
    match &err {
        ModelError::Budget(b) => assert!((b.spent - 0.003).abs() < 1e-12, "{b:?}"),
        other => panic!("expected a budget error, got {other:?}"),
    }
    assert_eq!(h.requests().len(), 1, "the second call was not sent");
}

// ---------------------------------------------------------------------------------------
// 8. Model id mismatch
// ---------------------------------------------------------------------------------------

/// The record of one successful call of `model-a` whose answer claims to come from `reported`.
async fn record_of_answer_reported_by(reported: &str) -> CallRecord {
    let h = Harness::new(one_rule(Reply::text("hi").reported_model(reported)), &[]).await;
    h.chat(&["model-a"], &request("who are you")).await.unwrap();
    let rec = h.only_record();
    assert_eq!(rec.requested_id, "model-a");
    assert_eq!(rec.reported_id.as_deref(), Some(reported));
    rec
}

#[tokio::test]
async fn a_different_reported_model_is_recorded_as_a_mismatch() {
    let rec = record_of_answer_reported_by("gpt-imposter").await;
    assert!(rec.model_mismatch, "{rec:?}");
}

#[tokio::test]
async fn a_dated_snapshot_of_the_requested_model_is_not_a_mismatch() {
    let rec = record_of_answer_reported_by("model-a-2025-01-01").await;
    assert!(!rec.model_mismatch, "{rec:?}");
}

// ---------------------------------------------------------------------------------------
// 9. Keys never leak
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_key_echoed_by_the_server_never_appears_in_errors_or_records() {
    let echo = Reply {
        body: Some(
            json!({"error": {"message": format!("Incorrect API key provided: {CANARY_KEY}")}}),
        ),
        ..Reply::status(401)
    };
    let h = Harness::with_env(
        one_rule(echo),
        RETRY,
        env_of(&[("FAKE_OPENAI_KEY", CANARY_KEY)]),
    )
    .await;
    let err = h.chat(&["model-a"], &request("hi")).await.unwrap_err();

    // The test means something only if the key really went out and came back.
    let reqs = h.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        reqs[0].headers["authorization"],
        format!("Bearer {CANARY_KEY}")
    );

    let display = err.to_string();
    let debug = format!("{err:?}");
    let records = serde_json::to_string(&h.client.records()).unwrap();
    for (what, text) in [
        ("Display", &display),
        ("Debug", &debug),
        ("records", &records),
    ] {
        assert!(!text.contains("canary"), "{what} leaks the key: {text}");
    }
    assert!(
        display.contains("HTTP 401"),
        "still says what happened: {display}"
    );
    assert!(display.contains("Incorrect API key provided"), "{display}");
}
