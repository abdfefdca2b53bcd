//! One request to a model and what came back, as a record keeps it: the request's text, the
//! answer, and every provider call it took (a repaired structured answer takes two).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::budget::CallRecord;
use super::client::{Completion, Structured};
use super::types::ChatRequest;

/// The text a request sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sent {
    /// The system prompt (kept for free-text calls, whose protocol it holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The first user message.
    #[serde(default)]
    pub user: Option<String>,
}

/// One model call, kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// The registry name of the model that answered.
    pub model: String,
    /// What was sent.
    #[serde(default)]
    pub request: Sent,
    /// The answer: its text (clipped), or the JSON a structured answer validated as.
    #[serde(default)]
    pub response: Value,
    /// Every provider call it took, with tokens, latency and cost.
    pub calls: Vec<CallRecord>,
}

impl Exchange {
    /// A free-text call to `req`: the system prompt and the user message, and the answer's
    /// text clipped to `max_bytes` (a hostile answer must not become megabytes in every
    /// record that quotes it).
    pub fn text(req: &ChatRequest, completion: &Completion, max_bytes: usize) -> Exchange {
        Exchange {
            model: completion.model.clone(),
            request: Sent {
                system: req.system.clone(),
                user: first_user(req),
            },
            response: Value::String(crate::bounded::clip(&completion.response.text, max_bytes)),
            calls: completion.records.clone(),
        }
    }

    /// A structured call to `req`: the user message and the JSON the answer validated as.
    pub fn structured<T>(req: &ChatRequest, result: &Structured<T>) -> Exchange {
        Exchange {
            model: result.completion.model.clone(),
            request: Sent {
                system: None,
                user: first_user(req),
            },
            response: result.json.clone(),
            calls: result.completion.records.clone(),
        }
    }
}

impl Exchange {
    /// A structured call to `req` whose answer `model` never gave in its schema: the
    /// request, and `null` for the answer (the ledger keeps the calls).
    pub fn unanswered(req: &ChatRequest, model: &str) -> Exchange {
        Exchange {
            model: model.to_string(),
            request: Sent {
                system: None,
                user: first_user(req),
            },
            response: Value::Null,
            calls: Vec::new(),
        }
    }
}

fn first_user(req: &ChatRequest) -> Option<String> {
    req.messages.first().map(|m| m.content.clone())
}
