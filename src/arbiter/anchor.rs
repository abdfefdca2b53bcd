//! Re-anchoring: the quote wins over the line numbers a model claims.

use crate::edit::apply::{find_windows, trim_blank_edges};

/// Strips what a model often copies along with code from a numbered diff:
/// a leading line number and a `+`/`-`/space marker (`   12 + foo` → `foo`).
fn strip_diff_prefix(line: &str) -> &str {
    let t = line.trim_start();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return line;
    }
    let rest = &t[digits..];
    let rest2 = rest.trim_start_matches(' ');
    if let Some(r) = rest2.strip_prefix(['+', '-']) {
        return r.strip_prefix(' ').unwrap_or(r);
    }
    if let Some(r) = rest.strip_prefix("  ") {
        return r;
    }
    line
}

fn quote_lines(quote: &str) -> Vec<String> {
    let lines: Vec<String> = quote
        .lines()
        .map(|l| strip_diff_prefix(l).trim().to_string())
        .collect();
    trim_blank_edges(&lines)
}

/// Finds `quote` in `text` and returns its 1-based inclusive line range.
///
/// Lines are compared trimmed. Among several matches the one nearest the claimed line wins.
/// If the whole quote is not found, its longest line that occurs exactly once anchors it.
pub fn anchor(text: &str, quote: &str, claimed_start: u32) -> Option<(u32, u32)> {
    let want = quote_lines(quote);
    if want.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let hits = find_windows(&lines, &want);
    if let Some(best) = hits
        .iter()
        .min_by_key(|s| (**s as i64 + 1 - claimed_start as i64).abs())
    {
        let s = *best as u32 + 1;
        return Some((s, s + want.len() as u32 - 1));
    }
    // Partial: the most distinctive quoted line that occurs exactly once.
    let mut candidates: Vec<&String> = want.iter().filter(|l| l.len() >= 8).collect();
    candidates.sort_by_key(|l| std::cmp::Reverse(l.len()));
    for c in candidates {
        let found: Vec<usize> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| *l == c)
            .map(|(i, _)| i)
            .collect();
        if found.len() == 1 {
            let s = found[0] as u32 + 1;
            return Some((s, s));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "def a():\n    return 1\n\ndef b():\n    return 1\n";

    #[test]
    fn the_quote_wins_over_claimed_numbers() {
        assert_eq!(anchor(TEXT, "def b():\n    return 1", 1), Some((4, 5)));
        // Two matches of `return 1`: the one nearest the claim wins.
        assert_eq!(anchor(TEXT, "return 1", 5), Some((5, 5)));
        assert_eq!(anchor(TEXT, "return 1", 1), Some((2, 2)));
    }

    #[test]
    fn diff_prefixes_are_stripped() {
        assert_eq!(
            anchor(TEXT, "    4 + def b():\n    5 +     return 1", 1),
            Some((4, 5))
        );
    }

    #[test]
    fn unanchorable_quotes_return_none() {
        assert_eq!(anchor(TEXT, "def c():", 1), None);
        assert_eq!(anchor(TEXT, "", 1), None);
    }
}
