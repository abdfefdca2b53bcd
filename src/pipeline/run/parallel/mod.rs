//! Parallel exploration (`git triad run --workflow parallel`, seed 001 §5.2): instead of
//! Architect → Implement → Refactor, every candidate model builds a complete solution from
//! the identical task prompt, alone and at the same time, each committed on its own branch;
//! each candidate then rates the others' solutions and votes for the best of them (never
//! for its own); the most votes win, a tie (or two candidates' forced votes) goes to a
//! tiebreaker outside the candidates, else to the solutions' checks and ratings; the
//! winner enhances its solution with the best of the others, and the run goes on to the
//! normal Verify stage on top of that. The losers' branches stay.
//!
//! Phases are recorded one by one in [`ParallelState`], like every step of a run; the
//! result stands in for the implement stage (its one accepted attempt), so Verify, the
//! arbiter and the reconciliation work as in any run.

mod build;
mod judge;
mod text;
mod vote;

use std::time::Instant;

pub(super) use self::build::join_all;
use self::build::{ref_safe, Ask};
use self::text::{letter, Shown};
use super::{BlockOn, Flow, Run, RunError};
use crate::arbiter::gather::{prepare, Subject, TreeFacts};
use crate::arbiter::review::floor;
use crate::arbiter::{Floor, Verdict};
use crate::code::Finding;
use crate::config::Role;
use crate::consensus::envelope::{Message, MessageKind};
use crate::git::{self, Context as _, ObjectId};
use crate::model::{Exchange, ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    AttemptRecord, AttemptResult, Candidate, ParallelState, RunStatus, StopReason, Synthesis,
    Transcript,
};
use crate::pipeline::stage::Stage;

/// Most bytes of a candidate's answer kept in a transcript.
const ANSWER_RECORD_BYTES: usize = 256 * 1024;

impl Run<'_> {
    /// Whether the run is in a parallel exploration that is not finished.
    pub(super) fn parallel_due(&self) -> bool {
        self.state.parallel.as_ref().is_some_and(|p| !p.done)
    }

    /// One phase of the exploration: the fan-out, one reviewer's cross-review and vote, the
    /// tally, the synthesis, or handing the result to Verify.
    pub(super) fn parallel_step(&mut self) -> Result<Flow, RunError> {
        let Some(p) = self.state.parallel.clone() else {
            return Ok(Flow::Continue);
        };
        if p.candidates.is_empty() {
            return self.fan_out(&p.models);
        }
        if p.winner.is_none() && p.tournament() {
            return self.tournament_step(&p);
        }
        if p.winner.is_none() {
            let next = p.present().find(|c| {
                !p.reviews
                    .iter()
                    .any(|r| r.reviewer == c.model && r.settled())
            });
            return match next {
                Some(c) => self.cross_review(&p, &c.model),
                None => self.tally(&p),
            };
        }
        if p.synthesis.is_none() {
            return self.synthesize(&p);
        }
        self.conclude(&p)
    }

    pub(super) fn explored(&self, who: &str, what: &str) {
        self.env
            .observer
            .progress(&Progress::Explored { who, what });
    }

    pub(super) fn parallel_mut(&mut self) -> &mut ParallelState {
        self.state.parallel.get_or_insert_with(Default::default)
    }

    /// Every candidate gets the identical request and answers at the same time; each usable
    /// answer becomes a commit on the base, on the candidate's own branch. An answer that
    /// cannot be used is asked again with the reason, as a stage's would be (the run's
    /// retries, all such candidates at the same time); a candidate that cannot answer, or
    /// still answers nothing usable, is recorded with why and left out.
    fn fan_out(&mut self, models: &[String]) -> Result<Flow, RunError> {
        let repo = self.env.repo;
        let base = self.state.base.oid()?;
        let base_tree = repo
            .find_commit(base)
            .and_then(|c| c.tree())
            .ctx("reading the base tree")?;
        let char_budget = self.char_budget(models);
        self.explored(
            "orchestrator",
            &format!(
                "{} candidates build a solution each: {}",
                models.len(),
                models.join(", ")
            ),
        );
        let mut candidates: Vec<Candidate> = models
            .iter()
            .enumerate()
            .map(|(i, model)| Candidate {
                model: model.clone(),
                label: letter(i),
                branch: format!("{}-{}", self.state.branch, ref_safe(model)),
                commit: None,
                detail: String::new(),
                changed: Vec::new(),
                spend: Spend::default(),
            })
            .collect();
        // What each candidate is asked with next; `None` once it is settled.
        let mut asks: Vec<Option<String>> = vec![Some(String::new()); models.len()];
        let tries = self.state.max_retries + 1;
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
                    self.explore_request(&models[*i], &base_tree, &ask)
                })
                .collect::<Result<Vec<_>, _>>()?;
            let client = self.env.client;
            let calls = due
                .iter()
                .zip(&reqs)
                .map(|(i, req)| {
                    client.chat(Role::Implementer, std::slice::from_ref(&models[*i]), req)
                })
                .collect();
            let answers = join_all(calls).await_blocking();
            for ((i, req), answer) in due.iter().zip(&reqs).zip(answers) {
                let c = &mut candidates[*i];
                match self.take_candidate(c, base, req, answer)? {
                    Taken::Built => {
                        let what = format!(
                            "built candidate {} on {} ({})",
                            c.label,
                            c.branch,
                            c.commit.as_ref().map_or("", |o| o.short())
                        );
                        self.explored(&c.model, &what);
                    }
                    Taken::Unusable(why) if attempt < tries => {
                        self.explored(
                            &c.model,
                            &format!("attempt {attempt} of {tries} could not be used ({why}); asked again"),
                        );
                        asks[*i] = Some(format!(
                            "## YOUR PREVIOUS ANSWER COULD NOT BE USED\n\n{why}\n\nAnswer again in the format asked, with the whole solution.\n"
                        ));
                    }
                    Taken::Unusable(_) | Taken::Failed(None) => {
                        self.explored(&c.model, &format!("is left out: {}", c.detail));
                    }
                    Taken::Failed(Some(e)) => {
                        self.explored(&c.model, &format!("is left out: {}", c.detail));
                        over_budget = Some(e);
                    }
                }
            }
        }
        let fanout_ms = started.elapsed().as_millis() as u64;
        let p = self.parallel_mut();
        p.candidates = candidates;
        p.fanout_ms = fanout_ms;
        let present = p.present().count();
        let fates = fates(p);
        self.rec.event(
            &self.state,
            &format!(
                "parallel: {present} of {} candidates built a solution",
                models.len()
            ),
        )?;
        if let Some(e) = over_budget {
            return self.model_failed("parallel", e);
        }
        if present < 2 {
            let detail = format!(
                "{present} of {} candidates built a solution, and a choice needs two ({fates})",
                models.len()
            );
            return self.halt(
                RunStatus::Halted,
                StopReason::Parallel { detail },
                "parallel: too few candidates",
            );
        }
        Ok(Flow::Continue)
    }

    /// One candidate's answer to `req`: recorded, and built into a commit on `base` on the
    /// candidate's own branch when it can be used.
    fn take_candidate(
        &mut self,
        c: &mut Candidate,
        base: git2::Oid,
        req: &crate::model::ChatRequest,
        answer: Result<crate::model::Completion, ModelError>,
    ) -> Result<Taken, RunError> {
        let completion = match answer {
            Err(e) => {
                let why = crate::redact::Redactor::global()
                    .redact(&e.to_string())
                    .to_string();
                c.detail = format!("could not answer: {}", crate::bounded::clip(&why, 300));
                return Ok(Taken::Failed(
                    matches!(e, ModelError::Budget(_)).then_some(e),
                ));
            }
            Ok(completion) => completion,
        };
        let spend = self.heard_answer("candidate", req, &completion);
        c.spend += spend;
        let built = match self.build_answer(
            &c.model,
            base,
            &completion.response.text,
            "candidate",
            false,
        )? {
            Ok(built) => built,
            Err(why) => {
                c.detail = format!("its answer could not be used: {why}");
                return Ok(Taken::Unusable(why));
            }
        };
        let repo = self.env.repo;
        let name = format!("refs/heads/{}", c.branch);
        // The branch carries this run's id: one a killed fan-out left is the run's own.
        let old = repo.refname_to_id(&name).ok();
        git::cas_ref(repo, &name, built.commit, old, "triad: candidate solution")?;
        self.rec.keep(built.commit);
        c.commit = Some(built.commit.into());
        c.detail = built.summary;
        c.changed = built.changed;
        self.state.messages.push(
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
    fn heard_answer(
        &mut self,
        role: &str,
        req: &crate::model::ChatRequest,
        completion: &crate::model::Completion,
    ) -> Spend {
        let spend = completion.spend();
        self.state.spend += spend;
        let call = Exchange::text(req, completion, ANSWER_RECORD_BYTES);
        self.rec
            .transcript(&mut self.state, &Transcript::new("parallel", role, call));
        spend
    }

    /// Every present candidate's solution as the others, the tiebreaker and the judges see
    /// it: its diff against the base and the deterministic findings on it — the evidence a
    /// stage's review gets (syntax, imports, weakened tests, the task's examples run).
    pub(super) fn solutions(&self, p: &ParallelState) -> Result<Vec<Solution>, RunError> {
        let mut out = Vec::new();
        for c in p.present() {
            let Some(commit) = &c.commit else { continue };
            let prepared = self.candidate_review(commit)?;
            let findings = prepared.findings().to_vec();
            let floor = floor(&findings, None);
            out.push(Solution {
                model: c.model.clone(),
                diff: with_findings(&prepared.gathered.diff_text, &findings),
                floor,
                findings,
            });
        }
        Ok(out)
    }

    /// The winner is shown the others' solutions and ratings and enhances its own on top of
    /// its commit. An answer that cannot be used leaves the winner's solution as it is (said
    /// in the record); no edit is a valid answer.
    fn synthesize(&mut self, p: &ParallelState) -> Result<Flow, RunError> {
        let Some(w) = &p.winner else {
            return Ok(Flow::Continue);
        };
        let Some(won) = p.candidate(&w.model).and_then(|c| c.commit.clone()) else {
            return Ok(Flow::Continue);
        };
        let repo = self.env.repo;
        let parent = won.oid()?;
        let tree = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading the winner's tree")?;
        let diffs: Vec<(String, String)> = self
            .solutions(p)?
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
            char_budget: self.char_budget(std::slice::from_ref(&w.model)),
        };
        let req = self.explore_request(&w.model, &tree, &ask)?;
        let model = w.model.clone();
        let answer = self
            .env
            .client
            .chat(Role::Implementer, std::slice::from_ref(&model), &req)
            .await_blocking();
        let synthesis = match answer {
            Err(e @ ModelError::Budget(_)) => return self.model_failed("parallel", e),
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
                let spend = self.heard_answer("synthesizer", &req, &completion);
                let (commit, detail) = match self.build_answer(&model, parent, &completion.response.text, "synthesis", true)? {
                    Ok(b) if b.changed.is_empty() => (None, format!("took nothing from the others: {}", b.summary)),
                    Ok(b) => {
                        self.rec.keep(b.commit);
                        (Some(b.commit.into()), b.summary)
                    }
                    Err(why) => (None, format!("its synthesis could not be used ({why}); the winner's solution goes on as it is")),
                };
                self.state.messages.push(
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
        self.parallel_mut().synthesis = Some(synthesis);
        self.explored(&model, &what);
        self.rec.event(&self.state, &format!("parallel: {what}"))?;
        Ok(Flow::Continue)
    }

    /// The exploration's result stands in for the implement stage (its one accepted
    /// attempt, by the winner); the run's branch moves to it and Verify comes next.
    fn conclude(&mut self, p: &ParallelState) -> Result<Flow, RunError> {
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
        let repo = self.env.repo;
        let base = self.state.base.oid()?;
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
                "tournament"
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
        let implement = &mut self.state.stages[Stage::Implement.index()];
        implement.attempts.push(AttemptRecord {
            n: implement.attempts.len() as u32 + 1,
            model: w.model.clone(),
            commit: Some(tip.clone()),
            verdict: None,
            arbiter_model: None,
            result: AttemptResult::Accepted,
            detail,
            spend,
            changed,
            left_out: Default::default(),
        });
        implement.commit = Some(tip.clone());
        self.state.current = Stage::Verify.index();
        self.parallel_mut().done = true;
        let tip = tip.oid()?;
        self.rec.keep(tip);
        self.rec
            .event(&self.state, "parallel: done; on to verify")?;
        self.move_branch(tip, Some(base), "parallel exploration done")?;
        Ok(Flow::Continue)
    }
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

impl<'a> Run<'a> {
    /// A candidate's solution (`commit`) prepared for review against the run's base, with
    /// the tree's facts (weakened tests, the task's examples) among its findings.
    pub(super) fn candidate_review(
        &self,
        commit: &ObjectId,
    ) -> Result<crate::arbiter::gather::Prepared<'a>, RunError> {
        let repo = self.env.repo;
        let base = self.base_tree()?;
        let tree = repo
            .find_commit(commit.oid()?)
            .and_then(|c| c.tree())
            .ctx("reading a candidate's tree")?;
        let mut prepared = prepare(Subject {
            repo,
            old: Some(&base),
            new: &tree,
            privacy: Some(&self.privacy),
            venv_root: None,
            probes: self.probe_policy(),
            not_run: None,
        })
        .ctx("diffing a candidate")?;
        let facts = TreeFacts::of(
            repo,
            Some(&base),
            &tree,
            Some(&self.spec),
            &prepared.runner,
            true,
        )
        .ctx("diffing a candidate")?;
        prepared.add_findings(facts.findings());
        Ok(prepared)
    }
}

/// A candidate's solution as shown to the other models: its diff with the deterministic
/// findings on it, and the floor they impose.
pub(super) struct Solution {
    /// The candidate model.
    pub model: String,
    /// Its diff against the base, then the findings.
    pub diff: String,
    /// The verdict the findings impose by themselves (`None`: none).
    pub floor: Option<Floor>,
    /// The deterministic findings on it.
    pub findings: Vec<Finding>,
}

impl Solution {
    /// Why the solution cannot win, when the facts already reject it (a file that does not
    /// parse, an import that resolves nowhere, a weakened test, a failing example).
    pub fn barred(&self) -> Option<String> {
        self.floor
            .as_ref()
            .filter(|f| f.verdict >= Verdict::Reject)
            .map(|f| f.reasons.join("; "))
    }
}

/// `diff` followed by the deterministic findings on it, as a model is shown them.
fn with_findings(diff: &str, findings: &[Finding]) -> String {
    if findings.is_empty() {
        return diff.to_string();
    }
    let mut s = format!("{diff}\n# deterministic findings (established by tools):\n");
    for f in findings {
        s.push_str(&format!(
            "# [{} {}] {}:{} {}\n",
            f.severity, f.kind, f.path, f.line, f.reason
        ));
    }
    s
}
