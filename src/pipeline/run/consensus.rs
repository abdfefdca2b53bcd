//! The consensus stage (seed 000 §B9 row 4, seed 001 §6.2): between refactor and verify the
//! stage models vote on the refactored result, the tiebreaker settles disagreement, and the
//! arbiter observes without a vote and may FLAG the consensus as groupthink.
//!
//! One call per step: every step records its answer before the next, so a killed run resumes
//! inside the deliberation without paying for a call twice. The rules are in
//! [`crate::consensus`]; this module makes the calls and acts on the decision.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::call::structured_call;
use super::facts::{shown, Shown};
use super::observe::observe;
use super::step::{Cx, Flow, Journal, RunError};
use super::stop::{halt, model_failed, wait_on_user};
use crate::config::Role;
use crate::consensus::deliberation::{
    PaperAnswer, RebuttalAnswer, Ruling, SelectionAnswer, UnilateralAnswer,
};
use crate::consensus::envelope::{Message, MessageKind};
use crate::consensus::prompt::{self as text, Question};
use crate::consensus::{Ballot, BallotAnswer, Choice, Decision, Deliberation, Next, Voter};
use crate::model::{ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::StopReason;
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::{self, AfterConsensus, Policy};

/// The question every consensus of a run puts to its agents.
const ASK: &str = "Should the refactored result proceed to verification as it is?";

/// Which deliberation a step works on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) enum Target {
    /// The consensus on the refactored result.
    #[default]
    Result,
    /// The vote on an escalated suggestion (its index in the run's suggestions).
    Suggestion(usize),
}

/// What one step of a deliberation did.
pub(super) enum Stepped {
    /// Made a call (or stopped the run).
    Went(Flow),
    /// The tree decided.
    Decided(Decision),
    /// No decision can be reached (no tiebreaker, or one that cannot answer): why.
    Deadlocked(String),
}

/// Whether the consensus stage is due: refactor is accepted and verify has not begun.
pub(super) fn due(j: &Journal<'_>) -> bool {
    j.state.current_stage() == Some(Stage::Verify)
        && j.state.stages()[Stage::Verify.index()].attempts_in_epoch() == 0
        && j.state.consensus().is_some_and(|c| !c.done)
}

/// One step of the consensus stage.
pub(super) fn step(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let Some(d) = j.state.consensus().and_then(|c| c.current.clone()) else {
        return call_panel(cx, j);
    };
    let shown = shown(cx, j)?;
    match deliberate(cx, j, Target::Result, &d, ASK, &shown)? {
        Stepped::Went(flow) => Ok(flow),
        Stepped::Decided(decision) => act_on(cx, j, d, decision, &shown),
        Stepped::Deadlocked(why) => deadlock(cx, j, &d, &why),
    }
}

/// One step of the deliberation `d` (the one `target` names) on the question `ask`: one
/// call, recorded, or the decision the tree reached, or why none can be.
pub(super) fn deliberate(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    target: Target,
    d: &Deliberation,
    ask: &str,
    shown: &Shown,
) -> Result<Stepped, RunError> {
    let q = Question {
        ask,
        task: &shown.task,
        diff: &shown.diff,
        evidence: &shown.evidence.join("\n"),
    };
    let d = d.clone();
    let flow = match d.next() {
        Next::Vote { round, voters } => {
            let voter = voter(&d, &voters[0]);
            let user = text::vote(&q, &d, round, &voter.role);
            agent_says::<BallotAnswer, _>(cx, j, target, &voter, "voter", user, |d, a| {
                let b = Ballot::from_answer(&voter.model, &voter.role, a);
                let what = format!("votes {}", b.choice);
                let msg = ballot_message(&b);
                d.record_ballot(round, b);
                (what, msg)
            })
        }
        Next::Rebut { voters } => {
            let voter = voter(&d, &voters[0]);
            let user = text::rebuttal(&q, &d, &voter.model);
            agent_says::<RebuttalAnswer, _>(cx, j, target, &voter, "voter", user, |d, a| {
                let msg = to_tiebreaker(&voter.role, MessageKind::Objection, &a.argument);
                d.record_rebuttal(&voter.model, a);
                ("rebuts the majority".into(), msg)
            })
        }
        Next::Papers { voters } => {
            let voter = voter(&d, &voters[0]);
            let user = text::paper(&q, &d, &voter.model);
            agent_says::<PaperAnswer, _>(cx, j, target, &voter, "voter", user, |d, a| {
                let what = format!("argues for {}", a.choice);
                let msg = to_tiebreaker(&voter.role, MessageKind::Proposal, &a.position);
                d.record_paper(&voter.model, a);
                (what, msg)
            })
        }
        Next::Rule => {
            let user = text::ruling(&q, &d);
            return tiebreaker_says::<Ruling>(cx, j, target, &d, user, |d, a| {
                let what = if a.compelling {
                    "finds the rebuttal compelling: vote again"
                } else {
                    "finds the rebuttal not compelling: the majority stands"
                };
                let msg = tiebreaker_to_all(&a.justification);
                d.record_ruling(a);
                Ok((what.to_string(), msg))
            });
        }
        Next::Select => {
            let user = text::selection(&q, &d);
            return tiebreaker_says::<SelectionAnswer>(cx, j, target, &d, user, |d, a| {
                let what = format!("selects paper {}", a.winner);
                let msg = tiebreaker_to_all(&a.justification);
                d.record_selection(a)?;
                Ok((what, msg))
            });
        }
        Next::Unilateral => {
            let user = text::unilateral(&q, &d);
            return tiebreaker_says::<UnilateralAnswer>(cx, j, target, &d, user, |d, a| {
                let what = format!("decides alone: {}", a.choice);
                let msg = tiebreaker_to_all(&a.justification);
                d.record_unilateral(a);
                Ok((what, msg))
            });
        }
        Next::Done(decision) => return Ok(Stepped::Decided(decision)),
    };
    flow.map(Stepped::Went)
}

/// Calls the panel: every distinct stage model votes (agents are models, each with its
/// primary role, the first stage it holds); the tiebreaker is a model that does not vote.
fn call_panel(cx: &Cx<'_>, j: &mut Journal<'_>) -> Result<Flow, RunError> {
    let (voters, tiebreaker) = panel(cx, j);
    let names: Vec<String> = voters.iter().map(|v| v.model.clone()).collect();
    cx.progress(&Progress::ConsensusStarted {
        voters: &names,
        tiebreaker: tiebreaker.as_deref(),
    });
    if let Some(c) = j.state.consensus_mut() {
        c.current = Some(Deliberation::new(voters, tiebreaker));
        c.observation = None;
    }
    j.event("consensus: panel called")?;
    Ok(Flow::Continue)
}

/// The agents who vote and the tiebreaker: every distinct stage model, in the role of
/// the first stage it holds; a tiebreaker that does not vote.
pub(super) fn panel(cx: &Cx<'_>, j: &Journal<'_>) -> (Vec<Voter>, Option<String>) {
    let mut voters: Vec<Voter> = Vec::new();
    for s in j.state.stages() {
        let model = if s.commit.is_some() {
            s.last_model()
        } else {
            s.model()
        };
        let taken = voters
            .iter()
            .any(|v| v.model == model || same_wire_model(cx.env.config, &v.model, model));
        if !model.is_empty() && !taken {
            voters.push(Voter {
                model: model.to_string(),
                role: s.stage.role().as_str().to_string(),
            });
        }
    }
    let votes = |m: &str| {
        voters
            .iter()
            .any(|v| v.model == m || same_wire_model(cx.env.config, &v.model, m))
    };
    let profile = cx.env.profile.as_deref();
    let config = cx.env.config;
    let tiebreaker = config
        .role_models(Role::Tiebreaker, profile)
        .into_iter()
        .chain(config.role_models(Role::Arbiter, profile))
        .find(|m| !votes(m));
    (voters, tiebreaker)
}

fn voter(d: &Deliberation, model: &str) -> Voter {
    d.voters
        .iter()
        .find(|v| v.model == model)
        .cloned()
        .unwrap_or_else(|| Voter {
            model: model.to_string(),
            role: "implementer".into(),
        })
}

/// The deliberation `target` names.
fn deliberation_mut<'j>(j: &'j mut Journal<'_>, target: Target) -> Option<&'j mut Deliberation> {
    match target {
        Target::Result => j.state.consensus_mut().and_then(|c| c.current.as_mut()),
        Target::Suggestion(i) => j.state.suggestion_mut(i).and_then(|s| s.vote.as_mut()),
    }
}

/// An agent's call: its answer recorded by `record`; an agent that cannot answer is
/// recorded absent and the deliberation goes on without it (never as the full panel).
fn agent_says<T, F>(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    target: Target,
    voter: &Voter,
    system: &str,
    user: String,
    record: F,
) -> Result<Flow, RunError>
where
    T: DeserializeOwned + JsonSchema,
    F: FnOnce(&mut Deliberation, T) -> (String, Message),
{
    let role = voter.role.parse::<Role>().unwrap_or(Role::Implementer);
    match structured_call::<T>(
        cx,
        j,
        ("consensus", "voter"),
        role,
        &voter.model,
        system,
        user,
    ) {
        Ok((answer, spend)) => {
            let Some(d) = deliberation_mut(j, target) else {
                return Ok(Flow::Continue);
            };
            let (what, msg) = record(d, answer);
            j.state.say(msg.by(&voter.model, spend));
            cx.progress(&Progress::Deliberated {
                who: &voter.model,
                what: &what,
            });
            j.event(&format!("consensus: {} {what}", voter.model))?;
            Ok(Flow::Continue)
        }
        Err(e @ ModelError::Budget(_)) => model_failed(cx, j, "consensus", e),
        Err(e) => {
            let why = crate::redact::said(&e);
            if let Some(d) = deliberation_mut(j, target) {
                d.record_absent(&voter.model, &crate::bounded::clip(&why, 300));
            }
            let what = "could not take part: the panel goes on without it";
            cx.progress(&Progress::Deliberated {
                who: &voter.model,
                what,
            });
            j.event(&format!("consensus: {} absent", voter.model))?;
            Ok(Flow::Continue)
        }
    }
}

/// The tiebreaker's call. Without a tiebreaker, or when it cannot answer or answers out of
/// bounds, the deliberation is deadlocked.
fn tiebreaker_says<T>(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    target: Target,
    d: &Deliberation,
    user: String,
    record: impl FnOnce(&mut Deliberation, T) -> Result<(String, Message), String>,
) -> Result<Stepped, RunError>
where
    T: DeserializeOwned + JsonSchema,
{
    let Some(model) = d.tiebreaker.clone() else {
        let why = "no model outside the panel can break the tie";
        return Ok(Stepped::Deadlocked(why.into()));
    };
    let (answer, spend) = match structured_call::<T>(
        cx,
        j,
        ("consensus", "tiebreaker"),
        Role::Tiebreaker,
        &model,
        "tiebreaker",
        user,
    ) {
        Ok(a) => a,
        Err(e @ ModelError::Budget(_)) => {
            return model_failed(cx, j, "consensus", e).map(Stepped::Went)
        }
        Err(e) => {
            let why = crate::redact::said(&e);
            let why = format!("the tiebreaker {model} could not answer: {why}");
            return Ok(Stepped::Deadlocked(why));
        }
    };
    let Some(current) = deliberation_mut(j, target) else {
        return Ok(Stepped::Went(Flow::Continue));
    };
    match record(current, answer) {
        Ok((what, msg)) => {
            j.state.say(msg.by(&model, spend));
            cx.progress(&Progress::Deliberated {
                who: &model,
                what: &what,
            });
            j.event(&format!("consensus: tiebreaker {what}"))?;
            Ok(Stepped::Went(Flow::Continue))
        }
        Err(why) => Ok(Stepped::Deadlocked(format!(
            "the tiebreaker {model} answered out of bounds: {why}"
        ))),
    }
}

/// The consensus cannot decide: the run waits for you, with every proposal in the record
/// (seed 001 §9).
fn deadlock(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    d: &Deliberation,
    why: &str,
) -> Result<Flow, RunError> {
    let reason = StopReason::Consensus {
        outcome: "deadlock".into(),
        detail: crate::bounded::clip(why, 500),
        proposals: crate::bounded::clip(&text::transcript(d), 20_000),
    };
    wait_on_user(cx, j, reason, "consensus deadlocked")
}

/// The tree decided: the arbiter observes, then the run proceeds to verify or sends the
/// refactor stage back with the decision's amendments or objections.
fn act_on(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    d: Deliberation,
    decision: Decision,
    shown: &Shown,
) -> Result<Flow, RunError> {
    if d.decision.is_none() {
        if let Some(cur) = deliberation_mut(j, Target::Result) {
            cur.conclude(decision.clone());
        }
        j.state.say(Message::new(
            "orchestrator",
            "all",
            MessageKind::Consensus,
            &format!("decided {} ({})", decision.choice, decision.by.as_str()),
        ));
        j.event(&format!(
            "consensus: decided {} ({})",
            decision.choice,
            decision.by.as_str()
        ))?;
    }
    if j.state
        .consensus()
        .as_ref()
        .is_some_and(|c| c.observation.is_none())
    {
        let observation = observe(cx, j, &d, &decision, shown);
        j.state.say(
            Message::new(
                "arbiter",
                "orchestrator",
                MessageKind::Review,
                &observation.reasoning,
            )
            .by(&observation.model, Spend::default()),
        );
        if let Some(c) = j.state.consensus_mut() {
            c.observation = Some(observation);
        }
        j.event("consensus: observed")?;
    }
    let observed = j
        .state
        .consensus()
        .as_ref()
        .and_then(|c| c.observation.as_ref())
        .map(|o| o.verdict);
    let choice = decision.choice.as_str();
    cx.progress(&Progress::ConsensusDecided {
        choice,
        by: decision.by.as_str(),
        observed,
        degraded: d.degraded(),
    });
    let sent_back = j.state.consensus().map_or(0, |c| c.past.len()) as u32;
    let proceed = decision.choice == Choice::Approve;
    match transition::after_consensus(Policy::of(&j.state), proceed, sent_back) {
        AfterConsensus::Proceed => {
            if let Some(c) = j.state.consensus_mut() {
                c.done = true;
            }
            j.event("consensus: proceed to verify")?;
            return Ok(Flow::Continue);
        }
        AfterConsensus::Stop(stop) => {
            let reason = StopReason::Consensus {
                outcome: choice.to_string(),
                detail: format!("{}; sent back {sent_back} time(s)", decision.by.as_str()),
                proposals: crate::bounded::clip(&text::transcript(&d), 20_000),
            };
            return halt(cx, j, stop.status(), reason, "consensus would not proceed");
        }
        AfterConsensus::BackToRefactor => {}
    }
    // Back to refactor, on top of its result, told what the agents decided.
    j.state.back_to_refactor(feedback(&decision));
    j.event(&format!("consensus: {choice}: back to refactor"))?;
    Ok(Flow::Continue)
}

fn ballot_message(b: &Ballot) -> Message {
    let mut m = Message::new(
        &b.role,
        "all",
        MessageKind::Vote,
        &format!("{}: {}", b.choice, b.rationale),
    )
    .confidence(Some(b.confidence));
    m.objections = b.objections.clone();
    m
}

/// The feedback the refactor stage gets when the consensus sends it back.
fn feedback(d: &Decision) -> String {
    let mut s = format!(
        "## CONSENSUS\nThe stage models decided `{}` ({}) on your result: rework it as they ask, on top of your last commit.\n",
        d.choice,
        d.by.as_str()
    );
    if !d.justification.is_empty() {
        s.push_str(&format!(
            "Tiebreaker's justification: {}\n",
            d.justification
        ));
    }
    for a in &d.amendments {
        s.push_str(&format!("- amendment: {a}\n"));
    }
    for o in &d.objections {
        s.push_str(&format!("- objection: {} [{}]\n", o.text, o.evidence));
    }
    s
}

/// What a voter tells the tiebreaker (a rebuttal, a position paper).
fn to_tiebreaker(role: &str, kind: MessageKind, text: &str) -> Message {
    Message::new(role, "tiebreaker", kind, text)
}

/// What the tiebreaker tells every voter: its justification, as a consensus message.
fn tiebreaker_to_all(justification: &str) -> Message {
    Message::new("tiebreaker", "all", MessageKind::Consensus, justification)
}
