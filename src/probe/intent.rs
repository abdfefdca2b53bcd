//! What a change says it does to the behaviour of its code: a commit message or a task that
//! promises behaviour stays (a refactor, a rename, a simplification), and the functions a
//! task's requirements name. A behaviour diff's differences are weighed against it.

/// What a change says it does to behaviour, as far as its behaviour diff is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Intent {
    /// It says behaviour stays, and where it says so (`the commit message says
    /// "refactor"`, `the refactor stage`); `None` when it does not.
    pub keeps: Option<String>,
    /// The functions its requirements name: a difference elsewhere is unasked. Empty when
    /// none are named.
    pub named: Vec<String>,
}

/// Words with which a commit message or a task says the code's behaviour stays as it is.
const KEEPING: &[&str] = &[
    "refactor",
    "simplif",
    "rename",
    "clean up",
    "cleanup",
    "clean-up",
    "tidy",
    "restructur",
    "reorganis",
    "reorganiz",
    "extract",
    "inline",
    "dedup",
    "readab",
    "reformat",
    "no functional change",
    "no behaviour change",
    "no behavior change",
    "non-functional",
];

/// Words with which a text says it changes what the code does; beside them, a keeping word
/// describes how, not a promise that nothing changes ("simplify the parser and fix …").
const CHANGING: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "fixing",
    "bug",
    "bugs",
    "bugfix",
    "add",
    "adds",
    "added",
    "adding",
    "feat",
    "feature",
    "features",
    "support",
    "supports",
    "handle",
    "handles",
    "handled",
    "handling",
    "correct",
    "corrects",
    "corrected",
    "implement",
    "implements",
    "implemented",
    "allow",
    "allows",
    "allowed",
    "reject",
    "rejects",
    "rejected",
    "change behaviour",
    "change behavior",
    "changes behaviour",
    "changes behavior",
];

/// Where `text` (a commit message, a task's title and description) says behaviour stays:
/// the keeping word it uses, unless it also says it changes something. Conventional commit
/// types that promise no change in behaviour (`refactor:`, `style:`, `perf:`) count too.
pub fn keeps_behaviour(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let first = lower.lines().next().unwrap_or_default().trim();
    let conventional = ["refactor", "style", "perf"].into_iter().find(|t| {
        first
            .strip_prefix(t)
            .is_some_and(|r| r.starts_with(':') || r.starts_with('(') || r.starts_with("!:"))
    });
    if let Some(t) = conventional {
        return Some(format!("\"{t}:\""));
    }
    let in_word = |c: char| c.is_alphanumeric() || c == '_';
    let starts_word = |at: usize| !lower[..at].chars().next_back().is_some_and(in_word);
    let whole = |w: &str| {
        lower.match_indices(w).any(|(at, _)| {
            starts_word(at) && !lower[at + w.len()..].chars().next().is_some_and(in_word)
        })
    };
    if CHANGING.iter().any(|w| whole(w)) {
        return None;
    }
    // A keeping word may be a stem (`simplif`: simplify, simplified): shown whole.
    KEEPING.iter().find_map(|w| {
        let (at, _) = lower.match_indices(w).find(|(at, _)| starts_word(*at))?;
        let rest = &lower[at + w.len()..];
        let tail = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        Some(format!("\"{}\"", &lower[at..at + w.len() + tail]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_says_behaviour_stays_with_its_own_words_unless_it_changes_something() {
        for (text, said) in [
            ("simplify the loop", Some("\"simplify\"")),
            ("Refactor: split parse()", Some("\"refactor:\"")),
            ("refactor(parser): inline helper", Some("\"refactor:\"")),
            ("Tidy up stats.py", Some("\"tidy\"")),
            ("rename total to acc", Some("\"rename\"")),
            (
                "Cleaned up the code, no functional change",
                Some("\"no functional change\""),
            ),
            ("Simplify the parser and fix the off-by-one", None),
            ("add support for hours", None),
            ("update mean", None),
            ("prefix_simplify", None),
        ] {
            assert_eq!(keeps_behaviour(text).as_deref(), said, "{text}");
        }
    }
}
