//! What the server keeps of each request: the record a test reads back to see what a
//! client sent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::script::WireProtocol;

/// One request as the server saw it, recorded before it was answered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// The request target as sent, query string included (e.g. `...:streamGenerateContent?alt=sse`).
    pub path: String,
    /// Headers with lowercase names; repeated headers joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// The body as text (lossy UTF-8).
    pub body: String,
    /// The body parsed as JSON, if it was JSON.
    pub json: Option<serde_json::Value>,
    /// The wire protocol of the route; `None` for model lists and unknown routes.
    pub protocol: Option<WireProtocol>,
    /// The requested model id (body `"model"`, or the Gemini path segment).
    pub model: Option<String>,
    /// Name of the rule that answered, if it had one (`None` also when nothing matched).
    pub rule: Option<String>,
    /// Whether the client asked for a streamed answer.
    pub stream: bool,
}
