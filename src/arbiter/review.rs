//! What one arbiter review counts for: the answer re-anchored on the code, each claim held to
//! its probe or the fact it cites, repeats merged, and the verdict the facts and the issues
//! that count support ([`super::floor`]). (What the arbiter is asked is [`super::request`].)

use super::anchor::anchor;
use super::floor::{confirmed_floor, derive, floor, raise, UNMET_REQUIREMENT, UNSUPPORTED_CLAIM};
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
