//! Styled lines measured in terminal cells: what both renderers draw with. Every string
//! that reaches the screen passes through [`clean`] first, because model output is
//! untrusted: an escape sequence in an answer must show as text, never reach the terminal
//! (it could retitle the window, rewrite the clipboard, or paint over the verdicts).

use std::sync::atomic::{AtomicBool, Ordering};

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Set by `NO_COLOR` (no-color.org): lines are drawn without colours or bold.
static NO_COLOR: AtomicBool = AtomicBool::new(false);

/// Draws every line without colours from now on (`NO_COLOR` is set).
pub fn no_color() {
    NO_COLOR.store(true, Ordering::Relaxed);
}

/// The eight colours every terminal has, and the terminal's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Color {
    /// The terminal's foreground.
    #[default]
    Plain,
    /// Failures, REJECT and HALT.
    Red,
    /// APPROVE, done.
    Green,
    /// FLAG, warnings, the manager.
    Yellow,
    /// Tools.
    Blue,
    /// Orchestrators.
    Magenta,
    /// The human.
    Cyan,
    /// Notices and borders (bright black).
    Gray,
}

/// How a span is drawn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Style {
    /// The foreground colour.
    pub fg: Color,
    /// Bold.
    pub bold: bool,
}

impl Style {
    /// The terminal's default look.
    pub const PLAIN: Style = Style {
        fg: Color::Plain,
        bold: false,
    };

    /// A colour, not bold.
    pub const fn fg(fg: Color) -> Style {
        Style { fg, bold: false }
    }

    /// The same, bold.
    pub const fn bold(self) -> Style {
        Style { bold: true, ..self }
    }

    /// The SGR sequence that selects this style from the default one.
    fn sgr(self) -> String {
        let mut codes = Vec::new();
        if self.bold {
            codes.push("1");
        }
        codes.push(match self.fg {
            Color::Plain => "39",
            Color::Red => "31",
            Color::Green => "32",
            Color::Yellow => "33",
            Color::Blue => "34",
            Color::Magenta => "35",
            Color::Cyan => "36",
            Color::Gray => "90",
        });
        format!("\x1b[{}m", codes.join(";"))
    }
}

/// A run of text in one style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text, already [`clean`]ed.
    pub text: String,
    /// Its style.
    pub style: Style,
}

/// One screen line: spans side by side.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// The spans, left to right.
    pub spans: Vec<Span>,
}

impl Line {
    /// A line of one plain span.
    pub fn plain(text: &str) -> Line {
        Line::default().add(text, Style::PLAIN)
    }

    /// This line with `text` (cleaned) appended in `style`.
    pub fn add(mut self, text: &str, style: Style) -> Line {
        let text = clean(text);
        if !text.is_empty() {
            self.spans.push(Span { text, style });
        }
        self
    }

    /// Cells the line takes.
    pub fn width(&self) -> usize {
        self.spans.iter().map(|s| s.text.width()).sum()
    }

    /// The text without styles.
    pub fn text(&self) -> String {
        self.spans.iter().map(|s| s.text.as_str()).collect()
    }

    /// The line cut to at most `width` cells, ending in `…` when something was cut.
    pub fn fit(&self, width: usize) -> Line {
        if self.width() <= width {
            return self.clone();
        }
        let mut left = width.saturating_sub(1);
        let mut out = Line::default();
        for span in &self.spans {
            let mut text = String::new();
            for c in span.text.chars() {
                let w = c.width().unwrap_or(0);
                if w > left {
                    left = 0;
                    break;
                }
                left -= w;
                text.push(c);
            }
            let full = text.len() == span.text.len();
            out.spans.push(Span {
                text,
                style: span.style,
            });
            if !full {
                break;
            }
        }
        if width > 0 {
            out.spans.push(Span {
                text: "…".into(),
                style: Style::fg(Color::Gray),
            });
        }
        out
    }

    /// The line padded with spaces (in `style`) to exactly `width` cells, or cut to it.
    pub fn pad(&self, width: usize) -> Line {
        let line = self.fit(width);
        let gap = width.saturating_sub(line.width());
        line.add(&" ".repeat(gap), Style::PLAIN)
    }

    /// The bytes that draw the line from the cursor, in at most `width` cells, ending in
    /// the default style.
    pub fn ansi(&self, width: usize) -> String {
        let mut s = String::new();
        let plain = NO_COLOR.load(Ordering::Relaxed);
        for span in self.fit(width).spans {
            if plain || span.style == Style::PLAIN {
                s.push_str(&span.text);
            } else {
                s.push_str(&span.style.sgr());
                s.push_str(&span.text);
                s.push_str("\x1b[0m");
            }
        }
        s
    }
}

/// Cells `s` takes on a terminal.
pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` safe to print on one line: a tab becomes spaces, a control character shows in caret
/// notation (`ESC` as `^[`, as `cat -v` does) and a C1 control or a bidirectional control as
/// `<U+202E>`, so text from a model can only ever be text ([`crate::safe::line`]).
pub fn clean(s: &str) -> String {
    crate::safe::line(s)
}

/// `s` without its colour sequences (`ESC [ … m`): for lines captured from stderr, where
/// our own log lines arrive coloured; whatever else is left is then shown by [`clean`].
pub fn uncolored(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let seq = &rest[at + 2..];
        match seq.find(|c: char| !(c.is_ascii_digit() || c == ';')) {
            Some(end) if seq[end..].starts_with('m') => rest = &seq[end + 1..],
            _ => {
                out.push('\x1b');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `s` as [`clean`] makes it, line breaks and tabs kept: for whole texts written to a
/// terminal (progress, reports), where a carriage return could otherwise draw one verdict
/// over another and an escape sequence could do anything ([`crate::safe::text`]).
pub fn clean_text(s: &str) -> String {
    crate::safe::text(s).into_owned()
}

/// `text` wrapped at word boundaries into lines of at most `width` cells; a word longer
/// than a line is broken. Line breaks in `text` are kept, and so is each line's indent.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    for para in text.split('\n') {
        let para = clean(para);
        let body = para.trim_start_matches(' ');
        let indent = " ".repeat((para.len() - body.len()).min(width / 2));
        let room = width - indent.len();
        let mut line = String::new();
        let mut rows = Vec::new();
        for word in body.split(' ') {
            let gap = usize::from(!line.is_empty());
            if line.width() + gap + word.width() <= room {
                if gap == 1 {
                    line.push(' ');
                }
                line.push_str(word);
                continue;
            }
            if !line.is_empty() {
                rows.push(std::mem::take(&mut line));
            }
            for c in word.chars() {
                if line.width() + c.width().unwrap_or(0) > room {
                    rows.push(std::mem::take(&mut line));
                }
                line.push(c);
            }
        }
        rows.push(line);
        out.extend(rows.into_iter().map(|r| format!("{indent}{r}")));
    }
    out
}

/// A bar of `cells` cells, `share` (0–1) of them full: `████░░░░`.
pub fn bar(share: f64, cells: usize) -> String {
    let full = ((share.clamp(0.0, 1.0) * cells as f64).round() as usize).min(cells);
    format!("{}{}", "█".repeat(full), "░".repeat(cells - full))
}

/// A duration as people read it on a status line: `42 s`, `3 m 05 s`, `1 h 02 m`.
pub fn elapsed(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} m {:02} s", s / 60, s % 60),
        s => format!("{} h {:02} m", s / 3600, (s % 3600) / 60),
    }
}

/// The spinner frame for tick `n`.
pub fn spinner(n: u64) -> &'static str {
    const FRAMES: [&str; 8] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧"];
    FRAMES[(n % 8) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_from_a_model_become_visible_text() {
        let hostile = "ok\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J done";
        let line = Line::plain(hostile);
        assert!(!line.ansi(80).contains('\x1b'), "{:?}", line.ansi(80));
        assert!(line.text().starts_with("ok^[]52"));
        assert_eq!(clean("a\u{9b}b\u{7f}"), "a<U+009B>b^?");
        assert_eq!(clean_text("REJECT\rAPPROVE\nnext"), "REJECT^MAPPROVE\nnext");
        assert_eq!(clean_text("a\tb\n"), "a\tb\n");
        assert_eq!(
            uncolored("\x1b[33m WARN\x1b[0m x \x1b[2J"),
            " WARN x \x1b[2J"
        );
        assert_eq!(clean(&uncolored("\x1b[1;31mred\x1b[m")), "red");
    }

    #[test]
    fn fitting_counts_cells_not_bytes_and_marks_the_cut() {
        let line = Line::plain("日本語のテキスト").add(" tail", Style::fg(Color::Red));
        let cut = line.fit(7);
        assert_eq!(cut.text(), "日本語…");
        assert_eq!(cut.width(), 7);
        assert_eq!(line.fit(100), line);
        assert_eq!(Line::plain("abc").pad(5).text(), "abc  ");
    }

    #[test]
    fn wrapping_keeps_words_whole_and_breaks_only_overlong_ones() {
        assert_eq!(
            wrap("the quick brown fox", 10),
            vec!["the quick", "brown fox"]
        );
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("a\nb", 10), vec!["a", "b"]);
        assert_eq!(wrap("    → one two", 9), vec!["    → one", "    two"]);
        assert!(wrap("x y", 10).iter().all(|l| width(l) <= 10));
    }

    #[test]
    fn bars_and_durations() {
        assert_eq!(bar(0.18, 10), "██░░░░░░░░");
        assert_eq!(bar(1.7, 4), "████");
        assert_eq!(bar(-1.0, 3), "░░░");
        assert_eq!(elapsed(42), "42 s");
        assert_eq!(elapsed(185), "3 m 05 s");
        assert_eq!(elapsed(3720), "1 h 02 m");
    }
}
