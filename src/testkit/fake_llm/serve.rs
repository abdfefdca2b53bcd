//! The accept loop and per-connection handling: match, record, wait, answer or misbehave.

use std::fs::File;
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::answer;
use super::http::{self, Body, ReadError};
use super::recorded::RecordedRequest;
use super::script::{Fault, Reply, Script};
use super::wire::{self, Built, Ctx, Delivery, Route};

/// How long to keep reading after our response, so unread client bytes do not turn our
/// graceful close into a reset.
const DRAIN_TIMEOUT: Duration = Duration::from_millis(500);

/// Everything the connections share.
pub(crate) struct State {
    pub script: Script,
    /// Per rule: how many replies it has handed out.
    pub used: Vec<usize>,
    pub requests: Vec<RecordedRequest>,
    /// `--record` file: one JSON line per request.
    pub record: Option<File>,
    pub seq: u64,
}

/// The shared state handle.
pub(crate) type Shared = Arc<Mutex<State>>;

/// Locks the state, ignoring poisoning: a panicking test thread must not hide the requests
/// that the other assertions want to look at.
pub(crate) fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

impl State {
    pub fn new(script: Script, record: Option<File>) -> State {
        let used = vec![0; script.rules.len()];
        State {
            script,
            used,
            requests: Vec::new(),
            record,
            seq: 0,
        }
    }

    /// Finds the first matching rule that still has a reply, and consumes that reply.
    fn take_reply(
        &mut self,
        route: &Route,
        body: &str,
        json: Option<&Value>,
    ) -> Option<(Option<String>, Reply)> {
        let Route::Chat {
            protocol, model, ..
        } = route
        else {
            return None;
        };
        for (i, rule) in self.script.rules.iter().enumerate() {
            let protocol_ok = rule.protocol.is_none_or(|p| p == *protocol);
            let model_ok = rule.model.is_none() || rule.model == *model;
            let contains_ok = rule
                .contains
                .iter()
                .all(|needle| body.contains(needle.as_str()) || json_contains(json, needle));
            if !(protocol_ok && model_ok && contains_ok) {
                continue;
            }
            let used = self.used[i];
            let reply = match rule.responses.get(used) {
                Some(r) => r,
                None if rule.repeat_last => match rule.responses.last() {
                    Some(r) => r,
                    None => continue,
                },
                None => continue,
            };
            self.used[i] = used + 1;
            return Some((rule.name.clone(), reply.clone()));
        }
        None
    }

    fn record(&mut self, req: RecordedRequest) {
        if let Some(file) = self.record.as_mut() {
            // Best effort: a full disk must not change what the client under test sees.
            if let Ok(line) = serde_json::to_string(&req) {
                if let Err(e) = writeln!(file, "{line}").and_then(|()| file.flush()) {
                    tracing::warn!("fake-llm: cannot write record file: {e}");
                }
            }
        }
        self.requests.push(req);
    }
}

/// Does any string value inside the JSON body contain the needle (decoded, unescaped)?
fn json_contains(json: Option<&Value>, needle: &str) -> bool {
    match json {
        Some(Value::String(s)) => s.contains(needle),
        Some(Value::Array(items)) => items.iter().any(|v| json_contains(Some(v), needle)),
        Some(Value::Object(map)) => map.values().any(|v| json_contains(Some(v), needle)),
        _ => false,
    }
}

/// Resolves once shutdown is requested (or the server handle is gone).
pub(crate) async fn stopped(rx: &mut watch::Receiver<bool>) {
    while !*rx.borrow_and_update() {
        if rx.changed().await.is_err() {
            return;
        }
    }
}

/// Accepts connections until shutdown, one task per connection.
pub(crate) async fn accept_loop(
    listener: TcpListener,
    shared: Shared,
    shutdown: watch::Receiver<bool>,
) {
    let mut stop = shutdown.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(handle(stream, shared.clone(), shutdown.clone()));
                }
                Err(e) => {
                    // Usually EMFILE; back off instead of spinning.
                    tracing::warn!("fake-llm: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            },
            () = stopped(&mut stop) => return,
        }
    }
}

/// Serves one connection: exactly one request, then close.
async fn handle(mut stream: TcpStream, shared: Shared, mut shutdown: watch::Receiver<bool>) {
    let request = tokio::select! {
        r = http::read_request(&mut stream) => r,
        () = stopped(&mut shutdown) => return,
    };
    let request = match request {
        Ok(r) => r,
        Err(ReadError::Closed) => return,
        Err(ReadError::Bad(message)) => {
            let body = json!({"error": {"message": format!("fake-llm: {message}"), "type": "bad_request"}});
            let _ = write_json(&mut stream, 400, &body.to_string()).await;
            close(stream).await;
            return;
        }
    };

    let body_text = String::from_utf8_lossy(&request.body).into_owned();
    let json: Option<Value> = serde_json::from_slice(&request.body).ok();
    let route = wire::route(
        &request.method,
        &request.path,
        request.query.as_deref(),
        json.as_ref(),
    );

    // Match and record in one critical section, before any delay, so a client that times
    // out still leaves its request behind for the test to inspect.
    let (picked, seq, model_ids, model_info, window) = {
        let mut state = lock(&shared);
        state.seq += 1;
        let seq = state.seq;
        let picked = state.take_reply(&route, &body_text, json.as_ref());
        let (protocol, model, stream_flag) = match &route {
            Route::Chat {
                protocol,
                delivery,
                model,
            } => (Some(*protocol), model.clone(), *delivery != Delivery::Whole),
            _ => (None, None, false),
        };
        state.record(RecordedRequest {
            method: request.method.clone(),
            path: request.target.clone(),
            headers: request.headers.clone(),
            body: body_text.clone(),
            json: json.clone(),
            protocol,
            model,
            rule: picked.as_ref().and_then(|(name, _)| name.clone()),
            stream: stream_flag,
        });
        (
            picked.map(|(_, reply)| reply),
            seq,
            state.script.model_ids(),
            state.script.models.clone(),
            match &route {
                Route::Chat { model: Some(m), .. } => state.script.windows.get(m).copied(),
                _ => None,
            },
        )
    };

    let result = match (&route, picked) {
        (Route::ListModels, _) => {
            let body = wire::models_body(&model_ids, &model_info).to_string();
            write_json(&mut stream, 200, &body).await
        }
        (Route::Props, _) => match wire::props_body(&model_info) {
            Some(body) => write_json(&mut stream, 200, &body.to_string()).await,
            None => {
                write_json(
                    &mut stream,
                    404,
                    r#"{"error":"fake-llm: not a llama.cpp server"}"#,
                )
                .await
            }
        },
        (Route::OllamaShow, _) => match wire::ollama_show_body(&model_info, json.as_ref()) {
            Some(body) => write_json(&mut stream, 200, &body.to_string()).await,
            None => write_json(&mut stream, 404, r#"{"error":"model not found"}"#).await,
        },
        (Route::GeminiListModels, _) => {
            let body = wire::gemini_models_body(&model_ids).to_string();
            write_json(&mut stream, 200, &body).await
        }
        (Route::NotFound, _) => {
            let message = format!("fake-llm: no route for {} {}", request.method, request.path);
            let body = json!({"error": {"message": message, "type": "not_found"}}).to_string();
            write_json(&mut stream, 404, &body).await
        }
        (
            Route::Chat {
                protocol, model, ..
            },
            None,
        ) => {
            let message = format!(
                "fake-llm: no rule matched {protocol} model={}",
                model.as_deref().unwrap_or("<none>")
            );
            let body = json!({"error": {"message": message, "type": "no_rule"}}).to_string();
            write_json(&mut stream, 500, &body).await
        }
        (
            Route::Chat {
                protocol,
                delivery,
                model,
            },
            Some(reply),
        ) => {
            if let Some(window) = window {
                let prompt = (body_text.chars().count() as u64 / 4).max(1);
                let answer = json
                    .as_ref()
                    .and_then(|j| {
                        j.get("max_tokens")
                            .or_else(|| j.get("max_completion_tokens"))
                    })
                    .and_then(Value::as_u64)
                    .unwrap_or(0);
                if prompt + answer > window {
                    let message = format!(
                        "This model's maximum context length is {window} tokens. However, you requested {} tokens ({prompt} in the messages, {answer} in the completion).",
                        prompt + answer
                    );
                    let body = json!({"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}});
                    let _ = write_json(&mut stream, 400, &body.to_string()).await;
                    close(stream).await;
                    return;
                }
            }
            if reply.delay_ms > 0 {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(reply.delay_ms)) => {}
                    () = stopped(&mut shutdown) => return,
                }
            }
            let ctx = Ctx {
                protocol: *protocol,
                delivery: *delivery,
                model: model.as_deref(),
                request: json.as_ref(),
                request_chars: body_text.chars().count(),
                seq,
            };
            match reply.fault {
                Some(Fault::Reset) => {
                    // SO_LINGER 0 makes the kernel send RST instead of FIN on close.
                    if let Err(e) = stream.set_zero_linger() {
                        tracing::warn!("fake-llm: cannot set linger for reset: {e}");
                    }
                    drop(stream);
                    return;
                }
                Some(Fault::Hang) => {
                    hang(stream, &mut shutdown).await;
                    return;
                }
                Some(Fault::Truncate) => {
                    let built = answer::build(&ctx, &reply);
                    let r = http::write(
                        &mut stream,
                        built.status,
                        built.content_type,
                        &reply.headers,
                        Body::Truncated(&built.body),
                    )
                    .await;
                    // No drain: the client is still waiting for the rest and would keep the
                    // connection open until our timeout.
                    let _ = stream.shutdown().await;
                    if let Err(e) = r {
                        tracing::debug!("fake-llm: truncated write failed: {e}");
                    }
                    return;
                }
                Some(Fault::Malformed) => {
                    let built = wire::malformed(*protocol, *delivery);
                    send(&mut stream, &built, &reply).await
                }
                None => {
                    let built = answer::build(&ctx, &reply);
                    send(&mut stream, &built, &reply).await
                }
            }
        }
    };
    if let Err(e) = result {
        // The client gave up (timeout, cancel); that is its business, not a server failure.
        tracing::debug!("fake-llm: write failed: {e}");
    }
    close(stream).await;
}

/// Writes a built response: SSE as one HTTP chunk per event, everything else whole.
async fn send(stream: &mut TcpStream, built: &Built, reply: &Reply) -> std::io::Result<()> {
    let body = if built.chunks.is_empty() {
        Body::Full(&built.body)
    } else {
        Body::Chunked(&built.chunks)
    };
    let (status, content_type) = (built.status, built.content_type);
    http::write(stream, status, content_type, &reply.headers, body).await
}

/// Writes an answer no script decides (model lists, errors): JSON, no extra headers.
async fn write_json(stream: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    let none = Default::default();
    http::write(
        stream,
        status,
        wire::JSON,
        &none,
        Body::Full(body.as_bytes()),
    )
    .await
}

/// Never answers; returns when the server stops or the client hangs up.
async fn hang(mut stream: TcpStream, shutdown: &mut watch::Receiver<bool>) {
    let mut sink = [0u8; 1024];
    loop {
        tokio::select! {
            read = stream.read(&mut sink) => match read {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            },
            () = stopped(shutdown) => return,
        }
    }
}

/// Graceful close: FIN, then drain briefly so leftover client bytes do not provoke an RST
/// that could destroy the response in flight.
async fn close(mut stream: TcpStream) {
    if stream.shutdown().await.is_err() {
        return;
    }
    let mut sink = [0u8; 1024];
    let _ = tokio::time::timeout(DRAIN_TIMEOUT, async {
        while let Ok(n) = stream.read(&mut sink).await {
            if n == 0 {
                break;
            }
        }
    })
    .await;
}
