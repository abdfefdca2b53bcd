//! Finding every form of every registered secret in a text in one pass.
//!
//! The forms of all secrets are compiled once into [`Needles`]: a bitmap of their first two
//! bytes lets one walk over the text skip every position where no form can start, so the cost
//! grows with the text, not with the number of secrets times the number of forms.

use std::collections::HashMap;

use super::encode;

/// What a match of a needle stands for.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A whole form of a secret: the match is the span.
    Whole,
    /// The first bytes of secret `n` beyond its vendor prefix: the span runs on while the text
    /// goes on to match the secret (a masked echo showing its head).
    Head(usize),
    /// The last 8 bytes of secret `n`: the span reaches back while the text matches the
    /// secret (a masked echo showing its tail).
    Tail(usize),
}

/// Shortest head or tail of a secret that counts as part of it.
pub const FRAGMENT: usize = 8;

/// Shortest secret whose heads and tails are looked for (shorter ones only whole).
const FRAGMENT_MIN_SECRET: usize = 16;

/// The compiled forms of every registered secret.
#[derive(Debug, Default)]
pub struct Needles {
    secrets: Vec<String>,
    needles: Vec<(Vec<u8>, Kind)>,
    /// One bit per possible first two bytes of a needle.
    starts: Vec<u64>,
    /// First two bytes → indices into `needles`.
    by_start: HashMap<u16, Vec<usize>>,
}

fn key(a: u8, b: u8) -> u16 {
    (u16::from(a) << 8) | u16::from(b)
}

impl Needles {
    /// The needles for `secrets`.
    pub fn compile(secrets: &[String]) -> Needles {
        let mut n = Needles {
            secrets: secrets.to_vec(),
            starts: vec![0; 1024],
            ..Needles::default()
        };
        for (i, secret) in secrets.iter().enumerate() {
            for form in encode::whole_forms(secret) {
                n.add(form.into_bytes(), Kind::Whole);
            }
            if secret.len() >= FRAGMENT_MIN_SECRET {
                let head = encode::public_prefix(secret) + FRAGMENT;
                n.add(secret.as_bytes()[..head].to_vec(), Kind::Head(i));
                let tail = secret.len() - FRAGMENT;
                n.add(secret.as_bytes()[tail..].to_vec(), Kind::Tail(i));
            }
        }
        n
    }

    fn add(&mut self, needle: Vec<u8>, kind: Kind) {
        if needle.len() < 2 {
            return;
        }
        let k = key(needle[0], needle[1]);
        self.starts[usize::from(k) / 64] |= 1 << (k % 64);
        self.by_start.entry(k).or_default().push(self.needles.len());
        self.needles.push((needle, kind));
    }

    /// Whether no secret is registered.
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The byte spans of `text` that hold a form of a secret, sorted and merged, each on
    /// character boundaries. A span that starts right after an escaping backslash takes the
    /// backslash in, so replacing it never leaves a broken escape in JSON text.
    pub fn spans(&self, text: &str, first_only: bool) -> Vec<(usize, usize)> {
        let bytes = text.as_bytes();
        let mut spans = Vec::new();
        if self.is_empty() || bytes.len() < 2 {
            return spans;
        }
        for i in 0..bytes.len() - 1 {
            let k = key(bytes[i], bytes[i + 1]);
            if self.starts[usize::from(k) / 64] & (1 << (k % 64)) == 0 {
                continue;
            }
            for &n in &self.by_start[&k] {
                let (needle, kind) = &self.needles[n];
                if !bytes[i..].starts_with(needle) {
                    continue;
                }
                spans.push(self.extend(bytes, i, needle.len(), *kind));
                if first_only {
                    return spans;
                }
            }
        }
        let mut fixed: Vec<(usize, usize)> = spans
            .into_iter()
            .map(|(mut start, mut end)| {
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                let slashes = bytes[..start]
                    .iter()
                    .rev()
                    .take_while(|b| **b == b'\\')
                    .count();
                (start - slashes % 2, end)
            })
            .collect();
        fixed.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(fixed.len());
        for (s, e) in fixed {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged
    }

    /// The span of a needle found at `at`, grown over the rest of a masked echo.
    fn extend(&self, bytes: &[u8], at: usize, len: usize, kind: Kind) -> (usize, usize) {
        match kind {
            Kind::Whole => (at, at + len),
            Kind::Head(s) => {
                let secret = self.secrets[s].as_bytes();
                let mut end = at + len;
                while end - at < secret.len() && bytes.get(end) == Some(&secret[end - at]) {
                    end += 1;
                }
                (at, end)
            }
            Kind::Tail(s) => {
                let secret = self.secrets[s].as_bytes();
                let end = at + len;
                let mut start = at;
                while end - start < secret.len()
                    && start > 0
                    && bytes[start - 1] == secret[secret.len() - (end - start) - 1]
                {
                    start -= 1;
                }
                (start, end)
            }
        }
    }
}
