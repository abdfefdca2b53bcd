//! What the arbiter is asked about one stage: the stage's claims, the tools' findings, the
//! verify command's result, the earlier flags, how to write a probe, and the diff, as one
//! strict-JSON request. (What its answer counts for is [`super::review`].)

use super::schema::{ArbiterAnswer, Issue};
use crate::code::Finding;
use crate::model::structured::schema_for;
use crate::model::ChatRequest;
use crate::sandbox::CommandOutcome;

/// What the reviewer is told besides the change itself.
pub struct Brief<'a> {
    /// Stage name (`implement`, `review`, …).
    pub stage: &'a str,
    /// The model (or `human`) that produced the change.
    pub reviewed_model: &'a str,
    /// The task as prompt text.
    pub task: &'a str,
    /// What the producer said about its work.
    pub stage_notes: &'a str,
    /// Issues flagged earlier in the run.
    pub previous_flags: &'a [Issue],
    /// The verify command's result, when it ran for this change.
    pub verify: Option<&'a CommandOutcome>,
    /// The TaskSpec's requirement ids: an issue naming one stands without a quote.
    pub requirement_ids: &'a [String],
}

/// Everything the arbiter sees about a stage: the brief, and the change with its facts.
pub struct ReviewInput<'a> {
    /// What it is told besides the change.
    pub brief: &'a Brief<'a>,
    /// The stage diff with new-side line numbers.
    pub diff: &'a str,
    /// Deterministic findings (imports, syntax).
    pub findings: &'a [Finding],
    /// How to write a probe for the files of this change (see `gather::probe_guide`).
    pub probe_guide: &'a str,
    /// More facts of the change, as sections (its behaviour diff, its tests run on both
    /// sides); empty when none.
    pub facts: &'a str,
}

/// Output cap for arbiter answers.
pub const ARBITER_MAX_TOKENS: u32 = 4096;

/// Builds the arbiter request (strict JSON following [`ArbiterAnswer`]).
pub fn build_request(system_prompt: &str, input: &ReviewInput<'_>) -> ChatRequest {
    let mut u = format!(
        "STAGE REVIEWED: {} (produced by model {})\n\n{}\n",
        input.brief.stage,
        input.brief.reviewed_model,
        input.brief.task.trim()
    );
    if !input.brief.stage_notes.trim().is_empty() {
        u.push_str(&format!(
            "\n## What the stage says about its work (claims, not facts)\n{}\n",
            input.brief.stage_notes.trim()
        ));
    }
    u.push_str("\n## Deterministic findings (established by tools; not negotiable)\n");
    if input.findings.is_empty() {
        u.push_str("none: every added import resolves and no new syntax errors were found\n");
    }
    for f in input.findings {
        u.push_str(&format!(
            "- [{} {}] {}:{}{} {}\n",
            f.severity,
            f.kind,
            f.path,
            f.line,
            f.symbol
                .as_ref()
                .map(|s| format!(" (in {} {})", s.kind, s.name))
                .unwrap_or_default(),
            f.reason
        ));
    }
    if !input.facts.trim().is_empty() {
        u.push('\n');
        u.push_str(input.facts.trim_end());
        u.push('\n');
    }
    if let Some(v) = input.brief.verify {
        u.push_str(&format!(
            "\n## Verify command result (a fact)\ncommand: {}\nexit code: {}\n{}output tail:\n{}\n",
            v.command,
            v.exit_code
                .map(|c| c.to_string())
                .unwrap_or_else(|| "none (killed)".into()),
            if v.timed_out { "TIMED OUT\n" } else { "" },
            v.tail
        ));
    }
    if !input.brief.previous_flags.is_empty() {
        u.push_str("\n## Issues flagged earlier in this run (check they were addressed)\n");
        for i in input.brief.previous_flags {
            u.push_str(&format!("- {}: {}\n", i.path, i.description));
        }
    }
    if !input.probe_guide.trim().is_empty() {
        u.push_str(&format!(
            "\n## Probes: show each claimed defect with code that fails\n{}\n",
            input.probe_guide.trim()
        ));
    }
    u.push_str(&format!(
        "\n## The diff to review (line numbers are those of the NEW file)\n{}\n",
        if input.diff.trim().is_empty() {
            "(the stage changed no files)"
        } else {
            input.diff
        }
    ));
    u.push_str("\nAnswer with the JSON review object only.\n");
    let mut req = ChatRequest::new(Some(system_prompt.to_string()), u, ARBITER_MAX_TOKENS);
    req.schema = Some(schema_for::<ArbiterAnswer>("arbiter_review"));
    req.temperature = Some(0.0);
    req
}
