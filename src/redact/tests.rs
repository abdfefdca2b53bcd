use serde_json::json;

use super::encode::{base64, json_unicode, percent};
use super::*;

const KEY: &str = "sk-canary-Q7v2Lx9TkP3mZr8Wn4Yb6Hd1";

fn redactor() -> Redactor {
    let r = Redactor::default();
    r.register(KEY);
    r
}

/// Whether `text` still shows 8 bytes of the key beyond its vendor prefix.
fn shows_key(text: &str) -> bool {
    let body = &KEY["sk-canary-".len()..];
    (0..=body.len() - 8).any(|i| text.contains(&body[i..i + 8]))
}

#[test]
fn secret_never_formats_its_value() {
    let s = Secret::new("sk-test-canary-0123456789".into());
    assert!(!format!("{s:?} {s}").contains("canary"));
}

#[test]
fn redacts_whole_and_masked_echoes() {
    let r = Redactor::default();
    r.register("sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX");
    let text = "bad key sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and sk-proj-ABCDEFGHIJ****QRSTUVWX";
    let out = r.redact(text);
    assert!(!out.contains("ABCDEFGHIJ"), "{out}");
    assert!(!out.contains("QRSTUVWX"), "{out}");
    assert_eq!(out, "bad key [redacted] and [redacted]****[redacted]");
}

#[test]
fn every_encoding_of_a_key_is_redacted() {
    let r = redactor();
    let b64 = |s: &str| {
        base64(
            s.as_bytes(),
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
        )
    };
    let url = |s: &str| {
        base64(
            s.as_bytes(),
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
        )
    };
    let echoes = [
        format!("Incorrect API key provided: {KEY}."),
        format!("Authorization: Bearer {KEY}"),
        format!("{}==", b64(KEY)),
        url(KEY),
        b64(&format!("Bearer {KEY}")),
        b64(&format!(":{KEY}")),
        b64(&format!("user:{KEY}")),
        url(&format!("{{\"api_key\":\"{KEY}\"}}")),
        percent(KEY, true, true),
        percent(KEY, true, false),
        json_unicode(KEY, false),
        json_unicode(KEY, true),
        format!("{}...{}", &KEY[..20], &KEY[KEY.len() - 10..]),
        format!("key={}", &KEY[KEY.len() - 8..]),
    ];
    for echo in echoes {
        let out = r.redact(&echo);
        assert!(out.contains(MARK), "not found in {echo:?}");
        assert!(!shows_key(&out), "{echo:?} -> {out}");
        for form in [b64(KEY), url(KEY)] {
            assert!(!out.contains(&form[2..18]), "{echo:?} -> {out}");
        }
    }
}

#[test]
fn ordinary_text_and_the_vendor_prefix_stay() {
    let r = redactor();
    for text in [
        "",
        "a",
        "keys look like sk-canary-<random>; set OPENAI_API_KEY",
        "sk-canary-Q7v",
        "ünïcödé ✓ text with \\ and \" and {json}",
    ] {
        assert!(matches!(r.redact(text), Cow::Borrowed(_)), "{text}");
        assert!(!r.finds_secret(text), "{text}");
    }
    assert!(r.finds_secret(&format!("x{KEY}y")));
}

#[test]
fn json_stays_json_after_redaction() {
    let r = redactor();
    // The key right after an escape: `\n` + key, and a literal backslash + key.
    let value = json!({
        "a": format!("line\n{KEY}"),
        "b": format!("back\\{KEY}"),
        "c": format!("\\u0073{}", &KEY[1..]),
        KEY: [1, format!("quote\"{KEY}\"")],
    });
    let text = serde_json::to_string(&value).unwrap();
    let out = r.redact(&text);
    let back: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(!shows_key(&back.to_string()), "{back}");
    // A secret that starts with what follows a backslash in an escape (`\n` + "0sec…").
    let r = Redactor::default();
    r.register("n0secret-value-123456");
    let text = serde_json::to_string(&json!(["line\n0secret-value-123456"])).unwrap();
    let out = r.redact(&text);
    assert_eq!(out, "[\"line[redacted]\"]");
    assert!(serde_json::from_str::<Value>(&out).is_ok(), "{out}");
}

#[test]
fn values_are_redacted_after_decoding() {
    let r = redactor();
    // On the wire the key is partly \u-escaped; decoded it is the key itself.
    let wire = format!(
        "{{\"error\":{{\"message\":\"Bearer \\u0073k{}\"}}}}",
        &KEY[2..]
    );
    let mut v: Value = serde_json::from_str(&wire).unwrap();
    v[KEY] = json!({"nested": [format!("{KEY}")]});
    r.redact_value(&mut v);
    let text = v.to_string();
    assert!(!shows_key(&text), "{text}");
    assert_eq!(v["error"]["message"], "Bearer [redacted]");
    assert_eq!(v[MARK]["nested"][0], MARK);
}

#[test]
fn split_utf8_and_short_values_are_safe() {
    let r = Redactor::default();
    r.register("short");
    r.register("redacted");
    r.register("  ключ-секрет-0123456789abcdef \n");
    let text = "ключ-секрет-0123456789abcdef and ключ-секрет-0123 and short";
    let out = r.redact(text);
    assert_eq!(out, "[redacted] and [redacted] and short");
    // Redacting twice changes nothing more.
    assert_eq!(r.redact(&out), out);
}

#[test]
fn a_large_text_with_many_secrets_is_redacted_exactly() {
    let r = redactor();
    for n in 0..20 {
        r.register(&format!("sk-other-{n:02}-abcdefghijklmnopqrstuv"));
    }
    let mut text = "fn main() { println!(\"skipping sk-like words\"); }\n".repeat(40_000);
    text.push_str(KEY);
    let out = r.redact(&text);
    assert!(out.ends_with(MARK));
    assert_eq!(out.len(), text.len() - KEY.len() + MARK.len());
}
