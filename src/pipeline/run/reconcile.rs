//! The reconciliation step of a run (seed 000 §B11.5): facts, the reconciliation arbiter,
//! its note, and the one REJECT rewind.

use super::act::drop_to_best;
use super::branch::move_branch;
use super::facts::{tree_facts, unmet};
use super::requirements::checkable;
use super::step::{BlockOn, Cx, Flow, Journal, RunError};
use super::stop::{halt, mark_or_fail, model_failed};
use super::suggest;
use crate::arbiter::service::{candidates, Arbiter, Judged};
use crate::arbiter::{Floor, Verdict};
use crate::config::prompt;
use crate::git::{self, GitError};
use crate::model::{Exchange, ModelError, Spend};
use crate::notes::{self, ReconciliationRecord, Record};
use crate::pipeline::observer::Progress;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::reconcile::{self, ReconcileAnswer};
use crate::pipeline::record::{Raised, RunStatus, StopReason, Transcript};
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::{self, AfterReconciliation};

/// Reconciles the finished change. With `may_rewind`, a REJECT rewinds once.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>, may_rewind: bool) -> Result<Flow, RunError> {
    let repo = cx.repo();
    let final_commit = j.state.tip().oid()?;
    let base = j.state.base().oid()?;
    let mut facts = reconcile::facts(
        repo,
        base,
        final_commit,
        &cx.spec,
        j.state.implementation_summary(),
    )
    .map_err(|source| GitError::Git {
        what: "checking the implementation summary".into(),
        source,
    })?;
    facts.dropped_suggestions = suggest::dropped(
        j.state.suggestions(),
        j.state.implementation_summary(),
        j.state.tip().as_str(),
    );
    let final_tree = repo
        .find_commit(final_commit)
        .and_then(|c| c.tree())
        .map_err(|source| GitError::Git {
            what: "reading the final tree".into(),
            source,
        })?;
    let unmet = unmet(cx, &final_tree)?;
    facts.requirements_met = checkable(&cx.spec)
        .filter(|r| !unmet.iter().any(|u| u.id == r.id))
        .map(|r| r.id.clone())
        .collect();
    facts.requirements_unmet = unmet.into_iter().map(|u| u.why).collect();
    let floor = reconcile::floor(&facts);
    let scaffold = match &j.state.stages()[Stage::Architect.index()].commit {
        Some(arch) => {
            let tree = |o: git2::Oid| repo.find_commit(o).and_then(|c| c.tree()).ok();
            match (tree(base), arch.oid().ok().and_then(tree)) {
                (Some(b), Some(a)) => git::diff_trees(repo, Some(&b), &a)
                    .map(|mut d| {
                        cx.privacy.mark_diff(repo, Some(&b), &a, &mut d);
                        git::render_diff(&d, &|_, _| None)
                    })
                    .unwrap_or_default(),
                _ => String::new(),
            }
        }
        None => String::new(),
    };
    let verifier_model = j.state.stages()[Stage::Verify.index()]
        .last_model()
        .to_string();
    let role_list = j
        .state
        .arbiter_pool(cx.env.config, cx.env.profile.as_deref());
    let assigned = j.state.reconcile().and_then(|r| r.model.clone());
    // An explicit reconciliation model is the only candidate; else the arbiter role's.
    let list = if assigned.is_some() {
        &[][..]
    } else {
        &role_list[..]
    };
    let judges = candidates(assigned.as_deref(), list, &|m| {
        m == verifier_model || same_wire_model(cx.env.config, m, &verifier_model)
    });
    let arbiter = Arbiter::new(cx.env.client, judges);
    let system = prompt(
        &cx.env.config.config,
        "reconciler",
        Some(&cx.env.repo_root()),
    );
    let req = reconcile::build_request(
        &system,
        &cx.spec,
        j.state.implementation_summary(),
        &facts,
        &scaffold,
    );
    cx.progress(&Progress::ReconcileStarted {
        model: arbiter.first(),
    });
    let judged = match arbiter
        .judge::<ReconcileAnswer>(&req, &verifier_model)
        .await_blocking()
    {
        Ok(j) => j,
        // An answer out of format, its repair too, is a failed call, never a HALT: the
        // reconciliation is a FLAG that says why, and the facts still floor it.
        Err(ModelError::SchemaViolation { model, errors, .. }) => Judged {
            value: ReconcileAnswer {
                verdict: Verdict::Flag,
                confidence: 0.0,
                reasoning: format!(
                    "the reconciliation arbiter {model} answered out of format, its repair too ({}): nothing it said is taken; the facts decide, at most FLAG",
                    errors.join("; ")
                ),
                checks: vec![],
                requirements: vec![],
                rewind_to: "none".into(),
                gaps: vec![],
            },
            exchange: Exchange::unanswered(&req, &model),
            model,
            spend: Spend::default(),
        },
        Err(e) => return model_failed(cx, j, "reconcile", e),
    };
    j.state.add_spend(judged.spend);
    let mut answer = judged.value;
    // A model's word is not evidence: its REJECT counts as far as what it found.
    let supported = answer.supported_verdict(&facts.requirements_met);
    if supported != answer.verdict {
        let contradicted = answer.contradicted(&facts.requirements_met);
        let why = if contradicted.is_empty() {
            "no check marked gap and no requirement marked missing".to_string()
        } else {
            format!(
                "no check marked gap, and {} marked missing, which the facts show delivered",
                contradicted.join(", ")
            )
        };
        answer.reasoning = format!("{} [acted on as {supported}: {why}]", answer.reasoning);
    }
    let verdict = floor
        .as_ref()
        .map_or(supported, |f| supported.max(f.verdict));
    // Stopping a run needs grounds: a failing fact of the final tree.
    let grounds = grounds(cx, j, &final_tree, &facts)?;
    let (verdict, ungrounded) = reconcile::grounded(verdict, &grounds);
    if let Some(why) = ungrounded {
        answer.reasoning = format!("{} [{why}]", answer.reasoning);
    }
    let mut transcript = Transcript::new("reconcile", "arbiter", judged.exchange.clone());
    transcript.facts = Some(Box::new(facts.clone()));
    j.transcript(&transcript);
    let record = Record::Reconciliation(Box::new(ReconciliationRecord {
        run: j.state.run_id().to_string(),
        task: j.state.task().to_string(),
        stage: "reconcile".into(),
        verdict,
        model_verdict: answer.verdict,
        floor: floor.clone(),
        arbiter_model: judged.model.clone(),
        reviewed_model: verifier_model,
        confidence: answer.confidence,
        reasoning: answer.reasoning.clone(),
        checks: answer.checks.clone(),
        requirements: answer.requirements.clone(),
        rewind_to: answer.rewind_to.clone(),
        gaps: answer.gaps.clone(),
        facts: facts.clone(),
        issues: vec![],
        token_cost: judged.spend.cost_usd,
    }));
    if let Err(e) = notes::record(repo, final_commit, record) {
        return halt(
            cx,
            j,
            RunStatus::Failed,
            StopReason::NoteNotWritten {
                commit: final_commit.into(),
                error: e.to_string(),
            },
            "reconciliation note not written",
        );
    }
    let raised = floor
        .as_ref()
        .filter(|f| f.verdict > answer.verdict)
        .map(|f| (answer.verdict, &f.reasons[..]));
    cx.progress(&Progress::Reconciled {
        model: &judged.model,
        verdict,
        raised,
    });
    let r = j.state.reconcile_mut();
    r.arbiter_model = Some(judged.model.clone());
    r.raised = raised.map(|(from, by)| Raised {
        from,
        by: by.to_vec(),
    });
    after_reconciliation(cx, j, verdict, &answer, floor.as_ref(), may_rewind)
}

/// The failing facts of the final tree, one sentence each: the verify command failing at
/// it, the typed requirements it visibly leaves undone, the examples it fails, the tests it
/// weakens. Empty when every fact passes.
fn grounds(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    final_tree: &git2::Tree<'_>,
    facts: &reconcile::Facts,
) -> Result<Vec<String>, RunError> {
    let mut grounds = Vec::new();
    if let Some(v) = j.state.verify().filter(|v| v.exit_code != Some(0)) {
        // Where it ran holds the final tree (the verifier's commit may only add its summary).
        let same = j
            .state
            .verify_at()
            .and_then(|at| cx.tree(at, "reading where the verify command ran").ok())
            .is_some_and(|t| t.id() == final_tree.id());
        if same {
            grounds.push(format!(
                "the verify command `{}` fails at the final commit",
                v.command
            ));
        }
    }
    grounds.extend(facts.requirements_unmet.iter().cloned());
    let tree_facts = tree_facts(cx, Stage::Verify, final_tree)?;
    grounds.extend(
        tree_facts
            .findings()
            .into_iter()
            .filter(|f| f.severity == "critical")
            .map(|f| f.reason),
    );
    Ok(grounds)
}

fn after_reconciliation(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    verdict: Verdict,
    answer: &ReconcileAnswer,
    floor: Option<&Floor>,
    may_rewind: bool,
) -> Result<Flow, RunError> {
    let reasons = floor.map_or(&[][..], |f| &f.reasons[..]);
    let r = j.state.reconcile_mut();
    r.verdict = Some(verdict);
    let rewound = r.rewound;
    match transition::after_reconciliation(verdict, &answer.rewind_to, may_rewind, rewound) {
        AfterReconciliation::Complete => {
            j.state.reconcile_mut().done = true;
            j.event(&format!("reconciliation {verdict}"))?;
            Ok(Flow::Continue)
        }
        AfterReconciliation::Rewind(target) => {
            let old_tip = j.state.tip().oid()?;
            // The stage redoes the work on top of the rejected change, not from nothing:
            // the gaps are what is asked of it, and what was right stays.
            let feedback = reconcile::feedback(answer, reasons);
            j.state.reconcile_rewind(target, old_tip.into(), feedback);
            let new_tip = j.state.tip().oid()?;
            // Recorded first, the abandoned commits kept reachable; the branch follows.
            j.keep(old_tip);
            j.event(&format!("reconciliation reject: rewind to {target}"))?;
            move_branch(cx, j, new_tip, Some(old_tip), "reconciliation rewind")?;
            cx.progress(&Progress::ReconcileRewind { to: target });
            Ok(Flow::Continue)
        }
        AfterReconciliation::Stop(stop) => {
            // A result that broke the best evidenced commit ends on that commit instead.
            let why = format!(
                "the reconciliation's {verdict} after it ({})",
                crate::pipeline::record::one_line(&answer.reasoning, "no reasoning given")
            );
            if let Some(flow) = drop_to_best(cx, j, None, &why)? {
                j.state.reconcile_mut().done = true;
                j.event("reconciliation: back to the best evidenced commit")?;
                return Ok(flow);
            }
            let reason = StopReason::Reconciliation {
                verdict,
                after_retry: verdict == Verdict::Reject,
                reasoning: answer.reasoning.clone(),
                gaps: reconcile::feedback(answer, reasons),
            };
            // Through halt: the stopped branch's tip is marked for the pre-push gate.
            halt(
                cx,
                j,
                stop.status(),
                reason,
                &format!("reconciliation {verdict}"),
            )
        }
    }
}

/// `git triad reconcile <run-id>`: reconciles a finished run again, without rewinding.
/// The run itself stays finished; only the verdict is new.
pub(super) fn again(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Option<Verdict>, RunError> {
    let status = j.state.status();
    let stop = j.state.stop_reason().cloned();
    j.state.reconcile_mut().done = false;
    let flow = step(cx, j, false)?;
    let verdict = j.state.reconcile().and_then(|r| r.verdict);
    if flow == Flow::Continue || verdict.is_some() {
        if j.state.reconciled_again(status, stop) {
            mark_or_fail(cx, j);
        }
        j.event("reconciled again")?;
    }
    Ok(verdict)
}
