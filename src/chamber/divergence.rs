//! Divergence detection (seed 003): the four rules that decide whether the panel's
//! independent answers disagree enough for one round of cross-examination. Each rule is
//! evaluated and recorded with its result, fired or not, so the trace shows why a
//! cross-examination did or did not happen.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::answer::{InitialAssessment, PanelAnswer};

/// Confidence spread above which the panel diverges: (max − min) / max.
pub const CONFIDENCE_SPREAD: f64 = 0.30;

/// Share of common terms in two panelists' primary evidence below which it is materially
/// different (Jaccard similarity of the terms).
pub const EVIDENCE_OVERLAP: f64 = 0.20;

/// One rule's evaluation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleResult {
    /// `stances`, `confidence`, `evidence` or `arbiter`.
    pub rule: String,
    /// Whether it fired.
    pub fired: bool,
    /// The figures behind the result, in words.
    pub detail: String,
}

/// `stances: fired — two stances, yes and no`, as the trace and the arbiter's dossier
/// list each rule.
impl std::fmt::Display for RuleResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let result = if self.fired { "fired" } else { "quiet" };
        write!(f, "{}: {result} — {}", self.rule, self.detail)
    }
}

/// Evaluates every rule over the independent answers (`(panelist, answer)`) and the
/// arbiter's initial assessment (`Err` says why there is none).
pub fn evaluate(
    answers: &[(String, PanelAnswer)],
    assessment: Result<&InitialAssessment, &str>,
) -> Vec<RuleResult> {
    vec![
        stances(answers),
        confidence(answers),
        evidence(answers),
        arbiter(assessment),
    ]
}

/// Whether any rule fired.
pub fn diverged(rules: &[RuleResult]) -> bool {
    rules.iter().any(|r| r.fired)
}

/// Whether two stances decide the same thing.
pub fn same_stance(a: &str, b: &str) -> bool {
    normalize_stance(a) == normalize_stance(b)
}

/// A stance reduced to what it decides: `yes`, `no`, `defer`, or its own words normalized.
pub fn normalize_stance(stance: &str) -> String {
    let lower = stance.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    const YES: &[&str] = &[
        "yes", "go", "approve", "proceed", "accept", "adopt", "do", "lean-go",
    ];
    const NO: &[&str] = &[
        "no",
        "no-go",
        "nogo",
        "not",
        "don't",
        "dont",
        "reject",
        "decline",
        "against",
        "lean-no-go",
    ];
    const DEFER: &[&str] = &["defer", "wait", "depends", "unclear", "undecided", "maybe"];
    if first == "lean" {
        return normalize_stance(&words[1..].join(" "));
    }
    if (first == "no" && second == "go") || NO.contains(&first) {
        return "no".into();
    }
    if YES.contains(&first) {
        return "yes".into();
    }
    if DEFER.contains(&first) || lower.contains("need more data") {
        return "defer".into();
    }
    words.join(" ")
}

fn stances(answers: &[(String, PanelAnswer)]) -> RuleResult {
    let normalized: Vec<(String, String)> = answers
        .iter()
        .map(|(m, a)| (m.clone(), normalize_stance(&a.stance)))
        .collect();
    let distinct: BTreeSet<&str> = normalized.iter().map(|(_, s)| s.as_str()).collect();
    let listing = normalized
        .iter()
        .map(|(m, s)| format!("{m}: {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    RuleResult {
        rule: "stances".into(),
        fired: distinct.len() > 1,
        detail: format!("{} distinct stance(s) ({listing})", distinct.len()),
    }
}

fn confidence(answers: &[(String, PanelAnswer)]) -> RuleResult {
    let values: Vec<u8> = answers.iter().map(|(_, a)| a.confidence).collect();
    let (min, max) = (
        values.iter().copied().min().unwrap_or(0),
        values.iter().copied().max().unwrap_or(0),
    );
    let spread = if max == 0 {
        0.0
    } else {
        f64::from(max - min) / f64::from(max)
    };
    let fired = spread > CONFIDENCE_SPREAD;
    RuleResult {
        rule: "confidence".into(),
        fired,
        detail: format!(
            "confidences {}: spread {:.0} % {} {:.0} %",
            values
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            spread * 100.0,
            if fired { ">" } else { "≤" },
            CONFIDENCE_SPREAD * 100.0
        ),
    }
}

/// The terms of a panelist's primary evidence (its first item): words of four letters or
/// more, paths and names, lowercased, common words left out.
fn terms(answer: &PanelAnswer) -> BTreeSet<String> {
    const COMMON: &[&str] = &[
        "that", "this", "with", "from", "have", "which", "their", "would", "should", "there",
        "about", "more", "than", "been", "will", "into", "when", "what", "because", "these",
        "those", "also", "only", "very",
    ];
    let primary = answer.evidence.first().map_or("", String::as_str);
    primary
        .split(|c: char| !(c.is_alphanumeric() || "_./-".contains(c)))
        .map(|w| w.trim_matches(|c: char| ".-/".contains(c)).to_lowercase())
        .filter(|w| w.chars().count() >= 4 || w.contains('/') || w.contains('.'))
        .filter(|w| !COMMON.contains(&w.as_str()))
        .collect()
}

fn evidence(answers: &[(String, PanelAnswer)]) -> RuleResult {
    let sets: Vec<(&str, BTreeSet<String>)> = answers
        .iter()
        .map(|(m, a)| (m.as_str(), terms(a)))
        .collect();
    let mut worst: Option<(f64, String)> = None;
    for (i, (ma, a)) in sets.iter().enumerate() {
        for (mb, b) in &sets[i + 1..] {
            let union = a.union(b).count();
            let common = a.intersection(b).count();
            let overlap = if union == 0 {
                1.0
            } else {
                common as f64 / union as f64
            };
            let line = format!(
                "{ma} and {mb} share {common} of {union} evidence terms ({:.0} %)",
                overlap * 100.0
            );
            if worst.as_ref().is_none_or(|(w, _)| overlap < *w) {
                worst = Some((overlap, line));
            }
        }
    }
    let (overlap, line) = worst.unwrap_or((1.0, "fewer than two answers".into()));
    let fired = overlap < EVIDENCE_OVERLAP;
    RuleResult {
        rule: "evidence".into(),
        fired,
        detail: format!(
            "{line}; materially different below {:.0} %",
            EVIDENCE_OVERLAP * 100.0
        ),
    }
}

fn arbiter(assessment: Result<&InitialAssessment, &str>) -> RuleResult {
    match assessment {
        Ok(a) => RuleResult {
            rule: "arbiter".into(),
            fired: a.meaningful_disagreement,
            detail: format!(
                "initial assessment: {}{}",
                if a.meaningful_disagreement {
                    "meaningful disagreement"
                } else {
                    "no meaningful disagreement"
                },
                if a.why.trim().is_empty() {
                    String::new()
                } else {
                    format!(" ({})", crate::bounded::clip(a.why.trim(), 300))
                }
            ),
        },
        Err(why) => RuleResult {
            rule: "arbiter".into(),
            fired: false,
            detail: format!("no initial assessment: {why}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(stance: &str, confidence: u8, evidence: &str) -> PanelAnswer {
        PanelAnswer {
            stance: stance.into(),
            reasoning: String::new(),
            confidence,
            evidence: vec![evidence.into()],
        }
    }

    fn rules(answers: &[(&str, PanelAnswer)], flag: bool) -> Vec<RuleResult> {
        let owned: Vec<(String, PanelAnswer)> = answers
            .iter()
            .map(|(m, a)| (m.to_string(), a.clone()))
            .collect();
        let a = InitialAssessment {
            meaningful_disagreement: flag,
            why: String::new(),
        };
        evaluate(&owned, Ok(&a))
    }

    fn fired(rules: &[RuleResult]) -> Vec<&str> {
        rules
            .iter()
            .filter(|r| r.fired)
            .map(|r| r.rule.as_str())
            .collect()
    }

    const EV: &str = "benchmarks/sqlite_write.txt shows 40k inserts per second on one core";

    #[test]
    fn agreement_fires_no_rule() {
        let r = rules(
            &[("a", answer("Yes", 8, EV)), ("b", answer("go", 7, EV))],
            false,
        );
        assert!(fired(&r).is_empty(), "{r:?}");
        assert!(!diverged(&r));
        assert_eq!(r.len(), 4, "every rule is recorded");
    }

    #[test]
    fn each_rule_fires_alone() {
        let r = rules(
            &[("a", answer("yes", 8, EV)), ("b", answer("no-go", 8, EV))],
            false,
        );
        assert_eq!(fired(&r), ["stances"]);
        let r = rules(
            &[("a", answer("yes", 9, EV)), ("b", answer("yes", 5, EV))],
            false,
        );
        assert_eq!(fired(&r), ["confidence"]);
        assert!(r[1].detail.contains("44 %"), "{}", r[1].detail);
        let other = "customer interviews in docs/interviews.md ask for offline mode";
        let r = rules(
            &[("a", answer("yes", 8, EV)), ("b", answer("yes", 8, other))],
            false,
        );
        assert_eq!(fired(&r), ["evidence"]);
        let r = rules(
            &[("a", answer("yes", 8, EV)), ("b", answer("yes", 8, EV))],
            true,
        );
        assert_eq!(fired(&r), ["arbiter"]);
    }

    #[test]
    fn thirty_percent_is_not_more_than_thirty() {
        let r = rules(
            &[("a", answer("yes", 10, EV)), ("b", answer("yes", 7, EV))],
            false,
        );
        assert!(!r[1].fired, "{}", r[1].detail);
    }

    #[test]
    fn stances_normalize_to_what_they_decide() {
        assert_eq!(normalize_stance("Lean GO"), "yes");
        assert_eq!(normalize_stance("No go: too risky"), "no");
        assert_eq!(normalize_stance("NO-GO"), "no");
        assert_eq!(normalize_stance("Defer pending the load test"), "defer");
        assert_eq!(normalize_stance("Use PostgreSQL"), "use postgresql");
        assert_ne!(
            normalize_stance("Use SQLite"),
            normalize_stance("Use PostgreSQL")
        );
    }

    #[test]
    fn a_missing_assessment_is_recorded_not_fired() {
        let owned = vec![("a".to_string(), answer("yes", 8, EV))];
        let r = evaluate(&owned, Err("timed out"));
        assert!(!r[3].fired && r[3].detail.contains("timed out"));
    }
}
