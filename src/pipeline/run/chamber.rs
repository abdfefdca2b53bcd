//! Decisions a run sends to the deliberation chamber (seed 003, with `--chamber auto`): a
//! stage answering LOW_CONFIDENCE, TOO_COSTLY or POLICY_VIOLATION, or an arbiter REJECT or
//! HALT at a confidence between 0.5 and 0.8, opens a Level 2 session. An auto-accepted
//! answer goes into the stage's retry; an escalated session stops the run for the founder;
//! a session that cannot answer (a cap, too few panelists) leaves the run as it would
//! have gone without it, and says so in the record.

use super::step::{BlockOn, Cx, Journal, RunError};
use crate::arbiter::{ArbiterReview, Floor, Verdict};
use crate::chamber::engine::EngineError;
use crate::chamber::open::{self, Opening};
use crate::chamber::{limits, ContextItem, Level, Session, Status};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::ChamberLink;
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::Deliberated;
use crate::task::outcome::{Outcome, StageMeta};

/// The arbiter confidences at which a REJECT or HALT is doubtful enough to deliberate.
pub const DOUBTFUL: std::ops::RangeInclusive<f64> = 0.5..=0.8;

/// What the chamber made of a decision.
pub(super) enum Chambered {
    /// It answered: the stage's retry gets this block.
    Answer {
        /// The session.
        session: String,
        /// The feedback block with the synthesis.
        block: String,
    },
    /// It escalated to Level 3: the run waits on the founder.
    Escalated {
        /// The session.
        session: String,
    },
    /// No answer (chamber off, already asked in this retry budget, a cap, too few
    /// panelists): the run goes on as without it.
    Nothing,
}

impl Chambered {
    /// The session, if one was opened and answered or escalated.
    pub(super) fn session(&self) -> Option<&str> {
        match self {
            Chambered::Answer { session, .. } | Chambered::Escalated { session } => Some(session),
            Chambered::Nothing => None,
        }
    }

    /// What it made of the decision, as the transition weighs it.
    pub(super) fn deliberated(&self) -> Deliberated {
        match self {
            Chambered::Answer { .. } => Deliberated::Answered,
            Chambered::Escalated { .. } => Deliberated::Escalated,
            Chambered::Nothing => Deliberated::Nothing,
        }
    }
}

/// Whether a stage outcome is a decision for the chamber.
pub(super) fn outcome_is_decision(outcome: Outcome) -> bool {
    matches!(
        outcome,
        Outcome::LowConfidence | Outcome::TooCostly | Outcome::PolicyViolation
    )
}

/// Whether an arbiter verdict is a doubtful REJECT or HALT: the model was unsure, and the
/// `facts` (a failing verify command, a syntax error, ...) did not set the verdict by
/// themselves. What the facts decided is not a question for a panel.
pub(super) fn verdict_is_doubtful(review: &ArbiterReview, facts: Option<&Floor>) -> bool {
    let facts_decided = facts.is_some_and(|f| f.verdict >= review.verdict);
    matches!(review.verdict, Verdict::Reject | Verdict::Halt)
        && DOUBTFUL.contains(&review.confidence)
        && !facts_decided
}

/// The question of a stage outcome, with what the stage said.
pub(super) fn outcome_question(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    stage: Stage,
    meta: &StageMeta,
) -> (String, Vec<ContextItem>) {
    let question = format!(
        "The {stage} stage of task `{}` answered {} instead of doing the work: {}. What \
         should the {stage} stage do now: go ahead as the TaskSpec says, take one of the \
         alternatives, or stop? Say which, and what exactly it should do.",
        j.state.task(),
        meta.outcome.as_str(),
        meta.summary.trim()
    );
    let said = serde_json::to_string_pretty(meta).unwrap_or_default();
    (
        question,
        decision_context(
            cx,
            j,
            format!("The {stage} stage's answer (metadata)"),
            said,
        ),
    )
}

/// The question of a doubtful REJECT or HALT.
pub(super) fn verdict_question(
    cx: &Cx<'_>,
    j: &Journal<'_>,
    stage: Stage,
    review: &ArbiterReview,
) -> (String, Vec<ContextItem>) {
    let question = format!(
        "The arbiter {} gave the {stage} stage of task `{}` the verdict {} with confidence \
         {:.2}: {}. Is the verdict right, and what exactly should the next attempt change?",
        review.arbiter_model,
        j.state.task(),
        review.verdict,
        review.confidence,
        review.reasoning.trim()
    );
    let issues = review
        .issues
        .iter()
        .map(|i| {
            format!(
                "- {} {}:{} {}",
                i.severity.as_str(),
                i.path,
                i.start_line.map_or("?".into(), |l| l.to_string()),
                i.description
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    (
        question,
        decision_context(cx, j, "The arbiter's issues".into(), issues),
    )
}

fn decision_context(cx: &Cx<'_>, j: &Journal<'_>, label: String, text: String) -> Vec<ContextItem> {
    vec![
        ContextItem {
            label: format!("TaskSpec {}", j.state.task()),
            text: cx.spec.render(),
        },
        ContextItem { label, text },
    ]
}

/// Opens a Level 2 session on the current stage's decision and runs it.
pub(super) fn ask_chamber(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    stage: Stage,
    trigger: &str,
    (question, context): (String, Vec<ContextItem>),
    fallback: &str,
) -> Result<Chambered, RunError> {
    let idx = j.state.current();
    let epoch = j.state.stages()[idx].epoch_start;
    let Some(plan) = j.state.chamber() else {
        return Ok(Chambered::Nothing);
    };
    if plan.asked(stage, epoch) {
        return Ok(Chambered::Nothing);
    }
    let repo = cx.repo();
    let config = &cx.env.config.config;
    let mut link = ChamberLink {
        session: String::new(),
        stage,
        epoch,
        trigger: trigger.to_string(),
        outcome: String::new(),
        answer: None,
        fallback: fallback.to_string(),
    };
    let used = open::used(repo, None);
    if let Err(hit) = limits::may_start(&config.chamber, used) {
        link.outcome = format!("not opened: {hit}");
        return linked(j, link, Chambered::Nothing);
    }
    let mut session = open::new_session(Opening {
        question,
        context,
        level: Level::Two,
        criteria: vec![format!(
            "{trigger} at the {stage} stage: a reversible decision (the stage retries), \
             Level 2 auto-quorum"
        )],
        source: format!("run {}", j.state.run_id()),
        founder_role: None,
        panel: plan.panel.clone(),
        arbiter: plan.arbiter.clone(),
        opened_by: Some(format!("run {} ({stage})", j.state.run_id())),
    });
    link.session = session.id.clone();
    let observer = cx.env.observer;
    observer.progress(&Progress::Chamber {
        stage,
        line: &format!("{trigger}: chamber session {} (Level 2)", session.id),
    });
    let progress = move |line: &str| observer.progress(&Progress::Chamber { stage, line });
    let root = cx.env.repo_root();
    let result = open::run(
        repo,
        cx.env.client,
        config,
        Some(&root),
        used,
        &progress,
        &mut session,
    )
    .await_blocking();
    j.state.add_spend(session.spend());
    let chambered = match result {
        Err(EngineError::Git(e)) => return Err(e.into()),
        Err(EngineError::Limit(hit)) => {
            link.outcome = format!("stopped: {hit}");
            Chambered::Nothing
        }
        Ok(()) => settled(&session, &mut link),
    };
    linked(j, link, chambered)
}

fn settled(session: &Session, link: &mut ChamberLink) -> Chambered {
    match session.status {
        Status::AutoAccepted => {
            let block = open::answer_block(session);
            link.outcome = "auto-accepted".into();
            link.answer = session.synthesis().map(|s| s.answer);
            Chambered::Answer {
                session: session.id.clone(),
                block,
            }
        }
        Status::AwaitingAction => {
            link.outcome = "escalated".into();
            link.answer = session.synthesis().map(|s| s.answer);
            Chambered::Escalated {
                session: session.id.clone(),
            }
        }
        _ => {
            link.outcome = format!(
                "no answer: {}",
                session.stop_reason.as_deref().unwrap_or("no synthesis")
            );
            Chambered::Nothing
        }
    }
}

/// The answer a session of this run gave, if it gave one.
pub(super) fn chamber_answer(j: &Journal<'_>, session: Option<&str>) -> Option<String> {
    let id = session?;
    j.state
        .chamber()
        .as_ref()?
        .sessions
        .iter()
        .find(|l| l.session == id)?
        .answer
        .clone()
}

fn linked(j: &mut Journal<'_>, link: ChamberLink, out: Chambered) -> Result<Chambered, RunError> {
    let what = format!("chamber {}: {}", link.trigger, link.outcome);
    if let Some(plan) = j.state.chamber_mut() {
        plan.sessions.push(link);
    }
    j.event(&what)?;
    Ok(out)
}
