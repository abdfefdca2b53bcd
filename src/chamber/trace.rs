//! A session for people: the synthesized answer signed by its arbiter (or the honest "no
//! consensus"), the minority, the notices, then the whole trace (every answer verbatim,
//! every divergence rule, the founder's part, the cost per model), as text or markdown.

use std::fmt::Write as _;

use super::answer::PanelAnswer;
use super::{Session, Status, Turn};

/// The session as markdown (also `trace.md` in its record).
pub fn markdown(session: &Session) -> String {
    render(session, true, true)
}

/// What `chamber ask` prints: the answer, its signature, the minority, the notices and the
/// cost, without the rounds (`chamber show` has them).
pub fn summary(session: &Session) -> String {
    render(session, false, false)
}

/// The session as plain text.
pub fn text(session: &Session) -> String {
    render(session, false, true)
}

/// One line for `chamber list`.
pub fn line(session: &Session) -> String {
    let outcome = match (session.status, session.synthesis()) {
        (Status::Stopped, _) => "stopped".to_string(),
        (_, Some(s)) if !s.consensus => "no consensus".to_string(),
        (_, Some(s)) => format!("{} ({}/10)", s.stance.trim(), s.confidence),
        (_, None) => "-".to_string(),
    };
    format!(
        "{}  L{}  {:<16} {:<28} {}\n",
        session.id,
        session.assessment.level.as_str(),
        session.status.as_str(),
        crate::bounded::clip(&outcome, 28),
        crate::bounded::clip(session.question.lines().next().unwrap_or(""), 60)
    )
}

fn render(s: &Session, md: bool, full: bool) -> String {
    let h = |level: usize, title: &str| {
        if md {
            format!("\n{} {title}\n\n", "#".repeat(level))
        } else {
            format!(
                "\n{title}\n{}\n",
                if level <= 2 { "=" } else { "-" }.repeat(title.chars().count())
            )
        }
    };
    let mut out = String::new();
    out.push_str(h(1, &format!("Chamber session {}", s.id)).trim_start());
    let _ = writeln!(out, "Question: {}", s.question.trim());
    let _ = writeln!(
        out,
        "Level {}{}; started {}{}",
        s.assessment.level.as_str(),
        s.founder_role
            .map(|r| format!(", founder role {}", r.as_str()))
            .unwrap_or_default(),
        s.created,
        s.opened_by
            .as_ref()
            .map(|r| format!(", opened by {r}"))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "{}", s.seats());
    if let Some(r) = s.rounds.first().filter(|r| !r.answers.is_empty()) {
        let answered = r.answers.iter().filter(|t| t.answer.is_some()).count();
        if answered < r.answers.len() {
            let _ = writeln!(
                out,
                "Degraded panel: {answered} of {} panelists answered.",
                r.answers.len()
            );
        }
    }
    let _ = writeln!(out, "Status: {}", s.status.as_str());
    if let Some(why) = &s.stop_reason {
        let _ = writeln!(out, "Stopped: {why}");
    }

    out.push_str(&h(2, "Answer"));
    match s.synthesis() {
        Some(syn) => {
            let _ = writeln!(
                out,
                "{}\n\nSynthesized by {} (arbiter), confidence {}/10{}.",
                syn.answer.trim(),
                s.arbiter,
                syn.confidence,
                if syn.consensus {
                    String::new()
                } else {
                    ": no consensus, a valid outcome".to_string()
                }
            );
            if syn.consensus {
                let _ = writeln!(out, "Stance: {}", syn.stance.trim());
            }
            if let Some(r) = &s.resolution {
                let _ = writeln!(out, "Resolution: {r}");
            }
            let _ = writeln!(out, "Reasoning: {}", syn.reasoning.trim());
            for p in &syn.positions {
                let _ = writeln!(
                    out,
                    "- evidence of {}: {:?} — {}",
                    p.panelist,
                    p.evidence_quality,
                    p.note.trim()
                );
            }
            if !syn.minority.is_empty() {
                out.push_str("Minority views:\n");
                for m in &syn.minority {
                    let _ = writeln!(out, "- {}: {}", m.panelist, m.view.trim());
                }
            }
            if !syn.self_check.trim().is_empty() {
                let _ = writeln!(out, "Self-check: {}", syn.self_check.trim());
            }
        }
        None => out.push_str("No synthesis.\n"),
    }
    if !s.notices.is_empty() {
        out.push_str(&h(2, "Notices"));
        for n in &s.notices {
            let _ = writeln!(out, "- {n}");
        }
    }

    if full {
        rounds(&mut out, s, &h);
    }
    cost(&mut out, s, &h);
    out
}

fn rounds(out: &mut String, s: &Session, h: &dyn Fn(usize, &str) -> String) {
    out.push_str(&h(2, "Criticality assessment"));
    for c in &s.assessment.criteria {
        let _ = writeln!(out, "- {c}");
    }
    let _ = writeln!(out, "- decided by: {}", s.assessment.source);

    for r in &s.rounds {
        out.push_str(&h(2, &format!("Round: {}", r.kind)));
        if let Some(added) = &r.added_context {
            let _ = writeln!(out, "{}\n", added.trim());
        }
        out.push_str(&h(3, "Independent answers"));
        turns(out, &r.answers);
        if let Some(a) = &r.assessment {
            out.push_str(&h(3, "Arbiter's initial assessment"));
            turns(out, std::slice::from_ref(a));
        }
        if let Some(rules) = &r.divergence {
            out.push_str(&h(3, "Divergence detection"));
            for rule in rules {
                let _ = writeln!(out, "- {rule}");
            }
        }
        out.push_str(&h(3, "Cross-examination"));
        if r.cross.is_empty() {
            out.push_str(if r.cross_done {
                "Not held: no divergence rule fired.\n"
            } else {
                "Not reached.\n"
            });
        } else {
            turns(out, &r.cross);
        }
        if !r.checks.is_empty() {
            out.push_str(&h(3, "Checks of the founder's claim"));
            turns(out, &r.checks);
        }
        if let Some(t) = &r.synthesis {
            out.push_str(&h(3, "Arbiter's synthesis, verbatim"));
            turns(out, std::slice::from_ref(t));
        }
    }

    if s.founder_role.is_some() || !s.actions.is_empty() {
        out.push_str(&h(2, "Founder"));
        let _ = writeln!(
            out,
            "founder_role: {}\nfounder_action: {}",
            s.founder_role.map_or("-", |r| r.as_str()),
            s.founder_action.map_or("-", |a| a.as_str())
        );
        if let Some(i) = &s.founder_input {
            let _ = writeln!(out, "founder_input:\n{}", answer(i));
        }
        for (n, c) in s.challenges.iter().enumerate() {
            let _ = writeln!(out, "challenge {}:\n{}", n + 1, answer(c));
        }
        if let Some(v) = &s.verification {
            let _ = writeln!(
                out,
                "claim checked:\n{}outcome: {}",
                answer(&v.claim),
                if v.outcome.is_empty() {
                    "not checked yet"
                } else {
                    &v.outcome
                }
            );
            for item in &v.sources {
                let first = item.text.lines().next().unwrap_or_default();
                let _ = writeln!(out, "source: {} ({first})", item.label);
            }
        }
        for a in &s.actions {
            let _ = writeln!(
                out,
                "- {} {}{}",
                a.at,
                a.action.as_str(),
                a.note
                    .as_ref()
                    .map(|n| format!(": {n}"))
                    .unwrap_or_default()
            );
        }
    }
}

fn cost(out: &mut String, s: &Session, h: &dyn Fn(usize, &str) -> String) {
    out.push_str(&h(2, "Cost"));
    for (m, sp) in s.spend_by_model() {
        let _ = writeln!(
            out,
            "- {m}: ${:.4}, {} tokens in, {} out, {:.1} s",
            sp.cost_usd,
            sp.input_tokens,
            sp.output_tokens,
            sp.latency_ms as f64 / 1000.0
        );
    }
    let total = s.spend();
    let _ = writeln!(
        out,
        "Total: ${:.4}; session duration {:.1} s",
        total.cost_usd,
        s.duration_ms as f64 / 1000.0
    );
}

fn answer(a: &PanelAnswer) -> String {
    super::brief::render_answer(a)
}

fn turns(out: &mut String, turns: &[Turn]) {
    for t in turns {
        let ids = match (&t.reported_id, t.model_mismatch) {
            (Some(r), true) => format!(
                " [asked for {}, the server answered as {r}]",
                t.requested_id
            ),
            _ => String::new(),
        };
        match (&t.answer, &t.failure) {
            (Some(v), _) => {
                let body = match t.panel_answer() {
                    Some(a) => answer(&a),
                    None => format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default()),
                };
                let _ = writeln!(out, "{}{ids}:\n{body}", t.model);
            }
            (None, Some(f)) => {
                let _ = writeln!(out, "{}{ids}: no answer ({f})\n", t.model);
            }
            (None, None) => {
                let _ = writeln!(out, "{}: not asked\n", t.model);
            }
        }
    }
}
