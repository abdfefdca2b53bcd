//! Building solutions in a parallel exploration: the request a candidate is given, the
//! candidates' calls made together, and an answer turned into a commit on top of a parent
//! (edit blocks applied as in a normal attempt, in memory, within the task's scope, never
//! to a private file).

use std::time::Instant;

use git2::{Oid, Tree};

use super::text::letter;
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::edit::summarize_failures;
use crate::git::{self, Context as _, FileStat, TreeFiles};
use crate::model::fanout::join_all;
use crate::model::{ChatRequest, Exchange, ModelError, Spend};
use crate::pipeline::answer::{
    apply_answer, read_answer, read_cut_answer, writes_whole_files, ReadAnswer,
};
use crate::pipeline::context::{
    answer_cap, answer_grammar, stage_message, system_message, StageContext,
};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    Candidate, ParallelState, RunStatus, StopReason, Synthesis, Transcript, Winner, WonBy,
};
use crate::pipeline::run::step::{BlockOn, Cx, Flow, Journal, RunError};
use crate::pipeline::run::stop::{halt, model_failed};
use crate::pipeline::stage::Stage;
use crate::task::outcome::Outcome;
use crate::workflow_name::Workflow;

/// A solution committed from an answer.
pub(super) struct Built {
    /// Its commit, on top of the parent it was built on.
    pub commit: Oid,
    /// The answer's one-line summary.
    pub summary: String,
    /// What it changed.
    pub changed: Vec<FileStat>,
}

/// What a request is made of besides the files: which prompt, what it is shown of earlier
/// work, and how many characters of file contents fit.
pub(super) struct Ask<'a> {
    /// The role prompt (`candidate`, `synthesizer`).
    pub role: &'a str,
    /// The change it builds on (the winner's own diff, for the synthesis).
    pub previous_diff: &'a str,
    /// What else it must know (the other candidates, for the synthesis).
    pub feedback: &'a str,
    /// Characters of file contents: the smallest budget among the models asked, so every
    /// candidate is given the identical message.
    pub char_budget: usize,
}

/// The request for `model` to write a solution on top of `parent`. The user message
/// depends only on `parent` and `ask`; the system prompt only on the model's edit
/// format and the task's language.
pub(super) fn explore_request(
    cx: &Cx<'_>,
    model: &str,
    parent: &Tree<'_>,
    ask: &Ask<'_>,
) -> Result<ChatRequest, RunError> {
    let repo = cx.repo();
    let files = TreeFiles::new(repo, parent.clone());
    let base = cx.base_tree()?;
    let changed: Vec<String> = git::diff_trees(repo, Some(&base), parent)
        .ctx("diffing")?
        .iter()
        .map(|f| f.path.clone())
        .collect();
    let context = StageContext {
        changed_so_far: &changed,
        previous_diff: ask.previous_diff,
        feedback: ask.feedback,
        ..StageContext::new(
            Stage::Implement,
            &cx.spec,
            &files,
            ask.char_budget,
            &cx.outlines,
            &cx.privacy,
        )
    };
    let user = stage_message(&context);
    let config = &cx.env.config.config;
    let root = cx.env.repo_root();
    let system = system_message(config, Some(&root), ask.role, model, &context);
    let role_cfg = config.roles.get(Stage::Implement.role());
    let role_cap = role_cfg.max_output_tokens.unwrap_or(8192);
    // Sized to the task, as a stage's answer is: a candidate writing whole files is cut
    // where its files end, not after 8,192 tokens of one file written again and again.
    let max_tokens = match cx.env.client.estimator(model) {
        Ok(estimator) => answer_cap(config, model, &context, &estimator, role_cap),
        Err(_) => role_cap,
    };
    let mut req = ChatRequest::new(Some(system), user, max_tokens);
    req.temperature = role_cfg.temperature;
    req.grammar = answer_grammar(config, model, &context);
    Ok(req)
}

/// Turns `model`'s answer into a commit on top of `parent` (`what` names it in the
/// commit message: `candidate`, `synthesis`). `Ok(Err(why))` when the answer cannot be
/// used: no metadata, another outcome than APPROVE, edits that do not apply, or (unless
/// `may_be_empty`) no change at all.
pub(super) fn build_answer(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    model: &str,
    parent: Oid,
    answer: &crate::model::ChatResponse,
    what: &str,
    may_be_empty: bool,
) -> Result<Result<Built, String>, RunError> {
    let repo = cx.repo();
    let parent_tree = repo
        .find_commit(parent)
        .and_then(|c| c.tree())
        .ctx("reading a solution's parent tree")?;
    let whole = writes_whole_files(&cx.env.config.config, model);
    let ReadAnswer { meta, blocks } = match read_answer(&answer.text, whole) {
        Ok(a) => a,
        // Cut at the output limit: its complete files still carry what it wrote, and the
        // facts judge them as any solution's.
        Err(why) if whole && answer.truncated() => match read_cut_answer(&answer.text) {
            Some(a) => a,
            None => return Ok(Err(why)),
        },
        Err(why) => return Ok(Err(why)),
    };
    if meta.outcome != Outcome::Approve {
        return Ok(Err(format!("it answered {}", meta.outcome.as_str())));
    }
    let files = TreeFiles::new(repo, parent_tree.clone());
    let applied = match apply_answer(&files, &cx.privacy, &cx.spec, &blocks, &[]) {
        Ok(a) => a,
        Err(failures) => {
            let ok = blocks.len().saturating_sub(failures.len());
            return Ok(Err(summarize_failures(&failures, ok)));
        }
    };
    let tree = match git::build_tree(repo, &parent_tree, &applied.files) {
        Ok(t) => t,
        Err(e) => return Ok(Err(format!("its files cannot be stored: {e}"))),
    };
    let new_tree = repo.find_tree(tree).ctx("reading a solution tree")?;
    let diff = git::diff_trees(repo, Some(&parent_tree), &new_tree).ctx("diffing")?;
    let changed = FileStat::of(&diff);
    if changed.is_empty() && !may_be_empty {
        return Ok(Err("no edit changed a file".into()));
    }
    let summary = crate::pipeline::record::one_line(&meta.summary, what);
    let message = format!(
        "triad({what}): {summary}\n\nTriad-Run: {}\nTriad-Stage: {what}\nTriad-Model: {model}\n",
        j.state.run_id()
    );
    let commit = git::commit(repo, tree, &[parent], &message)?;
    Ok(Ok(Built {
        commit,
        summary,
        changed,
    }))
}

/// A branch name part for a model: what a ref may hold, the rest replaced by `-`.
pub(super) fn ref_safe(model: &str) -> String {
    let s: String = model
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s.trim_matches('-').to_string()
}

/// Every candidate gets the identical request and answers at the same time; each usable
/// answer becomes a commit on the base, on the candidate's own branch. An answer that
/// cannot be used is asked again with the reason, as a stage's would be (the run's
/// retries, all such candidates at the same time); a candidate that cannot answer, or
/// still answers nothing usable, is recorded with why and left out.
pub(super) fn fan_out(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    models: &[String],
) -> Result<Flow, RunError> {
    let repo = cx.repo();
    let base = j.state.base().oid()?;
    let base_tree = repo
        .find_commit(base)
        .and_then(|c| c.tree())
        .ctx("reading the base tree")?;
    let char_budget = cx.char_budget(models);
    cx.progress(&Progress::Explored {
        who: "orchestrator",
        what: &format!(
            "{} candidates build a solution each: {}",
            models.len(),
            models.join(", ")
        ),
    });
    let mut candidates: Vec<Candidate> = models
        .iter()
        .enumerate()
        .map(|(i, model)| Candidate {
            model: model.clone(),
            label: letter(i),
            branch: format!("{}-{}", j.state.branch(), ref_safe(model)),
            commit: None,
            detail: String::new(),
            changed: Vec::new(),
            spend: Spend::default(),
        })
        .collect();
    // What each candidate is asked with next; `None` once it is settled.
    let mut asks: Vec<Option<String>> = vec![Some(String::new()); models.len()];
    let tries = j.state.max_retries() + 1;
    let started = Instant::now();
    let mut over_budget = None;
    for attempt in 1..=tries {
        let due: Vec<usize> = (0..models.len()).filter(|i| asks[*i].is_some()).collect();
        if due.is_empty() || over_budget.is_some() {
            break;
        }
        let reqs = due
            .iter()
            .map(|i| {
                let feedback = asks[*i].take().unwrap_or_default();
                let ask = Ask {
                    role: "candidate",
                    previous_diff: "",
                    feedback: &feedback,
                    char_budget,
                };
                explore_request(cx, &models[*i], &base_tree, &ask)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let client = cx.env.client;
        let calls = due
            .iter()
            .zip(&reqs)
            .map(|(i, req)| client.chat(Role::Implementer, std::slice::from_ref(&models[*i]), req))
            .collect();
        let answers = join_all(calls).await_blocking();
        for ((i, req), answer) in due.iter().zip(&reqs).zip(answers) {
            let c = &mut candidates[*i];
            match take_candidate(cx, j, c, base, req, answer)? {
                Taken::Built => {
                    let what = format!(
                        "built candidate {} on {} ({})",
                        c.label,
                        c.branch,
                        c.commit.as_ref().map_or("", |o| o.short())
                    );
                    cx.progress(&Progress::Explored {
                        who: &c.model,
                        what: &what,
                    });
                }
                Taken::Unusable(why) if attempt < tries => {
                    cx.progress(&Progress::Explored {
                        who: &c.model,
                        what: &format!(
                            "attempt {attempt} of {tries} could not be used ({why}); asked again"
                        ),
                    });
                    asks[*i] = Some(format!(
                        "## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\n{why}\n\nAnswer again in the format asked, with the whole solution.\n"
                    ));
                }
                Taken::Unusable(_) | Taken::Failed(None) => {
                    cx.progress(&Progress::Explored {
                        who: &c.model,
                        what: &format!("is left out: {}", c.detail),
                    });
                }
                Taken::Failed(Some(e)) => {
                    cx.progress(&Progress::Explored {
                        who: &c.model,
                        what: &format!("is left out: {}", c.detail),
                    });
                    over_budget = Some(e);
                }
            }
        }
    }
    let fanout_ms = started.elapsed().as_millis() as u64;
    let p = j.state.parallel_mut();
    p.candidates = candidates;
    p.fanout_ms = fanout_ms;
    let present = p.present().count();
    let fates = fates(p);
    j.event(&format!(
        "parallel: {present} of {} candidates built a solution",
        models.len()
    ))?;
    if let Some(e) = over_budget {
        return model_failed(cx, j, Workflow::Parallel.as_str(), e);
    }
    if present == 0 {
        let detail = format!(
            "none of the {} candidates built a solution ({fates})",
            models.len()
        );
        return halt(
            cx,
            j,
            RunStatus::Halted,
            StopReason::Parallel { detail },
            "parallel: no candidate",
        );
    }
    if present == 1 {
        return go_on_alone(cx, j, &fates);
    }
    Ok(Flow::Continue)
}

/// One usable solution out of a panel: nothing to choose between, so it goes on as the
/// result (a working solution is never turned into a halt because no choice could be
/// made), recorded as a degraded panel with every missing candidate and why, and the run
/// ends at most FLAG. Nothing is voted on or synthesized: there is no other solution to
/// take from.
fn go_on_alone(cx: &Cx<'_>, j: &mut Journal<'_>, fates: &str) -> Result<Flow, RunError> {
    let p = j.state.parallel_mut();
    let Some(alone) = p.present().next().map(|c| c.model.clone()) else {
        return Ok(Flow::Continue);
    };
    let why = format!(
        "the only usable solution of {} candidates; a degraded panel, so the run ends at most FLAG ({fates})",
        p.models.len()
    );
    p.winner = Some(Winner {
        model: alone.clone(),
        by: WonBy::Alone,
        votes: vec![(alone.clone(), 0)],
        justification: why.clone(),
    });
    p.synthesis = Some(Synthesis {
        model: alone.clone(),
        commit: None,
        detail: "no other solution to take from".into(),
        spend: Spend::default(),
    });
    cx.progress(&Progress::Explored {
        who: &alone,
        what: &format!("goes on alone: {why}"),
    });
    j.event(&format!("parallel: {alone} goes on alone"))?;
    Ok(Flow::Continue)
}

/// One candidate's answer to `req`: recorded, and built into a commit on `base` on the
/// candidate's own branch when it can be used.
fn take_candidate(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    c: &mut Candidate,
    base: git2::Oid,
    req: &crate::model::ChatRequest,
    answer: Result<crate::model::Completion, ModelError>,
) -> Result<Taken, RunError> {
    let completion = match answer {
        Err(e) => {
            let why = crate::redact::said(&e);
            c.detail = format!("could not answer: {}", crate::bounded::clip(&why, 300));
            return Ok(Taken::Failed(
                matches!(e, ModelError::Budget(_)).then_some(e),
            ));
        }
        Ok(completion) => completion,
    };
    let spend = heard_answer(j, "candidate", req, &completion);
    c.spend += spend;
    let built = match build_answer(
        cx,
        j,
        &c.model,
        base,
        &completion.response,
        "candidate",
        false,
    )? {
        Ok(built) => built,
        Err(why) => {
            let why = crate::pipeline::answer::cut_short(why, &completion.response, req.max_tokens);
            c.detail = format!("its answer could not be used: {why}");
            return Ok(Taken::Unusable(why));
        }
    };
    let repo = cx.repo();
    let name = format!("refs/heads/{}", c.branch);
    // The branch carries this run's id: one a killed fan-out left is the run's own.
    let old = repo.refname_to_id(&name).ok();
    git::cas_ref(repo, &name, built.commit, old, "triad: candidate solution")?;
    j.keep(built.commit);
    c.commit = Some(built.commit.into());
    c.detail = built.summary;
    c.changed = built.changed;
    j.state.say(
        Message::new(
            "candidate",
            "orchestrator",
            MessageKind::Implementation,
            &c.detail,
        )
        .by(&c.model, spend),
    );
    Ok(Taken::Built)
}

/// Counts what an exploration's answer cost and records its transcript as `role`'s;
/// returns the spend.
pub(super) fn heard_answer(
    j: &mut Journal<'_>,
    role: &str,
    req: &crate::model::ChatRequest,
    completion: &crate::model::Completion,
) -> Spend {
    let spend = completion.spend();
    j.state.add_spend(spend);
    let call = Exchange::text(req, completion, ANSWER_RECORD_BYTES);
    j.transcript(&Transcript::new(Workflow::Parallel.as_str(), role, call));
    spend
}

/// What became of one candidate's answer.
enum Taken {
    /// Its solution is committed on its branch.
    Built,
    /// It answered, but not usably: why.
    Unusable(String),
    /// It could not answer (with the error when it was the budget).
    Failed(Option<ModelError>),
}

/// Every candidate's fate in one line: for a stop that must say who was missing.
fn fates(p: &ParallelState) -> String {
    p.candidates
        .iter()
        .map(|c| match &c.commit {
            Some(_) => format!("{}: built", c.model),
            None => format!("{}: {}", c.model, c.detail),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Most bytes of a candidate's answer kept in a transcript.
const ANSWER_RECORD_BYTES: usize = 256 * 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::run::step::BlockOn;

    #[test]
    fn join_all_waits_for_all_at_once_and_keeps_order() {
        let slow = |ms: u64, v: u32| async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            v
        };
        let out = join_all(vec![slow(30, 1), slow(10, 2), slow(20, 3)]).await_blocking();
        assert_eq!(out, vec![1, 2, 3]);
    }

    #[test]
    fn model_names_become_ref_parts() {
        assert_eq!(ref_safe("llama3:8b"), "llama3-8b");
        assert_eq!(ref_safe("claude-3.5"), "claude-3-5");
        assert_eq!(ref_safe("model-a"), "model-a");
    }
}
