//! Runs a session's phases, each recorded before the next starts so a killed session
//! resumes where it stopped: independent answers (together, none seeing another), the
//! arbiter's initial assessment and the divergence rules, at most one cross-examination,
//! the founder's part when the role needs it, and the synthesis, checked against the facts.

use std::path::Path;
use std::time::Instant;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::answer::{InitialAssessment, PanelAnswer, Resolution, Synthesis};
use super::divergence;
use super::limits::{Guard, LimitHit};
use super::{answered, brief, FounderRole, Level, Round, Session, Status, Turn};
use crate::config::prompt;
use crate::config::schema::{Config, Role};
use crate::git::GitError;
use crate::model::{structured, ChatRequest, ModelClient, Spend};

/// Arbiter confidence from which a Level 2 session accepts itself (seed 003).
pub const AUTO_ACCEPT: u8 = 8;

/// Challenge rounds a challenger may ask for.
pub const MAX_CHALLENGES: usize = 2;

/// Why advancing a session ended early. The session itself says it too (it is stopped).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// A cap would be crossed: nothing more was sent.
    #[error("{0}")]
    Limit(#[from] LimitHit),
    /// The record could not be written.
    #[error(transparent)]
    Git(#[from] GitError),
}

/// What the engine needs: the client, the configuration, the caps.
pub struct Chamber<'a> {
    /// Calls the models (and appends to the ledger).
    pub client: &'a ModelClient,
    /// The effective configuration (prompts, `[chamber]`).
    pub config: &'a Config,
    /// The repository root, for prompt overrides.
    pub repo_root: Option<&'a Path>,
    /// The session and monthly hard stops.
    pub guard: Guard,
    /// Where progress lines go.
    pub progress: &'a dyn Fn(&str),
}

/// Saves the session after a phase, with a few words saying which.
pub type Save<'s> = dyn FnMut(&Session, &str) -> Result<(), GitError> + 's;

impl Chamber<'_> {
    /// Advances `session` until it needs the founder, is done, or stops; every phase is
    /// saved before the next begins.
    pub async fn advance(
        &self,
        session: &mut Session,
        save: &mut Save<'_>,
    ) -> Result<(), EngineError> {
        if session.rounds.is_empty() {
            session.rounds.push(Round {
                kind: "initial".into(),
                ..Round::default()
            });
        }
        session.status = Status::Open;
        let started = Instant::now();
        let result = self.phases(session, save).await;
        session.duration_ms += started.elapsed().as_millis() as u64;
        match result {
            Ok(()) => save(session, &format!("status: {}", session.status.as_str()))?,
            Err(EngineError::Limit(hit)) => {
                session.status = Status::Stopped;
                session.stop_reason = Some(hit.0.clone());
                save(session, "stopped at a cap")?;
                return Err(EngineError::Limit(hit));
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    async fn phases(&self, session: &mut Session, save: &mut Save<'_>) -> Result<(), EngineError> {
        let at = session.rounds.len() - 1;
        if session.rounds[at].answers.is_empty() {
            self.independent(session, at).await?;
            save(session, "phase 1: independent answers")?;
        }
        let answered = answered(&session.rounds[at].answers);
        if answered.len() < 2 {
            session.status = Status::Stopped;
            session.stop_reason = Some(format!(
                "only {} of {} panelists answered: below two answers there is no synthesis",
                answered.len(),
                session.rounds[at].answers.len()
            ));
            return Ok(());
        }
        if session.rounds[at].divergence.is_none() {
            self.divergence(session, at).await?;
            save(session, "divergence detection")?;
        }
        if !session.rounds[at].cross_done {
            if session.rounds[at]
                .divergence
                .as_deref()
                .is_some_and(divergence::diverged)
            {
                self.cross_examine(session, at).await?;
            }
            session.rounds[at].cross_done = true;
            save(session, "cross-examination")?;
        }
        let needs_input = matches!(
            session.founder_role,
            Some(FounderRole::Contributor | FounderRole::Verifier)
        ) && at == 0
            && session.founder_input.is_none()
            && session.verification.is_none();
        if needs_input {
            session.status = Status::AwaitingInput;
            return Ok(());
        }
        if session
            .verification
            .as_ref()
            .is_some_and(|v| v.outcome.is_empty())
        {
            self.check_claim(session, at).await?;
            save(session, "the founder's claim checked")?;
        }
        if session.rounds[at].synthesis.is_none() {
            self.synthesize(session, at).await?;
            save(session, "arbiter's synthesis")?;
        }
        self.settle(session);
        Ok(())
    }

    /// One structured call, checked against the caps first; its turn records the answer or
    /// why there is none, the ids the server gave, and what it cost.
    async fn call<T: DeserializeOwned + JsonSchema + serde::Serialize>(
        &self,
        model: &str,
        system: String,
        user: String,
        purpose: &str,
    ) -> Turn {
        let req = self.request::<T>(system, user, purpose);
        let before = self.client.records().len();
        let result = self
            .client
            .chat_structured::<T>(Role::Arbiter, &[model.to_string()], &req)
            .await;
        let records: Vec<_> = self.client.records()[before..]
            .iter()
            .filter(|r| r.model == model)
            .cloned()
            .collect();
        let last = records.last();
        let mut turn = Turn {
            model: model.to_string(),
            requested_id: last.map(|r| r.requested_id.clone()).unwrap_or_default(),
            reported_id: last.and_then(|r| r.reported_id.clone()),
            model_mismatch: records.iter().any(|r| r.model_mismatch),
            answer: None,
            failure: None,
            spend: Spend::of(&records),
        };
        // Each call says when it is done: on small local models a session is minutes long,
        // and a round with no line in between reads as a hang.
        (self.progress)(&call_line(model, purpose, &turn.spend, result.is_ok()));
        match result {
            Ok(mut s) => {
                // Text the server stopped at its length limit says so in the record.
                structured::mark_cut(&mut s.json, &s.completion.at_limit);
                turn.answer = Some(s.json);
            }
            Err(e) => {
                let why = crate::redact::said(&e);
                turn.failure = Some(crate::bounded::clip(&why, 400));
            }
        }
        turn
    }

    fn request<T: JsonSchema>(&self, system: String, user: String, purpose: &str) -> ChatRequest {
        let mut req = ChatRequest::new(Some(system), user, self.config.chamber.max_tokens);
        req.schema = Some(structured::schema_for::<T>(purpose));
        req.purpose = Some(format!("chamber-{purpose}"));
        req
    }

    fn system(&self, name: &str) -> String {
        prompt(self.config, name, self.repo_root)
    }

    /// Checks that calls of these estimates fit the caps, given what was spent.
    fn afford(&self, session: &Session, estimates: &[f64]) -> Result<(), LimitHit> {
        self.guard
            .check(session.spend().cost_usd, estimates.iter().sum())
    }

    fn estimate<T: JsonSchema>(&self, model: &str, system: &str, user: &str) -> f64 {
        let req = self.request::<T>(system.to_string(), user.to_string(), "estimate");
        self.client.worst_case_usd(model, &req).unwrap_or(0.0)
    }

    /// Asks every panelist in `users` at once (model → user text) and returns the turns in
    /// the same order, after checking that all of them fit the caps.
    async fn fan_out(
        &self,
        session: &Session,
        system: &str,
        users: Vec<(String, String)>,
        purpose: &str,
    ) -> Result<Vec<Turn>, LimitHit> {
        let estimates: Vec<f64> = users
            .iter()
            .map(|(m, u)| self.estimate::<PanelAnswer>(m, system, u))
            .collect();
        self.afford(session, &estimates)?;
        let calls = users
            .into_iter()
            .map(|(m, u)| async move {
                self.call::<PanelAnswer>(&m, system.to_string(), u, purpose)
                    .await
            })
            .collect();
        Ok(crate::model::fanout::join_all(calls).await)
    }

    async fn independent(&self, session: &mut Session, at: usize) -> Result<(), EngineError> {
        (self.progress)(&format!(
            "chamber: asking {} panelists independently ({})",
            session.panel.len(),
            session.panel.join(", ")
        ));
        let system = self.system("chamber_panelist");
        let user = brief::independent(session, &session.rounds[at]);
        let users = session
            .panel
            .iter()
            .map(|m| (m.clone(), user.clone()))
            .collect();
        let turns = self.fan_out(session, &system, users, "panelist").await?;
        for t in &turns {
            self.observe(session, t);
        }
        let failed: Vec<String> = turns
            .iter()
            .filter_map(|t| t.failure.as_ref().map(|f| format!("{} ({f})", t.model)))
            .collect();
        if !failed.is_empty() {
            session.notices.push(format!(
                "degraded panel: {} of {} panelists answered; did not answer: {}",
                turns.len() - failed.len(),
                turns.len(),
                failed.join("; ")
            ));
        }
        session.rounds[at].answers = turns;
        Ok(())
    }

    /// Records what a turn's facts say that its answer does not: another model answered.
    fn observe(&self, session: &mut Session, t: &Turn) {
        if t.model_mismatch {
            let line = format!(
                "{} was asked for `{}` but the server answered as `{}`",
                t.model,
                t.requested_id,
                t.reported_id.as_deref().unwrap_or("?")
            );
            tracing::warn!("{line}");
            (self.progress)(&format!("chamber: warning: {line}"));
            session.notices.push(line);
        }
    }

    async fn divergence(&self, session: &mut Session, at: usize) -> Result<(), EngineError> {
        let answers = answered(&session.rounds[at].answers);
        if session.rounds[at].assessment.is_none() {
            let system = self.system("chamber_assessor");
            let user = brief::assessment(session, &session.rounds[at]);
            let est = self.estimate::<InitialAssessment>(&session.arbiter, &system, &user);
            self.afford(session, &[est])?;
            (self.progress)(&format!(
                "chamber: {} assesses the answers",
                session.arbiter
            ));
            let turn = self
                .call::<InitialAssessment>(&session.arbiter, system, user, "assessor")
                .await;
            self.observe(session, &turn);
            session.rounds[at].assessment = Some(turn);
        }
        let turn = session.rounds[at].assessment.as_ref();
        let parsed: Option<InitialAssessment> = turn
            .and_then(|t| t.answer.clone())
            .and_then(|v| serde_json::from_value(v).ok());
        let why = turn
            .and_then(|t| t.failure.clone())
            .unwrap_or_else(|| "the arbiter gave none".into());
        let rules = divergence::evaluate(&answers, parsed.as_ref().ok_or(why.as_str()));
        let fired: Vec<&str> = rules
            .iter()
            .filter(|r| r.fired)
            .map(|r| r.rule.as_str())
            .collect();
        (self.progress)(&if fired.is_empty() {
            "chamber: no divergence: no cross-examination".to_string()
        } else {
            format!(
                "chamber: divergence ({}): one round of cross-examination",
                fired.join(", ")
            )
        });
        session.rounds[at].divergence = Some(rules);
        Ok(())
    }

    async fn cross_examine(&self, session: &mut Session, at: usize) -> Result<(), EngineError> {
        let system = self.system("chamber_panelist");
        let round = &session.rounds[at];
        let users = round
            .answers
            .iter()
            .filter(|t| t.answer.is_some())
            .map(|t| (t.model.clone(), brief::cross(session, round, t)))
            .collect();
        let turns = self.fan_out(session, &system, users, "examinee").await?;
        for t in &turns {
            self.observe(session, t);
            if let Some(f) = &t.failure {
                session.notices.push(format!(
                    "{} did not answer the cross-examination ({f})",
                    t.model
                ));
            }
        }
        session.rounds[at].cross = turns;
        Ok(())
    }

    async fn check_claim(&self, session: &mut Session, at: usize) -> Result<(), EngineError> {
        let Some(claim) = session.verification.as_ref().map(|v| v.claim.clone()) else {
            return Ok(());
        };
        let system = self.system("chamber_panelist");
        let user = brief::check(session, &session.rounds[at], &claim);
        let users = answered(&session.rounds[at].answers)
            .into_iter()
            .map(|(m, _)| (m, user.clone()))
            .collect();
        (self.progress)("chamber: the panel checks the founder's claim");
        let turns = self.fan_out(session, &system, users, "checker").await?;
        let verdicts: Vec<String> = turns
            .iter()
            .filter_map(Turn::panel_answer)
            .map(|a| a.stance.trim().to_lowercase())
            .collect();
        let outcome = if !verdicts.is_empty() && verdicts.iter().all(|v| v.starts_with("verified"))
        {
            "verified"
        } else if !verdicts.is_empty() && verdicts.iter().all(|v| v.starts_with("falsified")) {
            "falsified"
        } else {
            "undetermined"
        };
        if let Some(v) = session.verification.as_mut() {
            v.outcome = outcome.to_string();
        }
        session.rounds[at].checks = turns;
        Ok(())
    }

    async fn synthesize(&self, session: &mut Session, at: usize) -> Result<(), EngineError> {
        let mut system = self.system("chamber_arbiter");
        if session.arbiter_is_panelist {
            system = format!("{system}\n{}", brief::CONFLICT_CLAUSE);
        }
        let founder_heard = session.founder_input.is_some() || !session.challenges.is_empty();
        if session.assessment.level == Level::Three && founder_heard {
            system = format!("{system}\n{}", brief::FOUNDER_CLAUSE);
        }
        let user = brief::dossier(session, &session.rounds[at], at > 0);
        let est = self.estimate::<Synthesis>(&session.arbiter, &system, &user);
        self.afford(session, &[est])?;
        (self.progress)(&format!("chamber: {} synthesizes", session.arbiter));
        let turn = self
            .call::<Synthesis>(&session.arbiter, system, user, "arbiter")
            .await;
        self.observe(session, &turn);
        let claimed: Option<Synthesis> = turn
            .answer
            .clone()
            .and_then(|v| serde_json::from_value(v).ok());
        if let Some(f) = &turn.failure {
            session.notices.push(format!(
                "the arbiter {} could not synthesize: {f}",
                session.arbiter
            ));
        }
        session.rounds[at].synthesis = Some(turn);
        if let Some(claimed) = claimed {
            let checked = super::facts::check(session, at, claimed);
            session.rounds[at].arbiter_view_won = checked.arbiter_view_won;
            session.notices.extend(checked.notices);
            session.rounds[at].effective = Some(checked.synthesis);
        }
        Ok(())
    }

    /// Sets the status from the synthesis: Level 2 accepts a consensus at 8/10 (with the
    /// self-check when the arbiter is a panelist) or escalates to Level 3; Level 3 waits for
    /// the founder.
    fn settle(&self, session: &mut Session) {
        let at = session.rounds.len() - 1;
        let Some(s) = session.rounds[at].effective.clone() else {
            session.status = Status::Stopped;
            session.stop_reason = Some("the arbiter gave no synthesis".into());
            return;
        };
        if at > 0 {
            let r = match s.resolution {
                Resolution::NotApplicable => {
                    session.notices.push(
                        "the arbiter gave no resolution after a challenge: recorded as NEED MORE DATA"
                            .into(),
                    );
                    Resolution::NeedMoreData
                }
                r => r,
            };
            session.resolution = Some(r.as_str().to_string());
        }
        // Seed 003: an arbiter that is also a panelist must say whether it gave its own view
        // undue weight; without that self-check its synthesis is not taken on its own word.
        let unchecked = session.arbiter_is_panelist && s.self_check.trim().is_empty();
        match session.assessment.level {
            Level::Two if s.consensus && s.confidence >= AUTO_ACCEPT && !unchecked => {
                session.status = Status::AutoAccepted;
            }
            Level::Two => {
                session.assessment.level = Level::Three;
                let why = if unchecked && s.consensus && s.confidence >= AUTO_ACCEPT {
                    format!(
                        "the arbiter {} is also a panelist and gave no self-check on its own \
                         view's weight, so its synthesis is not accepted by itself",
                        session.arbiter
                    )
                } else if s.confidence < AUTO_ACCEPT {
                    format!(
                        "arbiter confidence {}/10 is below the auto-accept threshold of \
                         {AUTO_ACCEPT}/10",
                        s.confidence
                    )
                } else {
                    format!(
                        "the arbiter found no consensus (confidence {}/10)",
                        s.confidence
                    )
                };
                session
                    .assessment
                    .criteria
                    .push(format!("{why}: {}", super::ESCALATED));
                session.founder_role.get_or_insert(FounderRole::Approver);
                session.status = Status::AwaitingAction;
            }
            Level::Three => session.status = Status::AwaitingAction,
        }
    }
}

/// One call of a session, as its progress line: who answered as what, in how long, and at
/// what speed (output tokens per second, when the server reported them).
fn call_line(model: &str, purpose: &str, spend: &Spend, answered: bool) -> String {
    let secs = spend.latency_ms as f64 / 1000.0;
    // A rate over less than a second says more about the clock than the model.
    let speed = if spend.output_tokens > 0 && spend.latency_ms >= 1000 {
        format!(
            ", {} tokens at {:.1} tokens/s",
            spend.output_tokens,
            spend.output_tokens as f64 / secs
        )
    } else {
        String::new()
    };
    let how = if answered { "answered" } else { "failed" };
    format!("chamber: {model} ({purpose}) {how} in {secs:.1} s{speed}")
}

#[cfg(test)]
mod progress_tests {
    use super::*;

    #[test]
    fn a_call_line_says_the_speed_only_over_a_second_or_more() {
        let slow = Spend {
            output_tokens: 120,
            latency_ms: 8_000,
            ..Spend::default()
        };
        assert_eq!(
            call_line("local-qwen-coder", "panelist", &slow, true),
            "chamber: local-qwen-coder (panelist) answered in 8.0 s, 120 tokens at 15.0 tokens/s"
        );
        let quick = Spend {
            output_tokens: 120,
            latency_ms: 40,
            ..Spend::default()
        };
        assert_eq!(
            call_line("m", "arbiter", &quick, false),
            "chamber: m (arbiter) failed in 0.0 s"
        );
    }
}
