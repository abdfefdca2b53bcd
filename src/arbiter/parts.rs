//! A review too large for its reviewer's window, in parts: the change's files grouped so
//! that each group's request fits, each group reviewed alone, and the parts merged into one
//! review with a coverage receipt.
//!
//! A file whose diff alone does not fit is left out and said so; a review that left any file
//! out is at most FLAG (a verdict never passes what it did not see). The verdict of the whole
//! is the worst of the parts', so a defect found in one part stands for the change.

use super::schema::{ArbiterReview, Coverage, Floor, LeftOut};
use crate::model::window::Estimator;

/// How a change is split: the file indexes of each part, and the files left out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Each part's sections (indexes into the change's files), in the change's order.
    pub parts: Vec<Vec<usize>>,
    /// Files whose diff alone is larger than a part may be.
    pub left_out: Vec<LeftOut>,
}

/// Groups `sections` (path, rendered diff) into parts of at most `budget` tokens each, in
/// order, a file never split across parts.
pub fn plan(sections: &[(String, String)], budget: u64, estimator: &Estimator) -> Plan {
    let mut plan = Plan::default();
    let mut current: Vec<usize> = Vec::new();
    let mut used = 0u64;
    for (i, (path, text)) in sections.iter().enumerate() {
        let tokens = estimator.tokens(text);
        if tokens > budget {
            plan.left_out.push(LeftOut {
                path: path.clone(),
                why: format!(
                    "its diff alone is about {tokens} tokens, more than the {budget} a part of the review may hold in the reviewer's window"
                ),
            });
            continue;
        }
        if used + tokens > budget && !current.is_empty() {
            plan.parts.push(std::mem::take(&mut current));
            used = 0;
        }
        current.push(i);
        used += tokens;
    }
    if !current.is_empty() {
        plan.parts.push(current);
    }
    plan
}

/// The header of part `n` of `of`, so the reviewer knows it sees a part of a change (its
/// size is in the overhead every part keeps room for).
pub fn header(n: usize, of: usize) -> String {
    format!(
        "(This is part {n} of {of} of the change, reviewed separately because the whole does not fit your window: judge only the files below.)\n"
    )
}

/// One review of the parts' reviews: the worst verdict, every issue, the weakest confidence,
/// each part's reasoning, the summed cost, and the coverage receipt. With files left out,
/// the verdict is at least FLAG, and the derived reasons say why ([`super::coverage::apply`]).
pub fn merge(parts: Vec<ArbiterReview>, coverage: Coverage) -> Option<ArbiterReview> {
    let count = parts.len();
    let mut iter = parts.into_iter().enumerate();
    let (_, mut whole) = iter.next()?;
    let label = |n: usize| format!("part {} of {count}", n + 1);
    let mut reasoning = vec![format!("{}: {}", label(0), whole.reasoning)];
    let mut derived_reasons: Vec<String> = whole
        .derived
        .take()
        .map(|d| {
            d.reasons
                .iter()
                .map(|r| format!("{}: {r}", label(0)))
                .collect()
        })
        .unwrap_or_default();
    let mut derived_verdict = whole.verdict;
    for (n, p) in iter {
        whole.verdict = whole.verdict.max(p.verdict);
        whole.model_verdict = whole.model_verdict.max(p.model_verdict);
        whole.floor = match (whole.floor.take(), p.floor) {
            (Some(a), Some(b)) if b.verdict > a.verdict => Some(b),
            (Some(a), _) => Some(a),
            (None, b) => b,
        };
        if let Some(d) = p.derived {
            derived_reasons.extend(d.reasons.iter().map(|r| format!("{}: {r}", label(n))));
        }
        derived_verdict = derived_verdict.max(p.verdict);
        whole.issues.extend(p.issues);
        whole.alternatives.extend(p.alternatives);
        whole.confidence = whole.confidence.min(p.confidence);
        reasoning.push(format!("{}: {}", label(n), p.reasoning));
        whole.token_cost += p.token_cost;
        whole.sandbox = whole.sandbox.take().or(p.sandbox);
        whole.behaviour = whole.behaviour.take().or(p.behaviour);
    }
    if count > 1 {
        derived_reasons.push(format!(
            "reviewed in {count} parts by file groups: the worst part's verdict stands"
        ));
    }
    whole.derived = (!derived_reasons.is_empty()).then_some(Floor {
        verdict: derived_verdict,
        reasons: derived_reasons,
    });
    whole.reasoning = reasoning.join("\n");
    super::coverage::apply(&mut whole, coverage);
    Some(whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbiter::schema::{Issue, Verdict};

    fn sections(sizes: &[usize]) -> Vec<(String, String)> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, n)| (format!("f{i}.py"), "x".repeat(*n)))
            .collect()
    }

    #[test]
    fn files_are_grouped_in_order_and_one_too_large_is_left_out_and_said() {
        let est = Estimator::with_bytes_per_token(1.0);
        let p = plan(&sections(&[40, 50, 30, 200, 90, 5]), 100, &est);
        assert_eq!(p.parts, vec![vec![0, 1], vec![2], vec![4, 5]]);
        assert_eq!(p.left_out.len(), 1);
        assert_eq!(p.left_out[0].path, "f3.py");
        assert!(
            p.left_out[0].why.contains("about 200 tokens"),
            "{:?}",
            p.left_out
        );
    }

    fn review(verdict: Verdict, issue: &str) -> ArbiterReview {
        ArbiterReview {
            stage: "review".into(),
            reviewed_model: "human".into(),
            arbiter_model: "m".into(),
            verdict,
            model_verdict: verdict,
            floor: None,
            derived: None,
            issues: vec![Issue::sample(issue)],
            alternatives: vec![],
            confidence: 0.8,
            reasoning: format!("saw {issue}"),
            token_cost: 0.5,
            coverage: None,
            sandbox: None,
            behaviour: None,
            tests: None,
        }
    }

    #[test]
    fn the_worst_part_stands_and_a_left_out_file_keeps_it_from_approving() {
        let coverage = |left: usize| Coverage {
            reviewed: vec!["a.py".into(), "b.py".into()],
            left_out: (0..left)
                .map(|i| LeftOut {
                    path: format!("big{i}.py"),
                    why: "too large".into(),
                })
                .collect(),
            parts: 2,
        };
        let merged = merge(
            vec![review(Verdict::Approve, "a"), review(Verdict::Reject, "b")],
            coverage(0),
        )
        .unwrap();
        assert_eq!(merged.verdict, Verdict::Reject);
        assert_eq!(merged.issues.len(), 2);
        assert_eq!(merged.token_cost, 1.0);
        assert!(
            merged.reasoning.contains("part 2 of 2: saw b"),
            "{}",
            merged.reasoning
        );
        let merged = merge(
            vec![review(Verdict::Approve, "a"), review(Verdict::Approve, "b")],
            coverage(1),
        )
        .unwrap();
        assert_eq!(merged.verdict, Verdict::Flag);
        let why = merged.derived.unwrap().reasons.join("; ");
        assert!(
            why.contains("1 file(s) not reviewed: it is at most FLAG"),
            "{why}"
        );
        assert_eq!(
            merged.coverage.unwrap().describe().unwrap(),
            "reviewed 2 of 3 file(s) in 2 part(s); not reviewed: big0.py (too large)"
        );
    }
}
