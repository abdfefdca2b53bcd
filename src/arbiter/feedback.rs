//! Feedback the arbiter's verdicts inject into stage prompts (seed 000 §B7).

use super::schema::{Alternative, Issue, Severity};

fn location(i: &Issue) -> String {
    let mut s = i.path.clone();
    match (i.start_line, i.end_line) {
        (Some(a), Some(b)) if a == b => s.push_str(&format!(":{a}")),
        (Some(a), Some(b)) => s.push_str(&format!(":{a}-{b}")),
        _ => s.push_str(" (whole file)"),
    }
    if let Some(sym) = &i.symbol {
        s.push_str(&format!(" in {} {}", sym.kind, sym.name));
    }
    s
}

fn category(i: &Issue) -> String {
    serde_json::to_value(i.category)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn issue_list(issues: &[&Issue]) -> String {
    let mut s = String::new();
    for (n, i) in issues.iter().enumerate() {
        s.push_str(&format!(
            "{}. [{}] {}\n",
            n + 1,
            category(i),
            i.description.trim()
        ));
        s.push_str(&format!("   Location: {}\n", location(i)));
        if !i.evidence.trim().is_empty() {
            s.push_str(&format!("   Evidence: {}\n", i.evidence.trim()));
        }
        if !i.suggestion.trim().is_empty() {
            s.push_str(&format!("   Suggested fix: {}\n", i.suggestion.trim()));
        }
    }
    s
}

/// Issues sorted most severe first (stable), so tight context windows keep what matters.
pub fn by_severity(issues: &[Issue]) -> Vec<&Issue> {
    let mut v: Vec<&Issue> = issues.iter().collect();
    v.sort_by_key(|i| i.severity);
    v
}

/// The REJECT feedback block for retry `n` of `max`.
pub fn reject_block(n: u32, max: u32, issues: &[Issue], alternatives: &[Alternative]) -> String {
    let mut s = format!(
        "## ARBITER FEEDBACK (Retry {n} of {max})\n\nYour previous output was REJECTED by the independent Arbiter.\nYou MUST address the following issues in your revised output.\n"
    );
    let confirmed: Vec<&Issue> = issues.iter().filter(|i| i.confirmed()).collect();
    if !confirmed.is_empty() {
        s.push_str("\n### COUNTEREXAMPLES (each was run against your code and fails)\n");
        for (n, i) in confirmed.iter().enumerate() {
            let result = i
                .probe
                .as_ref()
                .map(|p| p.result.counterexample())
                .unwrap_or_default();
            s.push_str(&format!(
                "{}. {result}\n   ({}; {})\n",
                n + 1,
                i.description.trim(),
                location(i)
            ));
        }
    }
    // A claim its probe refuted is listed apart, so the builder does not chase it.
    let sorted: Vec<&Issue> = by_severity(issues)
        .into_iter()
        .filter(|i| !i.refuted())
        .collect();
    for (sev, title) in [
        (Severity::Critical, "CRITICAL ISSUES (must fix)"),
        (Severity::Warning, "WARNINGS (should fix)"),
        (Severity::Suggestion, "SUGGESTIONS (consider)"),
    ] {
        let group: Vec<&Issue> = sorted
            .iter()
            .copied()
            .filter(|i| i.severity == sev)
            .collect();
        if !group.is_empty() {
            s.push_str(&format!("\n### {title}\n"));
            s.push_str(&issue_list(&group));
        }
    }
    let refuted: Vec<&Issue> = issues.iter().filter(|i| i.refuted()).collect();
    if !refuted.is_empty() {
        s.push_str("\n### CHECKED: NOT A DEFECT (a probe ran and passed; do not change the code for these)\n");
        for (n, i) in refuted.iter().enumerate() {
            s.push_str(&format!(
                "{}. {} ({})\n",
                n + 1,
                i.description.trim(),
                location(i)
            ));
        }
    }
    if !alternatives.is_empty() {
        s.push_str(
            "\n### ALTERNATIVES TO CONSIDER\nThe Arbiter suggests these alternative approaches:\n",
        );
        for (n, a) in alternatives.iter().enumerate() {
            s.push_str(&format!(
                "{}. {} (confidence: {:.2})\n   Rationale: {}\n",
                n + 1,
                a.description.trim(),
                a.confidence,
                a.rationale.trim()
            ));
            if !a.code_sketch.trim().is_empty() {
                s.push_str(&format!("   Sketch: {}\n", a.code_sketch.trim()));
            }
        }
    }
    s
}

/// The FLAG block injected into the next stage.
pub fn flag_block(stage: &str, issues: &[Issue]) -> String {
    if issues.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "## FLAGGED BY THE ARBITER AFTER THE {} STAGE\n\nThese issues did not stop the pipeline; fix them as part of your stage.\n\n",
        stage.to_uppercase()
    );
    s.push_str(&issue_list(&by_severity(issues)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issue(sev: Severity, d: &str) -> Issue {
        Issue {
            severity: sev,
            start_line: Some(3),
            end_line: Some(4),
            quote: String::new(),
            suggestion: "fix".into(),
            evidence: "seen".into(),
            ..Issue::sample(d)
        }
    }

    #[test]
    fn critical_issues_come_first() {
        let b = reject_block(
            1,
            2,
            &[
                issue(Severity::Warning, "warn"),
                issue(Severity::Critical, "crit"),
            ],
            &[],
        );
        assert!(b.starts_with("## ARBITER FEEDBACK (Retry 1 of 2)"));
        let c = b.find("crit").unwrap();
        let w = b.find("warn").unwrap();
        assert!(c < w, "{b}");
        assert!(b.contains("Location: a.py:3-4"));
    }
}

#[cfg(test)]
mod probe_tests {
    use super::*;
    use crate::arbiter::schema::IssueProbe;
    use crate::probe::{ProbeOutcome, ProbeResult};

    fn probed(d: &str, outcome: ProbeOutcome, actual: &str) -> Issue {
        Issue {
            probe: Some(IssueProbe {
                code: "assert add(2, 3) == 5".into(),
                result: ProbeResult {
                    outcome,
                    detail: String::new(),
                    call: Some("add(2, 3)".into()),
                    expected: Some("5".into()),
                    actual: Some(actual.into()),
                    base: None,
                },
            }),
            ..Issue::sample(d)
        }
    }

    #[test]
    fn confirmed_probes_lead_as_counterexamples_and_refuted_claims_are_set_apart() {
        let b = reject_block(
            1,
            2,
            &[
                probed("empty input breaks it", ProbeOutcome::Refuted, "5"),
                probed("add subtracts", ProbeOutcome::Confirmed, "-1"),
            ],
            &[],
        );
        let counter = b.find("### COUNTEREXAMPLES").unwrap();
        let critical = b.find("### CRITICAL ISSUES").unwrap();
        let checked = b.find("### CHECKED: NOT A DEFECT").unwrap();
        assert!(counter < critical && critical < checked, "{b}");
        assert!(b.contains("1. add(2, 3): expected 5, got -1\n"), "{b}");
        // The refuted claim is only under CHECKED.
        assert_eq!(b.matches("empty input breaks it").count(), 1, "{b}");
        assert!(b[checked..].contains("empty input breaks it"), "{b}");
    }
}
