//! What every protocol's adapter builds and reads: the request it wants sent and how its key
//! travels, what can go wrong reading an answer, a streamed answer's accumulator, and the
//! bounded readers of a server's JSON.

use serde_json::Value;

use crate::model::sse::SseEvent;
use crate::model::types::ChatResponse;
use crate::redact::redact;

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
    /// `tools::settle`).
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

/// The most tokens one usage field may report; larger numbers are clamped so that sums of
/// a server's figures can never overflow (and still cost more than any budget).
pub const MAX_REPORTED_TOKENS: u64 = 1 << 48;

/// A token count at `path`, or 0; clamped to [`MAX_REPORTED_TOKENS`].
pub(super) fn u64_at(v: &Value, path: &[&str]) -> u64 {
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

/// The string at `path`, if there is one there.
pub(super) fn str_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    cur.as_str().map(str::to_string)
}
