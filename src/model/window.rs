//! The context budget of a request: how large a model's window is, how many tokens a text
//! takes, and how much room a request leaves.
//!
//! Every request the [`ModelClient`](super::ModelClient) sends is measured here first. One
//! that cannot fit the window of a model whose window is known (configured, or read from its
//! server) is not sent to that model: the next model of the role is tried, and when none can
//! take it the call fails with [`ModelError::TooLarge`](super::ModelError::TooLarge), with
//! the figures, before any request. One that fits is sent with its answer cap lowered to what
//! the window has left, never above the model's own output cap.
//!
//! The API for code that shapes its own prompts (a stage's files, a review in parts):
//! - [`Window::of`]: a model's window and output cap, and whether the window is known;
//! - [`Estimator`]: the tokens of a text or a whole request, and the bytes a number of
//!   tokens holds;
//! - [`Room::measure`]: how a request stands against a window: its prompt tokens, the
//!   answer it keeps, whether it fits and [`Room::left`], the tokens it leaves for more input;
//! - `ModelClient::window`, `ModelClient::estimator` and `ModelClient::room` give the same
//!   with what the client learned from the servers (the calibration below).
//!
//! Token counts are estimates from bytes, on the safe side. No tokenizer ships with git
//! triad: each model family has its own, hundreds of kilobytes of vocabulary each, and the
//! ones that have a Rust crate cover one family. Until a server has reported a prompt's
//! tokens, a token is taken as [`DEFAULT_BYTES_PER_TOKEN`] bytes, fewer than real
//! tokenizers average on English and code (about four). Each answer's usage then calibrates
//! its model family ([`family`]): the fewest bytes per token seen in recent prompts of at
//! least [`MIN_SAMPLE_BYTES`], less a tenth for safety. The samples come from the local
//! ledger (`$GIT_DIR/triad/ledger.jsonl`, which records each call's prompt bytes beside the
//! tokens the server counted), so they never leave the machine and never enter the
//! repository.

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

use super::budget::CallRecord;
use super::types::ChatRequest;
use crate::config::ModelConfig;

/// Bytes per token assumed for a family no server has reported on yet.
pub const DEFAULT_BYTES_PER_TOKEN: f64 = 3.0;

/// Prompts smaller than this do not calibrate: the chat template's own tokens weigh too much
/// in them.
pub const MIN_SAMPLE_BYTES: u64 = 2048;

/// The share of the fewest bytes per token seen that the estimate assumes.
const SAFETY: f64 = 0.9;

/// Bounds on a calibrated ratio, whatever a server reports: no tokenizer packs more than
/// this many bytes of prompt into a token on average, nor fewer than one.
const BYTES_PER_TOKEN_RANGE: (f64, f64) = (1.0, 4.0);

/// How many recent prompts of a family the calibration keeps.
const SAMPLES_KEPT: usize = 32;

/// Tokens a chat template adds around each message, and around a whole request.
const MESSAGE_OVERHEAD: u64 = 8;
const REQUEST_OVERHEAD: u64 = 16;

/// The most a request may be left for its answer and still be worth sending, when it asked
/// for more: a shorter answer is cut off mid-way and paid for.
pub const MIN_ANSWER_TOKENS: u32 = 1024;

/// A model's window and output cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Tokens of prompt and answer together.
    pub context: u64,
    /// The most tokens one answer may have.
    pub max_output: u32,
    /// Whether the window is the model's own (configured, or read from its server) rather
    /// than the stated default. Only a known window refuses a request; an assumed one still
    /// shapes the prompts that can shrink.
    pub known: bool,
}

impl Window {
    /// The window of a registry entry, as configured or as its server reported it.
    pub fn of(model: &ModelConfig) -> Window {
        Window {
            context: model.window(),
            max_output: model.max_output(),
            known: model.context_window.is_some(),
        }
    }
}

/// Turns bytes of prompt into tokens, on the safe side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimator {
    bytes_per_token: f64,
}

impl Default for Estimator {
    fn default() -> Self {
        Estimator::conservative()
    }
}

impl Estimator {
    /// The estimate for a family no server has reported on: [`DEFAULT_BYTES_PER_TOKEN`].
    pub fn conservative() -> Estimator {
        Estimator {
            bytes_per_token: DEFAULT_BYTES_PER_TOKEN,
        }
    }

    /// An estimate of `bytes_per_token`, kept within what tokenizers do.
    pub fn with_bytes_per_token(bytes_per_token: f64) -> Estimator {
        let (lo, hi) = BYTES_PER_TOKEN_RANGE;
        let bytes_per_token = if bytes_per_token.is_finite() {
            bytes_per_token.clamp(lo, hi)
        } else {
            DEFAULT_BYTES_PER_TOKEN
        };
        Estimator { bytes_per_token }
    }

    /// The bytes one token is taken to hold.
    pub fn bytes_per_token(&self) -> f64 {
        self.bytes_per_token
    }

    /// Tokens of `text`.
    pub fn tokens(&self, text: &str) -> u64 {
        self.tokens_of_bytes(text.len())
    }

    /// Tokens of `bytes` bytes of text.
    pub fn tokens_of_bytes(&self, bytes: usize) -> u64 {
        (bytes as f64 / self.bytes_per_token).ceil() as u64
    }

    /// The most bytes of text that `tokens` tokens hold.
    pub fn bytes_for(&self, tokens: u64) -> usize {
        (tokens as f64 * self.bytes_per_token).floor() as usize
    }

    /// Tokens of a whole request's prompt: system prompt, messages, tool calls, schema and
    /// tool definitions, and what the chat template adds around them.
    pub fn request_tokens(&self, req: &ChatRequest) -> u64 {
        let messages = req.messages.len() as u64 + u64::from(req.system.is_some());
        self.tokens_of_bytes(req.prompt_chars()) + messages * MESSAGE_OVERHEAD + REQUEST_OVERHEAD
    }
}

/// How one request stands against one window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Room {
    /// The window.
    pub window: Window,
    /// Estimated prompt tokens.
    pub input: u64,
    /// The answer cap the request asks for, within the model's output cap.
    pub answer: u32,
}

impl Room {
    /// Measures `req` against `window` with `estimator`.
    pub fn measure(window: Window, estimator: &Estimator, req: &ChatRequest) -> Room {
        Room {
            window,
            input: estimator.request_tokens(req),
            answer: req.max_tokens.min(window.max_output).max(1),
        }
    }

    /// The shortest answer worth sending the request for.
    pub fn min_answer(&self) -> u32 {
        self.answer.min(MIN_ANSWER_TOKENS)
    }

    /// Whether the request may be sent: its prompt and its shortest useful answer fit a
    /// known window (an assumed window refuses nothing).
    pub fn fits(&self) -> bool {
        !self.window.known || self.input + u64::from(self.min_answer()) <= self.window.context
    }

    /// The answer cap to send: the asked one, lowered to what a known window has left.
    pub fn answer_cap(&self) -> u32 {
        if !self.window.known {
            return self.answer;
        }
        let left = self.window.context.saturating_sub(self.input);
        self.answer
            .min(u32::try_from(left).unwrap_or(u32::MAX))
            .max(1)
    }

    /// Tokens the request leaves for more input while keeping its whole answer cap (0 when
    /// it is already over).
    pub fn left(&self) -> u64 {
        self.window
            .context
            .saturating_sub(self.input)
            .saturating_sub(u64::from(self.answer))
    }
}

/// A request that does not fit one model's window, in figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Overflow {
    /// The model.
    pub model: String,
    /// Its window.
    pub window: u64,
    /// Estimated prompt tokens.
    pub input_tokens: u64,
    /// The shortest answer the request needs.
    pub min_answer: u32,
}

impl Overflow {
    /// The figures of `room` for `model`.
    pub fn of(model: &str, room: &Room) -> Overflow {
        Overflow {
            model: model.to_string(),
            window: room.window.context,
            input_tokens: room.input,
            min_answer: room.min_answer(),
        }
    }

    /// Tokens over the window.
    pub fn excess(&self) -> u64 {
        (self.input_tokens + u64::from(self.min_answer)).saturating_sub(self.window)
    }
}

impl std::fmt::Display for Overflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "about {} prompt tokens and at least {} for the answer, over the {}-token window of {} by {}",
            self.input_tokens,
            self.min_answer,
            self.window,
            self.model,
            self.excess()
        )
    }
}

/// The family a model id belongs to, which shares a tokenizer closely enough for
/// calibration: the id's leading letters, lowercased, after any `org/` prefix
/// (`gpt-4o` → `gpt`, `claude-sonnet-4-5` → `claude`, `Qwen2.5-Coder` → `qwen`).
pub fn family(wire_id: &str) -> String {
    let name = wire_id.rsplit('/').next().unwrap_or(wire_id);
    let letters: String = name
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if letters.is_empty() {
        "other".to_string()
    } else {
        letters
    }
}

/// What servers reported about prompt sizes, per model family: bytes sent against tokens
/// counted, the most recent [`SAMPLES_KEPT`] prompts of each.
#[derive(Debug, Clone, Default)]
pub struct Calibration {
    families: BTreeMap<String, VecDeque<f64>>,
}

impl Calibration {
    /// The calibration the ledger's calls teach, oldest first.
    pub fn from_records<'a>(records: impl IntoIterator<Item = &'a CallRecord>) -> Calibration {
        let mut c = Calibration::default();
        for r in records {
            c.observe_record(r);
        }
        c
    }

    /// Learns from one accounted call (failed ones and ones without figures teach nothing).
    pub fn observe_record(&mut self, r: &CallRecord) {
        if r.outcome == "ok" {
            self.observe(&family(&r.requested_id), r.prompt_bytes, r.input_tokens);
        }
    }

    /// Learns that a prompt of `prompt_bytes` bytes was counted as `tokens` tokens by a
    /// model of `family`.
    pub fn observe(&mut self, family: &str, prompt_bytes: u64, tokens: u64) {
        if prompt_bytes < MIN_SAMPLE_BYTES || tokens == 0 {
            return;
        }
        let samples = self.families.entry(family.to_string()).or_default();
        samples.push_back(prompt_bytes as f64 / tokens as f64);
        while samples.len() > SAMPLES_KEPT {
            samples.pop_front();
        }
    }

    /// The estimator for `family`: calibrated when its servers have reported, else
    /// [`Estimator::conservative`].
    pub fn estimator(&self, family: &str) -> Estimator {
        match self.families.get(family) {
            Some(samples) if !samples.is_empty() => {
                let fewest = samples.iter().copied().fold(f64::INFINITY, f64::min);
                Estimator::with_bytes_per_token(fewest * SAFETY)
            }
            _ => Estimator::conservative(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(context: u64, known: bool) -> Window {
        Window {
            context,
            max_output: 4000,
            known,
        }
    }

    #[test]
    fn families_are_the_leading_letters() {
        assert_eq!(family("gpt-4o-2024-08-06"), "gpt");
        assert_eq!(family("claude-sonnet-4-5"), "claude");
        assert_eq!(family("Qwen/Qwen2.5-Coder-1.5B"), "qwen");
        assert_eq!(family("SmolLM2-360M-Instruct-Q8_0.gguf"), "smollm");
        assert_eq!(family("4o"), "other");
    }

    #[test]
    fn a_request_is_counted_whole_and_refused_only_by_a_known_window() {
        let est = Estimator::conservative();
        let req = ChatRequest::new(Some("s".repeat(300)), "u".repeat(2_700), 2000);
        let tokens = est.request_tokens(&req);
        assert_eq!(tokens, 1000 + 2 * MESSAGE_OVERHEAD + REQUEST_OVERHEAD);
        let tight = Room::measure(window(2100, true), &est, &req);
        assert!(
            tight.fits(),
            "{tight:?}: 1068 left, above the minimum answer"
        );
        assert_eq!(tight.answer_cap(), 2100 - 1032);
        assert_eq!(tight.left(), 0);
        let over = Room::measure(window(1500, true), &est, &req);
        assert!(!over.fits());
        let o = Overflow::of("m", &over);
        assert_eq!(o.excess(), 1032 + 1024 - 1500);
        assert!(o.to_string().contains("1500-token window of m"), "{o}");
        let assumed = Room::measure(window(1500, false), &est, &req);
        assert!(assumed.fits());
        assert_eq!(assumed.answer_cap(), 2000);
        let roomy = Room::measure(window(10_000, true), &est, &req);
        assert_eq!(roomy.left(), 10_000 - 1032 - 2000);
    }

    #[test]
    fn calibration_takes_the_fewest_bytes_per_token_less_a_tenth() {
        let mut c = Calibration::default();
        assert_eq!(c.estimator("gpt"), Estimator::conservative());
        c.observe("gpt", 100, 10);
        assert_eq!(c.estimator("gpt"), Estimator::conservative(), "too small");
        c.observe("gpt", 40_000, 10_000);
        c.observe("gpt", 36_000, 10_000);
        let e = c.estimator("gpt");
        assert!((e.bytes_per_token() - 3.6 * 0.9).abs() < 1e-9, "{e:?}");
        assert_eq!(c.estimator("claude"), Estimator::conservative());
        // A server that undercounts cannot talk the estimate past what tokenizers do.
        c.observe("qwen", 1_000_000, 10);
        assert_eq!(c.estimator("qwen").bytes_per_token(), 4.0);
        for _ in 0..SAMPLES_KEPT {
            c.observe("gpt", 40_000, 10_000);
        }
        assert!((c.estimator("gpt").bytes_per_token() - 3.6).abs() < 1e-9);
    }
}
