//! A path as git spells it in its output: as it is, or, when it holds a character a line of
//! text cannot (a line break, a tab, another control character, a double quote or a
//! backslash), in double quotes with C escapes (`"a\nb.py"`, `"back\\slash.py"`), as
//! `git diff` writes it with `core.quotePath=false`. Whoever commits a file chooses its name:
//! every name git allows has a spelling, and reads back to the same bytes.

use std::borrow::Cow;

/// Whether `c` makes git quote a path.
fn needs_quote(c: char) -> bool {
    c.is_control() || c == '"' || c == '\\'
}

/// `path` as git spells it in a line of output (see the module).
pub fn quote(path: &str) -> Cow<'_, str> {
    if !path.chars().any(needs_quote) {
        return Cow::Borrowed(path);
    }
    let mut out = String::with_capacity(path.len() + 8);
    out.push('"');
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// The path a quoted spelling names (`"a\tb.py"`, octal escapes of bytes such as
/// `"\303\251.py"` too); `None` when `spelled` is not a quoted spelling, or names bytes that
/// are not UTF-8.
pub fn unquote(spelled: &str) -> Option<String> {
    let inner = spelled.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let e = *bytes.get(i)?;
        i += 1;
        out.push(match e {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            b'"' | b'\\' => e,
            b'0'..=b'3' => {
                let digits = bytes.get(i..i + 2)?;
                if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                    return None;
                }
                i += 2;
                (e - b'0') * 64 + (digits[0] - b'0') * 8 + (digits[1] - b'0')
            }
            _ => return None,
        });
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_only_odd_ones_are_quoted() {
        for name in [
            "~evil.py",
            "a\nb.py",
            "a\tb.py",
            "esc\u{1b}[31m.py",
            "back\\slash.py",
            " lead.py",
            "trail.py ",
            "a:b.py",
            "GIT~1/x.py",
            "say \"hi\".py",
            "é.py",
        ] {
            let spelled = quote(name);
            let back = match spelled.starts_with('"') {
                true => unquote(&spelled).unwrap(),
                false => spelled.to_string(),
            };
            assert_eq!(back, name, "{spelled}");
        }
        assert_eq!(quote("src/a.py"), "src/a.py");
        assert_eq!(quote("a\nb.py"), "\"a\\nb.py\"");
        assert_eq!(unquote("\"\\303\\251.py\"").as_deref(), Some("é.py"));
        assert_eq!(unquote("\"\\377\""), None, "not UTF-8");
        assert_eq!(unquote("a.py"), None);
        assert_eq!(unquote("\"a\\q\""), None);
    }
}
