//! What the arbiter model must answer (strict JSON), and what a recorded review holds.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::code::Symbol;
use crate::probe::{ProbeOutcome, ProbeResult};

pub use crate::verdict::Verdict;

/// Issue severity.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Must fix.
    Critical,
    /// Should fix.
    Warning,
    /// Could improve.
    Suggestion,
}

impl Severity {
    /// The lowercase name (`critical`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Suggestion => "suggestion",
        }
    }
}

/// Issue category (seed 000 §B3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Wrong behaviour.
    Logic,
    /// Pattern or convention violation.
    Pattern,
    /// Security problem.
    Security,
    /// Performance problem.
    Performance,
    /// Unhandled edge case.
    EdgeCase,
    /// An API, import or fact that does not exist.
    Hallucination,
}

impl Category {
    /// The snake_case name (`edge_case`).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Logic => "logic",
            Category::Pattern => "pattern",
            Category::Security => "security",
            Category::Performance => "performance",
            Category::EdgeCase => "edge_case",
            Category::Hallucination => "hallucination",
        }
    }
}

/// One problem as the arbiter model reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssueAnswer {
    /// How bad.
    pub severity: Severity,
    /// What kind.
    pub category: Category,
    /// File path, relative to the repository root.
    #[schemars(length(max = 300))]
    pub path: String,
    /// First line in the new version of the file.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub start_line: u32,
    /// Last line in the new version of the file.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub end_line: u32,
    /// Lines copied verbatim from the new version of the file.
    #[schemars(length(max = 800))]
    pub quote: String,
    /// What is wrong.
    #[schemars(length(max = 1000))]
    pub description: String,
    /// How to fix it.
    #[schemars(length(max = 1000))]
    pub suggestion: String,
    /// Why the arbiter believes it.
    #[schemars(length(max = 1000))]
    pub evidence: String,
    /// A few lines of code that FAIL if the defect is real and pass if it is not, run
    /// against the reviewed code: Python, statements with `assert` (the module under review
    /// is already imported), e.g. `assert mean([]) == 0`; Rust, the body of a `#[test]`
    /// function, e.g. `assert_eq!(mean(&[]), 0.0);`. One short probe per issue; empty when
    /// the issue is not about what the code does.
    #[serde(default)]
    #[schemars(length(max = 600))]
    pub probe: String,
}

/// A better approach.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Alternative {
    /// What to do differently.
    #[schemars(length(max = 600))]
    pub description: String,
    /// Why it is better.
    #[schemars(length(max = 600))]
    pub rationale: String,
    /// Optional implementation hint (may be empty).
    #[schemars(length(max = 1500))]
    pub code_sketch: String,
    /// 0.0–1.0.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
}

/// The arbiter model's whole answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArbiterAnswer {
    /// The verdict.
    pub verdict: Verdict,
    /// 0.0–1.0 overall confidence in the verdict.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// The reasoning behind the verdict.
    #[schemars(length(max = 3000))]
    pub reasoning: String,
    /// Problems found, most severe first.
    #[schemars(length(max = 12))]
    pub issues: Vec<IssueAnswer>,
    /// Better approaches.
    #[schemars(length(max = 4))]
    pub alternatives: Vec<Alternative>,
}

/// An issue after re-anchoring against the reviewed blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Issue {
    /// How bad.
    pub severity: Severity,
    /// What kind.
    pub category: Category,
    /// File path.
    pub path: String,
    /// First line (re-found from the quote); `None` when kept at file level.
    pub start_line: Option<u32>,
    /// Last line.
    pub end_line: Option<u32>,
    /// The model's quote.
    pub quote: String,
    /// What is wrong.
    pub description: String,
    /// How to fix it.
    pub suggestion: String,
    /// Why.
    pub evidence: String,
    /// Whether the quote was found in the reviewed file.
    pub anchored: bool,
    /// The innermost definition containing the lines (tree-sitter).
    pub symbol: Option<Symbol>,
    /// Where it came from: `model` or `tool` (deterministic evidence).
    pub source: String,
    /// Why the issue does not count toward the verdict (its quote is not in the reviewed
    /// file, its path does not exist, its probe passes), when it does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demoted: Option<String>,
    /// The issue's probe and what running it against the reviewed code showed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<IssueProbe>,
    /// The fact of the review the issue cites instead of a quote (a behaviour diff's
    /// difference, `B1: mean([1, 2]): before 1.5, now 1.0`): it stands on it as on a
    /// confirmed probe, anchored to the function the fact is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
}

/// A model issue's probe: its code, and what it showed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssueProbe {
    /// The probe as the model wrote it.
    pub code: String,
    /// What running it showed.
    #[serde(flatten)]
    pub result: ProbeResult,
}

impl Issue {
    /// A model's critical issue anchored at line 1 of `a.py`, for tests of what becomes of
    /// issues.
    #[cfg(test)]
    pub(crate) fn sample(description: &str) -> Issue {
        Issue {
            severity: Severity::Critical,
            category: Category::Logic,
            path: "a.py".into(),
            start_line: Some(1),
            end_line: Some(1),
            quote: "x".into(),
            description: description.into(),
            suggestion: String::new(),
            evidence: String::new(),
            anchored: true,
            symbol: None,
            source: "model".into(),
            demoted: None,
            probe: None,
            fact: None,
        }
    }

    /// Whether the issue's probe showed the defect.
    pub fn confirmed(&self) -> bool {
        self.probe
            .as_ref()
            .is_some_and(|p| p.result.outcome == ProbeOutcome::Confirmed)
    }

    /// Whether the issue's probe passed: the claimed defect does not happen.
    pub fn refuted(&self) -> bool {
        self.probe
            .as_ref()
            .is_some_and(|p| p.result.outcome == ProbeOutcome::Refuted)
    }
}

/// A verdict set by facts, and why: the floor deterministic evidence raises a verdict to, or
/// the verdict the surviving issues support.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Floor {
    /// The verdict.
    pub verdict: Verdict,
    /// Why, one line each.
    pub reasons: Vec<String>,
}

impl ArbiterReview {
    /// Why the verdict acted on is what it is, in one line: the facts' reasons when the
    /// floor set it, else the model's reasoning (a REJECT the floor decided is not
    /// explained by a model that wrote "fine").
    pub fn why(&self) -> String {
        match &self.floor {
            Some(f) if f.verdict == self.verdict && !f.reasons.is_empty() => {
                format!("the facts: {}", f.reasons.join("; "))
            }
            _ => self.reasoning.clone(),
        }
    }
}

/// A complete review as recorded in the note (seed 000 §B3.2 plus provenance).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArbiterReview {
    /// The stage reviewed.
    pub stage: String,
    /// The model that produced the reviewed output.
    pub reviewed_model: String,
    /// The arbiter model.
    pub arbiter_model: String,
    /// The final verdict (after the floor).
    pub verdict: Verdict,
    /// What the model said.
    pub model_verdict: Verdict,
    /// The deterministic floor, when it applied.
    pub floor: Option<Floor>,
    /// The verdict the surviving issues support, when it differs from the model's: the
    /// model's word alone does not reject.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<Floor>,
    /// Issues, most severe first.
    pub issues: Vec<Issue>,
    /// Alternatives.
    pub alternatives: Vec<Alternative>,
    /// 0.0–1.0.
    pub confidence: f64,
    /// Reasoning.
    pub reasoning: String,
    /// USD spent on this review.
    pub token_cost: f64,
    /// What the review saw: the files reviewed, in how many parts, and the files left out
    /// and why (absent from reviews recorded before receipts were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// The layers of the box that held around the review's probes, when any ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::sandbox::Layers>,
    /// The changed functions run on the base and on the change, when any could be: the
    /// inputs whose results differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<crate::probe::BehaviourDiff>,
    /// The repository's tests run on the base and on the change (`git triad review`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<crate::probe::TestRuns>,
}

/// A review's coverage receipt: what it saw. A verdict never passes what it did not see: a
/// review with files left out is at most FLAG.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Files of the change the reviewer was shown, with their hunks.
    pub reviewed: Vec<String>,
    /// Files of the change it was not shown (binary, withheld, too large), each with why:
    /// not reviewed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// Requests the review took: more than one when the change did not fit the reviewer's
    /// window and was reviewed in parts by file groups.
    pub parts: u32,
}

/// A file a review did not see, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeftOut {
    /// The file.
    pub path: String,
    /// Why.
    pub why: String,
}

impl Coverage {
    /// One line for people: `reviewed 2,998 of 3,000 files in 5 parts; not reviewed: …`, or
    /// `None` when the review saw the whole change in one request.
    pub fn describe(&self) -> Option<String> {
        if self.parts <= 1 && self.left_out.is_empty() {
            return None;
        }
        let total = self.reviewed.len() + self.left_out.len();
        let mut s = format!(
            "reviewed {} of {total} file(s) in {} part(s)",
            self.reviewed.len(),
            self.parts
        );
        if !self.left_out.is_empty() {
            let shown: Vec<String> = self
                .left_out
                .iter()
                .take(5)
                .map(|l| format!("{} ({})", l.path, l.why))
                .collect();
            s.push_str(&format!("; not reviewed: {}", shown.join(", ")));
            if self.left_out.len() > 5 {
                s.push_str(&format!(" and {} more", self.left_out.len() - 5));
            }
        }
        Some(s)
    }
}
