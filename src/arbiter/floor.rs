//! The verdict a review's facts and counted issues support: the floor the deterministic
//! facts impose (a critical finding, a failing verify command, a confirmed probe), and the
//! verdict derived from the issues that count, where a claim about behaviour stands only on
//! what was shown.

use super::schema::{Category, Floor, Issue, Severity, Verdict};
use crate::code::Finding;
use crate::sandbox::CommandOutcome;

/// The finding kind of a stage summary naming a file or symbol its diff does not touch.
pub const UNSUPPORTED_CLAIM: &str = "unsupported_claim";

/// The finding kind of a TaskSpec requirement that the change visibly leaves undone (a file
/// it names left as it was, a function it names defined nowhere).
pub const UNMET_REQUIREMENT: &str = "unmet_requirement";

/// The minimum verdict the facts impose: a critical finding (an unresolved import, a new
/// syntax error, a weakened test, a failing example, a typed requirement left undone, a
/// call that returned at the base and now raises or never returns, a documented result a
/// change that keeps behaviour changed) or a failing verify command is at least REJECT; a
/// claim the diff does not back, any other requirement gap, a changed behaviour no
/// requirement asked for or where the change says behaviour stays, or a verify command
/// that ran (or was refused) without the box's filesystem layer is at least FLAG.
pub fn floor(findings: &[Finding], verify: Option<&CommandOutcome>) -> Option<Floor> {
    let mut reasons = Vec::new();
    let mut verdict = None;
    for f in findings.iter().filter(|f| f.severity == "critical") {
        reasons.push(match (f.path.as_str(), f.line) {
            ("", _) => format!("{}: {}", f.kind, f.reason),
            (path, 0) => format!("{} in {path}: {}", f.kind, f.reason),
            (path, line) => format!("{} at {path}:{line}: {}", f.kind, f.reason),
        });
        verdict = Some(Verdict::Reject);
    }
    for f in findings.iter().filter(|f| {
        f.kind == UNSUPPORTED_CLAIM
            || f.kind == UNMET_REQUIREMENT
            || f.kind == crate::probe::UNGUARDED
            || f.kind == crate::probe::UNASKED_CHANGE
            || f.kind == crate::probe::BEHAVIOUR_CHANGED
    }) {
        reasons.push(f.reason.clone());
        verdict = Some(verdict.unwrap_or(Verdict::Flag).max(Verdict::Flag));
    }
    if let Some(why) = verify.and_then(CommandOutcome::unguarded) {
        reasons.push(format!("the verify command {why}"));
        verdict = Some(verdict.unwrap_or(Verdict::Flag).max(Verdict::Flag));
    }
    if let Some(v) = verify.filter(|v| !v.refused()) {
        if v.exit_code != Some(0) {
            reasons.push(format!(
                "verify command `{}` {}",
                v.command,
                match (v.timed_out, v.exit_code) {
                    (true, _) => "timed out".to_string(),
                    (false, Some(c)) => format!("exited with {c}"),
                    (false, None) => "was killed".to_string(),
                }
            ));
            verdict = Some(Verdict::Reject);
        }
    }
    verdict.map(|verdict| Floor { verdict, reasons })
}

/// The floor a counted issue its probe confirmed imposes: a defect shown by running the code
/// is at least REJECT, whatever the model answered.
pub(super) fn confirmed_floor(issues: &[Issue]) -> Option<Floor> {
    let reasons: Vec<String> = issues
        .iter()
        .filter(|i| i.demoted.is_none() && i.confirmed())
        .filter_map(|i| {
            let p = i.probe.as_ref()?;
            Some(format!(
                "{} in {}: its probe confirms it ({})",
                crate::bounded::clip(&i.description, 120),
                i.path,
                p.result.counterexample()
            ))
        })
        .collect();
    (!reasons.is_empty()).then_some(Floor {
        verdict: Verdict::Reject,
        reasons,
    })
}

/// Two floors as one: the higher verdict, every reason.
pub(super) fn raise(a: Option<Floor>, b: Option<Floor>) -> Option<Floor> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.verdict = a.verdict.max(b.verdict);
            a.reasons.extend(b.reasons);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// Whether an issue that counts stands as shown: a tool finding, a model claim its probe
/// confirmed or that cites a fact of the review (a behaviour diff's difference), or an
/// anchored claim of a kind no probe can show (security, pattern). Any
/// other model claim is a reviewer's word about behaviour, which supports at most FLAG.
fn shown(issue: &Issue) -> bool {
    issue.source != "model"
        || issue.confirmed()
        || issue.fact.is_some()
        || matches!(issue.category, Category::Security | Category::Pattern)
}

/// The verdict the issues that count support: critical → REJECT, warning → FLAG, none →
/// APPROVE, where a critical claim about behaviour stands only on a confirmed probe (else
/// it supports FLAG); a HALT stands only on a surviving critical issue that is shown. It
/// never exceeds the model's own verdict (the floor raises; this only withholds what
/// nothing backs). `None` when it equals the model's verdict and nothing was demoted,
/// merged or capped.
pub(super) fn derive(
    model: Verdict,
    issues: &[Issue],
    merged: usize,
    by_evidence: bool,
) -> Option<Floor> {
    let counted: Vec<&Issue> = issues.iter().filter(|i| i.demoted.is_none()).collect();
    let support = |i: &Issue| {
        let v = match i.severity {
            Severity::Critical => Verdict::Reject,
            Severity::Warning => Verdict::Flag,
            Severity::Suggestion => Verdict::Approve,
        };
        if shown(i) || !by_evidence {
            v
        } else {
            v.min(Verdict::Flag)
        }
    };
    let supported = counted
        .iter()
        .map(|i| support(i))
        .max()
        .unwrap_or(Verdict::Approve);
    let verdict = if model == Verdict::Halt && supported == Verdict::Reject {
        Verdict::Halt
    } else {
        model.min(supported)
    };
    let mut reasons = Vec::new();
    let refuted = issues.iter().filter(|i| i.refuted()).count();
    let unfounded = issues.iter().filter(|i| i.demoted.is_some()).count() - refuted;
    if unfounded > 0 {
        reasons.push(format!(
            "{unfounded} issue(s) rest on nothing in the reviewed change and do not count"
        ));
    }
    if refuted > 0 {
        reasons.push(format!(
            "{refuted} issue(s) checked by their probes: not defects"
        ));
    }
    let confirmed = counted.iter().filter(|i| i.confirmed()).count();
    if confirmed > 0 {
        reasons.push(format!("{confirmed} issue(s) confirmed by their probes"));
    }
    let capped = counted
        .iter()
        .filter(|i| by_evidence && i.severity == Severity::Critical && !shown(i))
        .count();
    if capped > 0 {
        reasons.push(format!(
            "{capped} critical claim(s) about behaviour without a confirmed probe support at most FLAG"
        ));
    }
    if merged > 0 {
        reasons.push(format!("{merged} repeated issue(s) merged"));
    }
    if verdict < model {
        reasons.push(format!(
            "the issues that count support {verdict}, not {model}"
        ));
    }
    (verdict != model || !reasons.is_empty()).then_some(Floor { verdict, reasons })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arbiter::schema::IssueProbe;
    use crate::probe::{ProbeOutcome, ProbeResult};

    fn issue(severity: Severity, category: Category, probe: Option<ProbeOutcome>) -> Issue {
        let shown = |outcome| IssueProbe {
            code: "assert f()".into(),
            result: ProbeResult {
                detail: String::new(),
                ..ProbeResult::unprobed("")
            }
            .with(outcome),
        };
        Issue {
            severity,
            category,
            probe: probe.map(shown),
            ..Issue::sample("d")
        }
    }

    fn derived(model: Verdict, issues: &[Issue]) -> Verdict {
        derive(model, issues, 0, true).map_or(model, |d| d.verdict)
    }

    #[test]
    fn a_behavioural_rejection_stands_only_on_a_confirmed_probe() {
        use Category::*;
        use ProbeOutcome::*;
        use Severity::*;
        let crit = |p| issue(Critical, Logic, p);
        assert_eq!(
            derived(Verdict::Reject, &[crit(Some(Confirmed))]),
            Verdict::Reject
        );
        assert_eq!(
            derived(Verdict::Halt, &[crit(Some(Confirmed))]),
            Verdict::Halt
        );
        for unshown in [None, Some(Broken), Some(Unprobed)] {
            assert_eq!(
                derived(Verdict::Reject, &[crit(unshown)]),
                Verdict::Flag,
                "{unshown:?}"
            );
            assert_eq!(
                derived(Verdict::Halt, &[crit(unshown)]),
                Verdict::Flag,
                "{unshown:?}"
            );
        }
        // Security and pattern issues stand anchored: no probe can show them.
        assert_eq!(
            derived(Verdict::Reject, &[issue(Critical, Security, None)]),
            Verdict::Reject
        );
        assert_eq!(
            derived(Verdict::Halt, &[issue(Critical, Pattern, None)]),
            Verdict::Halt
        );
        // A refuted claim is demoted by finish(); what is left supports nothing.
        let mut refuted = crit(Some(Refuted));
        refuted.demoted = Some("checked".into());
        assert_eq!(derived(Verdict::Reject, &[refuted]), Verdict::Approve);
        // The model's own verdict is the most the issues can support.
        assert_eq!(
            derived(Verdict::Flag, &[crit(Some(Confirmed))]),
            Verdict::Flag
        );
        assert_eq!(derived(Verdict::Approve, &[]), Verdict::Approve);
        // A tool finding is a fact, probe or not.
        let mut tool = crit(None);
        tool.source = "tool".into();
        assert_eq!(derived(Verdict::Reject, &[tool]), Verdict::Reject);
        // Warnings flag; suggestions approve.
        assert_eq!(
            derived(Verdict::Reject, &[issue(Warning, Logic, None)]),
            Verdict::Flag
        );
        assert_eq!(
            derived(Verdict::Flag, &[issue(Suggestion, Logic, None)]),
            Verdict::Approve
        );
        // Without probes (the bench's other derivation), an anchored claim counts at its
        // severity.
        assert_eq!(
            derive(Verdict::Reject, &[crit(None)], 0, false).map_or(Verdict::Reject, |d| d.verdict),
            Verdict::Reject
        );
    }

    #[test]
    fn the_floor_raises_what_the_facts_show() {
        let finding = |kind: &str, severity: &str| Finding {
            kind: kind.into(),
            category: "logic".into(),
            severity: severity.into(),
            path: "a.py".into(),
            line: 1,
            end_line: 1,
            symbol: None,
            import: None,
            reason: "r".into(),
        };
        assert_eq!(floor(&[], None), None);
        let f = floor(&[finding("syntax_error", "critical")], None).unwrap();
        assert_eq!(f.verdict, Verdict::Reject);
        let f = floor(&[finding(UNMET_REQUIREMENT, "warning")], None).unwrap();
        assert_eq!(f.verdict, Verdict::Flag);
        // Model-written code that ran without the box, or not at all for want of it.
        let f = floor(&[finding(crate::probe::UNGUARDED, "warning")], None).unwrap();
        assert_eq!(f.verdict, Verdict::Flag);
        let failing = CommandOutcome::ended("make test", Some(2), "");
        let f = floor(&[], Some(&failing)).unwrap();
        assert_eq!(
            (f.verdict, f.reasons[0].as_str()),
            (Verdict::Reject, "verify command `make test` exited with 2")
        );
    }
}
