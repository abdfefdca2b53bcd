//! The candidates' solutions as the others, the tiebreaker and the judges see them: each
//! one's diff against the base with the deterministic findings on it, and the floor those
//! findings impose (a solution the facts reject cannot win).

use crate::arbiter::floor::floor;
use crate::arbiter::{Floor, Verdict};
use crate::code::Finding;
use crate::pipeline::record::ParallelState;
use crate::pipeline::run::facts::candidate_review;
use crate::pipeline::run::step::{Cx, RunError};

/// Every present candidate's solution as the others, the tiebreaker and the judges see
/// it: its diff against the base and the deterministic findings on it — the evidence a
/// stage's review gets (syntax, imports, weakened tests, the task's examples run).
pub(super) fn solutions(cx: &Cx<'_>, p: &ParallelState) -> Result<Vec<Solution>, RunError> {
    let mut out = Vec::new();
    for c in p.present() {
        let Some(commit) = &c.commit else { continue };
        let prepared = candidate_review(cx, commit)?;
        let findings = prepared.findings().to_vec();
        let floor = floor(&findings, None);
        out.push(Solution {
            model: c.model.clone(),
            diff: with_findings(&prepared.gathered.diff_text, &findings),
            floor,
            findings,
        });
    }
    Ok(out)
}

/// A candidate's solution as shown to the other models: its diff with the deterministic
/// findings on it, and the floor they impose.
pub(super) struct Solution {
    /// The candidate model.
    pub model: String,
    /// Its diff against the base, then the findings.
    pub diff: String,
    /// The verdict the findings impose by themselves (`None`: none).
    pub floor: Option<Floor>,
    /// The deterministic findings on it.
    pub findings: Vec<Finding>,
}

impl Solution {
    /// Why the solution cannot win, when the facts already reject it (a file that does not
    /// parse, an import that resolves nowhere, a weakened test, a failing example).
    pub fn barred(&self) -> Option<String> {
        self.floor
            .as_ref()
            .filter(|f| f.verdict >= Verdict::Reject)
            .map(|f| f.reasons.join("; "))
    }
}

/// `diff` followed by the deterministic findings on it, as a model is shown them.
fn with_findings(diff: &str, findings: &[Finding]) -> String {
    if findings.is_empty() {
        return diff.to_string();
    }
    let mut s = format!("{diff}\n# deterministic findings (established by tools):\n");
    for f in findings {
        s.push_str(&format!(
            "# [{} {}] {}:{} {}\n",
            f.severity, f.kind, f.path, f.line, f.reason
        ));
    }
    s
}
