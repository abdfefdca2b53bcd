//! The deliberation chamber's `ask` and `respond` as operations: a session opened on a
//! question (its panel, context and caps checked), the founder's input taken, and the
//! session's phases run, each recorded under `refs/triad/chamber/<id>`. A Level 3 session's
//! cost is the founder's to approve: the operation gives the estimate and runs nothing until
//! the caller goes on, so the approval is asked wherever the caller can ask it.

use super::exit::chamber_exit;
use super::Ops;
use crate::chamber::engine::EngineError;
use crate::chamber::founder::{self, Responded};
use crate::chamber::limits::{self, LimitHit, Used};
use crate::chamber::open::{self, Opening};
use crate::chamber::store::Store;
use crate::chamber::{FounderInput, FounderRole, Level, Session};
use crate::config::LoadedConfig;
use crate::exit::ExitCode;
use crate::pipeline::DriveError;

/// A question for the chamber, as the founder asks it.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The decision to deliberate, as a question.
    pub question: String,
    /// Context every panelist reads: a TaskSpec id, a file, or a revision.
    pub context: Vec<String>,
    /// The panel asked for (empty: the configured one, else the roles' models).
    pub panel: Vec<String>,
    /// The arbiter asked for (`None`: the configured one).
    pub arbiter: Option<String>,
    /// Criticality.
    pub level: Level,
    /// The founder's part at Level 3.
    pub founder_role: Option<FounderRole>,
}

/// A session opened and not yet run: what the caps said, and what other sessions used.
#[derive(Debug)]
pub struct Opened {
    /// The session, not yet recorded.
    pub session: Session,
    /// Warnings of the caps (a day's sessions nearly used).
    pub notices: Vec<String>,
    /// What the other sessions used of the periods' limits.
    pub used: Used,
}

/// The founder's input taken on a recorded session, not yet recorded.
#[derive(Debug)]
pub struct Answered {
    /// The session, with the input.
    pub session: Session,
    /// What was taken, for its phase commit (`the founder's input (contributor)`).
    pub what: String,
}

/// How a session the operation ran stands.
#[derive(Debug)]
pub struct Chambered {
    /// The session as it stands (its status, synthesis, cost).
    pub session: Session,
    /// What its standing means as an exit code ([`super::exit::chamber_exit`]).
    pub exit: ExitCode,
}

/// Why a session could not be opened, taken on or run.
#[derive(Debug, thiserror::Error)]
pub enum ChamberError {
    /// The question, panel, context or input is not one the chamber takes.
    #[error("{0}")]
    Refused(String),
    /// A cap forbids starting a session.
    #[error(transparent)]
    Limit(LimitHit),
    /// A cap stopped the session while it ran; it is recorded as stopped.
    #[error("{hit}")]
    Stopped {
        /// The session.
        id: String,
        /// The cap.
        hit: LimitHit,
    },
    /// A phase could not be recorded.
    #[error("cannot record chamber session {id}: {error}")]
    NotRecorded {
        /// The session.
        id: String,
        /// Why.
        error: String,
    },
    /// A local model server the session needs cannot be started.
    #[error(transparent)]
    Local(Box<DriveError>),
    /// The async runtime the calls run on could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
}

impl Ops<'_> {
    /// Opens a session on `ask` under `loaded`: the panel and arbiter chosen, the context
    /// read (private files refused), the caps checked. Nothing is asked or recorded yet.
    pub fn chamber_open(&self, loaded: &LoadedConfig, ask: &Ask) -> Result<Opened, ChamberError> {
        let config = &loaded.config;
        if ask.question.trim().is_empty() {
            return Err(ChamberError::Refused("the question is empty".into()));
        }
        let profile = loaded.active_profile(self.env);
        let roles = |r| loaded.role_models(r, profile.as_deref());
        let configured = loaded.chamber_defaults(profile.as_deref());
        let (panel, arbiter) = founder::panel(
            config,
            &roles,
            &configured,
            &ask.panel,
            ask.arbiter.as_deref(),
        )
        .map_err(ChamberError::Refused)?;
        let context = ask
            .context
            .iter()
            .map(|c| open::context_item(self.repo, config, c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ChamberError::Refused)?;
        if ask.level == Level::Two && ask.founder_role.is_some() {
            return Err(ChamberError::Refused(
                "--founder-role is for Level 3 sessions; a Level 2 session runs without you".into(),
            ));
        }
        let used = open::used(self.repo, None);
        let notices = limits::may_start(&config.chamber, used).map_err(ChamberError::Limit)?;
        let session = open::new_session(Opening {
            question: ask.question.trim().to_string(),
            context,
            level: ask.level,
            criteria: vec![format!(
                "opened with `git triad chamber ask --level {}`",
                ask.level.as_str()
            )],
            source: "founder".into(),
            founder_role: ask.founder_role,
            panel,
            arbiter,
            opened_by: Some("git triad chamber ask".into()),
        });
        Ok(Opened {
            session,
            notices,
            used,
        })
    }

    /// Takes the founder's `input` on recorded `session` (with `context` read as more
    /// context, private files refused); a claim to verify gets its evidence's files read.
    /// Nothing is recorded yet.
    pub fn chamber_respond(
        &self,
        loaded: &LoadedConfig,
        mut session: Session,
        input: FounderInput,
        context: &[String],
    ) -> Result<Answered, ChamberError> {
        let added = context
            .iter()
            .map(|c| open::context_item(self.repo, &loaded.config, c))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ChamberError::Refused)?
            .into_iter()
            .map(|c| format!("## {}\n\n{}", c.label, c.text))
            .collect::<Vec<_>>();
        let added = (!added.is_empty()).then(|| added.join("\n\n"));
        let evidence = input.evidence.clone();
        let done = founder::respond(&mut session, input, added).map_err(ChamberError::Refused)?;
        if done == Responded::ToVerify {
            // The claim is checked against what git triad reads and runs, not only the
            // models' knowledge: its evidence's files and the repository's tests at HEAD.
            self.host.say(
                "chamber: reading the claim's evidence and running the tests at HEAD in the box",
            );
            let sources = open::claim_sources(self.repo, &loaded.config, &evidence);
            if let Some(v) = session.verification.as_mut() {
                v.sources = sources;
            }
        }
        let what = match done {
            Responded::Contributed => "the founder's input (contributor)".to_string(),
            Responded::ToVerify => "the founder's claim to verify (verifier)".to_string(),
            Responded::Challenged(n) => format!("the founder's challenge {n}"),
        };
        Ok(Answered { session, what })
    }

    /// Records the founder's input taken by [`Self::chamber_respond`] and runs what it
    /// starts (the claim check, the synthesis, a challenge round).
    pub fn chamber_go_on(
        &self,
        loaded: &LoadedConfig,
        answered: Answered,
    ) -> Result<Chambered, ChamberError> {
        let Answered { session, what } = answered;
        Store::open(self.repo, &session.id)
            .phase(&session, &what)
            .map_err(|e| ChamberError::NotRecorded {
                id: session.id.clone(),
                error: e.to_string(),
            })?;
        self.host
            .say(&format!("chamber: recorded {what}; the session goes on"));
        let used = open::used(self.repo, Some(&session.id));
        self.chamber_drive(loaded, session, used)
    }

    /// What running `session`'s remaining phases may cost at most, in USD: what a Level 3
    /// session's founder approves.
    pub fn chamber_estimate(&self, loaded: &LoadedConfig, session: &Session) -> f64 {
        open::estimate_usd(&self.client(loaded), &loaded.config, session)
    }

    /// Runs `session`'s remaining phases, every phase recorded, within the caps given what
    /// the other sessions `used`.
    pub fn chamber_drive(
        &self,
        loaded: &LoadedConfig,
        mut session: Session,
        used: Used,
    ) -> Result<Chambered, ChamberError> {
        let mut models = session.panel.clone();
        models.push(session.arbiter.clone());
        crate::pipeline::drive::ensure_local_servers(loaded, self.env, &models, self.host)
            .map_err(|e| ChamberError::Local(Box::new(e)))?;
        let client = self.client(loaded);
        client.set_run(Some(&format!("chamber/{}", session.id)));
        let progress = |line: &str| self.host.say(line);
        let driven = super::block_on(open::run(
            self.repo,
            &client,
            &loaded.config,
            self.repo.workdir(),
            used,
            &progress,
            &mut session,
        ))
        .map_err(ChamberError::Runtime)?;
        match driven {
            Ok(()) => {}
            Err(EngineError::Limit(hit)) => {
                return Err(ChamberError::Stopped {
                    id: session.id.clone(),
                    hit,
                })
            }
            Err(EngineError::Git(e)) => {
                return Err(ChamberError::NotRecorded {
                    id: session.id.clone(),
                    error: e.to_string(),
                })
            }
        }
        let exit = chamber_exit(session.status);
        Ok(Chambered { session, exit })
    }
}
