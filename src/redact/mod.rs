//! Keeping secrets out of everything we print or store: one redaction boundary.
//!
//! API keys are wrapped in [`Secret`], whose `Debug`/`Display` never show the value, and every
//! key named by the configuration is registered with the process-wide [`Redactor`] when the
//! configuration is loaded (not only the keys used so far). Text that came from outside
//! passes [`redact`] before it is parsed, logged, stored or shown:
//! - at the ingress door, every response body of a provider, success or error, JSON or not
//!   (`model::transport`), and every request before it is sent;
//! - at every sink, as defence in depth: run records, verdict notes, the cost ledger, commit
//!   messages and blobs written from model answers, the verify command's output, stdout,
//!   stderr and the log.
//!
//! A secret is found raw, JSON-escaped (`\/`, fully `\u`-escaped), percent-encoded, inside
//! base64 at any alignment (so `Bearer <key>` and `:<key>` encoded whole are found too), and
//! masked: a head (8 bytes beyond its vendor prefix) or a tail (8 bytes) of it. See
//! [`encode`] for the forms and [`scan`] for the one-pass search.

pub mod encode;
mod scan;
mod sink;

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::Value;

pub use sink::RedactedStderr;

/// What a secret is replaced with.
pub const MARK: &str = "[redacted]";

/// Shortest value taken for a secret: shorter ones are not real keys, and redacting them
/// everywhere would garble output.
pub const MIN_SECRET: usize = 8;

/// A secret value (an API key). Formatting it prints `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret and registers it with the process-wide redactor.
    pub fn new(value: String) -> Self {
        Redactor::global().register(&value);
        Secret(value)
    }

    /// The secret itself, for the one place that must send it (an HTTP header).
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(MARK)
    }
}

/// Replaces every known secret, in every form it is looked for, with `[redacted]`.
///
/// Registration compiles the forms of all secrets once; redacting is one pass over the text
/// and allocates only when something was found.
#[derive(Default)]
pub struct Redactor {
    secrets: RwLock<Vec<String>>,
    needles: RwLock<Arc<scan::Needles>>,
}

impl Redactor {
    /// The process-wide redactor that every [`Secret`] and every configured key registers with.
    pub fn global() -> &'static Redactor {
        static GLOBAL: OnceLock<Redactor> = OnceLock::new();
        GLOBAL.get_or_init(Redactor::default)
    }

    /// Remembers a secret (and its trimmed value, if that differs) so later text holding it
    /// is redacted. Values shorter than [`MIN_SECRET`], or that the mark itself contains, are
    /// ignored.
    pub fn register(&self, secret: &str) {
        let mut secrets = self.secrets.write().unwrap_or_else(|e| e.into_inner());
        let before = secrets.len();
        for value in [secret, secret.trim()] {
            if value.len() >= MIN_SECRET
                && !MARK.contains(value)
                && !secrets.iter().any(|s| s == value)
            {
                secrets.push(value.to_string());
            }
        }
        if secrets.len() != before {
            let compiled = Arc::new(scan::Needles::compile(&secrets));
            *self.needles.write().unwrap_or_else(|e| e.into_inner()) = compiled;
        }
    }

    fn current(&self) -> Arc<scan::Needles> {
        self.needles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// `text` with every registered secret replaced; borrowed when there was none.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let needles = self.current();
        let spans = needles.spans(text, false);
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end) in spans {
            out.push_str(&text[at..start]);
            out.push_str(MARK);
            at = end;
        }
        out.push_str(&text[at..]);
        Cow::Owned(out)
    }

    /// Bytes with every registered secret replaced (invalid UTF-8 becomes U+FFFD only when
    /// something had to be replaced).
    pub fn redact_bytes<'a>(&self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let text = String::from_utf8_lossy(bytes);
        match self.redact(&text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        }
    }

    /// Redacts every string of a JSON value in place, object keys included: a decoded string
    /// no longer shows how its characters were escaped on the wire.
    pub fn redact_value(&self, value: &mut Value) {
        if self.current().is_empty() {
            return;
        }
        self.redact_value_with(value);
    }

    fn redact_value_with(&self, value: &mut Value) {
        match value {
            Value::String(s) => {
                if let Cow::Owned(r) = self.redact(s) {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value_with(v)),
            Value::Object(map) => {
                let renamed: Vec<String> = map
                    .keys()
                    .filter(|k| matches!(self.redact(k), Cow::Owned(_)))
                    .cloned()
                    .collect();
                for k in renamed {
                    if let Some(v) = map.remove(&k) {
                        map.insert(self.redact(&k).into_owned(), v);
                    }
                }
                map.values_mut().for_each(|v| self.redact_value_with(v));
            }
            _ => {}
        }
    }

    /// Whether `text` holds any form of a registered secret.
    pub fn finds_secret(&self, text: &str) -> bool {
        !self.current().spans(text, true).is_empty()
    }
}

/// [`Redactor::redact`] of the process-wide redactor.
pub fn redact(text: &str) -> Cow<'_, str> {
    Redactor::global().redact(text)
}

/// What `e` says, as it may be recorded or shown: its text with every registered secret
/// redacted (a provider's error may quote the request, key included).
pub fn said(e: &impl std::fmt::Display) -> String {
    redact(&e.to_string()).into_owned()
}

#[cfg(test)]
mod tests;
