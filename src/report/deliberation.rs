//! A run's deliberations as `git triad log <run>` shows them: who voted what and why, the
//! objections, the rebuttals, the tiebreaker's rulings and justification, the decision and
//! the arbiter's observation, in text or markdown.

use crate::bounded::indented as line;
use crate::consensus::{Ballot, Deliberation};
use crate::pipeline::record::ConsensusState;

/// The consensus section of a run's detail; empty when the run held none.
pub fn render(c: &ConsensusState, md: bool) -> String {
    let all: Vec<&Deliberation> = c.past.iter().chain(c.current.as_ref()).collect();
    if all.is_empty() {
        return String::new();
    }
    let mut o = String::from(if md {
        "\n### Consensus\n"
    } else {
        "\nconsensus:\n"
    });
    for (i, d) in all.iter().enumerate() {
        let panel: Vec<String> = d
            .voters
            .iter()
            .map(|v| format!("{} ({})", v.model, v.role))
            .collect();
        let tie = d.tiebreaker.as_deref().unwrap_or("none");
        o.push_str(&if md {
            format!(
                "\n**Deliberation {}** — panel: {}; tiebreaker: {tie}\n\n",
                i + 1,
                panel.join(", ")
            )
        } else {
            format!(
                "  deliberation {}: panel {}; tiebreaker {tie}\n",
                i + 1,
                panel.join(", ")
            )
        });
        for (model, why) in &d.absent {
            o.push_str(&line(md, 2, &format!("absent: {model}: {why}")));
        }
        for r in &d.rounds {
            o.push_str(&line(md, 2, &format!("round {}", r.n)));
            for b in &r.ballots {
                o.push_str(&ballot(b, md));
            }
            for x in &r.rebuttals {
                o.push_str(&line(
                    md,
                    3,
                    &format!("rebuttal by {}: {} [{}]", x.voter, x.argument, x.evidence),
                ));
            }
            if let Some(ruling) = &r.ruling {
                let what = if ruling.compelling {
                    "compelling: vote again"
                } else {
                    "not compelling: the majority stands"
                };
                o.push_str(&line(
                    md,
                    3,
                    &format!("tiebreaker: {what} — {}", ruling.justification),
                ));
            }
        }
        for (n, p) in d.papers.iter().enumerate() {
            o.push_str(&line(
                md,
                2,
                &format!(
                    "paper {} by {}: {} — {} (trade-offs: {})",
                    n + 1,
                    p.voter,
                    p.paper.choice,
                    p.paper.position,
                    p.paper.tradeoffs.join("; ")
                ),
            ));
        }
        match &d.decision {
            Some(dec) => {
                let mut s = format!(
                    "decision: {} ({}, {} round(s))",
                    dec.choice,
                    dec.by.as_str(),
                    dec.rounds
                );
                if !dec.justification.is_empty() {
                    s.push_str(&format!(
                        " — tiebreaker's justification: {}",
                        dec.justification
                    ));
                }
                for a in &dec.amendments {
                    s.push_str(&format!("; amendment: {a}"));
                }
                o.push_str(&line(md, 2, &s));
                for b in &dec.dissent {
                    o.push_str(&line(
                        md,
                        3,
                        &format!("dissent kept: {} ({}) {}", b.voter, b.role, b.choice),
                    ));
                }
            }
            None => o.push_str(&line(md, 2, "decision: none yet")),
        }
    }
    if let Some(obs) = &c.observation {
        let by = if obs.model.is_empty() {
            "the facts"
        } else {
            obs.model.as_str()
        };
        o.push_str(&line(
            md,
            1,
            &format!("observed by {by}: {} — {}", obs.verdict, obs.reasoning),
        ));
    }
    o
}

fn ballot(b: &Ballot, md: bool) -> String {
    let mut s = line(
        md,
        3,
        &format!(
            "{} ({}) votes {} ({:.2}): {}",
            b.voter, b.role, b.choice, b.confidence, b.rationale
        ),
    );
    for x in &b.objections {
        s.push_str(&line(
            md,
            4,
            &format!("objection: {} [{}]", x.text, x.evidence),
        ));
    }
    for a in &b.amendments {
        s.push_str(&line(md, 4, &format!("amendment: {a}")));
    }
    s
}
