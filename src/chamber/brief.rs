//! The texts the chamber's models read: the identical brief every panelist gets, the
//! cross-examination, the claim to check, and the arbiter's dossier. The system prompts are
//! the templates in `config/prompts/chamber_*.md`; the clauses the seed requires verbatim
//! (conflict of interest, founder input) are fixed files no config can replace.

use std::fmt::Write as _;

use super::answer::PanelAnswer;
use super::{Round, Session, Turn};

/// The conflict-of-interest clause, added when the arbiter is also a panelist.
pub const CONFLICT_CLAUSE: &str = include_str!("../../config/prompts/chamber_conflict.md");

/// The founder clause, added when the arbiter sees the founder's input (Level 3).
pub const FOUNDER_CLAUSE: &str = include_str!("../../config/prompts/chamber_founder.md");

/// The question and its context, as every panelist reads them (identically).
pub fn question(session: &Session, round: &Round) -> String {
    let mut out = format!("# Question\n\n{}\n", session.question.trim());
    if !session.context.is_empty() {
        out.push_str("\n# Context\n");
        for item in &session.context {
            let _ = write!(out, "\n## {}\n\n{}\n", item.label, item.text.trim_end());
        }
    }
    if let Some(added) = &round.added_context {
        let _ = write!(
            out,
            "\n# Added for this round ({})\n\n{}\n",
            round.kind, added
        );
    }
    out
}

/// Phase 1: the question alone.
pub fn independent(session: &Session, round: &Round) -> String {
    format!(
        "{}\nAnswer with JSON only: `stance`, `reasoning`, `confidence` (1-10), `evidence` \
         (primary first).\n",
        question(session, round)
    )
}

/// One panel answer, for another model to read.
pub fn render_answer(a: &PanelAnswer) -> String {
    let mut out = format!(
        "- stance: {}\n- confidence: {}/10\n- reasoning: {}\n",
        a.stance.trim(),
        a.confidence,
        a.reasoning.trim()
    );
    for e in &a.evidence {
        let _ = writeln!(out, "- evidence: {}", e.trim());
    }
    out
}

/// The single cross-examination round: a panelist's own answer and the others'.
pub fn cross(session: &Session, round: &Round, own: &Turn) -> String {
    let mut out = question(session, round);
    if let Some(a) = own.panel_answer() {
        let _ = write!(out, "\n# Your independent answer\n\n{}", render_answer(&a));
    }
    out.push_str("\n# The other panelists' independent answers\n");
    for t in round.answers.iter().filter(|t| t.model != own.model) {
        if let Some(a) = t.panel_answer() {
            let _ = write!(out, "\n## {}\n\n{}", t.model, render_answer(&a));
        }
    }
    out.push_str(
        "\nThis is the one and only round of cross-examination. Reconsider your answer in the \
         light of the others: keep your stance or change it, for a reason, and address the \
         strongest point against you in `reasoning`. Do not move toward the others to agree, \
         nor away from them to differ. Answer with JSON only, in the same schema.\n",
    );
    out
}

/// Verifier mode: the founder's claim, to be checked as a hypothesis.
pub fn check(session: &Session, round: &Round, claim: &PanelAnswer) -> String {
    let sources = session
        .verification
        .as_ref()
        .map_or(&[][..], |v| &v.sources[..]);
    let mut shown = String::new();
    if !sources.is_empty() {
        shown.push_str("\n# Sources (read and run by git triad, not by a model: facts)\n");
        for item in sources {
            let _ = write!(shown, "\n## {}\n\n{}\n", item.label, item.text);
        }
    }
    format!(
        "{}\n# A claim to check\n\nThe founder claims the following. Treat it as a hypothesis \
         to verify, not as evidence: check it against the sources, the context and what you \
         know.\n\n{}\n{shown}\n\
         Answer with JSON only: `stance` is `verified`, `falsified` or `undetermined`; \
         `reasoning` says how you checked; `evidence` is what decided it, naming each source \
         by its label.\n",
        question(session, round),
        render_answer(claim)
    )
}

/// The arbiter's initial look: the independent answers only.
pub fn assessment(session: &Session, round: &Round) -> String {
    let mut out = question(session, round);
    out.push_str("\n# Independent answers\n");
    for t in &round.answers {
        if let Some(a) = t.panel_answer() {
            let _ = write!(out, "\n## {}\n\n{}", t.model, render_answer(&a));
        }
    }
    out
}

/// The arbiter's dossier: every answer of the round, the divergence evaluation, and the
/// founder's part.
pub fn dossier(session: &Session, round: &Round, challenge_round: bool) -> String {
    let mut out = question(session, round);
    let _ = write!(
        out,
        "\n# The panel\n\n{} You are the arbiter, {}.\n",
        session.seats(),
        session.arbiter
    );
    for t in &round.answers {
        match t.panel_answer() {
            Some(a) => {
                let _ = write!(
                    out,
                    "\n## {} — independent answer\n\n{}",
                    t.model,
                    render_answer(&a)
                );
            }
            None => {
                let _ = write!(out, "\n## {} — no answer (did not take part)\n", t.model);
            }
        }
    }
    for t in &round.cross {
        if let Some(a) = t.panel_answer() {
            let _ = write!(
                out,
                "\n## {} — after cross-examination\n\n{}",
                t.model,
                render_answer(&a)
            );
        }
    }
    if let Some(rules) = &round.divergence {
        out.push_str("\n# Divergence detection\n\n");
        for r in rules {
            let _ = writeln!(out, "- {r}");
        }
    }
    if let Some(input) = &session.founder_input {
        let _ = write!(out, "\n# Founder's input\n\n{}", render_answer(input));
    }
    if let Some(v) = &session.verification {
        let _ = write!(
            out,
            "\n# Verification of a claim (evidence, not the founder's voice)\n\nClaim: {}\n\
             Outcome of the panel's checks: {}\n",
            v.claim.stance.trim(),
            v.outcome
        );
        for t in &round.checks {
            if let Some(a) = t.panel_answer() {
                let _ = write!(out, "\n## {} — check\n\n{}", t.model, render_answer(&a));
            }
        }
    }
    if challenge_round {
        let _ = write!(
            out,
            "\n# Resolution required\n\nThe founder challenged the earlier synthesis ({}). \
             `resolution` must be GO, NO-GO or NEED MORE DATA.\n",
            round.kind
        );
    }
    let _ = write!(
        out,
        "\nName panelists in `positions` and `minority` exactly as: {}.\n",
        session.panel.join(", ")
    );
    out
}
