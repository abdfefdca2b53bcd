//! A debate as `git triad log <run>` shows it: who argued which position, each position
//! paper with its trade-offs, the rebuttals, the final arguments, who dropped out and when,
//! the cost and latency of every call, and the tiebreaker's judgment with its justification.

use super::deliberation::line;
use crate::model::Spend;
use crate::pipeline::record::{DebatePhase, DebateState, FormatRecord, Speech};

/// The debate section of a run's detail.
pub fn render(d: &DebateState, md: bool) -> String {
    let mut o = String::from(if md {
        "\n### Debate\n\n"
    } else {
        "\ndebate:\n"
    });
    let standing = d.standing().count();
    let panel = if d.degraded() {
        format!(
            "DEGRADED: {standing} of {} debaters argued to the end",
            d.models.len()
        )
    } else {
        format!("all {standing} debaters argued")
    };
    let phases: Vec<String> = d
        .phase_ms
        .iter()
        .map(|(p, ms)| format!("{} {ms} ms", p.speech()))
        .collect();
    o.push_str(&line(
        md,
        1,
        &format!(
            "{panel}; judge: {}{}",
            d.tiebreaker.as_deref().unwrap_or("none"),
            if phases.is_empty() {
                String::new()
            } else {
                format!(" (wall time: {})", phases.join(", "))
            }
        ),
    ));
    for x in &d.debaters {
        o.push_str(&line(
            md,
            1,
            &format!("position {} argued by {}", x.label, x.model),
        ));
        for phase in DebatePhase::ALL {
            if let Some(s) = x.speech(phase) {
                o.push_str(&speech(phase, s, d, md));
            }
        }
        if let Some(a) = &x.absent {
            o.push_str(&line(
                md,
                2,
                &format!("dropped out at the {}: {}", a.phase.speech(), a.why),
            ));
        }
    }
    match &d.judgment {
        Some(j) => {
            o.push_str(&line(
                md,
                1,
                &format!(
                    "judgment by {}: position {} ({}) wins{} {}",
                    j.model,
                    j.label,
                    j.winner,
                    if d.degraded() {
                        format!(" among {standing} of {} debaters", d.models.len())
                    } else {
                        String::new()
                    },
                    cost(&j.spend)
                ),
            ));
            o.push_str(&line(md, 2, &format!("justification: {}", j.justification)));
            o.push_str(&line(md, 2, &format!("decision: {}", j.decision)));
        }
        None => o.push_str(&line(md, 1, "judgment: none yet")),
    }
    o
}

fn cost(s: &Spend) -> String {
    format!("[${:.4}, {} ms]", s.cost_usd, s.latency_ms)
}

fn speech(phase: DebatePhase, s: &Speech, d: &DebateState, md: bool) -> String {
    let label = |m: &str| d.debater(m).map_or("?", |x| x.label.as_str());
    let mut o = String::new();
    let head = match phase {
        DebatePhase::Rebuttals => format!("rebuttal {}", cost(&s.spend)),
        _ => format!(
            "{} {}: {} — {}",
            phase.speech(),
            cost(&s.spend),
            s.approach,
            s.text
        ),
    };
    o.push_str(&line(md, 2, &head));
    if !s.tradeoffs.is_empty() {
        o.push_str(&line(
            md,
            3,
            &format!("trade-offs: {}", s.tradeoffs.join("; ")),
        ));
    }
    for a in &s.against {
        o.push_str(&line(
            md,
            3,
            &format!("against {} ({}): {}", label(&a.model), a.model, a.argument),
        ));
    }
    if !s.concessions.is_empty() {
        let what = match phase {
            DebatePhase::Finals => "changed",
            _ => "concedes",
        };
        o.push_str(&line(
            md,
            3,
            &format!("{what}: {}", s.concessions.join("; ")),
        ));
    }
    o
}

/// The formatter section of a run's detail: every time it ran, how, and its commit.
pub fn format_section(runs: &[FormatRecord], md: bool) -> String {
    if runs.is_empty() {
        return String::new();
    }
    let mut o = String::from(if md {
        "\n### Formatter\n\n"
    } else {
        "\nformatter:\n"
    });
    for f in runs {
        let at = f.commit.as_ref().map_or(String::from("no commit"), |c| {
            format!("commit {}", c.short())
        });
        let exit = f
            .outcome
            .exit_code
            .map_or("killed".to_string(), |c| format!("exit {c}"));
        o.push_str(&line(
            md,
            1,
            &format!(
                "`{}` on {} ({exit}, {} ms): {at} — {}",
                f.outcome.command,
                f.input.short(),
                f.outcome.duration_ms,
                f.detail
            ),
        ));
        if f.failed() && !f.outcome.tail.trim().is_empty() {
            o.push_str(&line(
                md,
                2,
                &format!(
                    "output: {}",
                    crate::bounded::clip(f.outcome.tail.trim(), 500)
                ),
            ));
        }
    }
    o
}
