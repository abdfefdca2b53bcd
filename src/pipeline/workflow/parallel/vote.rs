//! The cross-review and the vote of a parallel exploration: each candidate rates the
//! others and votes for the best of them (a vote for itself is refused, asked once more,
//! then discarded); the most votes win. A tie, and any vote between two candidates (each
//! can vote only for the other), goes to the tiebreaker; without one, the solutions' own
//! checks decide, then the ratings, else the run waits for you.

use super::solution::{solutions, Solution};
use super::text::{self, ReviewAnswer, Shown, TieAnswer};
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    Candidate, CrossReview, ParallelState, Rating, StopReason, Winner, WonBy,
};
use crate::pipeline::run::call::structured_call;
use crate::pipeline::run::step::{Cx, Flow, Journal, RunError};
use crate::pipeline::run::stop::{model_failed, wait_on_user};
use crate::workflow_name::Workflow;

/// `reviewer` rates the others' solutions and votes. A vote for itself or for no
/// candidate is refused and recorded; the reviewer is asked once more, and a second
/// refused ballot is discarded. A reviewer that cannot answer is recorded absent.
pub(super) fn cross_review(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    p: &ParallelState,
    reviewer: &str,
) -> Result<Flow, RunError> {
    let diffs: Vec<(String, String)> = solutions(cx, p)?
        .into_iter()
        .map(|s| (s.model, s.diff))
        .collect();
    let label = |m: &str| p.candidate(m).map_or("?", |c| c.label.as_str());
    let Some(own) = diffs.iter().find(|(m, _)| m == reviewer) else {
        return Ok(Flow::Continue);
    };
    let others: Vec<Shown<'_>> = diffs
        .iter()
        .filter(|(m, _)| m != reviewer)
        .map(|(m, d)| Shown {
            label: label(m),
            diff: d,
        })
        .collect();
    let previous = p.reviews.iter().find(|r| r.reviewer == reviewer);
    let refused = previous.and_then(|r| r.refused.last().map(String::as_str));
    let user = text::review(
        &cx.spec.render(),
        &Shown {
            label: label(reviewer),
            diff: &own.1,
        },
        &others,
        refused,
    );
    let mut review = previous.cloned().unwrap_or(CrossReview {
        reviewer: reviewer.to_string(),
        ratings: Vec::new(),
        vote: None,
        reason: String::new(),
        refused: Vec::new(),
        absent: None,
    });
    let by_label = |l: &str| {
        p.present()
            .find(|c| c.label.eq_ignore_ascii_case(l.trim()))
            .map(|c| c.model.clone())
    };
    let what = match structured_call::<ReviewAnswer>(
        cx,
        j,
        (Workflow::Parallel.as_str(), "cross-reviewer"),
        Role::Implementer,
        reviewer,
        "cross_reviewer",
        user,
    ) {
        Err(e @ ModelError::Budget(_)) => {
            return model_failed(cx, j, Workflow::Parallel.as_str(), e)
        }
        Err(e) => {
            let why = crate::redact::said(&e);
            review.absent = Some(crate::bounded::clip(&why, 300));
            "could not review: it has no vote".to_string()
        }
        Ok((a, spend)) => {
            review.ratings = a
                .ratings
                .iter()
                .filter_map(|r| {
                    let model = by_label(&r.candidate).filter(|m| m != reviewer)?;
                    Some(Rating {
                        candidate: model,
                        score: r.score.clamp(1, 10) as u8,
                        reason: crate::bounded::clip(&r.reason, 500),
                    })
                })
                .collect();
            review.reason = crate::bounded::clip(&a.reason, 1000);
            let rated: Vec<String> = review
                .ratings
                .iter()
                .map(|r| format!("{} {}/10: {}", label(&r.candidate), r.score, r.reason))
                .collect();
            j.state.say(
                Message::new("candidate", "all", MessageKind::Review, &rated.join("\n"))
                    .by(reviewer, spend),
            );
            match by_label(&a.vote) {
                Some(m) if m != reviewer => {
                    let what = format!("votes for candidate {}", label(&m));
                    j.state.say(
                        Message::new(
                            "candidate",
                            "all",
                            MessageKind::Vote,
                            &format!("{}: {}", label(&m), a.reason),
                        )
                        .by(reviewer, Spend::default()),
                    );
                    review.vote = Some(m);
                    what
                }
                found => {
                    let why = if found.is_some() {
                        format!(
                            "it voted for its own solution (candidate {})",
                            label(reviewer)
                        )
                    } else {
                        format!("it voted for `{}`, which is no other candidate", a.vote)
                    };
                    j.state.say(Message::new(
                        "orchestrator",
                        "all",
                        MessageKind::Objection,
                        &format!("ballot of {reviewer} refused: {why}"),
                    ));
                    review.refused.push(why.clone());
                    if review.refused.len() >= 2 {
                        format!("ballot refused again, discarded: {why}")
                    } else {
                        format!("ballot refused, asked once more: {why}")
                    }
                }
            }
        }
    };
    let p = j.state.parallel_mut();
    p.reviews.retain(|r| r.reviewer != reviewer);
    p.reviews.push(review);
    cx.progress(&Progress::Explored {
        who: reviewer,
        what: &what,
    });
    j.event(&format!("parallel: {reviewer} {what}"))?;
    Ok(Flow::Continue)
}

/// Counts the votes: the candidate with the most wins; a tie at the top goes to the
/// tiebreaker, which must choose among the tied and say why. Without a tiebreaker, or
/// when it cannot answer, the run stops for the user with everything recorded.
pub(super) fn tally(cx: &Cx<'_>, j: &mut Journal<'_>, p: &ParallelState) -> Result<Flow, RunError> {
    // A solution the facts already reject (it does not parse, an import resolves
    // nowhere, it weakens a test, it fails the task's example) cannot win, whatever the
    // votes say.
    let solutions = solutions(cx, p)?;
    let barred: Vec<(&str, String)> = solutions
        .iter()
        .filter_map(|s| s.barred().map(|why| (s.model.as_str(), why)))
        .collect();
    for (model, why) in &barred {
        cx.progress(&Progress::Explored {
            who: "orchestrator",
            what: &format!("{model} cannot win: {why}"),
        });
    }
    if !barred.is_empty() && barred.len() == solutions.len() {
        let why: Vec<String> = barred.iter().map(|(m, w)| format!("{m}: {w}")).collect();
        return parallel_deadlock(
            cx,
            j,
            format!(
                "every candidate's solution is rejected by the facts ({})",
                why.join("; ")
            ),
        );
    }
    let votes: Vec<(String, u32)> = p
        .present()
        .filter(|c| !barred.iter().any(|(m, _)| *m == c.model))
        .map(|c| {
            let n = p
                .reviews
                .iter()
                .filter(|r| r.vote.as_deref() == Some(&c.model))
                .count();
            (c.model.clone(), n as u32)
        })
        .collect();
    let top = votes.iter().map(|(_, n)| *n).max().unwrap_or(0);
    let tied: Vec<&String> = votes
        .iter()
        .filter(|(_, n)| *n == top)
        .map(|(m, _)| m)
        .collect();
    let counted: Vec<String> = votes.iter().map(|(m, n)| format!("{m} {n}")).collect();
    // Two candidates can each vote only for the other: their votes choose nothing.
    let forced = votes.len() == 2 && p.present().count() == 2;
    let tied: Vec<&String> = if forced {
        votes.iter().map(|(m, _)| m).collect()
    } else {
        tied
    };
    let winner = if let ([only], [_]) = (tied.as_slice(), votes.as_slice()) {
        // The facts barred every other solution: no vote chose it, they did.
        let why: Vec<String> = barred.iter().map(|(m, w)| format!("{m}: {w}")).collect();
        Winner {
            model: (*only).clone(),
            by: WonBy::Evidence,
            votes: votes.clone(),
            justification: format!(
                "the only solution the facts do not reject ({})",
                why.join("; ")
            ),
        }
    } else if let [only] = tied.as_slice() {
        Winner {
            model: (*only).clone(),
            by: WonBy::Majority,
            votes: votes.clone(),
            justification: String::new(),
        }
    } else {
        let names: Vec<&str> = tied.iter().map(|m| m.as_str()).collect();
        let Some(tb) = p.tiebreaker.clone() else {
            // No model outside the candidates: the facts of the solutions decide, else
            // the ratings each got, else you do.
            return match by_evidence(p, &solutions, &votes) {
                Some(w) => won(cx, j, w, &counted),
                None => parallel_deadlock(cx, j, format!(
                    "{}; no model outside the candidates can break the tie, and neither their checks nor their ratings tell them apart",
                    if forced {
                        format!(
                            "the vote is tied: two candidates can each vote only for the other, so their votes ({}) choose nothing",
                            counted.join(", ")
                        )
                    } else {
                        format!("the vote is tied ({})", counted.join(", "))
                    },
                )),
            };
        };
        let diffs: Vec<(String, String)> = solutions
            .iter()
            .map(|s| (s.model.clone(), s.diff.clone()))
            .collect();
        let label = |m: &str| p.candidate(m).map_or("?", |c| c.label.as_str());
        let shown: Vec<Shown<'_>> = diffs
            .iter()
            .filter(|(m, _)| names.contains(&m.as_str()))
            .map(|(m, d)| Shown {
                label: label(m),
                diff: d,
            })
            .collect();
        let user = text::tie(&cx.spec.render(), p, &shown);
        cx.progress(&Progress::Explored {
            who: "orchestrator",
            what: &format!(
                "the vote is tied ({}): {tb} breaks the tie",
                counted.join(", ")
            ),
        });
        let (a, spend) = match structured_call::<TieAnswer>(
            cx,
            j,
            (Workflow::Parallel.as_str(), "tiebreaker"),
            Role::Tiebreaker,
            &tb,
            "tiebreaker",
            user,
        ) {
            Ok(a) => a,
            Err(e @ ModelError::Budget(_)) => {
                return model_failed(cx, j, Workflow::Parallel.as_str(), e)
            }
            Err(e) => {
                let why = crate::redact::said(&e);
                return parallel_deadlock(
                    cx,
                    j,
                    format!("the vote tied and the tiebreaker {tb} could not answer: {why}"),
                );
            }
        };
        let chosen = p.present().find(|c| {
            c.label.eq_ignore_ascii_case(a.winner.trim()) && names.contains(&c.model.as_str())
        });
        let Some(chosen) = chosen else {
            return parallel_deadlock(
                cx,
                j,
                format!(
                    "the tiebreaker {tb} chose `{}`, which is not among the tied candidates",
                    a.winner
                ),
            );
        };
        j.state.say(
            Message::new(
                "tiebreaker",
                "all",
                MessageKind::Consensus,
                &a.justification,
            )
            .by(&tb, spend),
        );
        Winner {
            model: chosen.model.clone(),
            by: WonBy::Tiebreaker,
            votes: votes.clone(),
            justification: crate::bounded::clip(&a.justification, 2000),
        }
    };
    won(cx, j, winner, &counted)
}

/// Records the winner and says so.
fn won(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    winner: Winner,
    counted: &[String],
) -> Result<Flow, RunError> {
    let what = format!(
        "winner: {} ({}; votes: {})",
        winner.model,
        winner.by.as_str(),
        counted.join(", ")
    );
    j.state.say(Message::new(
        "orchestrator",
        "all",
        MessageKind::Consensus,
        &what,
    ));
    j.state.parallel_mut().winner = Some(winner);
    cx.progress(&Progress::Explored {
        who: "orchestrator",
        what: &what,
    });
    j.event(&format!("parallel: {what}"))?;
    Ok(Flow::Continue)
}

/// The winner by the facts of the solutions, when no tiebreaker can choose among the
/// `votes`' candidates (those the facts do not bar): fewer critical deterministic
/// findings, then fewer warnings, then the better mean rating the other candidates gave
/// it. `None` when the best two are equal on all three.
fn by_evidence(
    p: &ParallelState,
    solutions: &[Solution],
    votes: &[(String, u32)],
) -> Option<Winner> {
    let mut scored = Vec::new();
    for c in p
        .present()
        .filter(|c| votes.iter().any(|(m, _)| *m == c.model))
    {
        let findings = solutions
            .iter()
            .find(|s| s.model == c.model)
            .map_or(&[][..], |s| s.findings.as_slice());
        let count = |sev: &str| findings.iter().filter(|f| f.severity == sev).count();
        let ratings: Vec<u8> = p
            .reviews
            .iter()
            .flat_map(|r| &r.ratings)
            .filter(|r| r.candidate == c.model)
            .map(|r| r.score)
            .collect();
        // Tenths of a point, so equal means compare equal.
        let rating = (!ratings.is_empty()).then(|| {
            ratings.iter().map(|s| u32::from(*s)).sum::<u32>() * 10 / ratings.len() as u32
        });
        scored.push((c, count("critical"), count("warning"), rating));
    }
    let key = |s: &(&Candidate, usize, usize, Option<u32>)| {
        (s.1, s.2, std::cmp::Reverse(s.3.unwrap_or(0)))
    };
    scored.sort_by_key(key);
    let (best, next) = (scored.first()?, scored.get(1)?);
    if key(best) == key(next) {
        return None;
    }
    let describe = |s: &(&Candidate, usize, usize, Option<u32>)| {
        format!(
            "candidate {} ({}): {} critical and {} warning finding(s){}",
            s.0.label,
            s.0.model,
            s.1,
            s.2,
            s.3.map_or(String::new(), |r| format!(
                ", rated {}.{}/10 by the others",
                r / 10,
                r % 10
            ))
        )
    };
    let basis = if (best.1, best.2) != (next.1, next.2) {
        "its checks found less"
    } else {
        "the checks found as much in each, and the others rated it higher"
    };
    Some(Winner {
        model: best.0.model.clone(),
        by: WonBy::Evidence,
        votes: votes.to_vec(),
        justification: format!(
            "{basis}: {}",
            scored.iter().map(describe).collect::<Vec<_>>().join("; ")
        ),
    })
}

fn parallel_deadlock(cx: &Cx<'_>, j: &mut Journal<'_>, detail: String) -> Result<Flow, RunError> {
    let event = "parallel: the vote could not be settled";
    wait_on_user(cx, j, StopReason::Parallel { detail }, event)
}
