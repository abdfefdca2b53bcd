//! A tournament's judging: instead of the candidates voting, an arbiter that is none of
//! them reviews each candidate's solution exactly as it reviews a stage (the diff against
//! the base, the syntax and import findings, the deterministic floor the model cannot
//! overrule), one candidate a phase so a killed run resumes where it was. The best review
//! wins: the verdict first, then the weight of the issues, then the confidence; a winner
//! needs APPROVE or FLAG, so a tournament of broken solutions stops instead of passing one
//! on. The winner goes on to Verify as it was built; every loser keeps its branch.

use crate::arbiter::gather::TaskBrief;
use crate::arbiter::request::Brief;
use crate::arbiter::schema::Severity;
use crate::arbiter::service::Arbiter;
use crate::arbiter::Verdict;
use crate::config::{prompt, LoadedConfig, Role};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    CandidateReview, ParallelState, RunStatus, StopReason, Synthesis, Transcript, Winner, WonBy,
};
use crate::pipeline::run::facts::candidate_review;
use crate::pipeline::run::step::{BlockOn, Cx, Flow, Journal, RunError};
use crate::pipeline::run::stop::{halt, model_failed};
use crate::pipeline::start::{same_wire_model, Choice, StartError};
use crate::workflow_name::Workflow;

/// Plans a tournament: the candidates and its judges, the arbiter role's models that are
/// none of them; refused when every arbiter model is a candidate. The reviews choose: the
/// panel's tiebreaker has no vote to break.
pub(in crate::pipeline) fn plan(
    loaded: &LoadedConfig,
    choice: &Choice,
    models: Vec<String>,
    _: Option<String>,
) -> Result<ParallelState, StartError> {
    let judges: Vec<String> = loaded
        .role_models(Role::Arbiter, choice.profile.as_deref())
        .into_iter()
        .filter(|m| {
            !models
                .iter()
                .any(|k| k == m || same_wire_model(loaded, k, m))
        })
        .collect();
    if judges.is_empty() {
        return Err(StartError::NoTournamentJudge(models));
    }
    Ok(ParallelState {
        models,
        judges,
        ..Default::default()
    })
}

/// The tournament's next phase: the next unjudged candidate's review, or the pick.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>, p: &ParallelState) -> Result<Flow, RunError> {
    let next = p
        .present()
        .find(|c| !p.judgments.iter().any(|j| j.candidate == c.model));
    match next {
        Some(c) => {
            let model = c.model.clone();
            judge_candidate(cx, j, p, &model)
        }
        None => pick(cx, j, p),
    }
}

/// The judges review `candidate`'s solution against the base.
fn judge_candidate(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    p: &ParallelState,
    candidate: &str,
) -> Result<Flow, RunError> {
    let Some(c) = p.candidate(candidate) else {
        return Ok(Flow::Continue);
    };
    let Some(commit) = &c.commit else {
        return Ok(Flow::Continue);
    };
    let prepared = candidate_review(cx, commit)?;
    let told = TaskBrief::of(&cx.spec);
    let notes = format!(
        "summary: {}\n(a tournament candidate, built alone)",
        c.detail
    );
    let brief = Brief {
        stage_notes: &notes,
        ..told.brief("implement", candidate)
    };
    let system = prompt(&cx.env.config.config, "arbiter", Some(&cx.env.repo_root()));
    let arbiter = Arbiter::new(cx.env.client, p.judges.clone());
    cx.progress(&Progress::Explored {
        who: arbiter.first().unwrap_or("arbiter"),
        what: &format!("reviews candidate {} ({candidate})", c.label),
    });
    let judgment = match arbiter.review(&system, &prepared, &brief).await_blocking() {
        Err(e @ ModelError::Budget(_)) => {
            return model_failed(cx, j, Workflow::Tournament.as_str(), e)
        }
        Err(e) => CandidateReview {
            candidate: candidate.to_string(),
            arbiter: None,
            verdict: None,
            issues: [0; 3],
            confidence: 0.0,
            detail: format!(
                "no review: {}",
                crate::bounded::clip(&crate::redact::redact(&e.to_string()), 300)
            ),
        },
        Ok(reviewed) => {
            j.state.add_spend(reviewed.spend);
            let mut transcript = Transcript::review(Workflow::Tournament.as_str(), &reviewed);
            transcript.candidate = Some(candidate.to_string());
            j.transcript(&transcript);
            let r = &reviewed.review;
            let count = |s: Severity| r.issues.iter().filter(|i| i.severity == s).count() as u32;
            CandidateReview {
                candidate: candidate.to_string(),
                arbiter: Some(r.arbiter_model.clone()),
                verdict: Some(r.verdict),
                issues: [
                    count(Severity::Critical),
                    count(Severity::Warning),
                    count(Severity::Suggestion),
                ],
                confidence: r.confidence,
                detail: crate::bounded::clip(r.reasoning.lines().next().unwrap_or_default(), 300),
            }
        }
    };
    let what = match (&judgment.arbiter, judgment.verdict) {
        (Some(a), Some(v)) => format!(
            "{a}: candidate {} ({candidate}) {v}, issues {}/{}/{} (critical/warning/suggestion)",
            c.label, judgment.issues[0], judgment.issues[1], judgment.issues[2]
        ),
        _ => format!("candidate {} ({candidate}): {}", c.label, judgment.detail),
    };
    j.state.parallel_mut().judgments.push(judgment);
    cx.progress(&Progress::Explored {
        who: Workflow::Tournament.as_str(),
        what: &what,
    });
    j.event(&format!("tournament: {what}"))?;
    Ok(Flow::Continue)
}

/// The best review wins and goes on as it was built; with no APPROVE or FLAG among
/// them, the run stops with every candidate's review.
fn pick(cx: &Cx<'_>, j: &mut Journal<'_>, p: &ParallelState) -> Result<Flow, RunError> {
    let mut ranked: Vec<&CandidateReview> = p.judgments.iter().collect();
    // Stable: among equals, the candidate listed first.
    ranked.sort_by_key(|j| j.rank());
    let reviews = p
        .judgments
        .iter()
        .map(|j| {
            format!(
                "{}: {}",
                j.candidate,
                j.verdict.map_or("no review".to_string(), |v| v.to_string())
            )
        })
        .collect::<Vec<_>>()
        .join(", ");
    let best = ranked
        .first()
        .filter(|j| matches!(j.verdict, Some(Verdict::Approve | Verdict::Flag)));
    let Some(best) = best else {
        let detail = format!(
            "the tournament's arbiter accepted no candidate ({reviews}); every candidate's branch stays for you to judge"
        );
        return halt(
            cx,
            j,
            RunStatus::Halted,
            StopReason::Parallel { detail },
            "tournament: no candidate accepted",
        );
    };
    let model = best.candidate.clone();
    let justification = format!(
        "the best review: {} by {} ({}); all: {reviews}",
        best.verdict.map_or("-".into(), |v| v.to_string()),
        best.arbiter.as_deref().unwrap_or("?"),
        best.detail
    );
    let pm = j.state.parallel_mut();
    pm.winner = Some(Winner {
        model: model.clone(),
        by: WonBy::Arbiter,
        votes: Vec::new(),
        justification: justification.clone(),
    });
    pm.synthesis = Some(Synthesis {
        model: model.clone(),
        commit: None,
        detail: "a tournament's winner goes on as it was built".into(),
        spend: Spend::default(),
    });
    let what = format!("{model} wins: {justification}");
    cx.progress(&Progress::Explored {
        who: Workflow::Tournament.as_str(),
        what: &what,
    });
    j.event(&format!("tournament: {what}"))?;
    Ok(Flow::Continue)
}
