//! What a specialist answers (`SpecialistResponse`) and what the arbiter decides
//! (`ArbiterDecision`) (seed 004); the policy between them is in [`super::route`].
//!
//! A free-form "REJECT" cannot be represented: `outcome` is the closed [`Outcome`] enum, and
//! parsing a stage answer already refuses any other word.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::outcome::{normalize_specialist, Dependency, Outcome, StageMeta};

/// A specialist's structured answer about a task (seed 004 schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpecialistResponse {
    /// The task's slug.
    pub task_id: String,
    /// The specialist (stage) that answered.
    pub specialist: String,
    /// The structured outcome; there is no free-form reject.
    pub outcome: Outcome,
    /// Short natural language.
    #[serde(default)]
    pub summary: String,
    /// NEEDS_INFO: the questions for the user.
    #[serde(default)]
    pub requests: Vec<String>,
    /// OUT_OF_SCOPE: who should do it instead.
    #[serde(default)]
    pub suggested_specialists: Vec<String>,
    /// BLOCKED: what must be done first, and by whom.
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
    /// TOO_COSTLY / POLICY_VIOLATION: cheaper or compliant options.
    #[serde(default)]
    pub alternatives: Vec<Value>,
    /// POLICY_VIOLATION: the rules.
    #[serde(default)]
    pub policy_refs: Vec<Value>,
    /// Self-assessed confidence.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// LOW_CONFIDENCE: what would raise confidence.
    #[serde(default)]
    pub evidence_needed: Vec<String>,
    /// APPROVE: conditions attached.
    #[serde(default)]
    pub conditions: Vec<String>,
}

impl SpecialistResponse {
    /// The response of stage `stage` about task `slug`, from the stage's metadata block.
    pub fn from_stage(slug: &str, stage: &str, meta: &StageMeta) -> SpecialistResponse {
        SpecialistResponse {
            task_id: slug.to_string(),
            specialist: stage.to_string(),
            outcome: meta.outcome,
            summary: meta.summary.clone(),
            requests: meta.questions.clone(),
            suggested_specialists: meta
                .suggested_role
                .as_deref()
                .and_then(normalize_specialist)
                .into_iter()
                .collect(),
            dependencies: meta.dependencies.clone(),
            alternatives: meta.alternatives.clone(),
            policy_refs: meta.policy_refs.clone(),
            confidence: meta.confidence,
            evidence_needed: meta.evidence_needed.clone(),
            conditions: meta.conditions.clone(),
        }
    }
}

/// What the arbiter decided (seed 004, plus ESCALATE and EXECUTE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Decision {
    /// Hand the task to another specialist (REASSIGNED).
    Reassign,
    /// Ask the user (WAITING_ON_USER).
    WaitingOnUser,
    /// Create dependency tasks and wait for them (BLOCKED).
    CreateDependency,
    /// Park it with a revisit trigger (DEFERRED, terminal).
    Defer,
    /// Close it on purpose (CLOSED, terminal).
    Close,
    /// Approve it (APPROVED, terminal).
    Approve,
    /// Needs a decision by a human on the arbiter's behalf (ESCALATED).
    Escalate,
    /// Mark it carried out (EXECUTED, terminal).
    Execute,
}

impl Decision {
    /// The wire name (`CREATE_DEPENDENCY`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Reassign => "REASSIGN",
            Decision::WaitingOnUser => "WAITING_ON_USER",
            Decision::CreateDependency => "CREATE_DEPENDENCY",
            Decision::Defer => "DEFER",
            Decision::Close => "CLOSE",
            Decision::Approve => "APPROVE",
            Decision::Escalate => "ESCALATE",
            Decision::Execute => "EXECUTE",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An arbiter decision about one task (seed 004 schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArbiterDecision {
    /// The task's slug.
    pub task_id: String,
    /// What was decided.
    pub decision: Decision,
    /// Who acts on it (the new specialist, the specialist answers return to, who decides).
    #[serde(default)]
    pub assigned_to: Option<String>,
    /// Slugs of dependency tasks created by the decision.
    #[serde(default)]
    pub created_tasks: Vec<String>,
    /// Short rationale.
    #[serde(default)]
    pub note: String,
    /// When a deferred task should be looked at again.
    #[serde(default)]
    pub revisit_at: Option<String>,
}

impl ArbiterDecision {
    /// A decision with a note and nothing else.
    pub fn new(task_id: &str, decision: Decision, note: impl Into<String>) -> ArbiterDecision {
        ArbiterDecision {
            task_id: task_id.to_string(),
            decision,
            assigned_to: None,
            created_tasks: Vec::new(),
            note: note.into(),
            revisit_at: None,
        }
    }

    /// The same decision, assigned to `who`.
    pub fn to(mut self, who: impl Into<String>) -> ArbiterDecision {
        self.assigned_to = Some(who.into());
        self
    }
}

/// The slug of the `n`-th dependency of `parent` (`<parent>-dep-<n>`), shortened to stay a
/// valid slug.
pub fn dependency_slug(parent: &str, n: usize) -> String {
    let suffix = format!("-dep-{n}");
    let room = 64usize.saturating_sub(suffix.len());
    let base: String = parent.chars().take(room).collect();
    let base = base.trim_end_matches('-');
    let base = if base.is_empty() { "task" } else { base };
    format!("{base}{suffix}")
}

/// A short human text of one alternative or policy reference.
pub fn value_text(v: &Value) -> String {
    if let Some(s) = v.as_str() {
        return s.to_string();
    }
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::trim);
    let head = field("id").or(field("option")).or(field("name"));
    let tail = field("reason").or(field("delta")).or(field("description"));
    match (head, tail) {
        (Some(h), Some(t)) => format!("{h} ({t})"),
        (Some(h), None) => h.to_string(),
        (None, Some(t)) => t.to_string(),
        (None, None) => v.to_string(),
    }
}
