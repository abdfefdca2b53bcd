//! English ordinal numbers: 1st, 2nd, 3rd, 4th, ...

/// The English ordinal suffix of `n`: "st", "nd", "rd" or "th" (11, 12 and 13 take "th").
pub fn suffix(n: u64) -> &'static str {
    match n % 10 {
        1 => "st",
        2 => "nd",
        3 => "rd",
        _ => "th",
    }
}

/// `n` written as an ordinal: `21st`.
pub fn ordinal(n: u64) -> String {
    format!("{n}{}", suffix(n))
}
