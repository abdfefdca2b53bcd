//! Implementation Summary Reconciliation (seed 000 §B11): did the run build what the
//! committed TaskSpec asked for? Facts first (files, tests, requirement ids), then a
//! reconciliation arbiter that must differ from the verifier.

use std::collections::BTreeSet;

use git2::{Oid, Repository};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::arbiter::{Floor, Verdict};
use crate::code::{self, Lang};
use crate::git::{self, TreeFiles};
use crate::model::structured::schema_for;
use crate::model::ChatRequest;
use crate::task::TaskSpec;

pub use crate::arbiter::reconciliation::{CheckKind, CheckResult, Facts, RequirementStatus};

/// A requirement and what delivers it, as the verifier claims.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequirementEvidence {
    /// `R1`.
    #[serde(default)]
    pub id: String,
    /// File, function or test that delivers it.
    #[serde(default)]
    pub evidence: String,
}

/// An intentional departure from the spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    /// What changed or was left out.
    #[serde(default)]
    pub what: String,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// Which stage introduced it.
    #[serde(default)]
    pub stage: String,
}

/// The verifier's manifest of what was built (seed 000 §B11.3), read leniently.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ImplementationSummary {
    /// The verifier's restatement of the task.
    pub task_echo: String,
    /// Requirement id → evidence.
    pub requirements: Vec<RequirementEvidence>,
    /// API routes / CLI commands.
    pub endpoints_implemented: Vec<String>,
    /// Data models.
    pub schemas_created: Vec<String>,
    /// New files.
    pub files_created: Vec<String>,
    /// Changed files.
    pub files_modified: Vec<String>,
    /// Behaviours.
    pub behaviors_implemented: Vec<String>,
    /// Tests, by name.
    pub test_coverage: Vec<String>,
    /// Intentional departures.
    pub deviations: Vec<Deviation>,
    /// Spec items not implemented.
    pub omissions: Vec<String>,
    /// Ids of the accepted cross-domain suggestions the output reflects (`S1`, ...).
    pub suggestions_applied: Vec<String>,
}

/// The name a test entry refers to: `tests/test_a.py::test_x` → `test_x`, `Suite.test_y` →
/// `test_y`; `None` for prose ("checks that ...").
pub fn test_name(entry: &str) -> Option<String> {
    let t = entry.trim().trim_matches('`');
    if t.is_empty() || t.contains(char::is_whitespace) {
        return None;
    }
    let last = t
        .rsplit("::")
        .next()
        .unwrap_or(t)
        .rsplit('.')
        .next()
        .unwrap_or(t)
        .trim_end_matches("()");
    let ok = !last.is_empty()
        && last
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
        && last.chars().all(|c| c.is_alphanumeric() || c == '_');
    ok.then(|| last.to_string())
}

/// The file a test entry names as a whole (`tests/test_calc.py`, `test_calc.py`), not a
/// test in it (`tests/test_calc.py::test_sub`); `None` for a test name or prose.
pub fn test_file(entry: &str) -> Option<String> {
    let t = entry.trim().trim_matches('`');
    let file = !t.is_empty()
        && !t.contains(char::is_whitespace)
        && !t.contains("::")
        && (t.contains('/') || Lang::from_path(t).is_some());
    file.then(|| t.trim_start_matches("./").to_string())
}

/// Checks the summary against the final tree and the TaskSpec.
pub fn facts(
    repo: &Repository,
    base: Oid,
    final_commit: Oid,
    spec: &TaskSpec,
    summary: Option<&ImplementationSummary>,
) -> Result<Facts, git2::Error> {
    let base_tree = repo.find_commit(base)?.tree()?;
    let final_tree = repo.find_commit(final_commit)?.tree()?;
    let diffs = git::diff_trees(repo, Some(&base_tree), &final_tree)?;
    let files = TreeFiles::new(repo, final_tree);
    let mut f = Facts {
        changed_files: diffs.iter().map(|d| d.path.clone()).collect(),
        summary_present: summary.is_some(),
        ..Facts::default()
    };
    let empty = ImplementationSummary::default();
    let s = summary.unwrap_or(&empty);
    let norm = |p: &String| crate::edit::check_path(p).unwrap_or_else(|_| p.clone());
    let listed: BTreeSet<String> = s
        .files_created
        .iter()
        .chain(&s.files_modified)
        .map(norm)
        .collect();
    let all_paths: BTreeSet<String> = files.paths().into_iter().collect();
    let changed: BTreeSet<String> = f.changed_files.iter().cloned().collect();
    for p in &listed {
        let deleted = diffs.iter().any(|d| &d.path == p && d.status == "deleted");
        if !all_paths.contains(p) && !deleted {
            f.missing_files.push(p.clone());
        } else if !changed.contains(p) {
            f.listed_unchanged.push(p.clone());
        }
    }
    f.unlisted_changes = changed.difference(&listed).cloned().collect();

    // Every function/method/fn name defined anywhere in the final tree.
    let mut defined = BTreeSet::new();
    for p in &all_paths {
        if let (Some(lang), Some(text)) = (Lang::from_path(p), files.text(p)) {
            for sym in code::outline(lang, &text) {
                defined.insert(sym.name);
            }
        }
    }
    for entry in &s.test_coverage {
        if let Some(path) = test_file(entry) {
            let found = all_paths
                .iter()
                .any(|p| *p == path || p.ends_with(&format!("/{path}")));
            if found {
                f.tests_found.push(entry.clone());
            } else {
                f.missing_tests.push(entry.clone());
            }
        } else if let Some(name) = test_name(entry) {
            if defined.contains(&name) {
                f.tests_found.push(entry.clone());
            } else {
                f.missing_tests.push(entry.clone());
            }
        }
    }
    let mapped: BTreeSet<String> = s
        .requirements
        .iter()
        .filter(|r| !r.evidence.trim().is_empty())
        .map(|r| r.id.trim().to_string())
        .collect();
    for r in &spec.requirements {
        let omitted = s.omissions.iter().any(|o| o.contains(&r.id));
        if omitted {
            f.omitted_requirements.push(r.id.clone());
        } else if !mapped.contains(&r.id) {
            f.unmapped_requirements.push(r.id.clone());
        }
    }
    Ok(f)
}

/// The floor the facts impose on the reconciliation verdict, with reasons.
pub fn floor(f: &Facts) -> Option<Floor> {
    let mut reasons = Vec::new();
    let mut v = None;
    let mut raise = |to: Verdict, why: String, v: &mut Option<Verdict>| {
        reasons.push(why);
        *v = Some(v.map_or(to, |cur: Verdict| cur.max(to)));
    };
    if !f.summary_present {
        raise(
            Verdict::Reject,
            "the verifier produced no implementation summary".into(),
            &mut v,
        );
    }
    // A requirement the summary leaves out while the final tree visibly delivers it is a
    // gap in the paperwork, not in the change.
    let (delivered, dropped): (Vec<&String>, Vec<&String>) = f
        .unmapped_requirements
        .iter()
        .partition(|id| f.requirements_met.contains(id));
    if !dropped.is_empty() {
        raise(
            Verdict::Reject,
            format!(
                "requirements silently dropped (neither delivered nor listed as omitted): {}",
                join(&dropped)
            ),
            &mut v,
        );
    }
    if !delivered.is_empty() {
        raise(
            Verdict::Flag,
            format!(
                "the summary leaves out requirements the facts show delivered: {}",
                join(&delivered)
            ),
            &mut v,
        );
    }
    if !f.dropped_suggestions.is_empty() {
        raise(
            Verdict::Reject,
            format!(
                "accepted suggestions silently dropped (neither applied nor listed as a deviation): {}",
                f.dropped_suggestions.join(", ")
            ),
            &mut v,
        );
    }
    if !f.missing_tests.is_empty() {
        raise(
            Verdict::Reject,
            format!(
                "tests named in the summary do not exist: {}",
                f.missing_tests.join(", ")
            ),
            &mut v,
        );
    }
    if !f.missing_files.is_empty() {
        raise(
            Verdict::Reject,
            format!(
                "files listed in the summary do not exist: {}",
                f.missing_files.join(", ")
            ),
            &mut v,
        );
    }
    if !f.requirements_unmet.is_empty() {
        raise(
            Verdict::Flag,
            format!(
                "the final tree leaves requirements undone: {}",
                f.requirements_unmet.join("; ")
            ),
            &mut v,
        );
    }
    if !f.unlisted_changes.is_empty() {
        raise(
            Verdict::Flag,
            format!(
                "changed but not listed in the summary: {}",
                f.unlisted_changes.join(", ")
            ),
            &mut v,
        );
    }
    v.map(|verdict| Floor { verdict, reasons })
}

/// The verdict a reconciliation acts on once held to grounds: a REJECT or HALT stands only on
/// a failing fact of the final tree (`grounds`: the verify command failing there, a typed
/// requirement it visibly leaves undone, a failing example, a weakened test); without one it
/// is a FLAG, and the second value says why. A claim that a requirement is missing, or a
/// summary's paperwork, stops no run whose facts pass.
pub fn grounded(verdict: Verdict, grounds: &[String]) -> (Verdict, Option<String>) {
    if verdict > Verdict::Flag && grounds.is_empty() {
        (
            Verdict::Flag,
            Some(format!(
                "{verdict} acted on as FLAG: no failing fact of the final tree backs it (the verify command, the examples, the typed requirements and the tests pass)"
            )),
        )
    } else {
        (verdict, None)
    }
}

fn join(ids: &[&String]) -> String {
    ids.iter()
        .map(|s| s.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The reconciliation arbiter's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReconcileAnswer {
    /// APPROVE, FLAG, REJECT or HALT (seed 000 §B11.5).
    pub verdict: Verdict,
    /// 0.0–1.0.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// Why.
    #[schemars(length(max = 3000))]
    pub reasoning: String,
    /// The five checks.
    #[schemars(length(max = 5))]
    pub checks: Vec<CheckResult>,
    /// Requirement → evidence.
    #[schemars(length(max = 30))]
    pub requirements: Vec<RequirementStatus>,
    /// On REJECT: which stage to redo (`implement` or `refactor`); else `none`.
    #[schemars(regex(pattern = "^(implement|refactor|none)$"))]
    pub rewind_to: String,
    /// The gaps to fix, one sentence each.
    #[schemars(length(max = 10))]
    pub gaps: Vec<String>,
}

impl ReconcileAnswer {
    /// The requirements it marks `missing` that the facts show delivered (`met`).
    pub fn contradicted(&self, met: &[String]) -> Vec<String> {
        self.requirements
            .iter()
            .filter(|r| contradicted(r, met))
            .map(|r| r.id.trim().to_string())
            .collect()
    }

    /// The verdict its own findings support: a REJECT or HALT that marks no check `gap`
    /// and no requirement `partial`, `missing` or `omitted` rests on nothing it found, and
    /// is acted on as a FLAG (the doubt stays on the record); a requirement marked
    /// `missing` that the facts show delivered (`met`) is not a finding. Anything else as
    /// given.
    pub fn supported_verdict(&self, met: &[String]) -> Verdict {
        let found = self.checks.iter().any(|c| c.status == "gap")
            || self
                .requirements
                .iter()
                .any(|r| r.status != "delivered" && !contradicted(r, met));
        if self.verdict > Verdict::Flag && !found {
            Verdict::Flag
        } else {
            self.verdict
        }
    }
}

/// Whether a requirement marked `missing` is one the facts show delivered (`met`).
fn contradicted(r: &RequirementStatus, met: &[String]) -> bool {
    r.status == "missing" && met.iter().any(|m| m == r.id.trim())
}

/// Builds the reconciliation request.
pub fn build_request(
    system: &str,
    spec: &TaskSpec,
    summary: Option<&ImplementationSummary>,
    facts: &Facts,
    scaffold_diff: &str,
) -> ChatRequest {
    let mut scaffold: String = scaffold_diff.chars().take(12_000).collect();
    if scaffold_diff.chars().count() > 12_000 {
        scaffold.push_str("\n(scaffold truncated)\n");
    }
    let u = format!(
        "RECONCILE: does the output match the TaskSpec?\n\n{}\n\n## The verifier's implementation summary (claims)\n{}\n\n## Facts established by tools\n{}\n\n## The architect's scaffold (base → architect commit)\n{}\n\nAnswer with the JSON reconciliation object only.\n",
        spec.render(),
        summary.map_or("(none: the verifier produced no summary)".to_string(), |s| {
            serde_json::to_string_pretty(s).unwrap_or_default()
        }),
        serde_json::to_string_pretty(facts).unwrap_or_default(),
        if scaffold.trim().is_empty() { "(the architect changed no files)" } else { &scaffold }
    );
    let mut req = ChatRequest::new(Some(system.to_string()), u, 3072);
    req.schema = Some(schema_for::<ReconcileAnswer>("reconciliation"));
    req.temperature = Some(0.0);
    req
}

/// The feedback a REJECT injects into the stage it rewinds to.
pub fn feedback(answer: &ReconcileAnswer, floor_reasons: &[String]) -> String {
    let mut s = String::from(
        "## RECONCILIATION FEEDBACK (the one retry)\n\nThe finished change does not match the TaskSpec. The independent reconciliation arbiter found these gaps; fix them in this stage:\n\n",
    );
    for r in floor_reasons {
        s.push_str(&format!("- [fact] {r}\n"));
    }
    for g in &answer.gaps {
        s.push_str(&format!("- {g}\n"));
    }
    for r in answer
        .requirements
        .iter()
        .filter(|r| r.status != "delivered")
    {
        s.push_str(&format!(
            "- requirement {} is {}: {}\n",
            r.id, r.status, r.evidence
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_are_read_from_common_forms() {
        assert_eq!(test_name("test_sub").as_deref(), Some("test_sub"));
        assert_eq!(
            test_name("tests/test_calc.py::test_sub").as_deref(),
            Some("test_sub")
        );
        assert_eq!(test_name("TestCalc.test_sub").as_deref(), Some("test_sub"));
        assert_eq!(
            test_name("`tests::sub_works()`").as_deref(),
            Some("sub_works")
        );
        assert_eq!(test_name("checks that sub works"), None);
        // A file named as a whole is a file, not a test called `py`.
        assert_eq!(
            test_file("tests/test_calc.py").as_deref(),
            Some("tests/test_calc.py")
        );
        assert_eq!(test_file("test_calc.py").as_deref(), Some("test_calc.py"));
        assert_eq!(test_file("tests/test_calc.py::test_sub"), None);
        assert_eq!(test_file("TestCalc.test_sub"), None);
    }

    #[test]
    fn a_stop_needs_a_failing_fact() {
        assert_eq!(grounded(Verdict::Reject, &[]).0, Verdict::Flag);
        assert!(grounded(Verdict::Halt, &[])
            .1
            .unwrap()
            .contains("HALT acted on as FLAG"));
        let fails = ["the verify command fails at the final commit".to_string()];
        assert_eq!(grounded(Verdict::Reject, &fails), (Verdict::Reject, None));
        assert_eq!(grounded(Verdict::Flag, &[]), (Verdict::Flag, None));
        assert_eq!(grounded(Verdict::Approve, &[]), (Verdict::Approve, None));
    }

    #[test]
    fn facts_floor_the_verdict() {
        let f = Facts {
            summary_present: true,
            unlisted_changes: vec!["extra.py".into()],
            ..Facts::default()
        };
        assert_eq!(floor(&f).unwrap().verdict, Verdict::Flag);
        let f = Facts {
            summary_present: true,
            unmapped_requirements: vec!["R2".into()],
            ..Facts::default()
        };
        assert_eq!(floor(&f).unwrap().verdict, Verdict::Reject);
        // Left out of the summary, yet delivered by the facts: the paperwork, a FLAG.
        let f = Facts {
            summary_present: true,
            unmapped_requirements: vec!["R2".into()],
            requirements_met: vec!["R1".into(), "R2".into()],
            ..Facts::default()
        };
        let fl = floor(&f).unwrap();
        assert_eq!(fl.verdict, Verdict::Flag, "{fl:?}");
        assert!(
            fl.reasons[0].contains("leaves out requirements the facts show delivered: R2"),
            "{fl:?}"
        );
        let f = Facts {
            summary_present: true,
            requirements_unmet: vec![
                "R2 names tests/t.py, which the change leaves as it was".into()
            ],
            ..Facts::default()
        };
        let fl = floor(&f).unwrap();
        assert_eq!(fl.verdict, Verdict::Flag);
        assert!(
            fl.reasons[0].contains("leaves requirements undone: R2 names"),
            "{fl:?}"
        );
        assert!(floor(&Facts {
            summary_present: true,
            ..Facts::default()
        })
        .is_none());
    }
}
