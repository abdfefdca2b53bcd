//! Provider-neutral request and response types, tool calls included.

use serde::{Deserialize, Serialize};

/// Who said a message in a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    /// The caller.
    User,
    /// The model.
    Assistant,
    /// The caller, answering one of the model's tool calls (see [`Message::tool_result`]).
    Tool,
}

/// One turn of a conversation.
///
/// A plain turn is a role and its text. An assistant turn may also carry the tool calls the
/// model made; a [`Speaker::Tool`] turn is the result of one of them, its text in `content`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Speaker,
    /// What was said (for a tool turn: the tool's output).
    pub content: String,
    /// The tools the assistant called in this turn, after its text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool turn: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_result: Option<ToolResult>,
}

impl Message {
    /// A user turn.
    pub fn user(content: impl Into<String>) -> Self {
        Message::plain(Speaker::User, content.into())
    }

    /// An assistant turn.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message::plain(Speaker::Assistant, content.into())
    }

    /// An assistant turn that called tools (its text may be empty).
    pub fn assistant_with_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Message {
            tool_calls: calls,
            ..Message::assistant(content)
        }
    }

    /// The successful result of `call`, to send back after the assistant turn that made it.
    pub fn tool_result(call: &ToolCall, output: impl Into<String>) -> Self {
        Message::answering(call, output.into(), false)
    }

    /// The failure of `call` (the tool refused or broke), said so to the model: Anthropic
    /// marks the result `is_error`, Gemini sends it as the response's `error`.
    pub fn tool_error(call: &ToolCall, why: impl Into<String>) -> Self {
        Message::answering(call, why.into(), true)
    }

    fn plain(role: Speaker, content: String) -> Self {
        Message {
            role,
            content,
            tool_calls: Vec::new(),
            tool_result: None,
        }
    }

    fn answering(call: &ToolCall, content: String, is_error: bool) -> Self {
        Message {
            tool_result: Some(ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                is_error,
            }),
            ..Message::plain(Speaker::Tool, content)
        }
    }

    /// Characters of text in this turn, arguments of its tool calls included.
    fn chars(&self) -> usize {
        self.content.len()
            + self
                .tool_calls
                .iter()
                .map(|c| c.name.len() + c.arguments.to_string().len())
                .sum::<usize>()
    }
}

/// A tool the model may call: what it is for and the JSON schema of its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls it by (`spawn_orchestrator`); letters, digits, `_` and `-`.
    pub name: String,
    /// When and why to call it, for the model.
    pub description: String,
    /// The JSON schema of the arguments, an object schema (`{"type": "object", ...}`);
    /// `null` means the tool takes no arguments.
    #[serde(default)]
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// A tool with this name, description and argument schema.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: serde_json::Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }

    /// The argument schema to send: `parameters`, or an object schema without properties
    /// when the tool takes no arguments (every protocol wants an object schema).
    pub fn schema(&self) -> serde_json::Value {
        if self.parameters.is_null() {
            serde_json::json!({"type": "object", "properties": {}})
        } else {
            self.parameters.clone()
        }
    }
}

/// One tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id that ties the call to its result: the provider's (OpenAI `call_…`, Anthropic
    /// `toolu_…`), or one made up here when the provider gives none (Gemini).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, always a JSON object (decoding refuses anything else).
    pub arguments: serde_json::Value,
    /// An opaque token the provider wants back with this call in the history (Gemini's
    /// `thoughtSignature`); `None` for most providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// What a [`Speaker::Tool`] turn answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The [`ToolCall::id`] answered.
    pub call_id: String,
    /// The tool's name (Gemini matches results by name).
    pub name: String,
    /// Whether the content is an error rather than the tool's output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
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
    /// Tools the model may call instead of (or before) answering; empty offers none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
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
            tools: Vec::new(),
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
        for m in &mut self.messages {
            clean(&mut m.content);
            for call in &mut m.tool_calls {
                crate::redact::Redactor::global().redact_value(&mut call.arguments);
            }
        }
    }

    /// Characters of prompt text, for worst-case cost estimates.
    pub fn prompt_chars(&self) -> usize {
        self.system.as_ref().map_or(0, |s| s.len())
            + self.messages.iter().map(Message::chars).sum::<usize>()
            + self
                .schema
                .as_ref()
                .map_or(0, |s| s.schema.to_string().len())
            + self
                .tools
                .iter()
                .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
                .sum::<usize>()
    }
}

/// Token counts the server reported.
///
/// `input_tokens` is the whole prompt, cached or not, in every protocol (Anthropic reports
/// the cached parts apart; its adapter adds them in): the figure cost and context accounting
/// both need. The cache fields say how much of it came from, or went into, the provider's
/// prompt cache, where the provider reports that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Of `input_tokens`, those read from the prompt cache (Anthropic
    /// `cache_read_input_tokens`, OpenAI `prompt_tokens_details.cached_tokens`, Gemini
    /// `cachedContentTokenCount`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    /// Of `input_tokens`, those written to the prompt cache (Anthropic
    /// `cache_creation_input_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
}

impl Usage {
    /// How much of the model's context window the prompt filled: every input token, cached
    /// or not (Anthropic's input + cache read + cache creation).
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(rhs.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(rhs.output_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(rhs.cache_read_input_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(rhs.cache_creation_input_tokens);
    }
}

/// A model's answer, after a protocol adapter translated it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant's text (for structured output: the JSON text).
    pub text: String,
    /// Structured answer, when the protocol delivers one apart from text (Anthropic's forced
    /// answer tool).
    pub structured: Option<serde_json::Value>,
    /// The tools the model called, in order; empty when it only answered.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
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

    /// This answer as the assistant turn to append to the conversation, tool calls included.
    pub fn message(&self) -> Message {
        Message::assistant_with_calls(self.text.clone(), self.tool_calls.clone())
    }
}
