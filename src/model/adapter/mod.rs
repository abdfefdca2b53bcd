//! Protocol adapters: they only translate (request → JSON, JSON → response) and do no I/O.
//!
//! The shared transport (`model::transport`) sends what an adapter built and hands the bytes
//! back to it. Every OpenAI-compatible server (OpenAI, xAI, DeepSeek, Groq, OpenRouter,
//! Mistral, Ollama, llama.cpp, vLLM, LM Studio, LiteLLM) goes through [`openai`].

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod tools;

use serde_json::Value;

use super::sse::SseEvent;
use super::types::{ChatRequest, ChatResponse};
use crate::config::Protocol;
use crate::redact::{redact, Redactor};

/// Most bytes of a server's error message kept in an error (an adapter's or the transport's
/// `Status`): enough to read, never a megabyte echoed into every record.
pub const MAX_MESSAGE_BYTES: usize = 1024;

/// How the API key travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// The key as the value of this header.
    Header(&'static str),
}

/// An HTTP request an adapter wants sent, minus the key.
#[derive(Debug, Clone)]
pub struct WireRequest {
    /// Full URL.
    pub url: String,
    /// Extra headers (no secrets here).
    pub headers: Vec<(&'static str, String)>,
    /// How to attach the key, when there is one.
    pub auth: Auth,
    /// JSON body.
    pub body: Value,
    /// The tool whose call is the structured answer (Anthropic's forced schema tool), so the
    /// answer can be told apart from the calls of the request's own tools (see
    /// [`tools::settle`]).
    pub answer_tool: Option<String>,
}

/// What went wrong understanding a server's answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdapterError {
    /// The body is not the JSON the protocol promises.
    #[error("malformed response: {0}")]
    Malformed(String),
    /// A stream ended before its final event.
    #[error("the stream ended before the answer was complete")]
    Incomplete,
    /// The server sent an error object inside a 200 answer or a stream.
    #[error("the server reported an error: {0}")]
    Api(String),
}

impl AdapterError {
    /// An [`AdapterError::Api`] with the server's message redacted, then cut to a bounded
    /// size (in that order, so a cut never leaves part of a key behind).
    pub fn api(message: String) -> AdapterError {
        AdapterError::Api(crate::bounded::clip(&redact(&message), MAX_MESSAGE_BYTES))
    }
}

/// Accumulates a streamed answer event by event.
pub trait StreamAccumulator: Send {
    /// Feeds one SSE event; `Ok(true)` means the stream is complete.
    fn event(&mut self, ev: &SseEvent) -> Result<bool, AdapterError>;
    /// The answer so far, once the stream is complete.
    fn finish(self: Box<Self>) -> Result<ChatResponse, AdapterError>;
}

/// Builds the wire request for `protocol`.
pub fn build(protocol: Protocol, base_url: &str, model_id: &str, req: &ChatRequest) -> WireRequest {
    match protocol {
        Protocol::Openai => openai::build(base_url, model_id, req),
        Protocol::Anthropic => anthropic::build(base_url, model_id, req),
        Protocol::Gemini => gemini::build(base_url, model_id, req),
    }
}

/// Parses a complete (non-streamed) success body.
pub fn parse(protocol: Protocol, body: &[u8]) -> Result<ChatResponse, AdapterError> {
    let mut v: Value = serde_json::from_slice(body)
        .map_err(|e| AdapterError::Malformed(format!("not JSON ({e}): {}", snippet(body))))?;
    // Decoded strings may show a key the raw text hid behind `\u` escapes.
    Redactor::global().redact_value(&mut v);
    match protocol {
        Protocol::Openai => openai::parse(&v),
        Protocol::Anthropic => anthropic::parse(&v),
        Protocol::Gemini => gemini::parse(&v),
    }
}

/// A fresh accumulator for a streamed answer.
pub fn stream_accumulator(protocol: Protocol) -> Box<dyn StreamAccumulator> {
    match protocol {
        Protocol::Openai => Box::<openai::Acc>::default(),
        Protocol::Anthropic => Box::<anthropic::Acc>::default(),
        Protocol::Gemini => Box::<gemini::Acc>::default(),
    }
}

/// The human message inside an error body, in any of the three protocols' shapes.
pub fn error_message(body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let v = if v.is_array() { v.get(0)?.clone() } else { v };
    let err = v.get("error")?;
    err.get("message")
        .and_then(Value::as_str)
        .or_else(|| err.as_str())
        .map(|m| redact(m).into_owned())
}

/// The first bytes of a body, for error messages.
pub fn snippet(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut s: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// The most tokens one usage field may report; larger numbers are clamped so that sums of
/// a server's figures can never overflow (and still cost more than any budget).
pub const MAX_REPORTED_TOKENS: u64 = 1 << 48;

/// A token count at `path`, or 0; clamped to [`MAX_REPORTED_TOKENS`].
pub(crate) fn u64_at(v: &Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(next) => cur = next,
            None => return 0,
        }
    }
    let n = cur
        .as_u64()
        .or_else(|| cur.as_f64().filter(|f| *f >= 1.0).map(|f| f as u64))
        .unwrap_or(0);
    n.min(MAX_REPORTED_TOKENS)
}

pub(crate) fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().map(str::to_string)
}
