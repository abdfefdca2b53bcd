//! What a review saw, and the rule that follows from it: a verdict never passes what it did
//! not see.
//!
//! A review's coverage receipt ([`Coverage`]) lists the files the reviewer was shown and the
//! ones it was not, each with why: a binary file (git calls a file binary when it holds a NUL
//! byte, so a script with one hidden byte is one), a private file withheld from every model,
//! or a file too large for any part of a review in parts, or a submodule, whose diff is the
//! commit it points at and never its code. A review with any file not reviewed is at most
//! FLAG, and says why.

use super::schema::{ArbiterReview, Coverage, Floor, LeftOut, Verdict};
use crate::git::FileDiff;

/// The files of a change whose content the reviewer is not shown, each with why. A deleted
/// file counts as seen: that it goes is in the diff, and nothing of it stays.
pub fn unseen(files: &[FileDiff]) -> Vec<LeftOut> {
    files
        .iter()
        .filter(|f| f.status != "deleted")
        .filter_map(|f| {
            let why = if f.withheld {
                "a private file, withheld from every model: its content was not shown"
            } else if f.submodule {
                "a submodule: only the commit it points at was shown (`Subproject commit`), never the code of that commit"
            } else if f.binary {
                "git reads it as binary (a NUL byte, or not text): its content was not shown"
            } else {
                return None;
            };
            Some(LeftOut {
                path: f.path.clone(),
                why: why.to_string(),
            })
        })
        .collect()
}

/// Records `coverage` on `review`. When it did not review every file, an APPROVE becomes
/// FLAG, and the verdict the review derives says why.
pub fn apply(review: &mut ArbiterReview, coverage: Coverage) {
    if !coverage.left_out.is_empty() {
        review.verdict = review.verdict.max(Verdict::Flag);
        let reason = format!(
            "{} file(s) not reviewed: it is at most FLAG, as it did not see them",
            coverage.left_out.len()
        );
        match &mut review.derived {
            Some(derived) => {
                derived.verdict = derived.verdict.max(Verdict::Flag);
                derived.reasons.push(reason);
            }
            None => {
                review.derived = Some(Floor {
                    verdict: review.verdict,
                    reasons: vec![reason],
                })
            }
        }
    }
    review.coverage = Some(coverage);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, status: &str, binary: bool, withheld: bool) -> FileDiff {
        FileDiff {
            path: path.into(),
            status: status.into(),
            binary,
            withheld,
            submodule: false,
            hunks: Vec::new(),
        }
    }

    #[test]
    fn a_submodule_bump_is_not_seen() {
        let mut bump = file("vendor/lib", "modified", false, false);
        bump.submodule = true;
        let unseen = unseen(&[bump]);
        assert_eq!(unseen.len(), 1);
        assert!(unseen[0].why.contains("submodule"), "{}", unseen[0].why);
    }

    #[test]
    fn binary_and_withheld_files_are_not_seen_and_keep_a_review_from_approving() {
        let files = [
            file("run.sh", "added", true, false),
            file(".env", "modified", false, true),
            file("gone.bin", "deleted", true, false),
            file("a.py", "modified", false, false),
        ];
        let unseen = unseen(&files);
        let paths: Vec<&str> = unseen.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(paths, ["run.sh", ".env"]);
        assert!(unseen[0].why.contains("NUL byte"));
        let mut review = ArbiterReview {
            stage: "implement".into(),
            reviewed_model: "a".into(),
            arbiter_model: "b".into(),
            verdict: Verdict::Approve,
            model_verdict: Verdict::Approve,
            floor: None,
            derived: None,
            issues: Vec::new(),
            alternatives: Vec::new(),
            confidence: 0.9,
            reasoning: "fine".into(),
            token_cost: 0.0,
            coverage: None,
            sandbox: None,
            behaviour: None,
            tests: None,
        };
        apply(
            &mut review,
            Coverage {
                reviewed: vec!["a.py".into()],
                left_out: unseen,
                parts: 1,
            },
        );
        assert_eq!(review.verdict, Verdict::Flag);
        let derived = review.derived.as_ref().unwrap();
        assert_eq!(derived.verdict, Verdict::Flag);
        assert!(derived.reasons[0].contains("2 file(s) not reviewed"));
        assert!(review
            .coverage
            .unwrap()
            .describe()
            .unwrap()
            .contains("not reviewed: run.sh"));
    }
}
