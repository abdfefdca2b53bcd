//! The arbiter's review of a stage commit, its verdict note, and what the verdict decides:
//! accept (APPROVE), accept with flags for the next stage (FLAG), retry with the feedback
//! block (REJECT), or stop (HALT).

use git2::Oid;

use super::act::{accept, drop_to_best, retry};
use super::chamber::{self, ask_chamber, chamber_answer, verdict_question, Chambered};
use super::checks::StageFacts;
use super::facts::{claims, tree_facts, unmet};
use super::requirements::Unmet;
use super::step::{BlockOn, Cx, Flow, Journal, RunError};
use super::stop::{halt, model_failed};
use crate::arbiter::floor::floor;
use crate::arbiter::gather::{prepare, Prepared, Subject, TaskBrief};
use crate::arbiter::request::Brief;
use crate::arbiter::review::finish;
use crate::arbiter::schema::ArbiterAnswer;
use crate::arbiter::service::{candidates, review_change, Reviewed};
use crate::arbiter::{feedback, Verdict};
use crate::code::Finding;
use crate::git::{self, Context as _, GitError};
use crate::model::ModelError;
use crate::notes::{self, Record, ReviewRecord};
use crate::pipeline::observer::Progress;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::{
    one_line, AttemptRecord, AttemptResult, RunStatus, StopReason, Transcript, UnderReview,
};
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::{self, AfterReview, Stop};
use crate::probe::{keeps_behaviour, Intent};
use crate::task::outcome::StageMeta;
use crate::task::TaskSpec;

/// Reviews the attempt the record holds under review, as a resumed run finds it, with the
/// facts its record holds; a record older than that finds them again from its commit.
pub(super) fn resume(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let Some(under) = j.state.under_review() else {
        return Ok(Flow::Continue);
    };
    let epoch_n = j.state.stages()[j.state.current()].attempts_in_epoch() + 1;
    if under.findings.is_some() {
        return pending(cx, j, epoch_n, None);
    }
    let stage = j.state.stages()[j.state.current()].stage;
    let repo = cx.repo();
    let commit = under
        .attempt
        .commit
        .as_ref()
        .ok_or_else(|| GitError::Command("the attempt under review has no commit".into()))?
        .oid()?;
    let commit = repo
        .find_commit(commit)
        .ctx("reading the commit under review")?;
    let new_tree = commit.tree().ctx("reading the commit under review")?;
    let parent_tree = commit
        .parent(0)
        .and_then(|p| p.tree())
        .ctx("reading the parent of the commit under review")?;
    let diff = git::diff_trees(repo, Some(&parent_tree), &new_tree).ctx("diffing the stage")?;
    let summary = under.meta.summary.clone();
    let facts = StageFacts::of(&diff, &summary);
    let mut claims = claims(cx, stage, &facts, &new_tree, &summary)?;
    if matches!(stage, Stage::Verify | Stage::Architect) {
        let tree_facts = tree_facts(cx, stage, &new_tree)?;
        if stage == Stage::Verify {
            claims.extend(unmet(cx, &new_tree)?.iter().map(Unmet::finding));
        }
        claims.extend(tree_facts.findings());
    }
    pending(cx, j, epoch_n, Some(claims))
}

/// Takes the attempt under review out of the state (every outcome below records the
/// state without it) and reviews it with the facts its record holds (else `found`).
pub(super) fn pending(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    epoch_n: u32,
    found: Option<Vec<Finding>>,
) -> Result<Flow, RunError> {
    let Some(UnderReview {
        attempt,
        meta,
        findings,
    }) = j.state.take_under_review()
    else {
        return Ok(Flow::Continue);
    };
    let claims = findings.or(found).unwrap_or_default();
    let commit = match attempt.commit.as_ref().map(|c| c.oid()) {
        Some(Ok(c)) => c,
        Some(Err(e)) => return Err(e.into()),
        None => {
            return Err(GitError::Command("the attempt under review has no commit".into()).into())
        }
    };
    decide(cx, j, attempt, commit, &meta, epoch_n, claims)
}

/// Reviews `commit` (the current stage's attempt), records the verdict note, and acts on
/// the verdict.
fn decide(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    mut attempt: AttemptRecord,
    commit: Oid,
    meta: &StageMeta,
    epoch_n: u32,
    claims: Vec<Finding>,
) -> Result<Flow, RunError> {
    let idx = j.state.current();
    let stage = j.state.stages()[idx].stage;
    let prepared = prepare_review(cx, j, stage, commit, claims.clone())?;
    let reviewed = match ask(cx, j, stage, &attempt.model, &prepared, meta) {
        Ok(r) => r,
        Err(e) => {
            // The answer was paid for: it stays under review, and a resumed run reviews
            // it instead of asking the stage again, with the same facts.
            j.keep(commit);
            j.state.hold_for_review(UnderReview {
                attempt,
                meta: meta.clone(),
                findings: Some(claims),
            });
            return model_failed(cx, j, stage.as_str(), e);
        }
    };
    let review = reviewed.review;
    let facts = reviewed.facts;
    j.state.add_spend(reviewed.spend);
    attempt.spend += reviewed.spend;
    attempt.verdict = Some(review.verdict);
    attempt.arbiter_model = Some(review.arbiter_model.clone());
    cx.progress(&Progress::Reviewed {
        stage,
        review: &review,
    });

    // A doubtful REJECT or HALT is deliberated first, so its note names the session.
    let reject_fb = feedback::reject_block(
        epoch_n,
        j.state.retries_at(j.state.current()),
        &review.issues,
        &review.alternatives,
    );
    let chambered = if chamber::verdict_is_doubtful(&review, facts.as_ref()) {
        j.keep(commit);
        let trigger = format!("arbiter {} at {:.2}", review.verdict, review.confidence);
        let question = verdict_question(cx, j, stage, &review);
        ask_chamber(cx, j, stage, &trigger, question, &reject_fb)?
    } else {
        Chambered::Nothing
    };

    // The note is the pre-push gate's only input: without it the run does not go on.
    let line = Record::Review(Box::new(ReviewRecord {
        run: Some(j.state.run_id().to_string()),
        task: Some(j.state.task().to_string()),
        attempt: attempt.n,
        stage_reviewed: stage.as_str().to_string(),
        chamber: chambered.session().map(str::to_string),
        review: review.clone(),
    }));
    if let Err(e) = notes::record(cx.repo(), commit, line) {
        attempt.result = AttemptResult::Rejected;
        attempt.detail = "its verdict note could not be written".into();
        j.state.push_attempt(attempt);
        j.keep(commit);
        return halt(
            cx,
            j,
            RunStatus::Failed,
            StopReason::NoteNotWritten {
                commit: commit.into(),
                error: e.to_string(),
            },
            &format!("{stage} verdict note not written"),
        );
    }

    let action = transition::after_review(review.verdict, chambered.deliberated());
    if !matches!(action, AfterReview::Accept { .. }) {
        // A refused attempt's commit stays reachable from the record.
        j.keep(commit);
        (attempt.result, attempt.detail) = if review.verdict == Verdict::Halt {
            (AttemptResult::Halted, review.why())
        } else {
            let why = one_line(&review.why(), "rejected by the arbiter");
            (AttemptResult::Rejected, why)
        };
    }
    match action {
        AfterReview::Accept { carry_flags } => {
            if carry_flags {
                j.state.carry_flags(review.issues.clone());
            } else {
                j.state.clear_flags();
            }
            accept(cx, j, attempt, commit, Some(review.verdict), meta)
        }
        AfterReview::Retry => {
            let feedback = match chambered {
                Chambered::Answer { block, .. } => format!("{reject_fb}\n{block}"),
                _ => reject_fb,
            };
            retry(cx, j, attempt, &feedback)
        }
        AfterReview::Stop(stop) => {
            // After the best evidenced commit, a stop is the stage's, not the run's.
            let why = format!(
                "the arbiter's {} ({})",
                review.verdict,
                one_line(&review.why(), "no reason given")
            );
            if let Some(flow) = drop_to_best(cx, j, Some(attempt.clone()), &why)? {
                return Ok(flow);
            }
            j.state.push_attempt(attempt);
            let (reason, event) = if stop == Stop::Chamber {
                let reason = StopReason::Chamber {
                    stage,
                    session: chambered.session().unwrap_or_default().to_string(),
                    trigger: format!("arbiter REJECT at {:.2}", review.confidence),
                };
                (
                    reason,
                    format!("{stage} rejection escalated by the chamber"),
                )
            } else {
                // What the chamber said goes with the halt, for the person who decides.
                let chamber_said = match chamber_answer(j, chambered.session()) {
                    Some(a) => format!(
                        "\nThe chamber (session {}) on this halt: {a}",
                        chambered.session().unwrap_or_default()
                    ),
                    None => String::new(),
                };
                let reason = StopReason::ArbiterHalt {
                    stage,
                    arbiter_model: review.arbiter_model.clone(),
                    reasoning: format!("{}{chamber_said}", review.reasoning),
                    issues: review.issues.iter().take(3).cloned().collect(),
                };
                (reason, format!("{stage} halted by the arbiter"))
            };
            halt(cx, j, stop.status(), reason, &event)
        }
    }
}

/// The review of `commit` prepared (see [`prepare`]): its diff against the stage's
/// starting point (the verify stage: against the base, the whole change), with the
/// evidence and the stage's `claims` (facts the attempt established).
fn prepare_review<'a>(
    cx: &Cx<'a>,
    j: &Journal<'_>,
    stage: Stage,
    commit: Oid,
    claims: Vec<Finding>,
) -> Result<Prepared<'a>, RunError> {
    let repo = cx.repo();
    let new_tree = cx.tree_of(commit, "reading the commit under review")?;
    let old_tree = if stage == Stage::Verify {
        cx.base_tree()?
    } else {
        cx.tree(j.state.tip(), "reading the reviewed change's parent")?
    };
    let mut prepared = prepare(Subject {
        repo,
        old: Some(&old_tree),
        new: &new_tree,
        privacy: Some(&cx.privacy),
        venv_root: None,
        probes: cx.probe_policy(),
        not_run: (stage == Stage::Architect).then_some(SCAFFOLD_NOT_RUN),
    })
    .ctx("diffing the stage under review")?;
    prepared.add_findings(claims);
    // The changed functions run on both sides: a fact for the arbiter, with the floors of
    // what the stage and the task say the change does to behaviour.
    let examples = cx.spec.example_calls();
    prepared.take_behaviour(&examples, &intent(&cx.spec, stage), &cx.behaviours);
    Ok(prepared)
}

/// What a stage's change says it does to behaviour: the refactor stage, and every stage of
/// a task whose title or description says behaviour stays (a refactor, a rename), keep it;
/// a change elsewhere than the functions the requirements name is unasked.
pub(super) fn intent(spec: &TaskSpec, stage: Stage) -> Intent {
    let keeps = if stage == Stage::Refactor {
        Some("the refactor stage".to_string())
    } else {
        keeps_behaviour(&format!("{}\n{}", spec.title, spec.description))
            .map(|w| format!("the task's {w}"))
    };
    Intent {
        keeps,
        named: spec.named_functions(),
    }
}

/// Asks the arbiter about the prepared change and checks its answer against the facts.
fn ask(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    stage: Stage,
    stage_model: &str,
    prepared: &Prepared<'_>,
    meta: &StageMeta,
) -> Result<Reviewed, ModelError> {
    let idx = j.state.current();
    let role_list = j
        .state
        .arbiter_pool(cx.env.config, cx.env.profile.as_deref());
    let judges = candidates(
        j.state.stages()[idx].arbiter_model.as_deref(),
        &role_list,
        &|m| m == stage_model || same_wire_model(cx.env.config, m, stage_model),
    );
    let stage_notes = format!(
        "summary: {}\nconfidence: {}\nobjections: {}",
        meta.summary,
        meta.confidence
            .map_or("not given".to_string(), |c| format!("{c:.2}")),
        serde_json::to_string(&meta.objections).unwrap_or_default()
    );
    let told = TaskBrief::of(&cx.spec);
    let brief = Brief {
        stage_notes: &stage_notes,
        previous_flags: j.state.all_flags(),
        verify: (stage == Stage::Verify)
            .then_some(j.state.verify())
            .flatten(),
        ..told.brief(stage.as_str(), stage_model)
    };
    if let Some(first) = judges.first() {
        cx.progress(&Progress::ReviewStarted {
            stage,
            arbiter: first,
        });
    }
    let root = cx.env.repo_root();
    let asked = review_change(
        cx.env.client,
        judges,
        &cx.env.config.config,
        Some(&root),
        prepared,
        &brief,
    );
    let reviewed = match asked.await_blocking() {
        Ok(r) => r,
        // An answer out of format, its repair too, says nothing the run can take: a failed
        // call, never a verdict, and never a reason to halt. The facts decide, at most FLAG.
        Err(ModelError::SchemaViolation { model, errors, .. }) => {
            out_of_format(prepared, &brief, stage, stage_model, &model, &errors)
        }
        Err(e) => return Err(e),
    };
    let mut transcript = Transcript::review(stage.as_str(), &reviewed);
    transcript.findings = Some(prepared.findings().to_vec());
    j.transcript(&transcript);
    Ok(reviewed)
}

/// The review of a stage whose arbiter answered out of format twice (the answer and its
/// repair): the facts' floor over a FLAG that says why, with no issue of the model's.
fn out_of_format(
    prepared: &Prepared<'_>,
    brief: &Brief<'_>,
    stage: Stage,
    stage_model: &str,
    arbiter: &str,
    errors: &[String],
) -> Reviewed {
    prepared.with_checks(brief, |checks| {
        let answer = ArbiterAnswer {
            verdict: Verdict::Flag,
            confidence: 0.0,
            reasoning: format!(
                "the arbiter {arbiter} answered out of format, its repair too ({}): it decides nothing here; the facts do, and without a review the stage is at most FLAG",
                errors.join("; ")
            ),
            issues: vec![],
            alternatives: vec![],
        };
        let mut review = finish(stage.as_str(), stage_model, arbiter, answer, checks, 0.0);
        // No issue stands behind the FLAG, and a verdict derived from issues alone would
        // pass what no model reviewed.
        review.verdict = review.verdict.max(Verdict::Flag);
        review.derived = None;
        Reviewed {
            review,
            exchanges: vec![],
            spend: crate::model::Spend::default(),
            facts: floor(checks.findings, checks.verify),
        }
    })
}

/// Why an architect's change is not probed: a scaffold is not meant to behave yet, so a
/// claim about its behaviour cannot be shown (and supports at most FLAG).
const SCAFFOLD_NOT_RUN: &str = "not run: an architect's scaffold is not meant to behave yet";
