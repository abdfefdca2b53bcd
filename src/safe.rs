//! Text from outside made safe to show: the one renderer for what a model, a server or a
//! repository wrote, wherever it reaches a terminal (the live views, every command's output,
//! errors) or a commit message.
//!
//! A terminal obeys some characters instead of showing them: control characters (ESC starts
//! the sequences that recolour, clear the screen, retitle the window or write the clipboard;
//! a carriage return draws one verdict over another) and the Unicode bidirectional controls,
//! which reorder what is shown (U+202E makes `exe.txt` read `txt.exe`). Each is shown as
//! text instead: a C0 control in caret notation (`ESC` as `^[`, as `cat -v` does), DEL as
//! `^?`, anything else as `<U+202E>`; in JSON output as a `\u202e` escape, which keeps the
//! data exact.

use std::borrow::Cow;

/// Whether `c` is a Unicode bidirectional control, or a line or paragraph separator a
/// terminal may break on: characters that change how the text around them is shown.
fn bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{FEFF}'
    )
}

/// Whether `c` must not reach a terminal as it is (line breaks and tabs aside).
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || bidi(c)
}

/// How `c` is shown when it must not be obeyed.
fn escaped(c: char, out: &mut String) {
    match c as u32 {
        n @ 0..=0x1f => {
            out.push('^');
            out.push(char::from(n as u8 + 0x40));
        }
        0x7f => out.push_str("^?"),
        n => out.push_str(&format!("<U+{n:04X}>")),
    }
}

/// One line of `s` for a screen cell: every control character shown as text (a line break
/// too), a tab as four spaces.
pub fn line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if c.is_control() || bidi(c) => escaped(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

/// `s` with every character `bad` picks written by `write`; borrowed when there is none.
fn replace_where<'a>(
    s: &'a str,
    bad: impl Fn(char) -> bool,
    write: impl Fn(char, &mut String),
) -> Cow<'a, str> {
    if !s.chars().any(&bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if bad(c) {
            write(c, &mut out);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A whole text: line breaks and tabs kept, every other character a terminal would obey
/// shown as text.
pub fn text(s: &str) -> Cow<'_, str> {
    replace_where(s, unsafe_char, escaped)
}

/// Text whose escape sequences are its writer's own (the log's colours, the formatter having
/// already written any ESC of its content as `\x1b`): everything else a terminal would obey
/// is shown as [`text`] shows it.
pub fn styled(s: &str) -> Cow<'_, str> {
    replace_where(s, |c| unsafe_char(c) && c != '\u{1b}', escaped)
}

/// Serialized JSON with every character a terminal would obey written as a `\uXXXX` escape:
/// the same data, safe to print. (Such characters can only stand inside JSON strings, where
/// the escape means the same.)
pub fn json(s: &str) -> Cow<'_, str> {
    replace_where(s, unsafe_char, |c, out| {
        let mut units = [0u16; 2];
        for u in c.encode_utf16(&mut units) {
            out.push_str(&format!("\\u{u:04x}"));
        }
    })
}

/// A command's output: JSON (one document, or one per line) as [`json`] makes it, anything
/// else as [`text`] does.
pub fn output(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let is_json = |t: &str| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok();
    let trimmed = s.trim();
    let json_lines = || {
        trimmed
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(is_json)
    };
    let starts_like_json = trimmed.starts_with('{') || trimmed.starts_with('[');
    if starts_like_json && (is_json(trimmed) || json_lines()) {
        json(s)
    } else {
        text(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "ok\x1b[31mred\x1b]0;title\x07 \u{202e}txt.exe\r\x1b[2J\u{9b}\u{7f}";

    #[test]
    fn every_sequence_a_terminal_obeys_is_shown_as_text() {
        let shown = text(HOSTILE);
        assert_eq!(
            shown,
            "ok^[[31mred^[]0;title^G <U+202E>txt.exe^M^[[2J<U+009B>^?"
        );
        assert_eq!(text("plain\n\tindented"), "plain\n\tindented");
        assert!(matches!(text("plain"), Cow::Borrowed(_)));
        assert_eq!(line("a\tb\nc"), "a    b^Jc");
        assert_eq!(line("\u{2066}x\u{2069}"), "<U+2066>x<U+2069>");
        assert_eq!(
            styled("\u{1b}[33m WARN\u{1b}[0m id \u{202e}x\r"),
            "\u{1b}[33m WARN\u{1b}[0m id <U+202E>x^M"
        );
    }

    #[test]
    fn json_keeps_its_data_and_loses_its_danger() {
        let value = serde_json::json!({"summary": HOSTILE});
        let printed = value.to_string();
        let safe = output(&printed);
        assert!(
            !safe.chars().any(unsafe_char),
            "nothing a terminal obeys: {safe}"
        );
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value, "the same data");
        let lines = format!("{printed}\n{printed}\n");
        assert!(output(&lines).contains("\\u202e"));
        assert!(output("not json \u{202e}").contains("<U+202E>"));
    }
}
