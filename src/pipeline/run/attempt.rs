//! One attempt at the current stage: ask the model, read its answer, apply its edits to an
//! in-memory tree, commit, and hand the commit to review or acceptance.

use std::time::Instant;

use super::building::Held;
use super::checks::StageFacts;
use super::examples::untested;
use super::requirements::{checkable, functions, unmet_requirements, Unmet};
use super::whole::{dropped_feedback, settle_whole_files};
use super::{BlockOn, Flow, Run, RunError};
use crate::arbiter::gather::TreeFacts;
use crate::arbiter::review::finding_issue;
use crate::code::Finding;
use crate::edit::{check_path, render_failures, summarize_failures, BlockFailure, EditBlock};
use crate::git::{self, Context as _, ObjectId, TreeFiles};
use crate::model::{Exchange, Spend};
use crate::pipeline::answer::{apply_answer, read_answer, writes_whole_files, ReadAnswer};
use crate::pipeline::fit::LeftOut;
use crate::pipeline::observer::Progress;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::record::{one_line, AttemptRecord, AttemptResult, Transcript, UnderReview};
use crate::pipeline::stage::Stage;
use crate::probe::ProbeRunner;
use crate::task::outcome::Outcome;

/// Most bytes of a stage answer kept in the run record's transcript.
const ANSWER_RECORD_BYTES: usize = 256 * 1024;

/// An answered attempt before its fate is known.
pub(super) struct Answered {
    /// 1-based attempt number.
    pub n: u32,
    /// The model that answered.
    pub model: String,
    /// What the call cost.
    pub spend: Spend,
    /// What the prompt left out to fit the model's window.
    pub left_out: LeftOut,
}

impl Answered {
    /// The attempt's record once its fate is known.
    pub fn record(&self, result: AttemptResult, detail: impl Into<String>) -> AttemptRecord {
        AttemptRecord {
            n: self.n,
            model: self.model.clone(),
            commit: None,
            verdict: None,
            arbiter_model: None,
            result,
            detail: detail.into(),
            spend: self.spend,
            changed: Vec::new(),
            left_out: self.left_out.clone(),
        }
    }
}

impl Run<'_> {
    /// One attempt at the current stage.
    pub(super) fn attempt(&mut self) -> Result<Flow, RunError> {
        let repo = self.env.repo;
        let idx = self.state.current;
        let stage = self.state.stages[idx].stage;
        let role = stage.role();
        let n = self.state.stages[idx].attempts.len() as u32 + 1;
        let epoch_n = self.state.stages[idx].attempts_in_epoch() + 1;
        let parent = self.state.tip().oid()?;
        let parent_tree = repo
            .find_commit(parent)
            .and_then(|c| c.tree())
            .ctx("reading the stage's parent tree")?;
        // After a change that made the verify command fail, the next attempt works on that
        // change: it is shown its files and its edits apply to them.
        let work_tree = match &self.state.stages[idx].draft {
            Some(draft) => repo
                .find_commit(draft.oid()?)
                .and_then(|c| c.tree())
                .ctx("reading the failing attempt's tree")?,
            None => parent_tree.clone(),
        };
        let files = TreeFiles::new(repo, work_tree.clone());
        let (req, left_out) = self.stage_request(&parent_tree, &files)?;

        if let Err(e) = crate::task::workflow::on_stage_start(
            repo,
            &self.state.task,
            &self.state.run_id,
            stage.as_str(),
        ) {
            tracing::warn!("could not record the task's state: {e}");
        }
        self.economize(idx)?;
        let candidates = {
            let s = &self.state.stages[idx];
            s.models[s.model_index.min(s.models.len())..].to_vec()
        };
        self.env.observer.progress(&Progress::StageStarted {
            stage,
            position: (idx, self.state.stages.len()),
            model: self.state.stages[idx].model(),
            attempt: (epoch_n, self.state.max_retries + 1),
        });
        let started = Instant::now();
        let completion = match self
            .env
            .client
            .chat(role, &candidates, &req)
            .await_blocking()
        {
            Ok(c) => c,
            Err(e) => return self.model_failed(stage.as_str(), e),
        };
        let spend = completion.spend();
        self.state.spend += spend;
        let call = Exchange::text(&req, &completion, ANSWER_RECORD_BYTES);
        let mut transcript = Transcript::new(stage.as_str(), role.as_str(), call);
        transcript.attempt = Some(n);
        transcript.left_out = left_out.clone();
        self.rec.transcript(&mut self.state, &transcript);
        self.env.observer.progress(&Progress::Answered {
            stage,
            seconds: started.elapsed().as_secs_f64(),
            spend,
        });
        let answered = Answered {
            n,
            model: completion.model.clone(),
            spend,
            left_out,
        };

        // Understand the answer.
        let whole = writes_whole_files(&self.env.config.config, &answered.model);
        let ReadAnswer { meta, blocks } = match read_answer(&completion.response.text, whole) {
            Ok(a) => a,
            Err(why) => return self.retry(answered.record(AttemptResult::BadAnswer, ""), &why),
        };
        if meta.outcome != Outcome::Approve {
            if let Some(why) = crate::task::outcome::unroutable(&meta, stage.as_str()) {
                return self.retry(answered.record(AttemptResult::BadAnswer, ""), &why);
            }
            return self.stop_on_outcome(answered, meta);
        }
        let mut applied = match apply_answer(&files, &self.privacy, &self.spec, &blocks) {
            Ok(a) => a,
            Err(failures) => {
                let ok_count = blocks.len().saturating_sub(failures.len());
                return self.edits_failed(answered, &failures, ok_count);
            }
        };
        let mut notes = String::new();
        if whole {
            match settle_whole_files(&|p| files.text(p), &mut applied.files, &self.spec) {
                Ok(read) if read.is_empty() => {}
                Ok(read) => notes = format!(" ({})", read.join("; ")),
                Err(dropped) => {
                    let detail = dropped
                        .iter()
                        .map(|(p, names)| format!("would delete {} from {p}", names.join(", ")))
                        .collect::<Vec<_>>()
                        .join("; ");
                    let refused = answered.record(AttemptResult::EditsFailed, detail);
                    return self.retry(refused, &dropped_feedback(&dropped));
                }
            }
        }
        if stage == Stage::Verify {
            // A summary that does not read as one counts as none (the reconciliation's facts
            // then say so).
            let summary = match meta.implementation_summary.clone() {
                None => Err("it has no `implementation_summary`".to_string()),
                Some(v) => serde_json::from_value::<ImplementationSummary>(v)
                    .map_err(|e| format!("its `implementation_summary` does not read: {e}")),
            };
            // The reconciliation weighs it: a verifier that leaves it out is asked for it
            // while it has attempts left, rather than the whole change being sent back.
            if let (Err(why), true) = (&summary, self.state.reconcile.is_some()) {
                if epoch_n <= self.state.max_retries {
                    let refused = answered.record(AttemptResult::BadAnswer, why.clone());
                    return self.retry(refused, &no_summary_feedback(why));
                }
            }
            self.state.implementation_summary = summary.ok();
        }

        // The facts of the answer before anything is committed.
        let tree = match git::build_tree(repo, &work_tree, &applied.files) {
            Ok(t) => t,
            Err(e) => {
                // A path the edit checks let through but git cannot store is the model's
                // mistake to fix, not the end of the run.
                let refused = git::unstorable(repo, &work_tree, &applied.files);
                if refused.is_empty() {
                    return Err(e.into());
                }
                let failures = unstorable_failures(&blocks, refused);
                let ok_count = blocks.len().saturating_sub(failures.len());
                return self.edits_failed(answered, &failures, ok_count);
            }
        };
        let new_tree = repo.find_tree(tree).ctx("reading the stage tree")?;
        let diff = git::diff_trees(repo, Some(&parent_tree), &new_tree).ctx("diffing the stage")?;
        let facts = StageFacts::of(&diff, &meta.summary);
        if let Some(feedback) = facts.no_change(stage, &self.spec, whole) {
            let refused = answered.record(AttemptResult::NoChange, "no edit changed a file");
            return self.retry(refused, &feedback);
        }
        let mut claims = self.claims(stage, &facts, &new_tree, &meta.summary)?;
        // The attempt's record says what the summary claimed beside what the diff did,
        // reviewed or not (`log` shows both on the attempt's line).
        if !claims.is_empty() {
            let named: Vec<&str> = claims.iter().map(|f| f.path.as_str()).collect();
            notes.push_str(&format!(
                " (facts: its summary names {}, which its diff does not touch)",
                named.join(", ")
            ));
        }
        // What the tree shows, whatever anyone says: the tests of the base it weakens and
        // the task's examples run against it (not at the architect's scaffold).
        let tree_facts = self.tree_facts(stage, &new_tree)?;
        if stage == Stage::Verify {
            // The verifier answers for the whole run: a requirement its tree visibly leaves
            // undone is a fact of its review (at least FLAG), whatever the arbiter says.
            claims.extend(self.unmet(&new_tree)?.iter().map(Unmet::finding));
            claims.extend(tree_facts.findings());
        } else if stage == Stage::Architect {
            claims.extend(tree_facts.findings());
        }

        // Commit the stage from the in-memory tree.
        let summary = one_line(&meta.summary, &format!("{stage} stage"));
        let message = format!(
            "triad({stage}): {summary}\n\nTriad-Run: {}\nTriad-Stage: {stage}\nTriad-Model: {}\nTriad-Attempt: {n}\n",
            self.state.run_id, answered.model
        );
        let commit = git::commit(repo, tree, &[parent], &message)?;
        if matches!(stage, Stage::Implement | Stage::Refactor) {
            // The building stages are held to the requirements' facts and the verify command.
            let noop = tree == work_tree.id();
            match self.hold_building(stage, commit, &new_tree, &tree_facts, whole, noop, epoch_n)? {
                Held::GoesOn {
                    notes: more,
                    findings,
                } => {
                    notes.push_str(&more);
                    claims.extend(findings);
                }
                Held::Again {
                    result,
                    detail,
                    feedback,
                    keep,
                } => {
                    let mut refused = answered.record(result, detail);
                    refused.commit = Some(ObjectId::from(commit));
                    refused.changed = facts.changed;
                    if keep {
                        self.rec.keep(commit);
                        self.state.stages[idx].draft = Some(ObjectId::from(commit));
                    }
                    return self.retry(refused, &feedback);
                }
            }
        }
        self.state.stages[idx].draft = None;
        let mut attempt = answered.record(AttemptResult::Accepted, format!("{summary}{notes}"));
        attempt.commit = Some(ObjectId::from(commit));
        attempt.changed = facts.changed;

        if stage == Stage::Verify && !attempt.changed.is_empty() {
            // The verifier fixed something: the command's result at its commit is the fact
            // the review and the reconciliation weigh, not the one from before the fix.
            self.run_verify(ObjectId::from(commit))?;
        }
        if !self.state.stages[idx].reviewed {
            // Unreviewed, a claim without evidence travels as a flag to the next stage and
            // to every later review.
            let flags: Vec<_> = claims.iter().map(finding_issue).collect();
            self.state.all_flags.extend(flags.iter().cloned());
            self.state.pending_flags = flags;
            return self.accept(attempt, commit, None, &meta);
        }
        // Recorded before the arbiter is asked: a run killed during the review resumes with
        // the review, and the stage's answer is never paid for twice.
        self.state.under_review = Some(UnderReview { attempt, meta });
        self.rec.keep(commit);
        self.rec.event(
            &self.state,
            &format!("{stage} attempt {n} committed for review"),
        )?;
        self.review_and_decide_pending(epoch_n, claims)
    }

    /// The TaskSpec's requirements that the run's change up to `new_tree` visibly leaves
    /// undone (see [`unmet_requirements`]), and the acceptance examples its tests never
    /// check (see [`untested`]).
    pub(super) fn unmet(&self, new_tree: &git2::Tree<'_>) -> Result<Vec<Unmet>, RunError> {
        if checkable(&self.spec).next().is_none() {
            return Ok(Vec::new());
        }
        let run = self.run_diff(new_tree)?;
        let files = TreeFiles::new(self.env.repo, new_tree.clone());
        let read = |p: &str| files.text(p);
        let mut unmet = unmet_requirements(&self.spec, &run, &read);
        // The tree is listed only for a task with examples to look for.
        if !self.spec.all_examples().is_empty() {
            let tests: Vec<String> = files
                .paths()
                .into_iter()
                .filter(|p| self.spec.writable(p) && crate::code::test_path(p))
                .collect();
            unmet.extend(untested(&self.spec, &functions(&self.spec), &tests, &read));
        }
        Ok(unmet)
    }

    /// The facts of the run's tree at `new_tree` (see [`TreeFacts`]): the tests of the
    /// run's base it weakens, and, from the implement stage on, the task's acceptance
    /// examples run against it.
    pub(super) fn tree_facts(
        &self,
        stage: Stage,
        new_tree: &git2::Tree<'_>,
    ) -> Result<TreeFacts, RunError> {
        let repo = self.env.repo;
        let base = self.base_tree()?;
        let runner = ProbeRunner::new(repo, new_tree.clone(), self.probe_policy());
        let run = stage != Stage::Architect;
        Ok(
            TreeFacts::of(repo, Some(&base), new_tree, Some(&self.spec), &runner, run)
                .ctx("reading the stage's tree")?,
        )
    }

    /// What the stage's summary claims that its diff does not show (`facts`, the stage's
    /// own diff to `new_tree`); the verifier reports on the whole run, so its claims are
    /// held against the run's diff, not against its own (empty) one.
    pub(super) fn claims(
        &self,
        stage: Stage,
        facts: &StageFacts,
        new_tree: &git2::Tree<'_>,
        summary: &str,
    ) -> Result<Vec<Finding>, RunError> {
        if stage != Stage::Verify {
            return Ok(facts.claim_findings(stage));
        }
        let run = self.run_diff(new_tree)?;
        Ok(StageFacts::of(&run, summary).claim_findings(stage))
    }

    /// The whole run's change: the diff from the run's base to `new_tree`.
    pub(super) fn run_diff(
        &self,
        new_tree: &git2::Tree<'_>,
    ) -> Result<Vec<git::FileDiff>, RunError> {
        let repo = self.env.repo;
        let base = self.base_tree()?;
        Ok(git::diff_trees(repo, Some(&base), new_tree).ctx("diffing the run")?)
    }
}

impl Run<'_> {
    /// Edit blocks were refused: the attempt is recorded with the reasons (bounded, for the
    /// log and the progress lines) and the stage is retried with the whole feedback.
    fn edits_failed(
        &mut self,
        answered: Answered,
        failures: &[BlockFailure],
        applied_ok: usize,
    ) -> Result<Flow, RunError> {
        let mut detail = summarize_failures(failures, applied_ok);
        // A reach for a private file is on the record by name, not lost in a count.
        let private: Vec<&str> = failures
            .iter()
            .filter(|f| f.private)
            .map(|f| f.path.as_str())
            .collect();
        if !private.is_empty() {
            detail = format!(
                "refused edits to private files: {}; {detail}",
                private.join(", ")
            );
        }
        let text = render_failures(failures, applied_ok);
        self.retry(answered.record(AttemptResult::EditsFailed, detail), &text)
    }
}

/// The retry feedback for a verifier whose metadata lacks a readable implementation summary
/// (`why`), which the reconciliation needs.
fn no_summary_feedback(why: &str) -> String {
    format!(
        "## YOUR ANSWER HAS NO IMPLEMENTATION SUMMARY\n\nYour metadata block could not be used: \
{why}. The reconciliation checks the run against it, so the verify stage must write it: answer \
again with your whole answer, and put `implementation_summary` in the ```json metadata block, \
exactly as your instructions show it (task_echo, requirements with id and evidence, \
files_created, files_modified, test_coverage, deviations, omissions).\n"
    )
}

/// Block failures for files git refused to store, each at the answer line of the block
/// that wrote it.
fn unstorable_failures(blocks: &[EditBlock], refused: Vec<(String, String)>) -> Vec<BlockFailure> {
    refused
        .into_iter()
        .map(|(path, why)| {
            let block = blocks
                .iter()
                .find(|b| check_path(&b.path).is_ok_and(|p| p == path));
            BlockFailure {
                answer_line: block.map_or(0, |b| b.answer_line),
                reason: format!("cannot be stored: {why}"),
                path: crate::edit::path::shown(&path),
                nearest: None,
                already_applied: false,
                private: false,
            }
        })
        .collect()
}
