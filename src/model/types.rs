//! Provider-neutral request and response types.

use serde::{Deserialize, Serialize};

/// Who said a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The caller.
    User,
    /// The model.
    Assistant,
}

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Speaker,
    /// What was said.
    pub content: String,
}

impl Message {
    /// A user turn.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Speaker::User,
            content: content.into(),
        }
    }

    /// An assistant turn.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Speaker::Assistant,
            content: content.into(),
        }
    }
}

/// A JSON schema the answer must follow, sent the way each API expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A short identifier (`arbiter_review`), used as the tool or schema name.
    pub name: String,
    /// The JSON schema (draft 2020-12, all references inlined).
    pub schema: serde_json::Value,
}

/// A chat request, before a protocol adapter translates it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// System prompt.
    pub system: Option<String>,
    /// The conversation so far; the last turn is the user's.
    pub messages: Vec<Message>,
    /// Cap on output tokens.
    pub max_tokens: u32,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// Structured output schema, if the answer must be JSON.
    pub schema: Option<OutputSchema>,
    /// Ask for a streamed (SSE) answer.
    pub stream: bool,
    /// A GBNF grammar the answer must follow, for servers that enforce one (llama.cpp's
    /// `grammar`); other servers never see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// What the call is for, when the role alone does not say it (`chamber-panelist`):
    /// the ledger and `git triad usage` show it in place of the role's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub purpose: Option<String>,
}

impl ChatRequest {
    /// A one-turn request.
    pub fn new(system: Option<String>, user: impl Into<String>, max_tokens: u32) -> Self {
        ChatRequest {
            system,
            messages: vec![Message::user(user)],
            max_tokens,
            temperature: None,
            schema: None,
            stream: false,
            grammar: None,
            purpose: None,
        }
    }

    /// Takes every registered key out of the prompt text before it is sent: a key belongs in
    /// its provider's header only, never in a prompt (where a file, a verify log or an echoed
    /// answer could carry it to another provider).
    pub fn redact_secrets(&mut self) {
        let clean = |s: &mut String| {
            if let std::borrow::Cow::Owned(t) = crate::redact::redact(s) {
                *s = t;
            }
        };
        self.system.iter_mut().for_each(clean);
        self.messages.iter_mut().for_each(|m| clean(&mut m.content));
    }

    /// Characters of prompt text, for worst-case cost estimates.
    pub fn prompt_chars(&self) -> usize {
        self.system.as_ref().map_or(0, |s| s.len())
            + self.messages.iter().map(|m| m.content.len()).sum::<usize>()
            + self
                .schema
                .as_ref()
                .map_or(0, |s| s.schema.to_string().len())
    }
}

/// Token counts the server reported.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(rhs.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(rhs.output_tokens);
    }
}

/// A model's answer, after a protocol adapter translated it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant's text (for structured output: the JSON text).
    pub text: String,
    /// Structured answer, when the protocol delivers one apart from text (Anthropic tool use).
    pub structured: Option<serde_json::Value>,
    /// Token usage.
    pub usage: Usage,
    /// The model id the server says answered.
    pub model: Option<String>,
    /// Why generation stopped (`stop`, `length`, `end_turn`, `tool_use`, ...).
    pub finish_reason: Option<String>,
}

impl ChatResponse {
    /// Whether the answer was cut off by the output token limit.
    pub fn truncated(&self) -> bool {
        matches!(
            self.finish_reason.as_deref(),
            Some("length" | "max_tokens" | "MAX_TOKENS")
        )
    }
}
