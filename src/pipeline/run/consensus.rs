//! The consensus stage (seed 000 §B9 row 4, seed 001 §6.2): between refactor and verify the
//! stage models vote on the refactored result, the tiebreaker settles disagreement, and the
//! arbiter observes without a vote and may FLAG the consensus as groupthink.
//!
//! One call per step: every step records its answer before the next, so a killed run resumes
//! inside the deliberation without paying for a call twice. The rules are in
//! [`crate::consensus`]; this module makes the calls and acts on the decision.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::{BlockOn, Flow, Run, RunError};
use crate::arbiter::gather::gather;
use crate::config::{prompt, Role};
use crate::consensus::deliberation::{
    PaperAnswer, RebuttalAnswer, Ruling, SelectionAnswer, UnilateralAnswer,
};
use crate::consensus::envelope::{Message, MessageKind};
use crate::consensus::prompt::{self as text, Question};
use crate::consensus::{Ballot, BallotAnswer, Choice, Decision, Deliberation, Next, Voter};
use crate::git::Context as _;
use crate::model::{ChatRequest, Exchange, ModelError, Spend};
use crate::pipeline::observer::Progress;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::{RunStatus, StopReason, Transcript};
use crate::pipeline::stage::Stage;
use crate::pipeline::transition::{self, AfterConsensus, Policy};

/// The question every consensus of a run puts to its agents.
const ASK: &str = "Should the refactored result proceed to verification as it is?";

/// Output tokens for one consensus answer.
const MAX_TOKENS: u32 = 2048;

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
}

/// The change and the evidence every call of the deliberation is shown.
pub(super) struct Shown {
    pub(super) task: String,
    pub(super) diff: String,
    pub(super) evidence: Vec<String>,
}

impl Run<'_> {
    /// Whether the consensus stage is due: refactor is accepted and verify has not begun.
    pub(super) fn consensus_due(&self) -> bool {
        self.state.current_stage() == Some(Stage::Verify)
            && self.state.stages[Stage::Verify.index()].attempts_in_epoch() == 0
            && self.state.consensus.as_ref().is_some_and(|c| !c.done)
    }

    /// One step of the consensus stage.
    pub(super) fn consensus_step(&mut self) -> Result<Flow, RunError> {
        self.target = Target::Result;
        let Some(d) = self
            .state
            .consensus
            .as_ref()
            .and_then(|c| c.current.clone())
        else {
            return self.call_panel();
        };
        let shown = self.shown()?;
        match self.deliberate(&d, ASK, &shown)? {
            Stepped::Went(flow) => Ok(flow),
            Stepped::Decided(decision) => self.act_on(d, decision, &shown),
        }
    }

    /// One step of the deliberation `d` (the one [`Run::target`] names) on the question
    /// `ask`: one call, recorded, or the decision the tree reached.
    pub(super) fn deliberate(
        &mut self,
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
                let voter = self.voter(&d, &voters[0]);
                let user = text::vote(&q, &d, round, &voter.role);
                self.agent_says::<BallotAnswer, _>(&voter, "voter", user, |d, a| {
                    let b = Ballot::from_answer(&voter.model, &voter.role, a);
                    let what = format!("votes {}", b.choice);
                    let msg = ballot_message(&b);
                    d.record_ballot(round, b);
                    (what, msg)
                })
            }
            Next::Rebut { voters } => {
                let voter = self.voter(&d, &voters[0]);
                let user = text::rebuttal(&q, &d, &voter.model);
                self.agent_says::<RebuttalAnswer, _>(&voter, "voter", user, |d, a| {
                    let msg = to_tiebreaker(&voter.role, MessageKind::Objection, &a.argument);
                    d.record_rebuttal(&voter.model, a);
                    ("rebuts the majority".into(), msg)
                })
            }
            Next::Papers { voters } => {
                let voter = self.voter(&d, &voters[0]);
                let user = text::paper(&q, &d, &voter.model);
                self.agent_says::<PaperAnswer, _>(&voter, "voter", user, |d, a| {
                    let what = format!("argues for {}", a.choice);
                    let msg = to_tiebreaker(&voter.role, MessageKind::Proposal, &a.position);
                    d.record_paper(&voter.model, a);
                    (what, msg)
                })
            }
            Next::Rule => {
                let user = text::ruling(&q, &d);
                self.tiebreaker_says::<Ruling>(&d, user, |d, a| {
                    let what = if a.compelling {
                        "finds the rebuttal compelling: vote again"
                    } else {
                        "finds the rebuttal not compelling: the majority stands"
                    };
                    let msg = tiebreaker_to_all(&a.justification);
                    d.record_ruling(a);
                    Ok((what.to_string(), msg))
                })
            }
            Next::Select => {
                let user = text::selection(&q, &d);
                self.tiebreaker_says::<SelectionAnswer>(&d, user, |d, a| {
                    let what = format!("selects paper {}", a.winner);
                    let msg = tiebreaker_to_all(&a.justification);
                    d.record_selection(a)?;
                    Ok((what, msg))
                })
            }
            Next::Unilateral => {
                let user = text::unilateral(&q, &d);
                self.tiebreaker_says::<UnilateralAnswer>(&d, user, |d, a| {
                    let what = format!("decides alone: {}", a.choice);
                    let msg = tiebreaker_to_all(&a.justification);
                    d.record_unilateral(a);
                    Ok((what, msg))
                })
            }
            Next::Done(decision) => return Ok(Stepped::Decided(decision)),
        };
        flow.map(Stepped::Went)
    }

    /// Calls the panel: every distinct stage model votes (agents are models, each with its
    /// primary role, the first stage it holds); the tiebreaker is a model that does not vote.
    fn call_panel(&mut self) -> Result<Flow, RunError> {
        let (voters, tiebreaker) = self.panel();
        let names: Vec<String> = voters.iter().map(|v| v.model.clone()).collect();
        self.env.observer.progress(&Progress::ConsensusStarted {
            voters: &names,
            tiebreaker: tiebreaker.as_deref(),
        });
        let c = self.state.consensus.get_or_insert_with(Default::default);
        c.current = Some(Deliberation::new(voters, tiebreaker));
        c.observation = None;
        self.rec.event(&self.state, "consensus: panel called")?;
        Ok(Flow::Continue)
    }

    /// The agents who vote and the tiebreaker: every distinct stage model, in the role of
    /// the first stage it holds; a tiebreaker that does not vote.
    pub(super) fn panel(&self) -> (Vec<Voter>, Option<String>) {
        let mut voters: Vec<Voter> = Vec::new();
        for s in &self.state.stages {
            let model = if s.commit.is_some() {
                s.last_model()
            } else {
                s.model()
            };
            let taken = voters
                .iter()
                .any(|v| v.model == model || same_wire_model(self.env.config, &v.model, model));
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
                .any(|v| v.model == m || same_wire_model(self.env.config, &v.model, m))
        };
        let profile = self.env.profile.as_deref();
        let config = self.env.config;
        let tiebreaker = config
            .role_models(Role::Tiebreaker, profile)
            .into_iter()
            .chain(config.role_models(Role::Arbiter, profile))
            .find(|m| !votes(m));
        (voters, tiebreaker)
    }

    fn voter(&self, d: &Deliberation, model: &str) -> Voter {
        d.voters
            .iter()
            .find(|v| v.model == model)
            .cloned()
            .unwrap_or_else(|| Voter {
                model: model.to_string(),
                role: "implementer".into(),
            })
    }

    /// The deliberation [`Run::target`] names.
    fn deliberation_mut(&mut self) -> Option<&mut Deliberation> {
        match self.target {
            Target::Result => self
                .state
                .consensus
                .as_mut()
                .and_then(|c| c.current.as_mut()),
            Target::Suggestion(i) => self
                .state
                .suggestions
                .get_mut(i)
                .and_then(|s| s.vote.as_mut()),
        }
    }

    /// The run's change, base to tip, with the deterministic findings on it.
    pub(super) fn shown(&self) -> Result<Shown, RunError> {
        let repo = self.env.repo;
        let tree = |o: &crate::git::ObjectId| -> Result<git2::Tree<'_>, RunError> {
            Ok(repo
                .find_commit(o.oid()?)
                .and_then(|c| c.tree())
                .ctx("reading a tree for the consensus")?)
        };
        let base = tree(&self.state.base)?;
        let tip = tree(self.state.tip())?;
        let gathered = gather(repo, Some(&base), &tip, None, Some(&self.privacy))
            .ctx("diffing the run for the consensus")?;
        let evidence = gathered
            .findings
            .iter()
            .map(|f| format!("{} {}:{} {}", f.severity, f.path, f.line, f.reason))
            .collect();
        Ok(Shown {
            task: self.spec.render(),
            diff: gathered.diff_text,
            evidence,
        })
    }

    /// One structured call of the deliberation, recorded in the transcripts.
    pub(super) fn consensus_call<T: DeserializeOwned + JsonSchema>(
        &mut self,
        role: Role,
        model: &str,
        system: &str,
        user: String,
        label: &str,
    ) -> Result<(T, Spend), ModelError> {
        self.structured_call("consensus", role, model, system, user, label)
    }

    /// One structured call to `model` with the `system` role prompt, recorded in the
    /// transcripts under `stage` and `label`; its spend is added to the run's.
    pub(super) fn structured_call<T: DeserializeOwned + JsonSchema>(
        &mut self,
        stage: &str,
        role: Role,
        model: &str,
        system: &str,
        user: String,
        label: &str,
    ) -> Result<(T, Spend), ModelError> {
        let system = prompt(&self.env.config.config, system, Some(&self.env.repo_root()));
        let req = ChatRequest::new(Some(system), user, MAX_TOKENS);
        let result = self
            .env
            .client
            .chat_structured::<T>(role, &[model.to_string()], &req)
            .await_blocking()?;
        let spend = result.completion.spend();
        self.state.spend += spend;
        let transcript = Transcript::new(stage, label, Exchange::structured(&req, &result));
        self.rec.transcript(&mut self.state, &transcript);
        Ok((result.value, spend))
    }

    /// An agent's call: its answer recorded by `record`; an agent that cannot answer is
    /// recorded absent and the deliberation goes on without it (never as the full panel).
    fn agent_says<T, F>(
        &mut self,
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
        match self.consensus_call::<T>(role, &voter.model, system, user, "voter") {
            Ok((answer, spend)) => {
                let Some(d) = self.deliberation_mut() else {
                    return Ok(Flow::Continue);
                };
                let (what, msg) = record(d, answer);
                self.state.messages.push(msg.by(&voter.model, spend));
                self.env.observer.progress(&Progress::Deliberated {
                    who: &voter.model,
                    what: &what,
                });
                self.rec
                    .event(&self.state, &format!("consensus: {} {what}", voter.model))?;
                Ok(Flow::Continue)
            }
            Err(e @ ModelError::Budget(_)) => self.model_failed("consensus", e),
            Err(e) => {
                let why = crate::redact::Redactor::global()
                    .redact(&e.to_string())
                    .to_string();
                if let Some(d) = self.deliberation_mut() {
                    d.record_absent(&voter.model, &crate::bounded::clip(&why, 300));
                }
                let what = "could not take part: the panel goes on without it";
                self.env.observer.progress(&Progress::Deliberated {
                    who: &voter.model,
                    what,
                });
                self.rec
                    .event(&self.state, &format!("consensus: {} absent", voter.model))?;
                Ok(Flow::Continue)
            }
        }
    }

    /// The tiebreaker's call. Without a tiebreaker, or when it cannot answer, the deadlock
    /// goes to the user with every proposal in the record (seed 001 §9).
    fn tiebreaker_says<T>(
        &mut self,
        d: &Deliberation,
        user: String,
        record: impl FnOnce(&mut Deliberation, T) -> Result<(String, Message), String>,
    ) -> Result<Flow, RunError>
    where
        T: DeserializeOwned + JsonSchema,
    {
        let Some(model) = d.tiebreaker.clone() else {
            return self.deadlock(d, "no model outside the panel can break the tie");
        };
        let (answer, spend) = match self.consensus_call::<T>(
            Role::Tiebreaker,
            &model,
            "tiebreaker",
            user,
            "tiebreaker",
        ) {
            Ok(a) => a,
            Err(e @ ModelError::Budget(_)) => return self.model_failed("consensus", e),
            Err(e) => {
                let why = crate::redact::Redactor::global()
                    .redact(&e.to_string())
                    .to_string();
                return self.deadlock(
                    d,
                    &format!("the tiebreaker {model} could not answer: {why}"),
                );
            }
        };
        let Some(current) = self.deliberation_mut() else {
            return Ok(Flow::Continue);
        };
        match record(current, answer) {
            Ok((what, msg)) => {
                self.state.messages.push(msg.by(&model, spend));
                self.env.observer.progress(&Progress::Deliberated {
                    who: &model,
                    what: &what,
                });
                self.rec
                    .event(&self.state, &format!("consensus: tiebreaker {what}"))?;
                Ok(Flow::Continue)
            }
            Err(why) => self.deadlock(
                d,
                &format!("the tiebreaker {model} answered out of bounds: {why}"),
            ),
        }
    }

    fn deadlock(&mut self, d: &Deliberation, why: &str) -> Result<Flow, RunError> {
        if let Target::Suggestion(i) = self.target {
            // A vote on a suggestion that no one can settle leaves the rejection standing.
            return self.suggestion_settled(i, None, why);
        }
        let reason = StopReason::Consensus {
            outcome: "deadlock".into(),
            detail: crate::bounded::clip(why, 500),
            proposals: crate::bounded::clip(&text::transcript(d), 20_000),
        };
        self.halt(RunStatus::WaitingOnUser, reason, "consensus deadlocked")
    }

    /// The tree decided: the arbiter observes, then the run proceeds to verify or sends the
    /// refactor stage back with the decision's amendments or objections.
    fn act_on(
        &mut self,
        d: Deliberation,
        decision: Decision,
        shown: &Shown,
    ) -> Result<Flow, RunError> {
        if d.decision.is_none() {
            if let Some(cur) = self.deliberation_mut() {
                cur.conclude(decision.clone());
            }
            self.state.messages.push(Message::new(
                "orchestrator",
                "all",
                MessageKind::Consensus,
                &format!("decided {} ({})", decision.choice, decision.by.as_str()),
            ));
            self.rec.event(
                &self.state,
                &format!(
                    "consensus: decided {} ({})",
                    decision.choice,
                    decision.by.as_str()
                ),
            )?;
        }
        if self
            .state
            .consensus
            .as_ref()
            .is_some_and(|c| c.observation.is_none())
        {
            let observation = self.observe(&d, &decision, shown);
            self.state.messages.push(
                Message::new(
                    "arbiter",
                    "orchestrator",
                    MessageKind::Review,
                    &observation.reasoning,
                )
                .by(&observation.model, Spend::default()),
            );
            if let Some(c) = self.state.consensus.as_mut() {
                c.observation = Some(observation);
            }
            self.rec.event(&self.state, "consensus: observed")?;
        }
        let observed = self
            .state
            .consensus
            .as_ref()
            .and_then(|c| c.observation.as_ref())
            .map(|o| o.verdict);
        let choice = decision.choice.as_str();
        self.env.observer.progress(&Progress::ConsensusDecided {
            choice,
            by: decision.by.as_str(),
            observed,
            degraded: d.degraded(),
        });
        let sent_back = self.state.consensus.as_ref().map_or(0, |c| c.past.len()) as u32;
        let proceed = decision.choice == Choice::Approve;
        match transition::after_consensus(Policy::of(&self.state), proceed, sent_back) {
            AfterConsensus::Proceed => {
                if let Some(c) = self.state.consensus.as_mut() {
                    c.done = true;
                }
                self.rec
                    .event(&self.state, "consensus: proceed to verify")?;
                return Ok(Flow::Continue);
            }
            AfterConsensus::Stop(stop) => {
                let reason = StopReason::Consensus {
                    outcome: choice.to_string(),
                    detail: format!("{}; sent back {sent_back} time(s)", decision.by.as_str()),
                    proposals: crate::bounded::clip(&text::transcript(&d), 20_000),
                };
                return self.halt(stop.status(), reason, "consensus would not proceed");
            }
            AfterConsensus::BackToRefactor => {}
        }
        // Back to refactor, on top of its result, told what the agents decided.
        self.state.feedback = feedback(&decision);
        if let Some(c) = self.state.consensus.as_mut() {
            if let Some(done) = c.current.take() {
                c.past.push(done);
            }
            c.observation = None;
        }
        let refactor = &mut self.state.stages[Stage::Refactor.index()];
        refactor.epoch_start = refactor.attempts.len();
        self.state.current = Stage::Refactor.index();
        self.state.verify = None;
        self.rec.event(
            &self.state,
            &format!("consensus: {choice}: back to refactor"),
        )?;
        Ok(Flow::Continue)
    }
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
