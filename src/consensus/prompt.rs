//! What each call of a deliberation is told: the same question, context and evidence for
//! every agent, and for the tiebreaker everything the agents said.
//!
//! Pure text: the pipeline supplies the task, the diff and the evidence; nothing here calls
//! a model or reads the repository.

use super::ballot::Ballot;
use super::deliberation::{Deliberation, Round};

/// What every agent of a deliberation is shown, identically.
pub struct Question<'a> {
    /// The question put to the vote, one sentence.
    pub ask: &'a str,
    /// The TaskSpec, rendered.
    pub task: &'a str,
    /// The run's diff, base to tip (private files withheld).
    pub diff: &'a str,
    /// The deterministic findings on the changed files, one per line (empty: none).
    pub evidence: &'a str,
}

impl Question<'_> {
    fn context(&self) -> String {
        let evidence = if self.evidence.trim().is_empty() {
            "none: the syntax and import checks found nothing".to_string()
        } else {
            self.evidence.to_string()
        };
        format!(
            "QUESTION: {}\n\nTASK:\n{}\n\nTHE RUN'S CHANGE (base to tip):\n{}\n\nHARD EVIDENCE (deterministic checks, not opinions):\n{}\n",
            self.ask, self.task, self.diff, evidence
        )
    }
}

fn ballot_line(b: &Ballot) -> String {
    let mut s = format!(
        "- {} ({}): {} (confidence {:.2}): {}",
        b.role, b.voter, b.choice, b.confidence, b.rationale
    );
    for o in &b.objections {
        s.push_str(&format!("\n    objection: {} [{}]", o.text, o.evidence));
    }
    for a in &b.amendments {
        s.push_str(&format!("\n    amendment: {a}"));
    }
    s
}

fn round_text(r: &Round) -> String {
    let mut s = format!("Round {}:\n", r.n);
    for b in &r.ballots {
        s.push_str(&ballot_line(b));
        s.push('\n');
    }
    for x in &r.rebuttals {
        s.push_str(&format!(
            "  rebuttal by {}: {} [{}]\n",
            x.voter, x.argument, x.evidence
        ));
    }
    if let Some(ruling) = &r.ruling {
        s.push_str(&format!(
            "  tiebreaker's ruling: {} — {}\n",
            if ruling.compelling {
                "compelling, vote again"
            } else {
                "not compelling, the majority stands"
            },
            ruling.justification
        ));
    }
    s
}

/// A vote request for `role`. Round 1 shows nothing of the others (independent answers);
/// later rounds show every earlier round, rebuttals and rulings included.
pub fn vote(q: &Question<'_>, d: &Deliberation, round: u32, role: &str) -> String {
    let mut s = format!(
        "ROLE: voter ({role})\nYou are one of {} agents voting on the same question with the same context. Give your best independent answer: approve (proceed as it is), amend (proceed after the amendments you name) or reject (do not proceed; say why). Ground every objection in the change or the evidence.\n\n{}",
        d.voters.len(),
        q.context()
    );
    if round > 1 {
        s.push_str("\nEARLIER ROUNDS (the tiebreaker found a rebuttal compelling; vote again):\n");
        for r in d.rounds.iter().filter(|r| r.n < round) {
            s.push_str(&round_text(r));
        }
    }
    s
}

/// A rebuttal request for a dissenter of the last round.
pub fn rebuttal(q: &Question<'_>, d: &Deliberation, voter: &str) -> String {
    let last = d.rounds.last().map(round_text).unwrap_or_default();
    format!(
        "ROLE: dissenter\nYou ({voter}) voted against the majority. You have one rebuttal in this deliberation: make the strongest case, with evidence, that the majority is wrong. The tiebreaker will judge whether it is compelling.\n\n{}\nTHE VOTE:\n{last}",
        q.context()
    )
}

/// The tiebreaker's request to judge the last round's rebuttals.
pub fn ruling(q: &Question<'_>, d: &Deliberation) -> String {
    let last = d.rounds.last().map(round_text).unwrap_or_default();
    format!(
        "ROLE: tiebreaker\nYou did not vote. Judge the dissenters' rebuttals below: are they compelling enough that the agents must vote again? Weigh evidence, not numbers; do not side with the majority because it is the majority. Justify in writing.\n\n{}\nTHE VOTE AND ITS REBUTTALS:\n{last}",
        q.context()
    )
}

/// A position-paper request (no position had a majority).
pub fn paper(q: &Question<'_>, d: &Deliberation, voter: &str) -> String {
    let last = d.rounds.last().map(round_text).unwrap_or_default();
    format!(
        "ROLE: author of a position paper\nNo position won a majority. You ({voter}) write a position paper: the position you argue for, your argument with evidence, and the trade-offs it accepts, explicitly. The tiebreaker will select one paper.\n\n{}\nTHE VOTE:\n{last}",
        q.context()
    )
}

/// The tiebreaker's request to select among the papers, numbered from 1.
pub fn selection(q: &Question<'_>, d: &Deliberation) -> String {
    let mut papers = String::new();
    for (i, p) in d.papers.iter().enumerate() {
        papers.push_str(&format!(
            "Paper {} by {} — position: {}\n{}\ntrade-offs: {}\namendments: {}\n\n",
            i + 1,
            p.voter,
            p.paper.choice,
            p.paper.position,
            p.paper.tradeoffs.join("; "),
            p.paper.amendments.join("; ")
        ));
    }
    format!(
        "ROLE: tiebreaker\nYou did not vote. Select the winning position paper by the quality of its evidence and reasoning (surface disagreement is not substance). Answer with its number and a written justification that says why it beats each other paper.\n\n{}\nPOSITION PAPERS:\n{papers}",
        q.context()
    )
}

/// The tiebreaker's request to decide alone (rounds used up, or too few agents).
pub fn unilateral(q: &Question<'_>, d: &Deliberation) -> String {
    let mut history = String::new();
    for r in &d.rounds {
        history.push_str(&round_text(r));
    }
    if history.is_empty() {
        history = "(no vote could be held: too few agents took part)\n".into();
    }
    format!(
        "ROLE: tiebreaker\nThe agents did not settle this within the rounds allowed. Decide alone: approve, amend (name the amendments) or reject, with a written justification that answers the strongest argument on each side.\n\n{}\nTHE DELIBERATION:\n{history}",
        q.context()
    )
}

/// Everything said in a deliberation, for the run record and a user deciding by hand.
pub fn transcript(d: &Deliberation) -> String {
    let mut s = String::new();
    for r in &d.rounds {
        s.push_str(&round_text(r));
    }
    for (i, p) in d.papers.iter().enumerate() {
        s.push_str(&format!(
            "Paper {} by {}: {} — {}\n",
            i + 1,
            p.voter,
            p.paper.choice,
            p.paper.position
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consensus::ballot::Choice;
    use crate::consensus::deliberation::Voter;

    fn q() -> Question<'static> {
        Question {
            ask: "Proceed?",
            task: "Add sub",
            diff: "+def sub",
            evidence: "",
        }
    }

    #[test]
    fn the_first_vote_is_blind_and_later_votes_see_the_record() {
        let mut d = Deliberation::new(
            vec![
                Voter {
                    model: "a".into(),
                    role: "architect".into(),
                },
                Voter {
                    model: "b".into(),
                    role: "implementer".into(),
                },
            ],
            None,
        );
        let first = vote(&q(), &d, 1, "architect");
        assert!(first.contains("2 agents") && first.contains("none: the syntax"));
        assert!(!first.contains("EARLIER ROUNDS"));
        d.record_ballot(
            1,
            Ballot {
                voter: "b".into(),
                role: "implementer".into(),
                choice: Choice::Reject,
                rationale: "sub ignores floats".into(),
                confidence: 0.6,
                objections: vec![],
                amendments: vec![],
            },
        );
        // A voter of round 1 who has not voted yet still sees nothing of b's ballot.
        assert!(!vote(&q(), &d, 1, "architect").contains("sub ignores floats"));
        assert!(vote(&q(), &d, 2, "architect").contains("sub ignores floats"));
    }
}
