//! A run's progress as plain text: one line per event, what `git triad run` prints on
//! stderr (`triad: …`) and what the live view keeps above its live lines.

use crate::pipeline::{Progress, VerifySkip};

/// The line `event` shows, if it shows one (a stop is explained by the summary after it).
pub fn line(event: &Progress<'_>) -> Option<String> {
    let line = match *event {
        Progress::StageStarted {
            stage,
            position: (i, of),
            model,
            attempt: (n, max),
        } => format!("[{}/{of} {stage}] {model}, attempt {n} of {max}", i + 1),
        Progress::Answered {
            stage,
            seconds,
            spend,
        } => format!(
            "[{stage}] answered in {seconds:.1} s, {} tokens, ${:.4}",
            spend.tokens(),
            spend.cost_usd
        ),
        Progress::AttemptRefused {
            stage,
            n,
            result,
            detail,
        } => format!("[{stage}] attempt {n} {}: {detail}", result.as_str()),
        Progress::ReviewStarted { stage, arbiter } => format!("[{stage}] review by {arbiter}"),
        Progress::Reviewed { stage, review } => {
            let because = |label: String, f: &Option<crate::arbiter::Floor>| {
                f.as_ref()
                    .map(|f| format!(" ({label}: {})", f.reasons.join("; ")))
                    .unwrap_or_default()
            };
            format!(
                "[{stage}] arbiter {}: {}{}{}",
                review.arbiter_model,
                review.verdict,
                because(
                    format!("the model said {}", review.model_verdict),
                    &review.derived
                ),
                because("raised by deterministic evidence".into(), &review.floor),
            )
        }
        Progress::VerifyStarted { command, at } => format!(
            "verify: running `{command}` in the box on a copy of {}",
            at.short()
        ),
        Progress::VerifyFinished { outcome } if outcome.refused() => {
            format!("verify: {}", outcome.tail)
        }
        Progress::VerifyFinished { outcome } => {
            let mut line = format!(
                "verify: exit {} in {} ms",
                outcome
                    .exit_code
                    .map_or("none".to_string(), |c| c.to_string()),
                outcome.duration_ms
            );
            if let Some(by) = &outcome.stopped_by {
                line.push_str(&format!(" (stopped by the {by})"));
            }
            if !outcome.left_out.is_empty() {
                line.push_str(&format!(
                    "; left out of its scratch copy (never written, never run): {}",
                    outcome.left_out.join("; ")
                ));
            }
            let missing = outcome.layers.as_ref().map(|l| l.missing()).unwrap_or_default();
            if !missing.is_empty() {
                line.push_str(&format!(
                    "; the box ran it without its {} layer(s) (git triad doctor)",
                    missing.join(", ")
                ));
            }
            line
        }
        Progress::VerifySkipped { why } => match why {
            VerifySkip::Untrusted => format!(
                "{} (after reading it, `git config triad.trusted true`)",
                why.describe()
            ),
            VerifySkip::NotConfigured => why.describe().to_string(),
        },
        Progress::StageSkipped { stage, why } => format!("[{stage}] skipped: {why}"),
        Progress::Rewound { to, model } => format!("rewound to {to} with model {model}"),
        Progress::Dropped { stage, why, best } => format!(
            "[{stage}] dropped, back to the best evidenced commit {}: {why}",
            best.short()
        ),
        Progress::Reassigned { from, to, model } => format!(
            "[{from}] out of its scope: the arbiter gave the work to the {to} stage ({model})"
        ),
        Progress::ReconcileStarted { model } => format!(
            "[reconcile] {} checks the result against the TaskSpec",
            model.unwrap_or("(no model)")
        ),
        Progress::Reconciled {
            model,
            verdict,
            raised,
        } => format!(
            "[reconcile] {model}: {verdict}{}",
            raised
                .map(|(from, why)| format!(" (raised from {from} by facts: {})", why.join("; ")))
                .unwrap_or_default()
        ),
        Progress::ReconcileRewind { to } => {
            format!("reconciliation REJECT: rewinding to the {to} stage once")
        }
        Progress::ConsensusStarted { voters, tiebreaker } => format!(
            "[consensus] {} vote on the refactored result; tiebreaker: {}",
            voters.join(", "),
            tiebreaker.unwrap_or("none (a deadlock goes to you)")
        ),
        Progress::Deliberated { who, what } => format!("[consensus] {who} {what}"),
        Progress::Explored { who, what } => format!("[parallel] {who} {what}"),
        Progress::Debated { who, what } => format!("[debate] {who} {what}"),
        Progress::Chamber { stage, line } => format!("[{stage}] {line}"),
        Progress::Economized {
            stage,
            from,
            to,
            spent,
            budget,
        } => format!(
            "[{stage}] cost routing: ${spent:.4} of the ${budget:.2} budget spent, so this unreviewed stage asks the cheaper {to} instead of {from}"
        ),
        Progress::Formatted { command, detail } => format!("[format] `{command}`: {detail}"),
        Progress::Superseded { line } => line.to_string(),
        Progress::ConsensusDecided {
            choice,
            by,
            observed,
            degraded,
        } => format!(
            "[consensus] decided: {choice} ({by}){}{}",
            observed
                .map(|v| format!("; the arbiter observes {v}"))
                .unwrap_or_default(),
            if degraded {
                "; fewer agents voted than were called"
            } else {
                ""
            }
        ),
        // A stop is explained by the summary that follows; a finish is said here.
        Progress::Ended { state }
            if state
                .stop_reason()
                .as_ref()
                .is_some_and(|r| matches!(r, crate::pipeline::StopReason::Finished { .. })) =>
        {
            crate::report::run::message(state)
        }
        Progress::Ended { .. } => return None,
    };
    Some(line)
}
