//! What one note says, as far as the gate needs it to let a commit through without reading
//! the note again: whether every line is a plain verdict and the worst of them, and the patch
//! ids its lines carry. Worked out by reading the note whole ([`read_note`]), so it decides
//! exactly as reading does; kept per note blob in [`super::cache`].

use crate::notes::{read_note, NoteLine};
use crate::verdict::Verdict;

/// A note's lines, summed up for the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// What kind of lines it holds.
    pub class: Class,
    /// Every patch id its lines carry (valid or not), each once: where a copy of the change
    /// finds them.
    pub patch_ids: Vec<String>,
}

/// What kind of lines a note holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Only review and reconciliation lines (none at all: `None`), the worst one given: its
    /// verdict in force is that one, whoever reads it.
    Plain(Option<Verdict>),
    /// An override or a line that is not read: the gate reads it whole to decide.
    Other,
}

impl Summary {
    /// The summary of a note's text.
    pub fn of(text: &str) -> Summary {
        let lines = read_note(text);
        let mut worst = None;
        let mut plain = true;
        let mut patch_ids: Vec<String> = Vec::new();
        for line in &lines {
            match line {
                NoteLine::Verdict(v) => worst = worst.max(Some(v.verdict)),
                _ => plain = false,
            }
            for pid in line.patch_ids() {
                if !patch_ids.iter().any(|p| p == pid) {
                    patch_ids.push(pid.to_string());
                }
            }
        }
        Summary {
            class: match plain {
                true => Class::Plain(worst),
                false => Class::Other,
            },
            patch_ids,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_notes_give_their_worst_verdict_and_others_are_read_again() {
        let review = |v: &str, pid: &str| {
            format!(r#"{{"v":1,"kind":"review","ts":"t","patch_id":"{pid}","verdict":"{v}"}}"#)
        };
        let s = Summary::of(&format!(
            "{}\n{}\n",
            review("FLAG", "p"),
            review("HALT", "q")
        ));
        assert_eq!(s.class, Class::Plain(Some(Verdict::Halt)));
        assert_eq!(s.patch_ids, ["p", "q"]);
        assert_eq!(Summary::of("\n").class, Class::Plain(None));
        assert_eq!(Summary::of("lgtm").class, Class::Other);
        let fullwidth = r#"{"v":1,"kind":"review","verdict":"ＨＡＬＴ","patch_id":"p"}"#;
        let s = Summary::of(fullwidth);
        assert_eq!(
            (s.class, s.patch_ids),
            (Class::Other, vec!["p".to_string()])
        );
    }
}
