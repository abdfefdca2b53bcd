//! Keeping secrets out of everything we print or store.
//!
//! API keys are read from the environment at call time and wrapped in [`Secret`], whose
//! `Debug`/`Display` never show the value. Text that came from outside (a server's error body
//! may echo the key it was sent) passes through [`Redactor::redact`] before it is logged,
//! stored or shown.

use std::fmt;
use std::sync::{Mutex, OnceLock};

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
        f.write_str("[redacted]")
    }
}

/// Replaces every known secret in a text with `[redacted]`.
#[derive(Default)]
pub struct Redactor {
    secrets: Mutex<Vec<String>>,
}

impl Redactor {
    /// The process-wide redactor that every [`Secret`] registers with.
    pub fn global() -> &'static Redactor {
        static GLOBAL: OnceLock<Redactor> = OnceLock::new();
        GLOBAL.get_or_init(Redactor::default)
    }

    /// Remembers a secret so later text containing it is redacted.
    ///
    /// Very short values are ignored: redacting "a" everywhere would garble output and such a
    /// value is not a real key.
    pub fn register(&self, secret: &str) {
        if secret.len() < 6 {
            return;
        }
        let mut secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        if !secrets.iter().any(|s| s == secret) {
            secrets.push(secret.to_string());
            // Longest first, so a key that contains another is replaced whole.
            secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
    }

    /// Returns `text` with every registered secret, and any long fragment of one, replaced.
    ///
    /// Fragments matter because providers echo keys partly masked ("sk-abc...wxyz"): any run
    /// of 8 or more characters of a secret is treated as part of it.
    pub fn redact(&self, text: &str) -> String {
        let secrets = self.secrets.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = text.to_string();
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), "[redacted]");
            }
            // Leading and trailing fragments of 8+ characters (masked echoes).
            if secret.len() >= 16 {
                for len in (8..secret.len()).rev() {
                    if !secret.is_char_boundary(len) || !secret.is_char_boundary(secret.len() - len)
                    {
                        continue;
                    }
                    let head = &secret[..len];
                    let tail = &secret[secret.len() - len..];
                    if out.contains(head) {
                        out = out.replace(head, "[redacted]");
                    }
                    if out.contains(tail) {
                        out = out.replace(tail, "[redacted]");
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_never_formats_its_value() {
        let s = Secret::new("sk-test-canary-0123456789".into());
        assert!(!format!("{s:?} {s}").contains("canary"));
    }

    #[test]
    fn redacts_whole_and_masked_echoes() {
        let r = Redactor::default();
        r.register("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX");
        let text = "bad key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and sk-proj-AB****QRSTUVWX";
        let out = r.redact(text);
        assert!(!out.contains("ABCDEFGHIJ"), "{out}");
        assert!(!out.contains("QRSTUVWX"), "{out}");
    }
}
