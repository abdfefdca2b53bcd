//! The three wire formats: routing a request, and shaping success, error, stream and broken
//! bodies the way the real services do, so client parsers meet realistic JSON.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::script::{ModelInfo, Served, WireProtocol};

/// Content type of plain JSON answers.
pub(crate) const JSON: &str = "application/json";
/// Content type of streamed answers.
pub(crate) const SSE: &str = "text/event-stream";

/// How a chat request wants its answer delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// One JSON object.
    Whole,
    /// Server-sent events.
    Sse,
    /// Gemini `streamGenerateContent` without `alt=sse`: a JSON array of chunks.
    JsonArray,
}

/// What a request is, decided from method and path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// A model call.
    Chat {
        protocol: WireProtocol,
        delivery: Delivery,
        model: Option<String>,
    },
    /// `GET /v1/models` (OpenAI and Anthropic share the path).
    ListModels,
    /// `GET /v1beta/models` (Gemini's list shape).
    GeminiListModels,
    /// `GET /props` (llama.cpp's server properties).
    Props,
    /// `POST /api/show` (Ollama's model details).
    OllamaShow,
    /// Anything else: 404.
    NotFound,
}

/// Routes a request. OpenAI/Anthropic models come from the body, Gemini's from the path.
pub(crate) fn route(method: &str, path: &str, query: Option<&str>, json: Option<&Value>) -> Route {
    let body_model = || {
        json.and_then(|j| j.get("model"))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let body_stream = json
        .and_then(|j| j.get("stream"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let delivery = if body_stream {
        Delivery::Sse
    } else {
        Delivery::Whole
    };
    match (method, path) {
        ("POST", "/v1/chat/completions") => Route::Chat {
            protocol: WireProtocol::OpenAi,
            delivery,
            model: body_model(),
        },
        ("POST", "/v1/messages") => Route::Chat {
            protocol: WireProtocol::Anthropic,
            delivery,
            model: body_model(),
        },
        ("GET", "/v1/models") => Route::ListModels,
        ("GET", "/v1beta/models") => Route::GeminiListModels,
        ("GET", "/props") => Route::Props,
        ("POST", "/api/show") => Route::OllamaShow,
        ("POST", p) => {
            let Some(rest) = p
                .strip_prefix("/v1beta/models/")
                .or_else(|| p.strip_prefix("/v1/models/"))
            else {
                return Route::NotFound;
            };
            let Some((model, action)) = rest.rsplit_once(':') else {
                return Route::NotFound;
            };
            let sse = query.is_some_and(|q| q.split('&').any(|kv| kv == "alt=sse"));
            let delivery = match action {
                "generateContent" => Delivery::Whole,
                "streamGenerateContent" if sse => Delivery::Sse,
                "streamGenerateContent" => Delivery::JsonArray,
                _ => return Route::NotFound,
            };
            Route::Chat {
                protocol: WireProtocol::Gemini,
                delivery,
                model: Some(model.to_string()),
            }
        }
        _ => Route::NotFound,
    }
}

/// Everything about the request that shapes the answer.
pub(crate) struct Ctx<'a> {
    pub protocol: WireProtocol,
    pub delivery: Delivery,
    pub model: Option<&'a str>,
    pub request: Option<&'a Value>,
    pub request_chars: usize,
    /// Per-server sequence number, for stable ids.
    pub seq: u64,
}

/// A finished response, before faults are applied.
pub(crate) struct Built {
    pub status: u16,
    pub content_type: &'static str,
    /// The whole body (the concatenation of `chunks` when streaming).
    pub body: Vec<u8>,
    /// SSE events, each sent as its own HTTP chunk; empty for non-streamed bodies.
    pub chunks: Vec<Vec<u8>>,
}

impl Built {
    pub(crate) fn whole(status: u16, content_type: &'static str, body: Vec<u8>) -> Built {
        Built {
            status,
            content_type,
            body,
            chunks: Vec::new(),
        }
    }

    pub(crate) fn events(events: Vec<String>) -> Built {
        let chunks: Vec<Vec<u8>> = events.into_iter().map(String::into_bytes).collect();
        Built {
            status: 200,
            content_type: SSE,
            body: chunks.concat(),
            chunks,
        }
    }
}

/// The protocol's own error JSON for a status.
pub(crate) fn error_body(protocol: WireProtocol, status: u16, message: &str) -> Value {
    match protocol {
        WireProtocol::OpenAi => {
            let (kind, code) = match status {
                401 => ("invalid_request_error", Some("invalid_api_key")),
                404 => ("invalid_request_error", Some("model_not_found")),
                429 => ("requests", Some("rate_limit_exceeded")),
                s if s >= 500 => ("server_error", None),
                _ => ("invalid_request_error", None),
            };
            json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
        }
        WireProtocol::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                403 => "permission_error",
                404 => "not_found_error",
                413 => "request_too_large",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                s if s >= 500 => "api_error",
                _ => "invalid_request_error",
            };
            json!({"type": "error", "error": {"type": kind, "message": message}})
        }
        WireProtocol::Gemini => {
            let kind = match status {
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                504 => "DEADLINE_EXCEEDED",
                _ => "INTERNAL",
            };
            json!({"error": {"code": status, "message": message, "status": kind}})
        }
    }
}

/// The body of the `malformed` fault: valid-looking start, never valid JSON.
pub(crate) fn malformed(protocol: WireProtocol, delivery: Delivery) -> Built {
    let start = match protocol {
        WireProtocol::OpenAi => r#"{"id": "chatcmpl-broken", "choices": ["#,
        WireProtocol::Anthropic => r#"{"type": "message", "content": ["#,
        WireProtocol::Gemini => r#"{"candidates": ["#,
    };
    match delivery {
        // Streams stay SSE-framed so the client's event parser, not its content-type check,
        // is what meets the garbage.
        Delivery::Sse => {
            let event = match protocol {
                WireProtocol::Anthropic => format!("event: message_start\ndata: {start}\n\n"),
                WireProtocol::Gemini => format!("data: {start}\r\n\r\n"),
                WireProtocol::OpenAi => format!("data: {start}\n\n"),
            };
            Built::events(vec![event])
        }
        _ => Built::whole(200, JSON, start.as_bytes().to_vec()),
    }
}

/// The OpenAI-style model list (with the Anthropic fields too, since both use `/v1/models`),
/// with the limits OpenRouter and vLLM add for the models that report them.
pub(crate) fn models_body(ids: &[String], info: &BTreeMap<String, ModelInfo>) -> Value {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| {
            let mut m = json!({"id": id, "object": "model", "type": "model", "created": 0,
                   "created_at": "2025-01-01T00:00:00Z", "owned_by": "fake-llm",
                   "display_name": id});
            match info.get(id) {
                Some(i) if i.served == Served::OpenRouter => {
                    m["context_length"] = json!(i.context_length);
                    m["top_provider"] = json!({"context_length": i.context_length,
                        "max_completion_tokens": i.max_output_tokens});
                }
                Some(i) if i.served == Served::Vllm => {
                    m["max_model_len"] = json!(i.context_length);
                }
                _ => {}
            }
            m
        })
        .collect();
    json!({"object": "list", "data": data, "has_more": false,
           "first_id": ids.first(), "last_id": ids.last()})
}

/// Gemini's model list shape.
pub(crate) fn gemini_models_body(ids: &[String]) -> Value {
    let models: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"name": format!("models/{id}"), "displayName": id,
                   "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]})
        })
        .collect();
    json!({ "models": models })
}

/// llama.cpp's `GET /props` for the first model it serves, or `None` (404).
pub(crate) fn props_body(info: &BTreeMap<String, ModelInfo>) -> Option<Value> {
    let (id, i) = info.iter().find(|(_, i)| i.served == Served::LlamaCpp)?;
    Some(json!({
        "default_generation_settings": {"n_ctx": i.context_length, "n_predict": -1, "model": id},
        "total_slots": 1,
        "model_path": format!("/models/{id}.gguf"),
    }))
}

/// Ollama's `POST /api/show` for the model named in the body (`model`, or the older
/// `name`), or `None` (404).
pub(crate) fn ollama_show_body(
    info: &BTreeMap<String, ModelInfo>,
    body: Option<&Value>,
) -> Option<Value> {
    let id = body
        .and_then(|b| b.get("model").or_else(|| b.get("name")))
        .and_then(Value::as_str)?;
    let i = info.get(id).filter(|i| i.served == Served::Ollama)?;
    let parameters = i
        .num_ctx
        .map(|n| {
            format!(
                "num_ctx                        {n}\nstop                           \"<|im_end|>\""
            )
        })
        .unwrap_or_default();
    Some(json!({
        "modelfile": format!("FROM {id}"),
        "parameters": parameters,
        "details": {"family": "qwen2", "parameter_size": "7.6B"},
        "model_info": {"general.architecture": "qwen2", "qwen2.context_length": i.context_length},
    }))
}
