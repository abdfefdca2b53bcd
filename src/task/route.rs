//! The arbiter's routing policy of seed 004: from a specialist's structured outcome to a
//! decision with an owner and a next action.

use serde_json::Value;

use super::outcome::{normalize_specialist, Outcome};
use super::response::{dependency_slug, value_text, ArbiterDecision, Decision, SpecialistResponse};
use super::state::Task;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task::outcome::{Dependency, StageMeta};

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
