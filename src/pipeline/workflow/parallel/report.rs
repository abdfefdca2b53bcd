//! A parallel exploration as `git triad log <run>` shows it: every candidate with its
//! branch and commit (or why it took no part), each one's ratings of the others and its
//! vote (refused ballots included), the winner and how it won, and the synthesis.

use serde::Serialize;

use crate::bounded::indented as line;
use crate::pipeline::record::ParallelState;
use crate::pipeline::record::{CandidateReview, CrossReview};
use crate::pipeline::workflow::panel::{panel_words, summary_line};
use crate::workflow_name::Workflow;

/// The parallel-exploration section of a run's detail.
pub fn render(p: &ParallelState, md: bool) -> String {
    let mut o = String::from(match (md, p.tournament()) {
        (true, false) => "\n### Parallel exploration\n\n",
        (false, false) => "\nparallel exploration:\n",
        (true, true) => "\n### Tournament\n\n",
        (false, true) => "\ntournament:\n",
    });
    let present = p.present().count();
    let panel = if p.candidates.is_empty() {
        format!("{} candidates asked, none answered yet", p.models.len())
    } else if p.degraded() {
        format!(
            "DEGRADED: {present} of {} candidates built a solution",
            p.models.len()
        )
    } else {
        format!("all {present} candidates built a solution")
    };
    o.push_str(&line(
        md,
        1,
        &format!(
            "{panel} (fan-out {} ms); {}",
            p.fanout_ms,
            if p.tournament() {
                format!("judged by: {}", p.judges.join(", "))
            } else {
                format!("tiebreaker: {}", p.tiebreaker.as_deref().unwrap_or("none"))
            }
        ),
    ));
    let label = |m: &str| p.candidate(m).map_or("?", |c| c.label.as_str());
    for c in &p.candidates {
        let s = match &c.commit {
            Some(commit) => format!(
                "candidate {} by {}: branch {} at {} — {}",
                c.label,
                c.model,
                c.branch,
                commit.short(),
                c.detail
            ),
            None => format!(
                "candidate {} by {}: absent — {}",
                c.label, c.model, c.detail
            ),
        };
        o.push_str(&line(md, 2, &s));
    }
    for r in &p.reviews {
        o.push_str(&line(md, 2, &format!("review by {}", r.reviewer)));
        for x in &r.ratings {
            o.push_str(&line(
                md,
                3,
                &format!(
                    "rates {} ({}) {}/10: {}",
                    label(&x.candidate),
                    x.candidate,
                    x.score,
                    x.reason
                ),
            ));
        }
        for why in &r.refused {
            o.push_str(&line(md, 3, &format!("ballot refused: {why}")));
        }
        match (&r.vote, &r.absent) {
            (Some(v), _) => o.push_str(&line(
                md,
                3,
                &format!("votes for {} ({v}): {}", label(v), r.reason),
            )),
            (None, Some(why)) => o.push_str(&line(md, 3, &format!("absent: {why}"))),
            (None, None) if r.refused.len() >= 2 => o.push_str(&line(md, 3, "ballot discarded")),
            (None, None) => {}
        }
    }
    for j in &p.judgments {
        let s = match (&j.arbiter, j.verdict) {
            (Some(a), Some(v)) => format!(
                "{a} reviews {} ({}): {v}, confidence {:.2}, issues {}/{}/{} (critical/warning/suggestion) — {}",
                label(&j.candidate),
                j.candidate,
                j.confidence,
                j.issues[0],
                j.issues[1],
                j.issues[2],
                j.detail
            ),
            _ => format!("{} ({}): {}", label(&j.candidate), j.candidate, j.detail),
        };
        o.push_str(&line(md, 2, &s));
    }
    if let Some(w) = p.winner.as_ref().filter(|_| p.tournament()) {
        o.push_str(&line(
            md,
            1,
            &format!("winner: {} (arbiter) — {}", w.model, w.justification),
        ));
    } else if let Some(w) = &p.winner {
        let votes: Vec<String> = w.votes.iter().map(|(m, n)| format!("{m} {n}")).collect();
        let mut s = format!(
            "winner: {} ({}; votes: {})",
            w.model,
            w.by.as_str(),
            votes.join(", ")
        );
        if !w.justification.is_empty() {
            let label = match w.by {
                crate::pipeline::record::WonBy::Tiebreaker => "tiebreaker's justification",
                _ => "why",
            };
            s.push_str(&format!(" — {label}: {}", w.justification));
        }
        o.push_str(&line(md, 1, &s));
    }
    if let Some(s) = &p.synthesis {
        let at = s.commit.as_ref().map_or(String::from("no commit"), |c| {
            format!("commit {}", c.short())
        });
        o.push_str(&line(
            md,
            1,
            &format!("synthesis by {} ({at}): {}", s.model, s.detail),
        ));
    }
    o
}

/// The end-of-run line of a parallel exploration: who won among how many, and whether the
/// panel was complete (a degraded one is never presented as the full panel).
pub fn summary(p: &ParallelState) -> String {
    let gone = p.degraded().then(|| {
        let who = p.candidates.iter().filter(|c| c.commit.is_none());
        ("left out", who.map(|c| c.model.as_str()).collect())
    });
    let panel = panel_words(p.present().count(), p.models.len(), "candidates", gone);
    let won = p
        .winner
        .as_ref()
        .map(|w| format!("winner {} ({})", w.model, w.by.as_str()));
    summary_line(Workflow::Parallel, won, "no winner", &panel)
}

/// The parallel exploration or tournament of a run's `--json` report.
#[derive(Debug, Serialize)]
pub struct ParallelReport<'a> {
    /// The candidate models.
    pub candidates: &'a [String],
    /// Those that produced a candidate.
    pub present: Vec<&'a str>,
    /// Whether some did not.
    pub degraded: bool,
    /// The winner.
    pub winner: Option<&'a str>,
    /// How it won.
    pub won_by: Option<&'static str>,
    /// The tiebreaker's or the judging arbiter's reasons for the winner (empty for a
    /// majority vote).
    pub justification: Option<&'a str>,
    /// Each candidate that built no solution, and why.
    pub absent: Vec<Absent<'a>>,
    /// Each candidate's ratings of the others and its vote, with their reasons.
    pub reviews: &'a [CrossReview],
    /// A tournament's reviews of each candidate by the judging arbiter.
    pub judgments: &'a [CandidateReview],
    /// The candidates' branches.
    pub branches: Vec<&'a str>,
    /// How long the fan-out took.
    pub fanout_ms: u64,
}

impl<'a> ParallelReport<'a> {
    /// What `--json` says of `p`.
    pub fn of(p: &'a ParallelState) -> Self {
        ParallelReport {
            candidates: &p.models,
            present: p.present().map(|c| c.model.as_str()).collect(),
            degraded: p.degraded(),
            winner: p.winner.as_ref().map(|w| w.model.as_str()),
            won_by: p.winner.as_ref().map(|w| w.by.as_str()),
            justification: p
                .winner
                .as_ref()
                .map(|w| w.justification.as_str())
                .filter(|j| !j.is_empty()),
            absent: p
                .candidates
                .iter()
                .filter(|c| c.commit.is_none())
                .map(|c| Absent {
                    model: &c.model,
                    why: &c.detail,
                })
                .collect(),
            reviews: &p.reviews,
            judgments: &p.judgments,
            branches: p.candidates.iter().map(|c| c.branch.as_str()).collect(),
            fanout_ms: p.fanout_ms,
        }
    }
}

/// A candidate of a [`ParallelReport`] that built no solution.
#[derive(Debug, Serialize)]
pub struct Absent<'a> {
    /// Its model.
    pub model: &'a str,
    /// Why it has none.
    pub why: &'a str,
}
