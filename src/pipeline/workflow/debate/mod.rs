//! Debate (`git triad run --workflow debate`, seed 001 §5.3): before the architect stage,
//! the debaters (the candidate models) each write a position paper with explicit
//! trade-offs, all at the same time; then each rebuts the others' papers; then each gives
//! its final argument, updated with the criticisms it accepts; then the tiebreaker (a model
//! that did not argue) judges and writes a decision document naming the winning position.
//! The winning position and the judgment become the architect's input, and the run goes on
//! as a sequential run (Architect → Implement → Refactor → [Consensus] → Verify).
//!
//! Each phase is recorded in [`DebateState`] before the next begins, so a killed run
//! resumes at the phase it was in. A debater that cannot answer leaves the debate (said as
//! such, never presented as the full panel); with fewer than two left, or no judge able to
//! judge, the run stops for the user with every position in the record.

pub mod report;
mod text;

use std::time::Instant;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use self::text::{architect_block, FinalAnswer, JudgmentAnswer, PaperAnswer, RebuttalAnswer};
use crate::config::{prompt, LoadedConfig, Role};
use crate::consensus::envelope::{Message, MessageKind};
use crate::git::TreeFiles;
use crate::model::fanout::join_all;
use crate::model::{ChatRequest, Exchange, ModelError};
use crate::pipeline::context::{context_message, StageContext};
use crate::pipeline::observer::Progress;
use crate::pipeline::record::{
    Absence, DebateNext, DebatePhase, DebateState, Judgment, RunState, Speech, StopReason,
    Transcript,
};
use crate::pipeline::run::step::{BlockOn, Cx, Flow, Journal, RunError};
use crate::pipeline::run::stop::{model_failed, wait_on_user};
use crate::pipeline::stage::Stage;
use crate::pipeline::start::{Choice, StartError};
use crate::pipeline::workflow::Followed;
use crate::workflow_name::Workflow;

/// A debate's record.
impl Followed for DebateState {
    const KEY: &'static str = Workflow::Debate.as_str();

    fn workflow(&self) -> Workflow {
        Workflow::Debate
    }

    fn under_way(&self) -> bool {
        !self.done
    }

    fn models(&self) -> Vec<String> {
        self.models
            .iter()
            .chain(&self.tiebreaker)
            .cloned()
            .collect()
    }
}

/// Plans a debate: the debaters and the tiebreaker that judges them.
pub(in crate::pipeline) fn plan(
    _: &LoadedConfig,
    _: &Choice,
    models: Vec<String>,
    tiebreaker: Option<String>,
) -> Result<DebateState, StartError> {
    Ok(DebateState::new(models, tiebreaker))
}

/// Output tokens of one debate answer.
const MAX_TOKENS: u32 = 2048;

/// One step of the debate: one phase (all its debaters together), the judgment, or the
/// hand-over to the architect.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let Some(d) = j.state.debate().cloned() else {
        return Ok(Flow::Continue);
    };
    match d.next() {
        DebateNext::Speak(phase, models) => match phase {
            DebatePhase::Papers => {
                speak::<PaperAnswer>(cx, j, &d, phase, &models, |_, a| a.into_speech())
            }
            DebatePhase::Rebuttals => {
                speak::<RebuttalAnswer>(cx, j, &d, phase, &models, |own, a| a.into_speech(&d, own))
            }
            DebatePhase::Finals => {
                speak::<FinalAnswer>(cx, j, &d, phase, &models, |_, a| a.into_speech())
            }
        },
        DebateNext::TooFew => {
            let standing = d.standing().count();
            debate_stop(
                cx,
                j,
                format!(
                    "{standing} of {} debaters can still argue, and a debate needs two ({})",
                    d.models.len(),
                    d.fates()
                ),
            )
        }
        DebateNext::Judge => judge(cx, j, &d),
        DebateNext::Conclude => {
            j.state.debate_mut().done = true;
            j.event("debate: done; on to the architect")?;
            Ok(Flow::Continue)
        }
    }
}

fn debated(cx: &Cx<'_>, who: &str, what: &str) {
    cx.progress(&Progress::Debated { who, what });
}

/// The task and the code as the architect would be shown them, without its question.
fn debate_context(cx: &Cx<'_>, d: &DebateState) -> Result<String, RunError> {
    let repo = cx.repo();
    let base = cx.base_tree()?;
    let files = TreeFiles::new(repo, base);
    // Smaller than a stage's: a debate is about the design, and every debater gets it
    // three times.
    let char_budget = cx.char_budget(&d.models) / 2;
    Ok(context_message(&StageContext::new(
        Stage::Architect,
        &cx.spec,
        &files,
        char_budget,
        &cx.outlines,
        &cx.privacy,
    )))
}

fn debate_request(cx: &Cx<'_>, system: &str, user: String) -> ChatRequest {
    let system = prompt(&cx.env.config.config, system, Some(&cx.env.repo_root()));
    ChatRequest::new(Some(system), user, MAX_TOKENS)
}

/// Every debater in `models` speaks in `phase`, at the same time; each answer is
/// recorded with its cost and latency. One that cannot answer leaves the debate; a call
/// the budget refuses stops the run (a resume asks it again).
fn speak<T>(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    d: &DebateState,
    phase: DebatePhase,
    models: &[String],
    to_speech: impl Fn(&str, T) -> Speech,
) -> Result<Flow, RunError>
where
    T: DeserializeOwned + JsonSchema,
{
    let context = debate_context(cx, d)?;
    let reqs: Vec<ChatRequest> = models
        .iter()
        .filter_map(|m| d.debater(m))
        .map(|own| debate_request(cx, "debater", text::ask(&context, d, own, phase)))
        .collect();
    debated(
        cx,
        "orchestrator",
        &format!(
            "{} debater(s) write their {}: {}",
            models.len(),
            phase.speech(),
            models.join(", ")
        ),
    );
    let client = cx.env.client;
    let started = Instant::now();
    let calls = models
        .iter()
        .zip(&reqs)
        .map(|(m, req)| client.chat_structured::<T>(Role::Architect, std::slice::from_ref(m), req))
        .collect();
    let answers = join_all(calls).await_blocking();
    let ms = started.elapsed().as_millis() as u64;

    let mut over_budget = None;
    let mut spoke = 0;
    for ((model, req), answer) in models.iter().zip(&reqs).zip(answers) {
        let what = match answer {
            Err(e @ ModelError::Budget(_)) => {
                over_budget = Some(e);
                "was not asked: the budget would be crossed".to_string()
            }
            Err(e) => {
                let why = crate::redact::said(&e);
                let why = crate::bounded::clip(&why, 300);
                if let Some(x) = debate_mut(j).debater_mut(model) {
                    x.absent = Some(Absence {
                        phase,
                        why: why.clone(),
                    });
                }
                format!(
                    "could not write its {}: it leaves the debate ({why})",
                    phase.speech()
                )
            }
            Ok(result) => {
                let spend = result.completion.spend();
                j.state.add_spend(spend);
                let call = Exchange::structured(req, &result);
                let mut transcript = Transcript::new(Workflow::Debate.as_str(), "debater", call);
                transcript.phase = Some(phase);
                j.transcript(&transcript);
                let mut speech = to_speech(model, result.value);
                speech.spend = spend;
                let label = d.debater(model).map_or("?", |x| x.label.as_str());
                let (kind, to) = match phase {
                    DebatePhase::Rebuttals => (MessageKind::Objection, "debaters"),
                    _ => (MessageKind::Proposal, "tiebreaker"),
                };
                let content = match phase {
                    DebatePhase::Rebuttals => speech.text.clone(),
                    _ => format!("position {label}: {}", speech.approach),
                };
                j.state
                    .say(Message::new("debater", to, kind, &content).by(model, spend));
                if let Some(x) = debate_mut(j).debater_mut(model) {
                    x.set_speech(phase, speech);
                }
                spoke += 1;
                format!("wrote its {} (position {label})", phase.speech())
            }
        };
        debated(cx, model, &what);
    }
    debate_mut(j).phase_ms.push((phase, ms));
    j.event(&format!(
        "debate: {spoke} of {} debater(s) wrote their {}",
        models.len(),
        phase.speech()
    ))?;
    if let Some(e) = over_budget {
        return model_failed(cx, j, Workflow::Debate.as_str(), e);
    }
    Ok(Flow::Continue)
}

/// The tiebreaker judges: it names one standing position and says why, and writes what
/// the architect must build. Without a tiebreaker, or when it cannot answer or names no
/// standing position, the run stops for the user with every position recorded.
fn judge(cx: &Cx<'_>, j: &mut Journal<'_>, d: &DebateState) -> Result<Flow, RunError> {
    let Some(judge) = d.tiebreaker.clone() else {
        return debate_stop(
            cx,
            j,
            "no model outside the debaters can judge (name one with roles.tiebreaker)".into(),
        );
    };
    let context = debate_context(cx, d)?;
    let req = debate_request(cx, "judge", text::judgment(&context, d));
    debated(cx, &judge, "judges the debate");
    let answer = cx
        .env
        .client
        .chat_structured::<JudgmentAnswer>(Role::Tiebreaker, std::slice::from_ref(&judge), &req)
        .await_blocking();
    let result = match answer {
        Ok(r) => r,
        Err(e @ ModelError::Budget(_)) => return model_failed(cx, j, Workflow::Debate.as_str(), e),
        Err(e) => {
            let why = crate::redact::said(&e);
            return debate_stop(
                cx,
                j,
                format!(
                    "the tiebreaker {judge} could not judge: {}",
                    crate::bounded::clip(&why, 300)
                ),
            );
        }
    };
    let spend = result.completion.spend();
    j.state.add_spend(spend);
    let call = Exchange::structured(&req, &result);
    j.transcript(&Transcript::new(Workflow::Debate.as_str(), "judge", call));
    let a = result.value;
    let Some(winner) = d.by_label(&a.winner) else {
        return debate_stop(
            cx,
            j,
            format!(
                "the tiebreaker {judge} chose `{}`, which is no standing position",
                crate::bounded::clip(&a.winner, 40)
            ),
        );
    };
    let judgment = Judgment {
        model: judge.clone(),
        winner: winner.model.clone(),
        label: winner.label.clone(),
        justification: crate::bounded::clip(&a.justification, 4_000),
        decision: crate::bounded::clip(&a.decision, 8_000),
        spend,
    };
    let what = format!(
        "chooses position {} ({}){}",
        judgment.label,
        judgment.winner,
        if d.degraded() {
            format!(
                "; DEGRADED: {} of {} debaters argued to the end",
                d.standing().count(),
                d.models.len()
            )
        } else {
            String::new()
        }
    );
    j.state.say(
        Message::new(
            "tiebreaker",
            "architect",
            MessageKind::Consensus,
            &format!("{what}: {}", judgment.justification),
        )
        .by(&judge, spend),
    );
    debate_mut(j).judgment = Some(judgment);
    debated(cx, &judge, &what);
    j.event(&format!("debate: tiebreaker {what}"))?;
    Ok(Flow::Continue)
}

fn debate_mut<'j>(j: &'j mut Journal<'_>) -> &'j mut DebateState {
    j.state.debate_mut()
}

fn debate_stop(cx: &Cx<'_>, j: &mut Journal<'_>, detail: String) -> Result<Flow, RunError> {
    let event = "debate: stopped for the user";
    wait_on_user(cx, j, StopReason::Debate { detail }, event)
}

/// What the architect stage is shown of a judged debate (empty otherwise).
pub(in crate::pipeline) fn shown(state: &RunState) -> String {
    match state.debate() {
        Some(d) => match &d.judgment {
            Some(j) => architect_block(d, j),
            None => String::new(),
        },
        None => String::new(),
    }
}
