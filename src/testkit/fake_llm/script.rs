//! The script format: which request gets which answer.
//!
//! A script is a list of [`Rule`]s tried in order; each rule carries the [`Reply`]s it gives,
//! one per matching request. Scripts are plain data (serde) so shell tests and benchmarks can
//! keep them in TOML or JSON files next to the test, and Rust tests can build them in code with
//! the small builder helpers below.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The wire format a request arrived in, decided by its route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WireProtocol {
    /// `POST /v1/chat/completions` (OpenAI chat completions, also most local servers).
    #[serde(rename = "openai")]
    OpenAi,
    /// `POST /v1/messages` (Anthropic Messages API).
    Anthropic,
    /// `POST /v1beta/models/{model}:generateContent` (Google Gemini).
    Gemini,
}

impl fmt::Display for WireProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WireProtocol::OpenAi => "openai",
            WireProtocol::Anthropic => "anthropic",
            WireProtocol::Gemini => "gemini",
        })
    }
}

/// A whole script: rules tried in order for every model request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    /// The rules, first match wins.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// What the server says about models on its informational routes, by model id (see
    /// [`Served`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub models: BTreeMap<String, ModelInfo>,
    /// Context windows the server enforces, by model id, as a real server does: a chat
    /// request whose prompt tokens (a quarter of the request's characters, as the usage
    /// reports them) plus its `max_tokens` exceed the window is answered 400
    /// `context_length_exceeded`, whatever the rules say.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub windows: BTreeMap<String, u64>,
}

/// Which server's informational routes report a model's limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Served {
    /// `GET /v1/models` lists it with `context_length` and
    /// `top_provider.max_completion_tokens` (OpenRouter, LM Studio).
    OpenRouter,
    /// `GET /v1/models` lists it with `max_model_len` (vLLM).
    Vllm,
    /// `GET /props` answers `default_generation_settings.n_ctx` (llama.cpp's server, one
    /// model per server).
    LlamaCpp,
    /// `POST /api/show` answers `model_info.<arch>.context_length`, and `num_ctx` in
    /// `parameters` when [`ModelInfo::num_ctx`] is set (Ollama).
    Ollama,
}

/// The limits a server reports for one model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Whose routes report it.
    pub served: Served,
    /// The context window reported.
    pub context_length: u64,
    /// The most output tokens reported (OpenRouter only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Ollama's `num_ctx` parameter: the window the server really runs the model with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_ctx: Option<u64>,
}

/// One rule: a request filter plus the replies it hands out in order.
///
/// Unknown keys are rejected so a typo in a test script fails loudly instead of silently
/// matching everything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Name reported in [`RecordedRequest::rule`](super::RecordedRequest::rule), for assertions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Only match requests in this wire format; `None` matches any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<WireProtocol>,
    /// Only match this exact model id (body `"model"`, or the Gemini URL path segment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every string must occur in the request body, either in the raw (JSON-escaped) text or
    /// inside one decoded JSON string value (so markers with newlines or quotes still match).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// Replies given in order, one per matching request. Must not be empty.
    #[serde(default)]
    pub responses: Vec<Reply>,
    /// Once the replies are used up: `true` keeps answering the last one, `false` makes the
    /// rule stop matching so later rules (or the no-match 500) take over.
    #[serde(default = "default_true")]
    pub repeat_last: bool,
}

impl Default for Rule {
    /// A rule that matches everything; `repeat_last` defaults to `true` as in scripts.
    fn default() -> Self {
        Rule {
            name: None,
            protocol: None,
            model: None,
            contains: Vec::new(),
            responses: Vec::new(),
            repeat_last: true,
        }
    }
}

/// How to break a response on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fault {
    /// Read the request, then abort the connection with a TCP RST.
    Reset,
    /// Announce a longer `Content-Length` than is sent, send half the body, close.
    Truncate,
    /// Status 200 with a body that is not valid JSON (or a non-JSON SSE event when streaming).
    Malformed,
    /// Read the request and never answer (until the server shuts down or the client leaves).
    Hang,
}

/// Token counts reported in the response's usage block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Usage {
    /// Prompt / input tokens.
    pub input_tokens: u64,
    /// Completion / output tokens.
    pub output_tokens: u64,
}

/// One scripted answer.
///
/// Body precedence: `raw` > `body` > `json`/`text`. With no body field and a status >= 400 the
/// server sends a protocol-appropriate error JSON (using `text` as the message if set).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    /// HTTP status, default 200.
    #[serde(default = "default_status")]
    pub status: u16,
    /// Extra response headers (e.g. `retry-after`); they replace defaults of the same name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Milliseconds to wait before answering (the request is recorded before the wait).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub delay_ms: u64,
    /// Break the response instead of answering normally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<Fault>,
    /// Assistant text for a well-formed, protocol-appropriate success body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Structured answer. OpenAI/Gemini: serialized as the assistant text. Anthropic: a
    /// `tool_use` block whose `input` is this value, named after the request's
    /// `tool_choice.name` (or first tool); without any tool in the request it falls back to
    /// text. Wins over `text` for OpenAI/Gemini; on Anthropic `text` becomes a preamble block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub json: Option<serde_json::Value>,
    /// Tool calls the assistant makes, rendered in each protocol's own shape (OpenAI
    /// `tool_calls`, Anthropic `tool_use` blocks, Gemini `functionCall` parts), streamed too;
    /// `text`, if set, comes before them. Excludes `json`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ScriptedCall>,
    /// Raw JSON body sent verbatim (overrides `text`/`json`); meant for error bodies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<serde_json::Value>,
    /// Raw body bytes sent as-is (overrides everything, content type stays JSON/SSE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// Reported token usage; default is a rough estimate (chars / 4, at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// Model id the server reports back (default: the requested id), to test mismatch warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

impl Default for Reply {
    /// A 200 answer with empty assistant text.
    fn default() -> Self {
        Reply {
            status: 200,
            headers: BTreeMap::new(),
            delay_ms: 0,
            fault: None,
            text: None,
            json: None,
            tool_calls: Vec::new(),
            body: None,
            raw: None,
            usage: None,
            model: None,
        }
    }
}

/// One tool call of a scripted answer. In TOML:
/// `tool_calls = [{ name = "grep", arguments = { pattern = "fn main" } }]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// The tool called.
    pub name: String,
    /// Its arguments, a JSON object (absent: none).
    #[serde(default = "empty_object")]
    pub arguments: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::json!({})
}

fn default_true() -> bool {
    true
}

fn default_status() -> u16 {
    200
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The file could not be read.
    #[error("cannot read script {path}: {source}")]
    Io {
        /// The script path.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The TOML text did not match the script format.
    #[error("invalid TOML script: {0}")]
    Toml(#[from] toml::de::Error),
    /// The JSON text did not match the script format.
    #[error("invalid JSON script: {0}")]
    Json(#[from] serde_json::Error),
    /// The file extension is neither `.toml` nor `.json`.
    #[error("script {0} must end in .toml or .json")]
    Extension(PathBuf),
    /// The script parsed but makes no sense (e.g. a rule without replies).
    #[error("invalid script: {0}")]
    Invalid(String),
}

impl Script {
    /// A script made of these rules.
    pub fn new(rules: Vec<Rule>) -> Script {
        Script {
            rules,
            models: BTreeMap::new(),
            windows: BTreeMap::new(),
        }
    }

    /// Has the server refuse requests to the model `id` that exceed a window of `tokens`
    /// (builder style; see [`Script::windows`]).
    pub fn window(mut self, id: impl Into<String>, tokens: u64) -> Script {
        self.windows.insert(id.into(), tokens);
        self
    }

    /// Has the server report `info` for the model `id` (builder style).
    pub fn model_info(mut self, id: impl Into<String>, info: ModelInfo) -> Script {
        self.models.insert(id.into(), info);
        self
    }

    /// Loads a script file; the format is chosen by extension (`.toml` or `.json`).
    pub fn load(path: impl AsRef<Path>) -> Result<Script, ScriptError> {
        let path = path.as_ref();
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        let read = || {
            std::fs::read_to_string(path).map_err(|source| ScriptError::Io {
                path: path.to_path_buf(),
                source,
            })
        };
        match ext.as_deref() {
            Some("toml") => Script::from_toml_str(&read()?),
            Some("json") => Script::from_json_str(&read()?),
            _ => Err(ScriptError::Extension(path.to_path_buf())),
        }
    }

    /// Parses and validates a TOML script.
    pub fn from_toml_str(text: &str) -> Result<Script, ScriptError> {
        let script: Script = toml::from_str(text)?;
        script.validate()?;
        Ok(script)
    }

    /// Parses and validates a JSON script.
    pub fn from_json_str(text: &str) -> Result<Script, ScriptError> {
        let script: Script = serde_json::from_str(text)?;
        script.validate()?;
        Ok(script)
    }

    /// Checks what serde cannot: every rule has at least one reply and one body source.
    pub fn validate(&self) -> Result<(), ScriptError> {
        for (i, rule) in self.rules.iter().enumerate() {
            let label = rule.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            if rule.responses.is_empty() {
                return Err(ScriptError::Invalid(format!(
                    "rule {label} has no responses"
                )));
            }
            for reply in &rule.responses {
                if !(100..=599).contains(&reply.status) {
                    return Err(ScriptError::Invalid(format!(
                        "rule {label}: status {} is not an HTTP status",
                        reply.status
                    )));
                }
                if reply.json.is_some() && !reply.tool_calls.is_empty() {
                    return Err(ScriptError::Invalid(format!(
                        "rule {label}: a reply has both `json` and `tool_calls`; pick one"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Appends a rule (builder style).
    pub fn rule(mut self, rule: Rule) -> Script {
        self.rules.push(rule);
        self
    }

    /// The distinct model ids named by the rules, then by [`Script::models`], in script
    /// order (for `GET /v1/models`).
    pub fn model_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        let named = self.rules.iter().filter_map(|r| r.model.as_ref());
        for m in named.chain(self.models.keys()) {
            if !ids.contains(m) {
                ids.push(m.clone());
            }
        }
        ids
    }
}

impl Rule {
    /// A catch-all rule with this name and no replies yet.
    pub fn named(name: impl Into<String>) -> Rule {
        Rule {
            name: Some(name.into()),
            ..Rule::default()
        }
    }

    /// Restricts the rule to one wire protocol.
    pub fn protocol(mut self, protocol: WireProtocol) -> Rule {
        self.protocol = Some(protocol);
        self
    }

    /// Restricts the rule to one model id.
    pub fn model(mut self, model: impl Into<String>) -> Rule {
        self.model = Some(model.into());
        self
    }

    /// Adds a string the request body must contain.
    pub fn contains(mut self, needle: impl Into<String>) -> Rule {
        self.contains.push(needle.into());
        self
    }

    /// Appends a reply.
    pub fn reply(mut self, reply: Reply) -> Rule {
        self.responses.push(reply);
        self
    }

    /// Sets whether the last reply repeats once the list is used up.
    pub fn repeat_last(mut self, repeat: bool) -> Rule {
        self.repeat_last = repeat;
        self
    }
}

impl Reply {
    /// A 200 answer with this assistant text.
    pub fn text(text: impl Into<String>) -> Reply {
        Reply {
            text: Some(text.into()),
            ..Reply::default()
        }
    }

    /// A 200 structured answer (see [`Reply::json`](Reply#structfield.json)).
    pub fn json(value: serde_json::Value) -> Reply {
        Reply {
            json: Some(value),
            ..Reply::default()
        }
    }

    /// A 200 answer that calls these tools, each a name and its JSON arguments (see
    /// [`Reply::tool_calls`](Reply#structfield.tool_calls)); chain [`Reply::with_text`] for
    /// text before the calls.
    pub fn tool_calls<N: Into<String>>(calls: Vec<(N, serde_json::Value)>) -> Reply {
        Reply {
            tool_calls: calls
                .into_iter()
                .map(|(name, arguments)| ScriptedCall {
                    name: name.into(),
                    arguments,
                })
                .collect(),
            ..Reply::default()
        }
    }

    /// Sets the assistant text (before any tool calls).
    pub fn with_text(mut self, text: impl Into<String>) -> Reply {
        self.text = Some(text.into());
        self
    }

    /// An error answer with this status and the protocol's default error body.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::default()
        }
    }

    /// A broken answer.
    pub fn fault(fault: Fault) -> Reply {
        Reply {
            fault: Some(fault),
            ..Reply::default()
        }
    }

    /// Adds a response header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Reply {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// Waits this long before answering.
    pub fn delay_ms(mut self, ms: u64) -> Reply {
        self.delay_ms = ms;
        self
    }

    /// Reports these token counts.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Reply {
        self.usage = Some(Usage {
            input_tokens,
            output_tokens,
        });
        self
    }

    /// Reports this model id instead of the requested one.
    pub fn reported_model(mut self, model: impl Into<String>) -> Reply {
        self.model = Some(model.into());
        self
    }
}
