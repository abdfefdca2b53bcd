//! What a specialist answers (`SpecialistResponse`), what the arbiter decides
//! (`ArbiterDecision`), and the routing policy between them (seed 004).
//!
//! A free-form "REJECT" cannot be represented: `outcome` is the closed [`Outcome`] enum, and
//! parsing a stage answer already refuses any other word.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::state::Task;
use crate::pipeline::stage::{Dependency, Outcome, StageMeta};

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

/// A specialist name as the pipeline knows it: role names map to their stage
/// (`implementer` → `implement`); anything else is kept, trimmed and lowercased.
pub fn normalize_specialist(name: &str) -> Option<String> {
    let n: String = name.trim().to_lowercase().chars().take(64).collect();
    let n = match n.as_str() {
        "implementer" => "implement".to_string(),
        "refactorer" => "refactor".to_string(),
        "verifier" => "verify".to_string(),
        _ => n,
    };
    (!n.is_empty()).then_some(n)
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

/// The routing policy of seed 004, with no slug taken yet.
pub fn route(task: &Task, resp: &SpecialistResponse) -> ArbiterDecision {
    route_with(task, resp, &|_| false)
}

/// The routing policy of seed 004; `taken` says which slugs dependency tasks must not use.
pub fn route_with(
    task: &Task,
    resp: &SpecialistResponse,
    taken: &dyn Fn(&str) -> bool,
) -> ArbiterDecision {
    let slug = task.slug.as_str();
    let who = resp.specialist.as_str();
    let summary = if resp.summary.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", resp.summary.trim())
    };
    match resp.outcome {
        Outcome::NeedsInfo => ArbiterDecision::new(
            slug,
            Decision::WaitingOnUser,
            format!(
                "the {who} stage needs {} answer(s) before it can continue{summary}",
                resp.requests.len()
            ),
        )
        .to(who),
        Outcome::OutOfScope => {
            let target = resp
                .suggested_specialists
                .iter()
                .find_map(|s| normalize_specialist(s))
                .unwrap_or_else(|| "operator".to_string());
            ArbiterDecision::new(
                slug,
                Decision::Reassign,
                format!("the {who} stage says this is out of its scope{summary}; routed to {target}"),
            )
            .to(target)
        }
        Outcome::Blocked => {
            let wanted = resp.dependencies.len().max(1);
            let mut created = Vec::new();
            let mut n = task.dependencies.len();
            while created.len() < wanted {
                n += 1;
                let candidate = dependency_slug(slug, n);
                if candidate != slug && !taken(&candidate) && !created.contains(&candidate) {
                    created.push(candidate);
                }
            }
            let mut d = ArbiterDecision::new(
                slug,
                Decision::CreateDependency,
                format!(
                    "the {who} stage is blocked{summary}; created {}; it resumes when they are done",
                    created.join(", ")
                ),
            )
            .to(who);
            d.created_tasks = created;
            d
        }
        Outcome::TooCostly => ArbiterDecision::new(
            slug,
            Decision::Escalate,
            format!(
                "TOO_COSTLY from the {who} stage{summary}.{} Arbiter decision needed: defer it \
                 (`git triad task defer {slug} --reason ...`), approve the MVP alternative \
                 (`git triad task reassign {slug} --to <stage> --reason \"MVP: ...\"`), or request \
                 a review (`git triad review`)",
                listed(" Alternatives", &resp.alternatives)
            ),
        )
        .to("arbiter"),
        Outcome::PolicyViolation => ArbiterDecision::new(
            slug,
            Decision::Escalate,
            format!(
                "POLICY_VIOLATION from the {who} stage{summary}.{}{} Arbiter decision needed: \
                 close it as not allowed (`git triad task close {slug} --reason \"not allowed: ...\"`) \
                 or route a compliant alternative (`git triad task reassign {slug} --to <stage> \
                 --reason \"...\"`)",
                listed(" Policy", &resp.policy_refs),
                listed(" Alternatives", &resp.alternatives)
            ),
        )
        .to("arbiter"),
        Outcome::LowConfidence => {
            if resp.evidence_needed.iter().any(|e| !e.trim().is_empty()) {
                let target = resp
                    .suggested_specialists
                    .iter()
                    .find_map(|s| normalize_specialist(s))
                    .unwrap_or_else(|| "verify".to_string());
                ArbiterDecision::new(
                    slug,
                    Decision::Reassign,
                    format!(
                        "the {who} stage has low confidence{summary}; {target} gathers the evidence: {}",
                        resp.evidence_needed.join("; ")
                    ),
                )
                .to(target)
            } else {
                ArbiterDecision::new(
                    slug,
                    Decision::Escalate,
                    format!(
                        "the {who} stage has low confidence{summary} and named no evidence that \
                         would help. Arbiter decision needed: reassign it (`git triad task reassign \
                         {slug} --to <stage> --reason ...`), defer or close it"
                    ),
                )
                .to("arbiter")
            }
        }
        Outcome::Approve => {
            let conditions = if resp.conditions.is_empty() {
                String::new()
            } else {
                format!(" (conditions: {})", resp.conditions.join("; "))
            };
            ArbiterDecision::new(
                slug,
                Decision::Approve,
                format!("the {who} stage approves{summary}{conditions}"),
            )
        }
    }
}

/// ` Label: a; b.` from JSON values (strings, `{option, delta}`, `{id, reason}`), or nothing.
fn listed(label: &str, values: &[Value]) -> String {
    if values.is_empty() {
        return String::new();
    }
    let items: Vec<String> = values.iter().map(value_text).collect();
    format!("{label}: {}.", items.join("; "))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(outcome: Outcome) -> StageMeta {
        serde_json::from_value(serde_json::json!({"outcome": outcome})).unwrap()
    }

    #[test]
    fn a_reject_cannot_be_a_response() {
        let bad =
            serde_json::json!({"task_id": "t", "specialist": "implement", "outcome": "REJECT"});
        assert!(serde_json::from_value::<SpecialistResponse>(bad).is_err());
    }

    #[test]
    fn routes_follow_the_seed() {
        let task = Task::open("t", "now");
        let mut m = meta(Outcome::OutOfScope);
        m.suggested_role = Some("Refactorer".into());
        let d = route(&task, &SpecialistResponse::from_stage("t", "implement", &m));
        assert_eq!(
            (d.decision, d.assigned_to.as_deref()),
            (Decision::Reassign, Some("refactor"))
        );
        let d = route(
            &task,
            &SpecialistResponse::from_stage("t", "implement", &meta(Outcome::OutOfScope)),
        );
        assert_eq!(d.assigned_to.as_deref(), Some("operator"));
        let d = route(
            &task,
            &SpecialistResponse::from_stage("t", "implement", &meta(Outcome::LowConfidence)),
        );
        assert_eq!(d.decision, Decision::Escalate);
        let mut m = meta(Outcome::LowConfidence);
        m.evidence_needed = vec!["run the tests".into()];
        let d = route(&task, &SpecialistResponse::from_stage("t", "implement", &m));
        assert_eq!(
            (d.decision, d.assigned_to.as_deref()),
            (Decision::Reassign, Some("verify"))
        );
        for o in [Outcome::TooCostly, Outcome::PolicyViolation] {
            let d = route(&task, &SpecialistResponse::from_stage("t", "x", &meta(o)));
            assert_eq!(d.decision, Decision::Escalate);
            assert!(d.note.contains("git triad task"), "{}", d.note);
        }
    }

    #[test]
    fn dependency_slugs_skip_taken_names_and_stay_valid() {
        let mut task = Task::open("t", "now");
        task.dependencies = vec!["t-dep-1".into()];
        let mut m = meta(Outcome::Blocked);
        m.dependencies = vec![
            Dependency {
                task: "a".into(),
                owner: String::new(),
            },
            Dependency {
                task: "b".into(),
                owner: "operator".into(),
            },
        ];
        let resp = SpecialistResponse::from_stage("t", "implement", &m);
        let d = route_with(&task, &resp, &|s| s == "t-dep-3");
        assert_eq!(d.created_tasks, ["t-dep-2", "t-dep-4"]);
        let long = "x".repeat(64);
        let s = dependency_slug(&long, 12);
        assert!(crate::task::spec::valid_slug(&s), "{s}");
        assert!(s.ends_with("-dep-12"));
    }
}
