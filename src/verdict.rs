//! The four verdicts, and the words that name what a push gate blocks on.
//!
//! A leaf, so that every layer reads verdict words the same way: the arbiter's schema, the
//! notes that record verdicts, and the configuration that says which of them block a push.

use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The four verdicts of seed 000 §B3.3, in increasing severity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    /// Sound; continue.
    Approve,
    /// Continue, and pass the issues to the next stage.
    Flag,
    /// Redo the stage with the feedback.
    Reject,
    /// Stop for a human.
    Halt,
}

impl Verdict {
    /// Every verdict, mildest first.
    pub const ALL: [Verdict; 4] = [
        Verdict::Approve,
        Verdict::Flag,
        Verdict::Reject,
        Verdict::Halt,
    ];

    /// The uppercase name used in notes and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "APPROVE",
            Verdict::Flag => "FLAG",
            Verdict::Reject => "REJECT",
            Verdict::Halt => "HALT",
        }
    }

    /// The verdict a word names, as people and older notes write it: surrounding blanks and
    /// ASCII case ignored (`" halt"` is HALT); `None` for any other word.
    pub fn from_word(word: &str) -> Option<Verdict> {
        let word = word.trim();
        Verdict::ALL
            .into_iter()
            .find(|v| v.as_str().eq_ignore_ascii_case(word))
    }

    /// Every verdict word, mildest first, as a message offers a choice of them:
    /// `APPROVE, FLAG, REJECT or HALT`.
    pub fn choices() -> &'static str {
        static CHOICES: LazyLock<String> = LazyLock::new(|| {
            let words = Verdict::ALL.map(Verdict::as_str);
            let (last, rest) = words.split_last().expect("there are verdicts");
            format!("{} or {last}", rest.join(", "))
        });
        &CHOICES
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Verdict::from_word(s).ok_or_else(|| {
            let words = Verdict::ALL.map(Verdict::as_str);
            format!("`{s}` is not a verdict ({})", words.join(", "))
        })
    }
}

/// One entry of `hooks.pre_push.block_on`: a verdict that blocks a push, or `missing` (a
/// pushed commit without any verdict blocks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocker {
    /// Commits whose verdict in force is this one.
    Verdict(Verdict),
    /// Commits without any verdict.
    Missing,
}

impl Blocker {
    /// The word of [`Blocker::Missing`] in `block_on`.
    pub const MISSING: &'static str = "missing";

    /// Reads one `block_on` entry: `HALT`, `REJECT`, `FLAG` (any case) or `missing`. APPROVE
    /// is refused: it would block every reviewed commit.
    pub fn parse(word: &str) -> Result<Blocker, String> {
        if word.trim().eq_ignore_ascii_case(Blocker::MISSING) {
            return Ok(Blocker::Missing);
        }
        match Verdict::from_word(word) {
            Some(v) if v != Verdict::Approve => Ok(Blocker::Verdict(v)),
            _ => {
                // The entries a list may hold, the most severe verdict first.
                let words: Vec<&str> = Verdict::ALL
                    .into_iter()
                    .rev()
                    .filter(|v| *v != Verdict::Approve)
                    .map(Verdict::as_str)
                    .chain([Blocker::MISSING])
                    .collect();
                Err(format!("`{word}` is not one of {}", words.join(", ")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_in_any_case_and_only_blocking_ones_block() {
        assert_eq!(Verdict::from_word(" halt\n"), Some(Verdict::Halt));
        assert_eq!(Verdict::from_word("Halted"), None);
        assert!(Verdict::Approve < Verdict::Halt);
        assert_eq!(Blocker::parse("Missing"), Ok(Blocker::Missing));
        assert_eq!(
            Blocker::parse("reject"),
            Ok(Blocker::Verdict(Verdict::Reject))
        );
        assert!(Blocker::parse("APPROVE").is_err());
        assert_eq!(
            Blocker::parse("maybe").unwrap_err(),
            "`maybe` is not one of HALT, REJECT, FLAG, missing"
        );
    }

    #[test]
    fn messages_and_the_wire_use_the_words_of_the_enum() {
        for v in Verdict::ALL {
            // serde's spelling (notes, the arbiter's JSON schema) is `as_str`'s.
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        assert_eq!(Verdict::choices(), "APPROVE, FLAG, REJECT or HALT");
        assert_eq!(
            "maybe".parse::<Verdict>().unwrap_err(),
            "`maybe` is not a verdict (APPROVE, FLAG, REJECT, HALT)"
        );
    }
}
