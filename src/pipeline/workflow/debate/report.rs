//! A debate as `git triad log <run>` shows it: who argued which position, each position
//! paper with its trade-offs, the rebuttals, the final arguments, who dropped out and when,
//! the cost and latency of every call, and the tiebreaker's judgment with its justification.

use serde::Serialize;

use crate::bounded::indented as line;
use crate::model::Spend;
use crate::pipeline::record::{DebatePhase, DebateState, Speech};
use crate::pipeline::workflow::panel::{panel_words, summary_line};
use crate::workflow_name::Workflow;

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

/// The end-of-run line of a debate: which position won among how many debaters, and
/// whether the panel was complete.
pub fn summary(d: &DebateState) -> String {
    let gone = d.degraded().then(|| {
        let who = d.debaters.iter().filter(|x| x.absent.is_some());
        ("dropped out", who.map(|x| x.model.as_str()).collect())
    });
    let panel = panel_words(d.standing().count(), d.models.len(), "debaters", gone);
    let won = d.judgment.as_ref().map(|j| {
        format!(
            "position {} ({}) won, judged by {},",
            j.label, j.winner, j.model
        )
    });
    summary_line(Workflow::Debate, won, "no judgment", &panel)
}

/// The debate of a run's `--json` report.
#[derive(Debug, Serialize)]
pub struct DebateReport<'a> {
    /// The debaters.
    pub debaters: &'a [String],
    /// Those still standing.
    pub standing: Vec<&'a str>,
    /// Whether some fell out.
    pub degraded: bool,
    /// The judge.
    pub tiebreaker: &'a Option<String>,
    /// The winner.
    pub winner: Option<&'a str>,
    /// Its position.
    pub position: Option<&'a str>,
    /// Why the judge chose it, naming the arguments it accepted and rejected.
    pub justification: Option<&'a str>,
    /// What the architect was given to build, as the judge decided it.
    pub decision: Option<&'a str>,
    /// What the debate cost.
    #[serde(serialize_with = "crate::model::usage::rounded_usd")]
    pub cost_usd: f64,
}

impl<'a> DebateReport<'a> {
    /// What `--json` says of `d`.
    pub fn of(d: &'a DebateState) -> Self {
        DebateReport {
            debaters: &d.models,
            standing: d.standing().map(|x| x.model.as_str()).collect(),
            degraded: d.degraded(),
            tiebreaker: &d.tiebreaker,
            winner: d.judgment.as_ref().map(|j| j.winner.as_str()),
            position: d.judgment.as_ref().map(|j| j.label.as_str()),
            justification: d.judgment.as_ref().map(|j| j.justification.as_str()),
            decision: d.judgment.as_ref().map(|j| j.decision.as_str()),
            cost_usd: d.spend().cost_usd,
        }
    }
}
