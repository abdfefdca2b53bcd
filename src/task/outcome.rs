//! The stage outcome protocol (seed 004): the structured outcome and metadata every stage
//! answer carries besides its edits. It lives with tasks because the task state machine
//! routes every outcome that is not APPROVE.

use serde::{Deserialize, Serialize};
use serde_json::Value;

crate::names::named! {
    /// The structured outcome every stage answer carries (seed 004), by its wire name
    /// (`NEEDS_INFO`). There is no free-form "reject": every "no" says what would unblock it.
    pub enum Outcome: "a stage outcome", written SCREAMING_SNAKE_CASE {
        /// The stage did its work.
        Approve,
        /// Missing inputs; `questions` says which.
        NeedsInfo,
        /// Wrong role; `suggested_role` says which.
        OutOfScope,
        /// A dependency must come first; `dependencies` says which.
        Blocked,
        /// Infeasible under the constraints; `alternatives` proposes a cheaper path.
        TooCostly,
        /// Violates a rule; `policy_refs` and `alternatives`.
        PolicyViolation,
        /// Too uncertain; `evidence_needed`.
        LowConfidence,
    }
}

/// A dependency named by a BLOCKED outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependency {
    /// What must be done.
    pub task: String,
    /// Who should do it.
    #[serde(default)]
    pub owner: String,
}

/// The fenced JSON metadata block of a stage answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageMeta {
    /// One sentence: what changed and why.
    #[serde(default)]
    pub summary: String,
    /// Self-assessed confidence.
    #[serde(default)]
    pub confidence: Option<f64>,
    /// The structured outcome.
    pub outcome: Outcome,
    /// NEEDS_INFO questions.
    #[serde(default)]
    pub questions: Vec<String>,
    /// Cross-domain suggestions.
    #[serde(default)]
    pub suggestions: Vec<Value>,
    /// Disagreements with earlier stages.
    #[serde(default)]
    pub objections: Vec<Value>,
    /// BLOCKED dependencies.
    #[serde(default)]
    pub dependencies: Vec<Dependency>,
    /// OUT_OF_SCOPE: the role that should do it.
    #[serde(default)]
    pub suggested_role: Option<String>,
    /// TOO_COSTLY / POLICY_VIOLATION alternatives.
    #[serde(default)]
    pub alternatives: Vec<Value>,
    /// POLICY_VIOLATION rules.
    #[serde(default)]
    pub policy_refs: Vec<Value>,
    /// LOW_CONFIDENCE: what would raise confidence.
    #[serde(default)]
    pub evidence_needed: Vec<String>,
    /// APPROVE conditions.
    #[serde(default)]
    pub conditions: Vec<String>,
    /// The verifier's manifest (seed 000 §B11.3).
    #[serde(default)]
    pub implementation_summary: Option<Value>,
}

/// Parses the metadata block, explaining what is wrong in words a model can act on.
pub fn parse_meta(answer: &str) -> Result<StageMeta, String> {
    let Some(json) = crate::edit::metadata_json(answer) else {
        return Err("your answer has no fenced ```json metadata block at the end; add one with summary, confidence and outcome".into());
    };
    let value: Value = serde_json::from_str(json)
        .or_else(|e| serde_json::from_str(&lenient(json)).map_err(|_| e))
        .map_err(|e| format!("the ```json metadata block is not valid JSON ({e})"))?;
    if let Some(o) = value.get("outcome").and_then(Value::as_str) {
        if Outcome::parse(o).is_none() {
            return Err(format!(
                "`outcome` is \"{o}\", which is not allowed: use one of {} (a plain \"no\" must say what would unblock it)",
                Outcome::NAMES.join(", ")
            ));
        }
    }
    serde_json::from_value(value)
        .map_err(|e| format!("the ```json metadata block does not have the required fields ({e})"))
}

/// `json` with the two slips that most often break a small model's metadata undone, and
/// nothing else changed: raw control characters inside strings are escaped (a line break
/// typed into a summary), and a comma outside strings that only a `}` or `]` follows is
/// dropped (a trailing comma after the last field). Neither changes what the text means.
fn lenient(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    let chars: Vec<char> = json.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !in_string && c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            if matches!(next, Some('}' | ']')) {
                continue;
            }
        }
        if in_string && !escaped && (c as u32) < 0x20 {
            match c {
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                other => out.push_str(&format!("\\u{:04x}", other as u32)),
            }
            continue;
        }
        if in_string && c == '\\' && !escaped {
            escaped = true;
        } else {
            if c == '"' && !escaped {
                in_string = !in_string;
            }
            escaped = false;
        }
        out.push(c);
    }
    out
}

/// Who an OUT_OF_SCOPE may hand the task to.
const SPECIALISTS: &[&str] = &["architect", "implement", "refactor", "verify", "operator"];

/// Why an outcome gives its routing nothing to act on, when it does not, as feedback for
/// the stage's retry: an OUT_OF_SCOPE that names no one else to do the work (none, an
/// unknown role, or the stage itself), or a refusal without the details that would unblock
/// it (a NEEDS_INFO with no question, a BLOCKED with no dependency, a TOO_COSTLY with no
/// alternative, a POLICY_VIOLATION citing no rule), is a refusal the
/// policy cannot route. Small models copy the outcome list from the prompt; the fact
/// decides, not the word.
pub fn unroutable(meta: &StageMeta, stage: &str) -> Option<String> {
    if let Some(missing) = missing_details(meta) {
        return Some(format!(
            "## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\nYou answered {} but {missing}. \
             A refusal must say what would unblock it. If you can do the work of the {stage} \
             stage, do it and answer APPROVE; otherwise answer {} again with {}.\n",
            meta.outcome.as_str(),
            meta.outcome.as_str(),
            what_it_needs(meta.outcome)
        ));
    }
    if meta.outcome != Outcome::OutOfScope {
        return None;
    }
    let named = meta
        .suggested_role
        .as_deref()
        .and_then(normalize_specialist);
    match named.as_deref() {
        Some(r) if r != stage && SPECIALISTS.contains(&r) => None,
        other => Some(format!(
            "## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\nYou answered OUT_OF_SCOPE but {}. \
             The TaskSpec gives this work to the {stage} stage. If it is within your role, do \
             the work and answer APPROVE; if it really belongs to another stage, answer \
             OUT_OF_SCOPE with `suggested_role` set to one of {}.\n",
            match other {
                None => "named no `suggested_role` to do it instead".to_string(),
                Some(r) if r == stage => format!("named your own stage (`{r}`) to do it"),
                Some(r) => format!("named `{r}`, which is not a stage or the operator"),
            },
            SPECIALISTS.join(", ")
        )),
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

/// What a refusal left empty that its routing needs, if anything.
fn missing_details(meta: &StageMeta) -> Option<&'static str> {
    let blank = |v: &[String]| v.iter().all(|q| q.trim().is_empty());
    let none = |v: &[Value]| {
        v.iter()
            .all(|x| x.is_null() || x.as_str().is_some_and(|t| t.trim().is_empty()))
    };
    match meta.outcome {
        Outcome::NeedsInfo if blank(&meta.questions) => Some("asked no question"),
        Outcome::Blocked if meta.dependencies.iter().all(|d| d.task.trim().is_empty()) => {
            Some("listed no dependency")
        }
        Outcome::TooCostly if none(&meta.alternatives) => Some("proposed no cheaper path"),
        Outcome::PolicyViolation if none(&meta.policy_refs) => Some("cited no rule"),
        _ => None,
    }
}

/// The details an outcome must carry, as the prompt names them.
fn what_it_needs(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::NeedsInfo => "your questions in `questions`",
        Outcome::Blocked => "what must happen first in `dependencies` as {\"task\", \"owner\"}",
        Outcome::TooCostly => "a cheaper path in `alternatives`",
        Outcome::PolicyViolation => "the rule in `policy_refs` as {\"id\", \"reason\"}",
        Outcome::Approve | Outcome::OutOfScope | Outcome::LowConfidence => "its details",
    }
}

/// Human text of an outcome's details (for records and messages).
pub fn outcome_details(meta: &StageMeta) -> String {
    let list = |v: &[String]| {
        v.iter()
            .map(|q| format!("  - {q}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let values = |v: &[Value]| {
        v.iter()
            .map(|x| {
                format!(
                    "  - {}",
                    x.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| x.to_string())
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    match meta.outcome {
        Outcome::Approve => meta.summary.clone(),
        Outcome::NeedsInfo => format!("questions:\n{}", list(&meta.questions)),
        Outcome::OutOfScope => format!(
            "suggested role: {}",
            meta.suggested_role.as_deref().unwrap_or("(none given)")
        ),
        Outcome::Blocked => format!(
            "dependencies:\n{}",
            meta.dependencies
                .iter()
                .map(|d| format!(
                    "  - {} (owner: {})",
                    d.task,
                    if d.owner.is_empty() {
                        "unassigned"
                    } else {
                        &d.owner
                    }
                ))
                .collect::<Vec<_>>()
                .join("\n")
        ),
        Outcome::TooCostly => format!("alternatives:\n{}", values(&meta.alternatives)),
        Outcome::PolicyViolation => format!(
            "policy:\n{}\nalternatives:\n{}",
            values(&meta.policy_refs),
            values(&meta.alternatives)
        ),
        Outcome::LowConfidence => format!("evidence needed:\n{}", list(&meta.evidence_needed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_reads_back_by_its_wire_name() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
            assert_eq!(
                serde_json::from_value::<Outcome>(o.as_str().into()).unwrap(),
                o
            );
        }
        // The words every stage answer, prompt and task record carries.
        assert_eq!(
            Outcome::NAMES,
            [
                "APPROVE",
                "NEEDS_INFO",
                "OUT_OF_SCOPE",
                "BLOCKED",
                "TOO_COSTLY",
                "POLICY_VIOLATION",
                "LOW_CONFIDENCE"
            ]
        );
        assert_eq!(Outcome::parse("needs_info"), None);
    }

    #[test]
    fn meta_requires_a_structured_outcome() {
        let ok = parse_meta("x\n```json\n{\"summary\":\"s\",\"outcome\":\"NEEDS_INFO\",\"questions\":[\"q?\"]}\n```").unwrap();
        assert_eq!(ok.outcome, Outcome::NeedsInfo);
        let e = parse_meta("```json\n{\"outcome\":\"REJECT\"}\n```").unwrap_err();
        assert!(e.contains("not allowed"), "{e}");
        assert!(parse_meta("```json\n{\"summary\":\"s\"}\n```").is_err());
        assert!(parse_meta("no block").is_err());
    }

    #[test]
    fn a_line_break_typed_inside_a_string_still_reads() {
        let meta = parse_meta(
            "```json\n{\"summary\": \"fixed the test\nand the code\", \"outcome\": \"APPROVE\",\n \"questions\": [\"a\\\"b\tc\"]}\n```",
        )
        .unwrap();
        assert_eq!(meta.summary, "fixed the test\nand the code");
        assert_eq!(meta.questions, ["a\"b\tc"]);
        // Broken JSON stays broken, with serde's own reason.
        let e = parse_meta("```json\n{\"summary\": \"x\" \"outcome\"}\n```").unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn a_trailing_comma_still_reads_and_a_comma_in_a_string_stays() {
        let meta = parse_meta(
            "```json\n{\"summary\": \"a, }\", \"outcome\": \"NEEDS_INFO\",\n \"questions\": [\"q1\", \"q2\",\n ],\n}\n```",
        )
        .unwrap();
        assert_eq!(meta.summary, "a, }");
        assert_eq!(meta.questions, ["q1", "q2"]);
        // A missing value is not a trailing comma.
        let e = parse_meta("```json\n{\"summary\": \"x\", \"outcome\": , }\n```").unwrap_err();
        assert!(e.contains("not valid JSON"), "{e}");
    }

    #[test]
    fn an_out_of_scope_must_name_someone_else_to_route_to() {
        let meta = |role: Option<&str>| {
            let mut m = json_meta("OUT_OF_SCOPE");
            m.suggested_role = role.map(str::to_string);
            m
        };
        let none = unroutable(&meta(None), "architect").unwrap();
        assert!(none.contains("named no `suggested_role`"), "{none}");
        let own = unroutable(&meta(Some("architect")), "architect").unwrap();
        assert!(own.contains("your own stage"), "{own}");
        let odd = unroutable(&meta(Some("janitor")), "architect").unwrap();
        assert!(odd.contains("`janitor`, which is not a stage"), "{odd}");
        assert_eq!(unroutable(&meta(Some("Verifier")), "architect"), None);
        assert_eq!(unroutable(&meta(Some("operator")), "implement"), None);
        let mut asked = json_meta("NEEDS_INFO");
        asked.questions = vec!["Which encoding?".into()];
        assert_eq!(unroutable(&asked, "implement"), None);
    }

    #[test]
    fn a_refusal_without_its_details_cannot_be_routed() {
        let silent = unroutable(&json_meta("NEEDS_INFO"), "verify").unwrap();
        assert!(
            silent.contains("NEEDS_INFO but asked no question"),
            "{silent}"
        );
        assert!(silent.contains("`questions`"), "{silent}");
        let mut blank = json_meta("NEEDS_INFO");
        blank.questions = vec!["  ".into()];
        assert!(unroutable(&blank, "verify").is_some());
        let blocked = unroutable(&json_meta("BLOCKED"), "implement").unwrap();
        assert!(blocked.contains("listed no dependency"), "{blocked}");
        // An unsure stage may say so without a list: the chamber or a human can still help.
        assert_eq!(unroutable(&json_meta("LOW_CONFIDENCE"), "implement"), None);
        assert!(unroutable(&json_meta("TOO_COSTLY"), "implement").is_some());
        assert!(unroutable(&json_meta("POLICY_VIOLATION"), "implement").is_some());
        assert_eq!(unroutable(&json_meta("APPROVE"), "implement"), None);
    }

    fn json_meta(outcome: &str) -> StageMeta {
        parse_meta(&format!(
            "```json\n{{\"summary\":\"s\",\"outcome\":\"{outcome}\"}}\n```"
        ))
        .unwrap()
    }
}
