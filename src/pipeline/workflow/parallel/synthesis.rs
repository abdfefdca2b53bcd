//! After the vote: the winner enhances its solution with the best of the others (the
//! synthesis), and the result stands in for the implement stage, on to Verify.

use super::build::{build_answer, explore_request, heard_answer, Ask};
use super::solution::solutions;
use super::text::{self, Shown};
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::git::{self, Context as _};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{AttemptRecord, AttemptResult, ParallelState, Synthesis};
use crate::pipeline::run::branch::move_branch;
use crate::pipeline::run::step::{BlockOn, Cx, Flow, Journal, RunError};
use crate::pipeline::run::stop::model_failed;
use crate::pipeline::stage::Stage;
use crate::workflow_name::Workflow;

/// The winner is shown the others' solutions and ratings and enhances its own on top of
/// its commit. An answer that cannot be used leaves the winner's solution as it is (said
/// in the record); no edit is a valid answer.
pub(super) fn synthesize(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    p: &ParallelState,
) -> Result<Flow, RunError> {
    let Some(w) = &p.winner else {
        return Ok(Flow::Continue);
    };
    let Some(won) = p.candidate(&w.model).and_then(|c| c.commit.clone()) else {
        return Ok(Flow::Continue);
    };
    let repo = cx.repo();
    let parent = won.oid()?;
    let tree = repo
        .find_commit(parent)
        .and_then(|c| c.tree())
        .ctx("reading the winner's tree")?;
    let diffs: Vec<(String, String)> = solutions(cx, p)?
        .into_iter()
        .map(|s| (s.model, s.diff))
        .collect();
    let own = diffs
        .iter()
        .find(|(m, _)| *m == w.model)
        .map_or("", |(_, d)| d.as_str());
    let label = |m: &str| p.candidate(m).map_or("?", |c| c.label.as_str());
    let others: Vec<Shown<'_>> = diffs
        .iter()
        .filter(|(m, _)| *m != w.model)
        .map(|(m, d)| Shown {
            label: label(m),
            diff: d,
        })
        .collect();
    let feedback = text::synthesis(p, &w.model, &others);
    let ask = Ask {
        role: "synthesizer",
        previous_diff: own,
        feedback: &feedback,
        char_budget: cx.char_budget(std::slice::from_ref(&w.model)),
    };
    let req = explore_request(cx, &w.model, &tree, &ask)?;
    let model = w.model.clone();
    let answer = cx
        .env
        .client
        .chat(Role::Implementer, std::slice::from_ref(&model), &req)
        .await_blocking();
    let synthesis = match answer {
        Err(e @ ModelError::Budget(_)) => {
            return model_failed(cx, j, Workflow::Parallel.as_str(), e)
        }
        Err(e) => Synthesis {
            model: model.clone(),
            commit: None,
            detail: format!(
                "could not answer ({}); the winner's solution goes on as it is",
                crate::redact::redact(&e.to_string())
            ),
            spend: Spend::default(),
        },
        Ok(completion) => {
            let spend = heard_answer(j, "synthesizer", &req, &completion);
            let (commit, detail) = match build_answer(cx, j, &model, parent, &completion.response, "synthesis", true)? {
                Ok(b) if b.changed.is_empty() => (None, format!("took nothing from the others: {}", b.summary)),
                Ok(b) => {
                    j.keep(b.commit);
                    (Some(b.commit.into()), b.summary)
                }
                Err(why) => (None, format!("its synthesis could not be used ({why}); the winner's solution goes on as it is")),
            };
            j.state.say(
                Message::new(
                    "synthesizer",
                    "orchestrator",
                    MessageKind::Implementation,
                    &detail,
                )
                .by(&model, spend),
            );
            Synthesis {
                model: model.clone(),
                commit,
                detail,
                spend,
            }
        }
    };
    let what = format!("synthesis: {}", synthesis.detail);
    j.state.parallel_mut().synthesis = Some(synthesis);
    cx.progress(&Progress::Explored {
        who: &model,
        what: &what,
    });
    j.event(&format!("parallel: {what}"))?;
    Ok(Flow::Continue)
}

/// The exploration's result stands in for the implement stage (its one accepted
/// attempt, by the winner); the run's branch moves to it and Verify comes next.
pub(super) fn conclude(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    p: &ParallelState,
) -> Result<Flow, RunError> {
    let (Some(w), Some(s)) = (&p.winner, &p.synthesis) else {
        return Ok(Flow::Continue);
    };
    let Some(tip) = s
        .commit
        .clone()
        .or_else(|| p.candidate(&w.model).and_then(|c| c.commit.clone()))
    else {
        return Ok(Flow::Continue);
    };
    let repo = cx.repo();
    let base = j.state.base().oid()?;
    let (bt, tt) = (
        repo.find_commit(base)
            .and_then(|c| c.tree())
            .ctx("reading the base tree")?,
        repo.find_commit(tip.oid()?)
            .and_then(|c| c.tree())
            .ctx("reading the result tree")?,
    );
    let changed =
        git::FileStat::of(&git::diff_trees(repo, Some(&bt), &tt).ctx("diffing the result")?);
    let present = p.present().count();
    let detail = format!(
        "{}: candidate {} won ({}) among {present} of {} candidates{}",
        if p.tournament() {
            Workflow::Tournament.as_str()
        } else {
            "parallel exploration"
        },
        w.model,
        w.by.as_str(),
        p.models.len(),
        if s.commit.is_some() {
            "; synthesized"
        } else {
            ""
        }
    );
    let spend = p.candidates.iter().fold(s.spend, |mut acc, c| {
        acc += c.spend;
        acc
    });
    let n = j.state.stages()[Stage::Implement.index()].attempts.len() as u32 + 1;
    let attempt = AttemptRecord {
        n,
        model: w.model.clone(),
        commit: Some(tip.clone()),
        verdict: None,
        arbiter_model: None,
        result: AttemptResult::Accepted,
        detail,
        spend,
        changed,
        left_out: Default::default(),
        evidenced: None,
    };
    j.state.conclude_exploration(attempt, tip.clone());
    let tip = tip.oid()?;
    j.keep(tip);
    j.event("parallel: done; on to verify")?;
    move_branch(cx, j, tip, Some(base), "parallel exploration done")?;
    Ok(Flow::Continue)
}
