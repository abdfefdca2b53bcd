//! What one arbiter review counts for: the answer re-anchored on the code, each claim held to
//! its probe, the deterministic floor, and the verdict derived from what was shown. (What the
//! arbiter is asked is [`super::request`].)

use super::anchor::anchor;
use super::schema::{
    ArbiterAnswer, ArbiterReview, Category, Floor, Issue, IssueAnswer, IssueProbe, Severity,
    Verdict,
};
use crate::code::{self, Finding, Lang};
use crate::probe::{ProbeOutcome, ProbeResult, ProbeRunner, ProbeSpec};
use crate::sandbox::CommandOutcome;

/// Turns a tool finding into an issue of the review.
pub fn finding_issue(f: &Finding) -> Issue {
    Issue {
        severity: if f.severity == "critical" {
            Severity::Critical
        } else {
            Severity::Warning
        },
        category: if f.category == "hallucination" {
            Category::Hallucination
        } else {
            Category::Logic
        },
        path: f.path.clone(),
        start_line: Some(f.line),
        end_line: Some(f.end_line.max(f.line)),
        quote: f.import.clone().unwrap_or_default(),
        description: f.reason.clone(),
        suggestion: match f.kind.as_str() {
            "syntax_error" => "fix the syntax so the file parses".into(),
            UNSUPPORTED_CLAIM => "make the change the summary describes, or describe only the change that was made".into(),
            UNMET_REQUIREMENT => "make the change the requirement names".into(),
            crate::code::WEAKENED_TEST => "restore the test as the base had it and fix the code instead (a test may not be changed to agree with the code)".into(),
            crate::probe::FAILING_EXAMPLE => "make the call return the value the task's example gives".into(),
            crate::probe::UNRUNNABLE_EXAMPLE => "define the function the example calls where it can be imported".into(),
            crate::probe::UNGUARDED => "run git triad where the box has its filesystem layer (git triad doctor)".into(),
            crate::probe::UNASKED_CHANGE => "keep what functions no requirement names do as it was".into(),
            crate::probe::BEHAVIOUR_REGRESSION => "make the call return as it did at the base: it must not raise or run forever".into(),
            crate::probe::BEHAVIOUR_CHANGED => "keep the results the same, as a change that keeps behaviour must (or say in the message that it changes behaviour)".into(),
            _ => "import only modules that exist in the repository, the standard library or the declared dependencies (declare new dependencies explicitly)".into(),
        },
        evidence: format!("deterministic check ({})", f.kind),
        anchored: true,
        symbol: f.symbol.clone(),
        source: "tool".into(),
        demoted: None,
        probe: None,
        fact: None,
    }
}

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
fn confirmed_floor(issues: &[Issue]) -> Option<Floor> {
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

/// FLAG when the review's probes ran without the box's filesystem layer (the user's own
/// configuration allowed it): what they showed was not decided inside the box.
fn unguarded_probes(checks: &Checks<'_>) -> Option<Floor> {
    let Probes::Run(runner) = checks.probes else {
        return None;
    };
    let layers = runner.layers()?;
    (!layers.filesystem.held).then(|| Floor {
        verdict: Verdict::Flag,
        reasons: vec![format!(
            "probes ran without the filesystem layer of the box: {}",
            layers.filesystem.detail
        )],
    })
}

/// Anchors `issue` to the function the behaviour diff's difference `d` it cites is about.
/// When the facts fault that difference (`faulted`: a regression, a change where behaviour
/// was to stay, a change no requirement asked for) the issue stands on it as on a confirmed
/// probe; otherwise it only shows that the result changed, which a fix is meant to do, and
/// is a claim like any other.
fn cite(issue: &mut Issue, d: &crate::probe::Difference, faulted: bool) {
    issue.path = d.path.clone();
    issue.start_line = Some(d.line);
    issue.end_line = Some(d.end_line.max(d.line));
    issue.anchored = true;
    issue.symbol = Some(crate::code::Symbol {
        kind: "function".into(),
        name: d.function().to_string(),
        start_line: d.line,
        end_line: d.end_line.max(d.line),
    });
    issue.demoted = None;
    issue.fact = faulted.then(|| format!("behaviour diff: {}", d.shown()));
}

/// Whether the facts fault the function of the behaviour diff's difference `d`: one of the
/// behaviour findings is about it.
fn faulted(findings: &[Finding], d: &crate::probe::Difference) -> bool {
    findings.iter().any(|f| {
        [
            crate::probe::BEHAVIOUR_REGRESSION,
            crate::probe::BEHAVIOUR_CHANGED,
            crate::probe::UNASKED_CHANGE,
        ]
        .contains(&f.kind.as_str())
            && f.path == d.path
            && f.symbol.as_ref().is_some_and(|s| s.name == d.function())
    })
}

/// Two floors as one: the higher verdict, every reason.
fn raise(a: Option<Floor>, b: Option<Floor>) -> Option<Floor> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.verdict = a.verdict.max(b.verdict);
            a.reasons.extend(b.reasons);
            Some(a)
        }
        (a, b) => a.or(b),
    }
}

/// The file of the reviewed tree an issue's `written` path names, as git spells it, with its
/// text: the path as written (bytes: `~evil.py`, `a:b.py` and a name with a line break are
/// names git allows), git's quoted spelling of it unquoted (`"a\nb.py"`), then as written
/// with blanks around or a leading `./`. Never through the rules for paths a model may
/// write to: whoever commits a file chooses its name, and a name git allows is never a
/// reason to set an issue aside.
pub fn file_of(written: &str, read: &dyn Fn(&str) -> Option<String>) -> Option<(String, String)> {
    let trimmed = written.trim();
    let candidates = [
        Some(written.to_string()),
        crate::git::quote::unquote(written),
        crate::git::quote::unquote(trimmed),
        (written.contains('\\'))
            .then(|| crate::git::quote::unquote(&format!("\"{written}\"")))
            .flatten(),
        Some(trimmed.to_string()),
        trimmed.strip_prefix("./").map(str::to_string),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|p| read(&p).map(|text| (p, text)))
}

/// Re-anchors one model issue against the reviewed file text; `path` is the file of the
/// reviewed tree it names ([`file_of`]), when it names one.
pub fn anchor_issue(a: &IssueAnswer, path: Option<&str>, text: Option<&str>) -> Issue {
    let path = path.unwrap_or(&a.path).to_string();
    let found = text.and_then(|t| anchor(t, &a.quote, a.start_line));
    let symbol = match (found, text, Lang::from_path(&path)) {
        (Some((s, e)), Some(t), Some(lang)) => code::innermost(lang, t, s, e),
        _ => None,
    };
    Issue {
        severity: a.severity,
        category: a.category,
        path,
        start_line: found.map(|f| f.0),
        end_line: found.map(|f| f.1),
        quote: a.quote.clone(),
        description: a.description.clone(),
        suggestion: a.suggestion.clone(),
        evidence: a.evidence.clone(),
        anchored: found.is_some(),
        symbol,
        source: "model".into(),
        demoted: None,
        probe: None,
        fact: None,
    }
}

/// The finding kind of a stage summary naming a file or symbol its diff does not touch.
pub const UNSUPPORTED_CLAIM: &str = "unsupported_claim";

/// The finding kind of a TaskSpec requirement that the change visibly leaves undone (a file
/// it names left as it was, a function it names defined nowhere).
pub const UNMET_REQUIREMENT: &str = "unmet_requirement";

/// What a review's issues are checked against: the reviewed files, the tool findings,
/// the verify command's result, the TaskSpec's requirement ids, and the probe runner for
/// the reviewed tree (`None` where nothing runs, e.g. an architect's scaffold).
pub struct Checks<'a> {
    /// The text of a reviewed file, by path.
    pub read: &'a dyn Fn(&str) -> Option<String>,
    /// Deterministic findings.
    pub findings: &'a [Finding],
    /// The verify command's result, when it ran.
    pub verify: Option<&'a CommandOutcome>,
    /// Requirement ids an issue may name instead of a quote.
    pub requirement_ids: &'a [String],
    /// What becomes of the issues' probes.
    pub probes: Probes<'a>,
    /// The change's behaviour diff, when one was taken.
    pub behaviour: Option<&'a crate::probe::BehaviourDiff>,
}

/// What a review does with its issues' probes.
#[derive(Clone, Copy)]
pub enum Probes<'a> {
    /// Run them; a behavioural claim stands only on a confirmed probe.
    Run(&'a ProbeRunner<'a>),
    /// Do not run them, for this reason; a behavioural claim still needs a confirmed probe,
    /// so it supports at most FLAG.
    NotRun(&'a str),
    /// Neither run them nor ask for them: the verdict is derived as if probes did not exist
    /// (`git triad bench` measures reviews both ways on the same answers).
    Ignored,
}

/// Completes a review: re-anchor the model's issues in the reviewed files, demote those that
/// rest on nothing (a quote not in the file, a path not in the change) and merge repeats,
/// run every issue's probe (a confirmed one makes its issue stand wherever its quote was;
/// one that refutes it, or fails the same way on the base, demotes it), add the tool
/// findings as issues, derive the verdict the surviving issues support, and apply the floor
/// (the facts', and REJECT for a confirmed probe).
pub fn finish(
    stage: &str,
    reviewed_model: &str,
    arbiter_model: &str,
    answer: ArbiterAnswer,
    checks: &Checks<'_>,
    token_cost: f64,
) -> ArbiterReview {
    let mut issues: Vec<Issue> = checks.findings.iter().map(finding_issue).collect();
    let mut merged = 0;
    let mut probed: Vec<(usize, ProbeSpec)> = Vec::new();
    for a in &answer.issues {
        let (path, text) = file_of(&a.path, checks.read).unzip();
        let mut issue = anchor_issue(a, path.as_deref(), text.as_deref());
        // An issue that cites a difference of the behaviour diff stands on it, at the
        // function the difference is about, whatever its quote.
        let cited = checks
            .behaviour
            .and_then(|b| b.cited(&format!("{} {} {}", a.description, a.evidence, a.quote)));
        if let Some(d) = cited.filter(|d| !d.path.is_empty() && d.line > 0) {
            cite(&mut issue, d, faulted(checks.findings, d));
            issues.push(issue);
            continue;
        }
        issue.demoted = match (&text, issue.anchored) {
            (None, _) => Some(format!(
                "{} is not a file of the reviewed change",
                crate::git::quote::quote(&issue.path)
            )),
            (Some(_), false) if !names_requirement(&issue, checks.requirement_ids) => {
                Some(format!("its quote is not in {}", issue.path))
            }
            _ => None,
        };
        if issues.iter().any(|i| same_issue(i, &issue)) {
            merged += 1;
            continue;
        }
        // Execution decides whether a claim is about the code, not its quote: a probe runs
        // on any file of the reviewed tree.
        if text.is_some() && !a.probe.trim().is_empty() {
            probed.push((
                issues.len(),
                ProbeSpec {
                    path: issue.path.clone(),
                    code: a.probe.clone(),
                },
            ));
        } else if !a.probe.trim().is_empty() {
            issue.probe = Some(IssueProbe {
                code: a.probe.clone(),
                result: ProbeResult::unprobed(
                    "not run: the issue names no file of the reviewed tree",
                ),
            });
        }
        issues.push(issue);
    }
    let specs: Vec<ProbeSpec> = probed.iter().map(|(_, p)| p.clone()).collect();
    let results = match checks.probes {
        Probes::Run(runner) => runner.run(&specs),
        Probes::NotRun(why) => specs.iter().map(|_| ProbeResult::unprobed(why)).collect(),
        Probes::Ignored => Vec::new(),
    };
    for ((at, spec), result) in probed.into_iter().zip(results) {
        let issue = &mut issues[at];
        match result.outcome {
            ProbeOutcome::Refuted => {
                issue.demoted = Some(format!(
                    "checked: its probe passes against the reviewed code, so the claimed defect does not happen ({})",
                    result.detail
                ));
            }
            ProbeOutcome::Confirmed
                if result.same_at_base() && !names_requirement(issue, checks.requirement_ids) =>
            {
                issue.demoted = Some(format!(
                    "its probe fails the same way on the base ({}): the change did not alter this behaviour",
                    result.counterexample()
                ));
            }
            // A claim its probe confirms stands, wherever its quote was.
            ProbeOutcome::Confirmed => issue.demoted = None,
            _ => {}
        }
        issue.probe = Some(IssueProbe {
            code: spec.code,
            result,
        });
    }
    issues.sort_by_key(|i| (i.demoted.is_some(), !i.confirmed(), i.severity));
    let by_evidence = !matches!(checks.probes, Probes::Ignored);
    let derived = derive(answer.verdict, &issues, merged, by_evidence);
    let acted = derived.as_ref().map_or(answer.verdict, |d| d.verdict);
    let floor = raise(
        floor(checks.findings, checks.verify),
        confirmed_floor(&issues),
    );
    let floor = raise(floor, unguarded_probes(checks));
    let verdict = match &floor {
        Some(f) => acted.max(f.verdict),
        None => acted,
    };
    ArbiterReview {
        stage: stage.to_string(),
        reviewed_model: reviewed_model.to_string(),
        arbiter_model: arbiter_model.to_string(),
        verdict,
        model_verdict: answer.verdict,
        floor: floor.filter(|f| f.verdict > acted),
        derived,
        issues,
        alternatives: answer.alternatives,
        confidence: answer.confidence,
        reasoning: answer.reasoning,
        token_cost,
        coverage: None,
        sandbox: match checks.probes {
            Probes::Run(runner) => runner.layers(),
            _ => None,
        },
        behaviour: checks
            .behaviour
            .filter(|b| !b.functions.is_empty())
            .cloned(),
        tests: None,
    }
}

/// Takes the model's issues a person already answered out of the verdict: each one `answered`
/// gives a reason for is demoted with it (kept, shown as not counting), and the verdict is
/// derived again from what remains as `finish` derives it (`by_evidence`: behavioural claims
/// stand only on confirmed probes), floored by the same `findings` (deterministic findings
/// are never set aside).
pub fn set_aside(
    review: &mut ArbiterReview,
    answered: &dyn Fn(&Issue) -> Option<String>,
    findings: &[Finding],
    by_evidence: bool,
) -> usize {
    let mut n = 0;
    for issue in review
        .issues
        .iter_mut()
        .filter(|i| i.source == "model" && i.demoted.is_none())
    {
        if let Some(why) = answered(issue) {
            issue.demoted = Some(why);
            n += 1;
        }
    }
    if n == 0 {
        return 0;
    }
    let merged: Vec<String> = review
        .derived
        .iter()
        .flat_map(|d| d.reasons.iter())
        .filter(|r| r.contains("merged"))
        .cloned()
        .collect();
    let mut derived = derive(review.model_verdict, &review.issues, 0, by_evidence);
    if let Some(d) = derived.as_mut() {
        // The issues set aside are not among those that rest on nothing.
        let unfounded = review
            .issues
            .iter()
            .filter(|i| i.demoted.is_some() && !i.refuted())
            .count()
            - n;
        d.reasons.retain(|r| !r.contains("rest on nothing"));
        if unfounded > 0 {
            d.reasons.insert(
                0,
                format!(
                    "{unfounded} issue(s) rest on nothing in the reviewed change and do not count"
                ),
            );
        }
        d.reasons.extend(merged);
        d.reasons.push(format!(
            "{n} finding(s) a person already overrode on the same lines do not count"
        ));
    }
    let acted = derived.as_ref().map_or(review.model_verdict, |d| d.verdict);
    let floor = raise(floor(findings, None), confirmed_floor(&review.issues));
    review.verdict = floor.as_ref().map_or(acted, |f| acted.max(f.verdict));
    review.floor = floor.filter(|f| f.verdict > acted);
    review.derived = derived;
    n
}

/// Whether an issue without an anchor names a requirement of the TaskSpec (`R2`): a missing
/// requirement has no code to quote.
fn names_requirement(issue: &Issue, ids: &[String]) -> bool {
    let words = |t: &str| -> Vec<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .map(str::to_string)
            .collect()
    };
    let text = format!("{} {}", issue.description, issue.quote);
    let found = words(&text);
    ids.iter().any(|id| found.contains(id))
}

/// Two issues are one when they point at the same place for the same reason.
fn same_issue(a: &Issue, b: &Issue) -> bool {
    let norm = |t: &str| {
        t.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    a.path == b.path
        && (norm(&a.description) == norm(&b.description)
            || (a.anchored
                && b.anchored
                && a.start_line == b.start_line
                && a.end_line == b.end_line
                && norm(&a.quote) == norm(&b.quote)))
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
fn derive(model: Verdict, issues: &[Issue], merged: usize, by_evidence: bool) -> Option<Floor> {
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
