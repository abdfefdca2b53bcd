//! Over-the-wire tests of the deliberate failures: the reason this server exists.

use std::error::Error as _;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::tests::{client, post};
use super::*;

fn faulty(fault: Fault) -> Script {
    Script::default()
        .rule(
            Rule::named("broken")
                .reply(Reply::fault(fault))
                .repeat_last(false),
        )
        .rule(Rule::named("fine").reply(Reply::text("recovered")))
}

/// A fresh server whose first answer is `fault` and every later one "recovered".
async fn start_faulty(fault: Fault) -> FakeServer {
    FakeServer::start(faulty(fault)).await.unwrap()
}

/// A streaming request on `path` to a fresh server with `fault`: the headers announce an
/// event stream. The server is returned too, to live while the body is read.
async fn faulty_stream(fault: Fault, path: &str) -> (FakeServer, reqwest::Response) {
    let server = start_faulty(fault).await;
    let resp = post(&server, path, json!({"model": "m", "stream": true})).await;
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    (server, resp)
}

/// Walks the error chain so we can see the io error kind under reqwest/hyper.
fn io_kind(err: &reqwest::Error) -> Option<std::io::ErrorKind> {
    let mut source = err.source();
    while let Some(e) = source {
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        source = e.source();
    }
    None
}

#[tokio::test]
async fn reset_is_a_connection_error_then_the_next_reply_answers() {
    let server = start_faulty(Fault::Reset).await;
    let err = client()
        .post(format!("{}/chat/completions", server.openai_base_url()))
        .json(&json!({"model": "m"}))
        .send()
        .await
        .expect_err("reset must fail the request");
    assert!(err.is_request() || err.is_connect(), "{err:?}");
    assert!(!err.is_timeout());
    if let Some(kind) = io_kind(&err) {
        assert!(
            matches!(
                kind,
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::UnexpectedEof
            ),
            "{kind:?}"
        );
    }
    // The fault was recorded, and a retry gets the next rule.
    let resp = post(&server, "/v1/chat/completions", json!({"model": "m"})).await;
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "recovered");
    let rules: Vec<_> = server.requests().into_iter().map(|r| r.rule).collect();
    assert_eq!(rules, vec![Some("broken".into()), Some("fine".into())]);
}

#[tokio::test]
async fn truncate_is_a_body_error() {
    let server = start_faulty(Fault::Truncate).await;
    let resp = post(&server, "/v1/messages", json!({"model": "m"})).await;
    assert_eq!(resp.status(), 200, "headers arrive intact");
    let err = resp.bytes().await.expect_err("body must be cut short");
    assert!(err.is_body() || err.is_decode(), "{err:?}");

    // Streams are cut too: the client sees some events, then an error.
    let (_server, resp) = faulty_stream(Fault::Truncate, "/v1/chat/completions").await;
    assert!(resp.text().await.is_err());
}

#[tokio::test]
async fn malformed_is_not_json() {
    let server = start_faulty(Fault::Malformed).await;
    let resp = post(&server, "/v1/chat/completions", json!({"model": "m"})).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let text = resp.text().await.unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");

    let (_server, resp) = faulty_stream(Fault::Malformed, "/v1/messages").await;
    let text = resp.text().await.unwrap();
    let data = text.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    assert!(serde_json::from_str::<Value>(data).is_err(), "{data}");
}

#[tokio::test]
async fn hang_times_out_but_is_recorded_and_shutdown_releases_it() {
    let server = start_faulty(Fault::Hang).await;
    let start = Instant::now();
    let err = client()
        .post(format!(
            "{}/v1beta/models/g:generateContent",
            server.base_url()
        ))
        .timeout(Duration::from_millis(300))
        .json(&json!({"contents": []}))
        .send()
        .await
        .expect_err("hang must time out");
    assert!(err.is_timeout(), "{err:?}");
    assert!(start.elapsed() >= Duration::from_millis(300));
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].rule.as_deref(), Some("broken"));
    assert_eq!(reqs[0].model.as_deref(), Some("g"));

    // A hanging request still in flight is released (connection closed) by shutdown.
    let url = format!("{}/v1/chat/completions", server.base_url());
    let server2 = start_faulty(Fault::Hang).await;
    let url2 = format!("{}/v1/chat/completions", server2.base_url());
    let pending = tokio::spawn(async move { client().post(url2).json(&json!({})).send().await });
    while server2.requests().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    server2.shutdown();
    let outcome = tokio::time::timeout(Duration::from_secs(5), pending)
        .await
        .expect("shutdown releases the hanging client")
        .unwrap();
    assert!(outcome.is_err());
    drop(server);
    // Give the accept loop a moment to see the stop signal, then the port is closed.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(client().get(url).send().await.is_err());
}

#[tokio::test]
async fn delay_is_recorded_before_the_answer() {
    let script =
        Script::default().rule(Rule::named("slow").reply(Reply::text("late").delay_ms(400)));
    let server = FakeServer::start(script).await.unwrap();
    let err = client()
        .post(format!("{}/v1/messages", server.base_url()))
        .timeout(Duration::from_millis(100))
        .json(&json!({"model": "c"}))
        .send()
        .await
        .expect_err("client gives up first");
    assert!(err.is_timeout());
    assert_eq!(
        server.requests().len(),
        1,
        "recorded despite the client timeout"
    );
}
