//! What the arbiter is asked about one stage: the stage's claims, the tools' findings, the
//! verify command's result, the earlier flags, how to write a probe, and the diff, as one
//! strict-JSON request. (What its answer counts for is [`super::review`].)

use super::schema::{ArbiterAnswer, Issue};
use crate::code::Finding;
use crate::git::worktree::CommandOutcome;
use crate::model::structured::schema_for;
use crate::model::ChatRequest;

/// Everything the arbiter sees about a stage.
pub struct ReviewInput<'a> {
    /// Stage name (`architect`, `implement`, ...).
    pub stage: &'a str,
    /// The model that produced the stage.
    pub reviewed_model: &'a str,
    /// The TaskSpec as text.
    pub task: &'a str,
    /// The stage diff with new-side line numbers.
    pub diff: &'a str,
    /// What the stage said about its own work (summary, objections).
    pub stage_notes: &'a str,
    /// Deterministic findings (imports, syntax).
    pub findings: &'a [Finding],
    /// Issues flagged earlier in the run.
    pub previous_flags: &'a [Issue],
    /// The verify command's result, for the verify stage.
    pub verify: Option<&'a CommandOutcome>,
    /// The TaskSpec's requirement ids: an issue naming one stands without a quote.
    pub requirement_ids: &'a [String],
    /// How to write a probe for the files of this change (see `gather::probe_guide`).
    pub probe_guide: &'a str,
}

/// Output cap for arbiter answers.
pub const ARBITER_MAX_TOKENS: u32 = 4096;

/// Builds the arbiter request (strict JSON following [`ArbiterAnswer`]).
pub fn build_request(system_prompt: &str, input: &ReviewInput<'_>) -> ChatRequest {
    let mut u = format!(
        "STAGE REVIEWED: {} (produced by model {})\n\n{}\n",
        input.stage,
        input.reviewed_model,
        input.task.trim()
    );
    if !input.stage_notes.trim().is_empty() {
        u.push_str(&format!(
            "\n## What the stage says about its work (claims, not facts)\n{}\n",
            input.stage_notes.trim()
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
    if let Some(v) = input.verify {
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
    if !input.previous_flags.is_empty() {
        u.push_str("\n## Issues flagged earlier in this run (check they were addressed)\n");
        for i in input.previous_flags {
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
