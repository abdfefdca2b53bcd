//! One attempt at the current stage: ask the model, read its answer, apply its edits to an
//! in-memory tree, commit, and hand the commit to review or acceptance.

use std::time::Instant;

use super::act::{accept, drop_to_best, retry, stop_on_outcome, Answered};
use super::building::{self, Held};
use super::checks::StageFacts;
use super::economy::economize;
use super::facts::{claims, tree_facts, unmet};
use super::prompt::stage_request;
use super::requirements::Unmet;
use super::review;
use super::step::{BlockOn, Cx, Flow, Journal, RunError};
use super::stop::model_failed;
use super::verify;
use super::whole::{dropped_feedback, settle_whole_files};
use crate::arbiter::review::finding_issue;
use crate::edit::{check_path, render_failures, summarize_failures, BlockFailure, EditBlock};
use crate::git::{self, Context as _, GitError, ObjectId, TreeFiles};
use crate::model::Exchange;
use crate::pipeline::answer::{
    apply_answer, cut_short, read_answer, read_cut_answer, writes_whole_files, ReadAnswer,
};
use crate::pipeline::observer::Progress;
use crate::pipeline::reconcile::ImplementationSummary;
use crate::pipeline::record::{one_line, AttemptResult, Transcript, UnderReview};
use crate::pipeline::stage::Stage;
use crate::task::outcome::Outcome;

/// Most bytes of a stage answer kept in the run record's transcript.
const ANSWER_RECORD_BYTES: usize = 256 * 1024;

/// One attempt at the current stage.
pub(super) fn attempt(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let repo = cx.repo();
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    let role = stage.role();
    let n = j.state.stages()[idx].attempts.len() as u32 + 1;
    let epoch_n = j.state.stages()[idx].attempts_in_epoch() + 1;
    let parent = j.state.tip().oid()?;
    let parent_tree = cx.tree_of(parent, "reading the stage's parent tree")?;
    // After a change that made the verify command fail, the next attempt works on that
    // change: it is shown its files and its edits apply to them.
    let work_tree = match &j.state.stages()[idx].draft {
        Some(draft) => cx.tree(draft, "reading the failing attempt's tree")?,
        None => parent_tree.clone(),
    };
    let files = TreeFiles::new(repo, work_tree.clone());
    let (req, left_out) = stage_request(cx, j, &parent_tree, &files)?;

    if let Err(e) = crate::task::lifecycle::on_stage_start(
        repo,
        j.state.task(),
        j.state.run_id(),
        stage.as_str(),
    ) {
        tracing::warn!("could not record the task's state: {e}");
    }
    economize(cx, j, idx)?;
    let candidates = {
        let s = &j.state.stages()[idx];
        s.models[s.model_index.min(s.models.len())..].to_vec()
    };
    cx.progress(&Progress::StageStarted {
        stage,
        position: (idx, j.state.stages().len()),
        model: j.state.stages()[idx].model(),
        attempt: (epoch_n, j.state.retries_at(idx) + 1),
    });
    let started = Instant::now();
    let completion = match cx.env.client.chat(role, &candidates, &req).await_blocking() {
        Ok(c) => c,
        Err(e) => return model_failed(cx, j, stage.as_str(), e),
    };
    let spend = completion.spend();
    j.state.add_spend(spend);
    let call = Exchange::text(&req, &completion, ANSWER_RECORD_BYTES);
    let mut transcript = Transcript::new(stage.as_str(), role.as_str(), call);
    transcript.attempt = Some(n);
    transcript.left_out = left_out.clone();
    j.transcript(&transcript);
    cx.progress(&Progress::Answered {
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
    let whole = writes_whole_files(&cx.env.config.config, &answered.model);
    // An answer that does not read, or a refusal with nothing to act on, is asked again...
    let read = match read_answer(&completion.response.text, whole) {
        Ok(a) if a.meta.outcome != Outcome::Approve => {
            match crate::task::outcome::unroutable(&a.meta, stage.as_str()) {
                Some(why) => Err(why),
                None => Ok(a),
            }
        }
        Ok(a) => Ok(a),
        // Cut at the output limit: its complete files still carry what it wrote.
        Err(_) if whole && completion.response.truncated() => {
            match read_cut_answer(&completion.response.text) {
                Some(a) => Ok(a),
                None => Err(cut_short(
                    "your answer has no complete file".into(),
                    &completion.response,
                    req.max_tokens,
                )),
            }
        }
        Err(why) => Err(cut_short(why, &completion.response, req.max_tokens)),
    };
    let ReadAnswer { meta, blocks } = match read {
        Ok(a) => a,
        // ...except the verifier's when every fact of the run's tip holds: it has nothing to
        // fix, and a run is not held back, nor a call spent, for its words.
        Err(why) if stage == Stage::Verify && nothing_to_verify(cx, j)? => set_aside_verifier(&why),
        Err(why) => return retry(cx, j, answered.record(AttemptResult::BadAnswer, ""), &why),
    };
    if meta.outcome != Outcome::Approve {
        return stop_on_outcome(cx, j, answered, meta);
    }
    let read_only = if matches!(stage, Stage::Implement | Stage::Refactor) {
        verify::read_only(cx, j)?
    } else {
        Vec::new()
    };
    let mut applied = match apply_answer(&files, &cx.privacy, &cx.spec, &blocks, &read_only) {
        Ok(a) => a,
        Err(failures) => {
            let ok_count = blocks.len().saturating_sub(failures.len());
            return edits_failed(cx, j, answered, &failures, ok_count);
        }
    };
    // Edits to a read-only file were left out and the rest applied: the record says so,
    // and any retry starts by saying so.
    let aside = set_aside_feedback(&applied.set_aside);
    let mut notes = if applied.set_aside.is_empty() {
        String::new()
    } else {
        let paths: Vec<&str> = applied.set_aside.iter().map(|f| f.path.as_str()).collect();
        format!(" (set aside, read-only: {})", paths.join(", "))
    };
    if whole {
        match settle_whole_files(&|p| files.text(p), &mut applied.files, &cx.spec) {
            Ok(read) if read.is_empty() => {}
            Ok(read) => notes.push_str(&format!(" ({})", read.join("; "))),
            Err(dropped) => {
                let detail = dropped
                    .iter()
                    .map(|(p, names)| format!("would delete {} from {p}", names.join(", ")))
                    .collect::<Vec<_>>()
                    .join("; ");
                let refused = answered.record(AttemptResult::EditsFailed, detail);
                return retry(cx, j, refused, &dropped_feedback(&dropped));
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
        if let (Err(why), true) = (&summary, j.state.reconcile().is_some()) {
            if epoch_n <= j.state.max_retries() {
                let refused = answered.record(AttemptResult::BadAnswer, why.clone());
                return retry(cx, j, refused, &no_summary_feedback(why));
            }
        }
        j.state.set_implementation_summary(summary.ok());
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
            return edits_failed(cx, j, answered, &failures, ok_count);
        }
    };
    let new_tree = repo.find_tree(tree).ctx("reading the stage tree")?;
    let diff = git::diff_trees(repo, Some(&parent_tree), &new_tree).ctx("diffing the stage")?;
    let facts = StageFacts::of(&diff, &meta.summary);
    let mut written: Vec<&str> = blocks.iter().map(|b| b.path.as_str()).collect();
    written.sort_unstable();
    written.dedup();
    if let Some(feedback) = facts.no_change(stage, &cx.spec, whole, &written) {
        let refused = answered.record(
            AttemptResult::NoChange,
            format!("no edit changed a file{notes}"),
        );
        return retry(cx, j, refused, &format!("{aside}{feedback}"));
    }
    // A plan with no files, or a refactor with nothing to do, is what it says: recorded,
    // with what its summary claims beside it, but not reviewed as a change (there is none),
    // and its claims travel to no later stage as flags.
    let nothing = matches!(stage, Stage::Architect | Stage::Refactor) && diff.is_empty();
    let mut claims = claims(cx, stage, &facts, &new_tree, &meta.summary)?;
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
    let tree_facts = tree_facts(cx, stage, &new_tree)?;
    if stage == Stage::Verify {
        // The verifier answers for the whole run: a requirement its tree visibly leaves
        // undone is a fact of its review (at least FLAG), whatever the arbiter says.
        claims.extend(unmet(cx, &new_tree)?.iter().map(Unmet::finding));
        claims.extend(tree_facts.findings());
    } else if stage == Stage::Architect {
        claims.extend(tree_facts.findings());
    }

    // Commit the stage from the in-memory tree.
    let summary = one_line(&meta.summary, &format!("{stage} stage"));
    let message = format!(
        "triad({stage}): {summary}\n\nTriad-Run: {}\nTriad-Stage: {stage}\nTriad-Model: {}\nTriad-Attempt: {n}\n",
        j.state.run_id(), answered.model
    );
    let commit = git::commit(repo, tree, &[parent], &message)?;
    if matches!(stage, Stage::Implement | Stage::Refactor) {
        // The building stages are held to the requirements' facts and the verify command.
        let noop = tree == work_tree.id();
        match building::hold(
            cx,
            j,
            stage,
            commit,
            &new_tree,
            &tree_facts,
            whole,
            noop,
            epoch_n,
        )? {
            Held::GoesOn {
                notes: more,
                findings,
            } => {
                notes.push_str(&more);
                claims.extend(findings);
            }
            Held::Dropped { why } => {
                let mut dropped = answered.record(AttemptResult::Dropped, why.clone());
                dropped.commit = Some(ObjectId::from(commit));
                dropped.changed = facts.changed;
                return match drop_to_best(cx, j, Some(dropped), &why)? {
                    Some(flow) => Ok(flow),
                    None => Err(GitError::Command(
                        "a stage was dropped for a best evidenced commit the run does not have"
                            .into(),
                    )
                    .into()),
                };
            }
            Held::Again {
                result,
                detail,
                feedback,
                keep,
            } => {
                let mut refused = answered.record(result, format!("{detail}{notes}"));
                refused.commit = Some(ObjectId::from(commit));
                refused.changed = facts.changed;
                if keep {
                    j.keep(commit);
                    j.state.set_draft(Some(ObjectId::from(commit)));
                }
                return retry(cx, j, refused, &format!("{aside}{feedback}"));
            }
        }
    }
    j.state.set_draft(None);
    let mut attempt = answered.record(AttemptResult::Accepted, format!("{summary}{notes}"));
    attempt.commit = Some(ObjectId::from(commit));
    attempt.changed = facts.changed;

    if stage == Stage::Verify && !attempt.changed.is_empty() {
        // The verifier fixed something: the command's result at its commit is the fact
        // the review and the reconciliation weigh, not the one from before the fix.
        verify::run(cx, j, ObjectId::from(commit))?;
    }
    if stage != Stage::Architect && !attempt.changed.is_empty() {
        // What it passes, should it be accepted: the run's best commit so far.
        attempt.evidenced = building::evidenced(cx, commit, &new_tree, &tree_facts)?;
    }
    if nothing {
        let what = match stage {
            Stage::Architect => "a plan, no file changed",
            _ => "nothing refactored, no file changed",
        };
        attempt.detail = format!("{summary}{notes} ({what}: not reviewed, there is no change)");
        return accept(cx, j, attempt, commit, None, &meta);
    }
    if !j.state.stages()[idx].reviewed {
        // Unreviewed, a claim without evidence travels as a flag to the next stage and
        // to every later review.
        let flags: Vec<_> = claims.iter().map(finding_issue).collect();
        j.state.carry_flags(flags);
        return accept(cx, j, attempt, commit, None, &meta);
    }
    // Recorded before the arbiter is asked: a run killed during the review resumes with
    // the review, and the stage's answer is never paid for twice.
    j.state.hold_for_review(UnderReview {
        attempt,
        meta,
        findings: Some(claims),
    });
    j.keep(commit);
    j.event(&format!("{stage} attempt {n} committed for review"))?;
    review::pending(cx, j, epoch_n, None)
}

/// Whether the Verify stage has nothing to fix: the run's tip is its best evidenced commit
/// (it passes every fact the run checks, the verify command among them where one runs).
fn nothing_to_verify(cx: &Cx<'_>, j: &Journal<'_>) -> Result<bool, RunError> {
    let tip = j.state.tip().clone();
    let evidenced = j.state.best().is_some_and(|b| b.commit == tip);
    Ok(evidenced && verify::passes_at(cx, &tip) != Some(false))
}

/// The verifier's answer set aside (`why`: why it could not be used), as an approval with no
/// edit that says so: the facts, not its words, carry the stage.
fn set_aside_verifier(why: &str) -> ReadAnswer {
    let first = why
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or(why);
    let summary = format!(
        "the verifier's answer was set aside ({}): every fact of the run's tip holds, so there was nothing to fix",
        crate::bounded::clip(first, 160)
    );
    let meta =
        serde_json::from_value(serde_json::json!({"outcome": "APPROVE", "summary": summary}))
            .expect("an APPROVE with a summary is a stage's metadata");
    ReadAnswer {
        meta,
        blocks: Vec::new(),
    }
}

/// What a retry is told first when blocks on read-only files were set aside: which, why,
/// and that the rest of the answer was applied and is what the feedback below is about.
fn set_aside_feedback(aside: &[BlockFailure]) -> String {
    if aside.is_empty() {
        return String::new();
    }
    let mut s = String::from("## EDITS SET ASIDE\n\n");
    for f in aside.iter().take(crate::bounded::LIST_ITEMS) {
        s.push_str(&format!(
            "- `{}` (block at answer line {}): {}\n",
            f.path, f.answer_line, f.reason
        ));
    }
    s.push_str("The rest of your answer was applied; what follows is about it. Leave the files above out of your next answer.\n\n");
    s
}

/// Edit blocks were refused: the attempt is recorded with the reasons (bounded, for the
/// log and the progress lines) and the stage is retried with the whole feedback.
fn edits_failed(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
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
    retry(
        cx,
        j,
        answered.record(AttemptResult::EditsFailed, detail),
        &text,
    )
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
