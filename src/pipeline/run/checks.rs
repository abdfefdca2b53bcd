//! Facts about a stage's own answer, checked on every stage, reviewed or not: what its edits
//! changed, whether it changed anything where it must, and whether its summary claims files
//! or functions its diff does not show. A model's word is not evidence.

use crate::code::Finding;
use crate::git::{FileDiff, FileStat};
use crate::pipeline::stage::Stage;
use crate::task::TaskSpec;

/// File endings a summary's word must have to count as naming a file.
pub(super) const FILE_ENDINGS: &[&str] = &[
    "py", "rs", "js", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "rb",
    "php", "cs", "swift", "toml", "json", "yaml", "yml", "md", "txt", "cfg", "ini", "sh", "html",
    "css", "sql",
];

/// What a stage summary says it touched.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Claims {
    /// Words that name files (`textstats.py`, `src/lib.rs`).
    pub files: Vec<String>,
    /// Functions it names as code (`char_count(text)`, `` `char_count` ``).
    pub symbols: Vec<String>,
}

impl Claims {
    /// Reads the claims of a summary.
    pub fn of(summary: &str) -> Claims {
        let mut c = Claims::default();
        for raw in summary.split_whitespace() {
            let backticked = raw.contains('`');
            let word = bare(raw);
            // `textstats.char_count(text)` names `char_count`.
            let call = word.split('(').next().unwrap_or("");
            let head = call.rsplit('.').next().unwrap_or(call);
            let is_ident = |t: &str| {
                t.len() >= 2
                    && t.chars().all(|ch| ch.is_alphanumeric() || ch == '_')
                    && !t.chars().next().is_some_and(|ch| ch.is_ascii_digit())
            };
            if let Some((stem, ending)) = word.rsplit_once('.') {
                if !stem.is_empty() && FILE_ENDINGS.contains(&ending) && !word.contains('(') {
                    push(&mut c.files, word);
                    continue;
                }
            }
            if (word.contains('(') || backticked) && is_ident(head) {
                push(&mut c.symbols, head);
            }
        }
        c
    }
}

/// A word of prose without the quotes and punctuation around it (`` `textstats.py`, ``
/// is `textstats.py`).
pub(super) fn bare(raw: &str) -> &str {
    raw.trim_matches(|ch: char| "`'\".,;:!?[]{}".contains(ch))
}

/// Adds `word` to `list` once.
pub(super) fn push(list: &mut Vec<String>, word: &str) {
    if !list.iter().any(|w| w == word) {
        list.push(word.to_string());
    }
}

/// Whether `claim` names `path` (`textstats.py` names `src/textstats.py`).
pub(super) fn names(claim: &str, path: &str) -> bool {
    path == claim || path.ends_with(&format!("/{claim}"))
}

/// The facts of one stage's edits.
pub(super) struct StageFacts {
    /// What changed, file by file.
    pub changed: Vec<FileStat>,
    /// Files the summary names that the diff does not touch.
    pub unsupported_files: Vec<String>,
    /// Functions the summary names that no added line mentions.
    pub unsupported_symbols: Vec<String>,
}

impl StageFacts {
    /// Compares the stage's `diff` with what its `summary` says.
    pub fn of(diff: &[FileDiff], summary: &str) -> StageFacts {
        let claims = Claims::of(summary);
        let changed = FileStat::of(diff);
        let added: String = diff
            .iter()
            .flat_map(|f| &f.hunks)
            .flat_map(|h| &h.lines)
            .filter(|l| l.origin == '+')
            .map(|l| l.text.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        StageFacts {
            unsupported_files: claims
                .files
                .iter()
                .filter(|c| !changed.iter().any(|f| names(c, &f.path)))
                .cloned()
                .collect(),
            unsupported_symbols: claims
                .symbols
                .iter()
                .filter(|s| !added.contains(s.as_str()))
                .cloned()
                .collect(),
            changed,
        }
    }

    /// Why the answer cannot be used, when it changes nothing where the stage must: the
    /// implement stage must change the code. (Another stage that changes nothing may say so;
    /// if its summary claims changes, that claim is a finding, see [`Self::claim_findings`].)
    /// `written` are the files the answer wrote all the same: a small model often writes a
    /// file back exactly as it was shown and calls it fixed, and is told so by name.
    pub fn no_change(
        &self,
        stage: Stage,
        spec: &TaskSpec,
        whole: bool,
        written: &[&str],
    ) -> Option<String> {
        if !self.changed.is_empty() || stage != Stage::Implement {
            return None;
        }
        let echoed = if written.is_empty() {
            String::new()
        } else {
            format!(
                "You wrote {} back exactly as it already is: the code still does what the task says is wrong. ",
                written.join(", ")
            )
        };
        let how = if whole {
            "Write each file you change in full: its path on a line by itself, then a fenced block with its complete new content"
        } else {
            "Write SEARCH/REPLACE edit blocks for the files in scope"
        };
        let wanted: Vec<String> = spec
            .requirements
            .iter()
            .map(|r| format!("- {}: {}", r.id, r.text))
            .collect();
        Some(format!(
            "## YOUR ANSWER CHANGED NOTHING\n\n{echoed}Your answer contains no edit that changes a file; a summary or an outcome is not a change. The implement stage must change the code: the task requires\n{}\n{how}, then the ```json metadata block.\n",
            if wanted.is_empty() {
                format!("- {}", spec.title)
            } else {
                wanted.join("\n")
            }
        ))
    }

    /// Tool findings for a summary that names files the diff does not touch, or, when the
    /// stage changed nothing, functions it says it wrote: claims without evidence, recorded
    /// beside what the stage really did.
    pub fn claim_findings(&self, stage: Stage) -> Vec<Finding> {
        let symbols = if self.changed.is_empty() {
            &self.unsupported_symbols[..]
        } else {
            &[]
        };
        self.unsupported_files
            .iter()
            .chain(symbols)
            .map(|f| Finding {
                kind: crate::arbiter::floor::UNSUPPORTED_CLAIM.into(),
                category: "hallucination".into(),
                severity: "warning".into(),
                path: f.clone(),
                line: 0,
                end_line: 0,
                symbol: None,
                import: None,
                reason: format!(
                    "the {stage} stage's summary names {f}, which its diff does not touch (a claim without evidence)"
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_files_and_functions_named_as_code() {
        let c = Claims::of(
            "Added a function char_count(text) to textstats.py and a test in tests/test_textstats.py; see `word_count`. Version 1.2, e.g. fine.",
        );
        assert_eq!(c.files, ["textstats.py", "tests/test_textstats.py"]);
        assert_eq!(c.symbols, ["char_count", "word_count"]);
        assert_eq!(Claims::of("No refactoring was needed."), Claims::default());
    }

    #[test]
    fn only_the_implement_stage_must_change_code_other_claims_are_findings() {
        let spec = TaskSpec::parse("title = \"t\"\ndescription = \"d\"\n", "t.toml", "t").unwrap();
        let facts = StageFacts::of(&[], "planned char_count(text) in textstats.py");
        assert!(facts
            .no_change(Stage::Implement, &spec, true, &[])
            .is_some());
        assert!(facts
            .no_change(Stage::Architect, &spec, true, &[])
            .is_none());
        assert!(facts
            .no_change(Stage::Refactor, &spec, false, &[])
            .is_none());
        let echoed = facts
            .no_change(Stage::Implement, &spec, true, &["calc.py"])
            .unwrap();
        assert!(
            echoed.contains("You wrote calc.py back exactly as it already is"),
            "{echoed}"
        );
        let findings = facts.claim_findings(Stage::Refactor);
        assert_eq!(findings.len(), 2, "{findings:?}");
        assert!(findings
            .iter()
            .all(|f| f.kind == crate::arbiter::floor::UNSUPPORTED_CLAIM));
    }

    #[test]
    fn a_claimed_file_matches_by_its_path_or_its_tail() {
        assert!(names("textstats.py", "src/textstats.py"));
        assert!(names("src/textstats.py", "src/textstats.py"));
        assert!(!names("stats.py", "src/textstats.py"));
    }
}
