//! The forms a secret takes when it is echoed back: raw, JSON-escaped, percent-encoded,
//! inside base64, and masked (only its head or its tail shown).
//!
//! Everything here is computed once, when a secret is registered; redacting a text then only
//! looks for these strings.

/// Standard base64 alphabet (RFC 4648 §4).
const STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
/// URL- and file-name-safe base64 alphabet (RFC 4648 §5).
const URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Shortest base64 core worth looking for: shorter ones would match ordinary text.
const MIN_CORE: usize = 12;

/// Base64 of `bytes` without padding, in `alphabet`.
pub fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        let chars = chunk.len() + 1;
        for i in 0..chars {
            out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    out
}

/// The parts of base64 text that any encoding containing `secret` must contain, whatever
/// came before or after it (`Bearer <key>`, `:<key>` of basic auth, a JSON document holding
/// the key): one per alignment of the secret within the 3-byte groups, in both alphabets.
///
/// With `s` bytes before the secret in its group, the characters fully made of the secret's
/// bits are those from bit `8s` to the last whole 6-bit group inside the secret; the edges,
/// which mix in neighbouring bytes, are left out.
pub fn base64_cores(secret: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for shift in 0..3usize {
        let mut padded = vec![0u8; shift];
        padded.extend_from_slice(secret);
        let first = (8 * shift).div_ceil(6);
        let last = 8 * (shift + secret.len()) / 6;
        if last <= first || last - first < MIN_CORE {
            continue;
        }
        for alphabet in [STD, URL] {
            let encoded = base64(&padded, alphabet);
            let core = encoded[first..last].to_string();
            if !out.contains(&core) {
                out.push(core);
            }
        }
    }
    out
}

/// Whether a byte is left alone by percent-encoding (RFC 3986 unreserved).
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// `secret` percent-encoded, escaping every byte (`all`) or only those that need it, with
/// upper- or lowercase hex digits.
pub fn percent(secret: &str, all: bool, upper: bool) -> String {
    secret
        .bytes()
        .map(|b| {
            if !all && unreserved(b) {
                (b as char).to_string()
            } else if upper {
                format!("%{b:02X}")
            } else {
                format!("%{b:02x}")
            }
        })
        .collect()
}

/// `secret` with every character written as a JSON `\uXXXX` escape (UTF-16 code units).
pub fn json_unicode(secret: &str, upper: bool) -> String {
    let mut units = [0u16; 2];
    secret
        .chars()
        .flat_map(|c| c.encode_utf16(&mut units).to_vec())
        .map(|u| {
            if upper {
                format!("\\u{u:04X}")
            } else {
                format!("\\u{u:04x}")
            }
        })
        .collect()
}

/// Every whole form of `secret` to look for: raw, JSON-escaped (as a serializer writes it,
/// with `\/`, and fully `\u`-escaped), percent-encoded (minimal and full) and the base64
/// cores. Each form appears once.
pub fn whole_forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_string()];
    let mut add = |f: String| {
        if !f.is_empty() && !forms.contains(&f) {
            forms.push(f);
        }
    };
    if let Ok(quoted) = serde_json::to_string(secret) {
        add(quoted[1..quoted.len() - 1].to_string());
    }
    add(secret.replace('/', "\\/"));
    add(json_unicode(secret, false));
    add(json_unicode(secret, true));
    for all in [false, true] {
        for upper in [true, false] {
            add(percent(secret, all, upper));
        }
    }
    for core in base64_cores(secret.as_bytes()) {
        add(core);
    }
    forms
}

/// How much of a key is a vendor prefix that every key of its kind shares (`sk-proj-`,
/// `sk-ant-api03-`): up to and including the last `-` or `_` in its first 16 bytes, when at
/// least 16 bytes follow; else 0.
///
/// A masked echo counts as part of the key only when it shows 8 bytes beyond this prefix:
/// redacting `sk-proj-` wherever it appears would garble text that merely names the kind.
pub fn public_prefix(secret: &str) -> usize {
    let head = &secret.as_bytes()[..secret.len().min(16)];
    match head.iter().rposition(|b| matches!(b, b'-' | b'_')) {
        Some(i) if secret.len() - (i + 1) >= 16 => i + 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_rfc_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg"),
            ("fo", "Zm8"),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg"),
            ("fooba", "Zm9vYmE"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes(), STD), encoded, "{plain}");
        }
        assert_eq!(base64(&[0xfb, 0xff], STD), "+/8");
        assert_eq!(base64(&[0xfb, 0xff], URL), "-_8");
    }

    #[test]
    fn a_core_is_inside_every_base64_holding_the_secret() {
        let secret = b"sk-canary-0123456789abcdefXYZ";
        let cores = base64_cores(secret);
        assert!(!cores.is_empty());
        for before in ["", ":", "Bearer ", "user:", "{\"key\":\"", "ab"] {
            for after in ["", "\"}", "x", "yz"] {
                let mut whole = before.as_bytes().to_vec();
                whole.extend_from_slice(secret);
                whole.extend_from_slice(after.as_bytes());
                for alphabet in [STD, URL] {
                    let encoded = base64(&whole, alphabet);
                    assert!(
                        cores.iter().any(|c| encoded.contains(c.as_str())),
                        "{before:?}+key+{after:?}: {encoded}"
                    );
                }
            }
        }
    }

    #[test]
    fn escapes_are_exact() {
        assert_eq!(percent("a/b c", false, true), "a%2Fb%20c");
        assert_eq!(percent("ab", true, false), "%61%62");
        assert_eq!(json_unicode("sk", false), "\\u0073\\u006b");
        assert_eq!(json_unicode("é", true), "\\u00E9");
        let forms = whole_forms("sk-a/b\"c-0123456789");
        assert!(forms.contains(&"sk-a\\/b\"c-0123456789".to_string()));
        assert!(forms.contains(&"sk-a/b\\\"c-0123456789".to_string()));
        assert!(forms.contains(&"sk-a%2Fb%22c-0123456789".to_string()));
    }

    #[test]
    fn the_vendor_prefix_is_not_part_of_a_fragment() {
        assert_eq!(public_prefix("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"), 8);
        assert_eq!(
            public_prefix(concat!("sk-ant-", "api03-ABCDEFGHIJKLMNOPQRSTUVWX")),
            13
        );
        assert_eq!(
            public_prefix(concat!("AIza", "SyABCDEFGHIJKLMNOPQRSTUVWXYZ012345")),
            0
        );
        assert_eq!(public_prefix("short-0123456789"), 0);
    }
}
