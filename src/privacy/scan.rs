//! The content scan: strings shaped like private keys and API tokens, found without a regex
//! engine in one pass over the bytes.

/// Which bytes may follow a token's prefix.
#[derive(Debug, Clone, Copy)]
enum Body {
    /// `A-Z a-z 0-9`.
    Alnum,
    /// `A-Z 0-9` (AWS key ids).
    Upper,
    /// `A-Z a-z 0-9 _ -`.
    Word,
    /// `A-Z a-z 0-9 -` (Slack).
    Dashed,
}

impl Body {
    fn accepts(self, b: u8) -> bool {
        match self {
            Body::Alnum => b.is_ascii_alphanumeric(),
            Body::Upper => b.is_ascii_uppercase() || b.is_ascii_digit(),
            Body::Word => b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
            Body::Dashed => b.is_ascii_alphanumeric() || b == b'-',
        }
    }
}

/// One kind of token: a fixed prefix, then a body of at least `min` bytes.
struct Token {
    prefix: &'static str,
    what: &'static str,
    body: Body,
    min: usize,
    /// The body must end there (AWS key ids are exactly 16 characters).
    exact: bool,
    /// The body must hold a digit and a letter (random, not a hyphenated word).
    mixed: bool,
}

const fn token(prefix: &'static str, what: &'static str, body: Body, min: usize) -> Token {
    Token {
        prefix,
        what,
        body,
        min,
        exact: false,
        mixed: false,
    }
}

/// The token shapes looked for.
const TOKENS: &[Token] = &[
    Token {
        mixed: true,
        ..token("sk-", "an API key (sk-…)", Body::Word, 20)
    },
    Token {
        exact: true,
        ..token("AKIA", "an AWS access key id", Body::Upper, 16)
    },
    Token {
        exact: true,
        ..token("ASIA", "an AWS access key id", Body::Upper, 16)
    },
    token("ghp_", "a GitHub token", Body::Alnum, 36),
    token("gho_", "a GitHub token", Body::Alnum, 36),
    token("ghu_", "a GitHub token", Body::Alnum, 36),
    token("ghs_", "a GitHub token", Body::Alnum, 36),
    token("ghr_", "a GitHub token", Body::Alnum, 36),
    token("github_pat_", "a GitHub token", Body::Word, 22),
    token("glpat-", "a GitLab token", Body::Word, 20),
    token("xoxb-", "a Slack token", Body::Dashed, 10),
    token("xoxp-", "a Slack token", Body::Dashed, 10),
    token("xoxa-", "a Slack token", Body::Dashed, 10),
    token("xoxr-", "a Slack token", Body::Dashed, 10),
    token("xoxs-", "a Slack token", Body::Dashed, 10),
    token("AIza", "a Google API key", Body::Word, 35),
    token("sk_live_", "a Stripe key", Body::Alnum, 24),
    token("rk_live_", "a Stripe key", Body::Alnum, 24),
];

/// Where a PEM private key begins, and the word its header line must hold.
const PEM_BEGIN: &[u8] = b"-----BEGIN ";
const PEM_PRIVATE: &[u8] = b"PRIVATE KEY";
const PEM_WHAT: &str = "a private key";

/// One key-shaped string: its byte span and what it looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
    /// What it looks like ("an AWS access key id").
    pub what: &'static str,
}

/// The length of the run of `body` bytes at the start of `bytes`.
fn run(bytes: &[u8], body: Body) -> usize {
    bytes.iter().take_while(|b| body.accepts(**b)).count()
}

/// A PEM private key block starting at `at` (which holds `-----BEGIN `): the header line
/// names a private key; the span runs to the end of its `-----END …-----` line, or of the
/// header line when there is none.
fn pem(bytes: &[u8], at: usize) -> Option<Found> {
    let line_end = |from: usize| {
        bytes[from..]
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |p| from + p)
    };
    let header_end = line_end(at);
    let header = &bytes[at..header_end];
    if !header.windows(PEM_PRIVATE.len()).any(|w| w == PEM_PRIVATE) {
        return None;
    }
    let end = bytes[header_end..]
        .windows(b"-----END ".len())
        .position(|w| w == b"-----END ")
        .map_or(header_end, |p| line_end(header_end + p));
    Some(Found {
        start: at,
        end,
        what: PEM_WHAT,
    })
}

/// The token of kind `t` whose prefix is at `at`, if its body has the right shape.
fn token_at(bytes: &[u8], at: usize, t: &Token) -> Option<Found> {
    let body_start = at + t.prefix.len();
    let len = run(&bytes[body_start..], t.body);
    let body = &bytes[body_start..body_start + len];
    let shaped = if t.exact {
        len == t.min
            && !bytes
                .get(body_start + len)
                .is_some_and(u8::is_ascii_alphanumeric)
    } else {
        len >= t.min
    };
    let mixed = !t.mixed
        || (body.iter().any(u8::is_ascii_digit) && body.iter().any(u8::is_ascii_alphabetic));
    (shaped && mixed).then_some(Found {
        start: at,
        end: body_start + len,
        what: t.what,
    })
}

/// Every key-shaped string of `bytes`, in order (with `first_only`, the first one).
pub fn find(bytes: &[u8], first_only: bool) -> Vec<Found> {
    let mut starts = [false; 256];
    starts[usize::from(PEM_BEGIN[0])] = true;
    for t in TOKENS {
        starts[usize::from(t.prefix.as_bytes()[0])] = true;
    }
    let mut found: Vec<Found> = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let b = bytes[at];
        // A token starts a word: not in the middle of another identifier.
        let boundary = at == 0 || !bytes[at - 1].is_ascii_alphanumeric();
        let hit = if !starts[usize::from(b)] || !boundary {
            None
        } else if bytes[at..].starts_with(PEM_BEGIN) {
            pem(bytes, at)
        } else {
            TOKENS
                .iter()
                .filter(|t| bytes[at..].starts_with(t.prefix.as_bytes()))
                .find_map(|t| token_at(bytes, at, t))
        };
        match hit {
            Some(f) => {
                at = f.end.max(at + 1);
                found.push(f);
                if first_only {
                    break;
                }
            }
            None => at += 1,
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(text: &str) -> Option<&'static str> {
        find(text.as_bytes(), true).first().map(|f| f.what)
    }

    #[test]
    fn key_shaped_strings_are_found() {
        for (text, expected) in [
            (
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\n",
                PEM_WHAT,
            ),
            ("x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE", PEM_WHAT),
            ("-----BEGIN ENCRYPTED PRIVATE KEY-----", PEM_WHAT),
            ("-----BEGIN PGP PRIVATE KEY BLOCK-----", PEM_WHAT),
            (concat!("OPENAI_API_KEY=sk-", "proj-4fT9xQ2mLp8vZr1Wc7Yb3Nd6Hs"), "an API key (sk-…)"),
            (concat!("key: 'sk-", "ant-api03-Zx81_kPq-77aaBBccDDeeFF'"), "an API key (sk-…)"),
            ("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n", "an AWS access key id"),
            ("\"ASIAY34FZKBOKMUTVV7A\"", "an AWS access key id"),
            (concat!("token=ghp", "_1234567890abcdefghijABCDEFGHIJ123456"), "a GitHub token"),
            (concat!("github", "_pat_11ABCDEFG0123456789_abcdefghijklmnop"), "a GitHub token"),
            (concat!("SLACK=xox", "b-1234-5678-abcdefghij"), "a Slack token"),
            (concat!("AIza", "SyD-1234567890abcdefghijklmnopqrstu"), "a Google API key"),
            (concat!("glpat", "-abcdefghij0123456789"), "a GitLab token"),
            (concat!("sk_", "live_abcdefghijklmnop0123456789"), "a Stripe key"),
        ] {
            assert_eq!(what(text), Some(expected), "{text}");
        }
    }

    #[test]
    fn ordinary_text_is_not_key_shaped() {
        for text in [
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "-----BEGIN PUBLIC KEY-----",
            "risk-assessment-and-mitigation-plan-for-q3",
            concat!("disk-", "0123456789abcdefghijklmnop"),
            "sk-learn-compatible-estimators-are-listed-here",
            "sk-short1",
            "AKIAIOSFODNN7EXAMPLEXYZ",
            "xAKIAIOSFODNN7EXAMPLE",
            "AKIAiosfodnn7example",
            "ghp_short",
            "xoxb-",
            "AIzaShort",
            "let task = \"sk-\";",
        ] {
            assert_eq!(what(text), None, "{text}");
        }
    }

    #[test]
    fn spans_cover_the_whole_token_and_every_one_is_found() {
        let text = "a=AKIAIOSFODNN7EXAMPLE b=sk-canary-9d41e7b2f0c35a68xyz.";
        let found = find(text.as_bytes(), false);
        let spans: Vec<&str> = found.iter().map(|f| &text[f.start..f.end]).collect();
        assert_eq!(
            spans,
            ["AKIAIOSFODNN7EXAMPLE", "sk-canary-9d41e7b2f0c35a68xyz"]
        );
    }
}
