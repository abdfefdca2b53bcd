//! Rendering for people and machines: reviews as text, markdown and SARIF 2.1.0; runs in
//! [`run`], their deliberations in [`deliberation`].

pub mod compare;
pub mod cost;
pub mod deliberation;
pub mod fitness;
pub mod progress;
pub mod run;
pub mod table;

pub use table::render_table;

use serde_json::{json, Value};

use crate::arbiter::{ArbiterReview, Category, Issue, Severity};
use crate::probe::ProbeOutcome;

fn location(i: &Issue) -> String {
    let lines = match (i.start_line, i.end_line) {
        (Some(a), Some(b)) if a != b => format!(":{a}-{b}"),
        (Some(a), _) => format!(":{a}"),
        _ => String::new(),
    };
    let sym = i
        .symbol
        .as_ref()
        .map(|s| format!(" ({} {})", s.kind, s.name))
        .unwrap_or_default();
    format!("{}{lines}{sym}", i.path)
}

/// ` [does not count: why]` for a demoted issue, ` [not anchored]` for one that stands
/// without a quote (a requirement), else nothing.
fn standing(i: &Issue) -> String {
    let probe = i.probe.as_ref().map(|p| {
        let what = match p.result.outcome {
            ProbeOutcome::Confirmed => p.result.counterexample(),
            _ => p.result.detail.clone(),
        };
        format!(" [probe {}: {what}]", p.result.outcome.as_str())
    });
    let probe = probe.unwrap_or_default();
    match (&i.demoted, i.anchored) {
        (Some(why), _) if !i.refuted() => format!("{probe} [does not count: {why}]"),
        (Some(_), _) => format!("{probe} [does not count]"),
        (None, false) => format!("{probe} [not anchored]"),
        (None, true) => probe,
    }
}

/// A review for the terminal.
pub fn text(r: &ArbiterReview) -> String {
    let mut s = format!(
        "verdict: {} (arbiter {}, confidence {:.2})\n",
        r.verdict, r.arbiter_model, r.confidence
    );
    if let Some(d) = &r.derived {
        s.push_str(&format!(
            "the model said {}; the issues that count support {}: {}\n",
            r.model_verdict,
            d.verdict,
            d.reasons.join("; ")
        ));
    }
    if let Some(c) = r.coverage.as_ref().and_then(|c| c.describe()) {
        s.push_str(&format!("coverage: {c}\n"));
    }
    if let Some(layers) = &r.sandbox {
        s.push_str(&format!("probes ran in the box: {layers}\n"));
    }
    if let Some(t) = &r.tests {
        s.push_str(&t.render().replace("## ", "").replace(" (a fact)", ""));
    }
    if let Some(text) = r.behaviour.as_ref().and_then(|b| b.render()) {
        s.push_str(&text.replace("## ", ""));
    }
    if let Some(f) = &r.floor {
        s.push_str(&format!(
            "raised from {} to {} by deterministic evidence: {}\n",
            r.derived.as_ref().map_or(r.model_verdict, |d| d.verdict),
            f.verdict,
            f.reasons.join("; ")
        ));
    }
    if !r.reasoning.trim().is_empty() {
        s.push_str(&format!("\n{}\n", r.reasoning.trim()));
    }
    if !r.issues.is_empty() {
        s.push('\n');
    }
    for i in &r.issues {
        s.push_str(&format!(
            "{:<10} {:<13} {} — {}{}\n",
            i.severity.as_str(),
            i.category.as_str(),
            location(i),
            i.description.trim(),
            standing(i)
        ));
    }
    s
}

/// A review as markdown (for a pull request).
pub fn markdown(r: &ArbiterReview) -> String {
    let mut s = format!(
        "### git triad review: **{}**\n\nArbiter `{}` (confidence {:.2}).",
        r.verdict, r.arbiter_model, r.confidence
    );
    if let Some(f) = &r.floor {
        s.push_str(&format!(
            " Raised from {} by deterministic evidence: {}.",
            r.model_verdict,
            f.reasons.join("; ")
        ));
    }
    if let Some(c) = r.coverage.as_ref().and_then(|c| c.describe()) {
        s.push_str(&format!(" Coverage: {c}."));
    }
    if let Some(layers) = &r.sandbox {
        let missing = layers.missing();
        if missing.is_empty() {
            s.push_str(" Probes ran in the box, every layer held.");
        } else {
            s.push_str(&format!(
                " Probes ran in the box without: {}.",
                missing.join(", ")
            ));
        }
    }
    s.push_str("\n\n");
    if !r.reasoning.trim().is_empty() {
        s.push_str(&format!("{}\n\n", r.reasoning.trim()));
    }
    if !r.issues.is_empty() {
        s.push_str("| Severity | Category | Location | Issue |\n|---|---|---|---|\n");
        for i in &r.issues {
            s.push_str(&format!(
                "| {} | {} | `{}` | {} |\n",
                i.severity.as_str(),
                i.category.as_str(),
                location(i),
                i.description.trim().replace('|', "\\|").replace('\n', " ")
            ));
        }
    }
    s
}

/// A review as a SARIF 2.1.0 log: one result per issue, rule ids per category.
pub fn sarif(r: &ArbiterReview) -> Value {
    let categories = [
        Category::Logic,
        Category::Pattern,
        Category::Security,
        Category::Performance,
        Category::EdgeCase,
        Category::Hallucination,
    ];
    let rules: Vec<Value> = categories
        .iter()
        .map(|c| {
            json!({
                "id": format!("triad/{}", c.as_str()),
                "name": c.as_str(),
                "shortDescription": {"text": format!("git triad arbiter: {} issue", c.as_str().replace('_', " "))},
            })
        })
        .collect();
    let results: Vec<Value> = r
        .issues
        .iter()
        .map(|i| {
            let mut physical = json!({"artifactLocation": {"uri": i.path}});
            if let Some(start) = i.start_line.filter(|l| *l >= 1) {
                physical["region"] = json!({
                    "startLine": start,
                    "endLine": i.end_line.unwrap_or(start).max(start),
                });
            }
            let mut result = json!({
                "ruleId": format!("triad/{}", i.category.as_str()),
                "ruleIndex": categories.iter().position(|c| *c == i.category).unwrap_or(0),
                "level": match i.severity {
                    Severity::Critical => "error",
                    Severity::Warning => "warning",
                    Severity::Suggestion => "note",
                },
                "message": {"text": if i.suggestion.trim().is_empty() {
                    i.description.trim().to_string()
                } else {
                    format!("{} Suggested fix: {}", i.description.trim(), i.suggestion.trim())
                }},
                "locations": [{"physicalLocation": physical}],
                "properties": {"anchored": i.anchored, "source": i.source},
            });
            if let Some(sym) = &i.symbol {
                result["locations"][0]["logicalLocations"] =
                    json!([{"name": sym.name, "kind": sym.kind}]);
            }
            result
        })
        .collect();
    json!({
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{
            "tool": {"driver": {
                "name": "git-triad",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
            "properties": {"verdict": r.verdict, "arbiterModel": r.arbiter_model, "modelVerdict": r.model_verdict, "coverage": r.coverage},
        }],
    })
}
