//! The session loop (seed 002's router): who speaks next, where each answer goes, when a
//! conversation is warned or handed off. Every step is an event recorded before it is
//! applied, so the loop can stop at any instant and [`Engine::advance`] picks up from the
//! record exactly where it was.

use super::act::Workshop;
use super::context::Pressure;
use super::handoff;
use super::record::{name, Conv, Event, Meta, Store};
use super::state::State;
use super::tools;
use crate::config::schema::{Role, SessionConfig};
use crate::git::GitError;
use crate::model::{ChatRequest, Message, ModelClient, ModelError, Speaker};

/// Where a session's human lines come from: a terminal, stdin or a script.
pub trait HumanInput {
    /// The next line, waiting for it; `None` when there will be no more.
    fn next_line(&mut self) -> Option<String>;
    /// The next line if it is an interjection (a line written `+ …`) that is already there;
    /// it reaches the manager tagged `Human:` while an orchestrator works.
    fn interjection(&mut self) -> Option<String>;
}

/// Why [`Engine::advance`] returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The manager spoke to the human (or the session asks them): their turn.
    HumanTurn,
    /// The session stopped (a cap, a provider down, a loop of tool calls); why, and how to
    /// go on, is in the record.
    Stopped {
        /// Why.
        why: String,
        /// The budget stopped it.
        budget: bool,
    },
}

/// What makes a session unable to go on at all.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The record could not be written.
    #[error(transparent)]
    Git(#[from] GitError),
}

/// What the engine needs besides the record.
pub struct Setup<'a> {
    /// The repository whose notes ref keeps the session's record.
    pub repo: &'a git2::Repository,
    /// Calls the models.
    pub client: &'a ModelClient,
    /// The session's limits.
    pub settings: SessionConfig,
    /// The manager's system prompt (the persona).
    pub manager_prompt: String,
    /// The orchestrators' system prompt.
    pub orchestrator_prompt: String,
    /// Where orchestrator tools act.
    pub workshop: Workshop,
}

/// Shown every event as it is recorded, with the session after it: the transcript of a
/// headless session, the screen of the terminal UI.
pub type Observer<'a> = Box<dyn FnMut(&Event, &State) + 'a>;

/// Runs one session.
pub struct Engine<'a> {
    pub(super) setup: Setup<'a>,
    store: Store<'a>,
    /// The session as recorded so far.
    pub state: State,
    observer: Observer<'a>,
}

impl<'a> Engine<'a> {
    /// A new session: records `Started`.
    pub fn start(
        setup: Setup<'a>,
        meta: Meta,
        observer: Observer<'a>,
    ) -> Result<Self, EngineError> {
        let window = window_of(setup.client, meta.manager_models.first());
        let state = State::new(meta.clone(), window, setup.settings.hard_limit);
        let mut engine = Engine::resume(setup, state, observer)?;
        engine.record(Event::Started { meta, window })?;
        Ok(engine)
    }

    /// A session rebuilt from its record.
    pub fn resume(
        setup: Setup<'a>,
        state: State,
        observer: Observer<'a>,
    ) -> Result<Self, EngineError> {
        let store = Store::open(setup.repo, &state.meta.id)?;
        Ok(Engine {
            setup,
            store,
            state,
            observer,
        })
    }

    /// Records `event`, then applies it and shows it.
    pub(super) fn record(&mut self, event: Event) -> Result<(), EngineError> {
        self.state.apply(&event, crate::clock::now_unix());
        self.store.append(&event, &self.state.summary())?;
        (self.observer)(&event, &self.state);
        Ok(())
    }

    /// Adds `message` to `conv` (delivering `from`'s answer, if it carries one); a user
    /// message joins the last one when that still waits for an answer.
    pub(super) fn message(
        &mut self,
        conv: Conv,
        message: Message,
        from: Option<Conv>,
    ) -> Result<(), EngineError> {
        let merge = message.role == Speaker::User
            && message.tool_result.is_none()
            && self.state.conversation(conv).is_some_and(|c| {
                c.messages
                    .last()
                    .is_some_and(|m| m.role == Speaker::User && m.tool_result.is_none())
            });
        self.record(Event::Message {
            conv,
            message,
            from,
            merge,
        })
    }

    /// A line from the human: to the manager, tagged `Human:` while an orchestrator works.
    pub fn human(&mut self, text: &str) -> Result<(), EngineError> {
        let text = text.trim().to_string();
        let active = self.state.orchestrator.is_some();
        self.record(Event::Human {
            text: text.clone(),
            interjection: false,
        })?;
        let said = if active {
            format!("Human: {text}")
        } else {
            text
        };
        self.message(self.state.manager.conv, Message::user(said), None)
    }

    /// Runs the session until it is the human's turn or it stops.
    pub async fn advance(&mut self, input: &mut dyn HumanInput) -> Result<Outcome, EngineError> {
        loop {
            if let Some(out) = self.step(input).await? {
                return Ok(out);
            }
        }
    }

    /// One step; `Some` when the loop should return.
    async fn step(&mut self, input: &mut dyn HumanInput) -> Result<Option<Outcome>, EngineError> {
        let manager = self.state.manager.conv;
        if !self.state.manager.unanswered().is_empty() {
            return self.run_calls(manager).await;
        }
        // A new orchestrator works until its first answer, which the manager hears with the
        // spawn's result (the seed's router), instead of talking on before it woke.
        if let Some(o) = self.state.orchestrator.clone().filter(|o| !o.answered) {
            if let Some(out) = self.orchestrator_step(o, input).await? {
                return Ok(out);
            }
        }
        if self.state.manager.awaiting() {
            if self.state.manager_full() {
                return self.hand_off_manager().await;
            }
            return self.call(manager).await;
        }
        if let Some(text) = self.state.manager.undelivered().map(str::to_string) {
            let Some(orch) = self.state.orchestrator.as_ref().map(|o| o.conv) else {
                self.record(Event::ToHuman {
                    speaker: "Manager".into(),
                    text,
                })?;
                return Ok(Some(Outcome::HumanTurn));
            };
            let mut text = said(&text);
            if let Some(w) = self.warning_due(orch) {
                self.record(Event::Warned {
                    conv: orch,
                    text: w.clone(),
                })?;
                text = format!("[git triad] {w}\n\n{text}");
            }
            self.message(orch, Message::user(text), Some(manager))?;
            return Ok(None);
        }
        if let Some(o) = self.state.orchestrator.clone() {
            if let Some(out) = self.orchestrator_step(o, input).await? {
                return Ok(out);
            }
        }
        Ok(Some(Outcome::HumanTurn))
    }

    /// The orchestrator's next step: its pending tool calls, its call, or delivering its
    /// answer to the manager (with any interjection waiting). `None`: nothing to do.
    async fn orchestrator_step(
        &mut self,
        orch: super::state::Conversation,
        input: &mut dyn HumanInput,
    ) -> Result<Option<Option<Outcome>>, EngineError> {
        let manager = self.state.manager.conv;
        if !orch.unanswered().is_empty() {
            return self.run_calls(orch.conv).await.map(Some);
        }
        if orch.awaiting() {
            let out = self.call(orch.conv).await?;
            if out.is_none() {
                self.hand_off_if_full()?;
            }
            return Ok(Some(out));
        }
        let Some(text) = orch.undelivered().map(str::to_string) else {
            return Ok(None);
        };
        let Conv::Orchestrator(number) = orch.conv else {
            return Ok(None);
        };
        if orch.meter.pressure() >= Pressure::Critical {
            self.record(Event::HandOff {
                from: number,
                content: handoff::report(&orch, &said(&text)),
                forced: false,
            })?;
        }
        self.message(
            manager,
            Message::user(format!("{}: {}", name(orch.conv), said(&text))),
            Some(orch.conv),
        )?;
        while let Some(line) = input.interjection() {
            self.record(Event::Human {
                text: line.clone(),
                interjection: true,
            })?;
            self.message(manager, Message::user(format!("Human: {line}")), None)?;
        }
        if self.state.exchanges >= self.setup.settings.max_exchanges {
            let why = format!(
                "the manager and {} exchanged {} messages since you last spoke (session.max_exchanges); say how to go on, and the manager answers",
                name(orch.conv),
                self.state.exchanges
            );
            self.record(Event::ToHuman {
                speaker: "git triad".into(),
                text: why,
            })?;
            return Ok(Some(Some(Outcome::HumanTurn)));
        }
        Ok(Some(None))
    }

    /// The context warning `conv` is due, without marking it given.
    pub(super) fn warning_due(&self, conv: Conv) -> Option<String> {
        let mut meter = self.state.conversation(conv)?.meter.clone();
        meter.warning_due().map(str::to_string)
    }

    /// Calls `conv`'s model on its conversation and records the answer.
    pub(super) async fn call(&mut self, conv: Conv) -> Result<Option<Outcome>, EngineError> {
        let Some(c) = self.state.conversation(conv) else {
            return Ok(None);
        };
        let (system, tools) = match conv {
            Conv::Manager(_) => (&self.setup.manager_prompt, tools::manager_tools()),
            Conv::Orchestrator(_) => (&self.setup.orchestrator_prompt, tools::orchestrator_tools()),
        };
        let actions = self
            .setup
            .client
            .resolve(&c.model)
            .is_ok_and(|m| super::action::needed(&m.model));
        let mut req = ChatRequest::new(Some(system.clone()), "", self.setup.settings.max_tokens);
        if actions {
            // Greedy decoding: a small model choosing among tools does best without sampling;
            // past the tool-call limit it can only answer in words.
            req.temperature = Some(0.0);
            let allowed =
                if self.calls_since_message(conv) >= self.setup.settings.max_tool_calls as usize {
                    Vec::new()
                } else {
                    tools.clone()
                };
            req.system = Some(super::action::system(system, &tools));
            req.schema = Some(super::action::schema(&allowed));
            req.messages = super::action::flatten(&c.messages);
        } else {
            req.messages = c.messages.clone();
            req.tools = tools;
        }
        let call_id = format!("act_{}", c.messages.len());
        req.purpose = Some(format!("session {}", name(conv).to_lowercase()));
        let mut r = match self.ask(conv, &req).await? {
            Ok(r) => r,
            Err(e) => return self.stop_on(conv, e).map(Some),
        };
        if actions {
            let (text, calls) = super::action::decode(r.structured.as_ref(), &r.text, call_id);
            r.text = text;
            r.tool_calls = calls;
        }
        // Call ids must be unique in the conversation (Gemini sends none, so every answer's
        // first call would be `call_0`): a repeated id is suffixed.
        if let Some(c) = self.state.conversation(conv) {
            let n = c.messages.len();
            for call in &mut r.tool_calls {
                let seen = c
                    .messages
                    .iter()
                    .any(|m| m.tool_calls.iter().any(|x| x.id == call.id));
                if seen {
                    call.id = format!("{}-{n}", call.id);
                }
            }
        }
        self.message(
            conv,
            Message::assistant_with_calls(r.text, r.tool_calls),
            None,
        )?;
        Ok(None)
    }

    /// Asks `conv`'s model (its current one first, then the role's others) and records what
    /// the answer used; a model error is returned for the caller to decide on.
    pub(super) async fn ask(
        &mut self,
        conv: Conv,
        req: &ChatRequest,
    ) -> Result<Result<crate::model::ChatResponse, ModelError>, EngineError> {
        let (role, configured) = match conv {
            Conv::Manager(_) => (Role::Manager, &self.state.meta.manager_models),
            Conv::Orchestrator(_) => (Role::Orchestrator, &self.state.meta.orchestrator_models),
        };
        let current = self.state.conversation(conv).map(|c| c.model.clone());
        let mut candidates: Vec<String> = current.iter().cloned().collect();
        candidates.extend(
            configured
                .iter()
                .filter(|m| Some(*m) != current.as_ref())
                .cloned(),
        );
        let completion = match self.setup.client.chat(role, &candidates, req).await {
            Ok(c) => c,
            Err(e) => return Ok(Err(e)),
        };
        self.record(Event::Usage {
            conv,
            model: completion.model.clone(),
            window: window_of(self.setup.client, Some(&completion.model)),
            usage: completion.response.usage,
            usd: completion.spend().cost_usd,
        })?;
        Ok(Ok(completion.response))
    }

    /// Records that the session stopped because `conv`'s model could not be asked.
    pub(super) fn stop_on(&mut self, conv: Conv, e: ModelError) -> Result<Outcome, EngineError> {
        let budget = matches!(e, ModelError::Budget(_));
        let why = format!(
            "{} could not be asked: {e}; `git triad session --resume {}` continues from here",
            name(conv),
            self.state.meta.id
        );
        self.record(Event::Stopped { why: why.clone() })?;
        Ok(Outcome::Stopped { why, budget })
    }
}

/// The hand-offs: when a conversation's window is full, who takes over and with what
/// ([`handoff`] writes the texts).
impl Engine<'_> {
    /// Forces the hand-off of the current orchestrator when its window reached the hard
    /// limit.
    pub(super) fn hand_off_if_full(&mut self) -> Result<(), EngineError> {
        if self
            .state
            .orchestrator
            .as_ref()
            .is_some_and(|o| o.meter.must_hand_off())
        {
            self.forced_hand_off()?;
        }
        Ok(())
    }

    /// The orchestrator filled its window to the hard limit: it is released, and the facts
    /// of what it did go to the manager and, with its next spawn, to the next orchestrator.
    fn forced_hand_off(&mut self) -> Result<(), EngineError> {
        let Some(o) = self.state.orchestrator.clone() else {
            return Ok(());
        };
        let Conv::Orchestrator(number) = o.conv else {
            return Ok(());
        };
        let pct = o.meter.percent();
        let content = handoff::facts(&o);
        self.record(Event::HandOff {
            from: number,
            content: content.clone(),
            forced: true,
        })?;
        self.release(
            o.conv,
            &format!("forced hand-off at {pct} % of its context window"),
        )?;
        let notice = format!(
            "[git triad] {} filled {pct} % of its context window and was released without its report (forced hand-off). Spawn the next orchestrator to continue; this hand-off goes into its first message.\n\n{content}",
            name(o.conv)
        );
        self.message(self.state.manager.conv, Message::user(notice), Some(o.conv))
    }

    /// The manager's window is full: it writes a hand-off (unless it is too full even for
    /// that: then the facts do), and a fresh manager takes over with it and with what was
    /// waiting for an answer.
    pub(super) async fn hand_off_manager(&mut self) -> Result<Option<Outcome>, EngineError> {
        let old = self.state.manager.clone();
        let Conv::Manager(n) = old.conv else {
            return Ok(None);
        };
        let waiting = old.waiting_text();
        let pct = old.meter.percent();
        let mut summary = None;
        if old.meter.pressure() < Pressure::HandOff {
            self.message(
                old.conv,
                Message::user(handoff::MANAGER_REQUEST.to_string()),
                None,
            )?;
            let mut req = ChatRequest::new(
                Some(self.setup.manager_prompt.clone()),
                "",
                self.setup.settings.max_tokens,
            );
            req.messages = self.state.manager.messages.clone();
            req.purpose = Some("session manager hand-off".into());
            match self.ask(old.conv, &req).await? {
                Ok(r) => {
                    self.message(old.conv, Message::assistant(r.text.clone()), None)?;
                    if !r.text.trim().is_empty() {
                        summary = Some(r.text);
                    }
                }
                Err(ModelError::Budget(b)) => {
                    return self.stop_on(old.conv, ModelError::Budget(b)).map(Some);
                }
                Err(e) => tracing::warn!(
                    "the manager could not write its hand-off ({e}); the facts go instead"
                ),
            }
        }
        let summary = summary.unwrap_or_else(|| handoff::manager_facts(&self.state));
        let model = self.state.manager.model.clone();
        let text = handoff::manager_preamble(n, pct, &summary, &self.state, &waiting);
        self.record(Event::ManagerHandOff {
            to: n + 1,
            window: window_of(self.setup.client, Some(&model)),
            model,
            summary: text,
        })?;
        Ok(None)
    }
}

/// An answer's text as it is passed on (an empty answer says so).
pub(super) fn said(text: &str) -> String {
    if text.trim().is_empty() {
        "(said nothing)".into()
    } else {
        text.trim().to_string()
    }
}

/// The context window of registry model `name` (the default one when unknown).
pub(super) fn window_of(client: &ModelClient, name: Option<&String>) -> u64 {
    name.and_then(|n| client.resolve(n).ok())
        .map_or(crate::config::schema::DEFAULT_CONTEXT_WINDOW, |m| {
            m.model.window()
        })
}
