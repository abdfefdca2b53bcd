//! Protocol adapters: they only translate (request → JSON, JSON → response) and do no I/O.
//!
//! The shared transport (`model::transport`) sends what an adapter built and hands the bytes
//! back to it. Every OpenAI-compatible server (OpenAI, xAI, DeepSeek, Groq, OpenRouter,
//! Mistral, Ollama, llama.cpp, vLLM, LM Studio, LiteLLM) goes through [`openai`].

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod tools;
mod wire;

pub use wire::{
    AdapterError, Auth, StreamAccumulator, WireRequest, MAX_MESSAGE_BYTES, MAX_REPORTED_TOKENS,
};

use serde_json::Value;

use super::types::{ChatRequest, ChatResponse};
use crate::config::Protocol;
use crate::redact::{redact, Redactor};

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
