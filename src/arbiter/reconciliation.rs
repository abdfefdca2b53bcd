//! What a reconciliation established and answered (seed 000 §B11): the facts tools found
//! about the verifier's summary, and the reconciliation arbiter's five checks and
//! requirement-by-requirement answer. The pipeline computes and asks for them; the
//! reconciliation note line records them typed, and every reader reads them back typed.
//!
//! The fields added after the first release (`dropped_suggestions`, `requirements_met`,
//! `requirements_unmet`) are left out when empty, so a line written then reads and writes
//! back unchanged.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What tools established about the summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Files the run really changed (base → final).
    pub changed_files: Vec<String>,
    /// Listed as created/modified but absent from the final tree.
    pub missing_files: Vec<String>,
    /// Changed by the run but listed nowhere (undocumented work).
    pub unlisted_changes: Vec<String>,
    /// Listed as created/modified but not changed by the run.
    pub listed_unchanged: Vec<String>,
    /// Named tests that exist in the final tree.
    pub tests_found: Vec<String>,
    /// Named tests that do not exist anywhere in the final tree.
    pub missing_tests: Vec<String>,
    /// TaskSpec requirement ids neither mapped nor listed as omitted (silently dropped).
    pub unmapped_requirements: Vec<String>,
    /// Requirement ids listed as omitted.
    pub omitted_requirements: Vec<String>,
    /// Whether the verifier produced a summary at all.
    pub summary_present: bool,
    /// Accepted or adopted suggestions the summary neither applies nor lists as a
    /// deviation (silently dropped, seed 000 §B11.4).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dropped_suggestions: Vec<String>,
    /// Requirement ids the final tree visibly delivers, by the checks every building stage
    /// runs (a named function defined, a named file changed and using it): a judge that
    /// marks one `missing` is contradicted by the facts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements_met: Vec<String>,
    /// What the final tree visibly leaves undone, one sentence a requirement gap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements_unmet: Vec<String>,
}

/// The five checks of seed 000 §B11.4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckKind {
    /// Every requirement has an entry.
    Completeness,
    /// No unjustified extras.
    ScopeFidelity,
    /// Matches the architect's scaffold.
    ArchitecturalAlignment,
    /// Accepted suggestions are reflected.
    SuggestionIntegration,
    /// Every behaviour has a test.
    TestToSpec,
}

/// Result of one check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckResult {
    /// Which check.
    pub check: CheckKind,
    /// `pass`, `gap` or `not_applicable`.
    #[schemars(regex(pattern = "^(pass|gap|not_applicable)$"))]
    pub status: String,
    /// What was found.
    #[schemars(length(max = 500))]
    pub detail: String,
}

/// One requirement's reconciliation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequirementStatus {
    /// The requirement id.
    #[schemars(length(max = 20))]
    pub id: String,
    /// `delivered`, `partial`, `missing` or `omitted`.
    #[schemars(regex(pattern = "^(delivered|partial|missing|omitted)$"))]
    pub status: String,
    /// Where it is delivered (file, function, test), or why not.
    #[schemars(length(max = 300))]
    pub evidence: String,
}
