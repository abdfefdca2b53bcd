//! The session loop (seed 002's router): who speaks next, where each answer goes, when a
//! conversation is warned or handed off. Every step is an event recorded before it is
//! applied, so the loop can stop at any instant and [`Engine::advance`] picks up from the
//! record exactly where it was.

use super::act::Workshop;
use super::context::Pressure;
use super::record::{name, Conv, Event, Meta, Store};
use super::state::State;
use super::tools::{self, DISCONNECT, SPAWN};
use crate::config::schema::{Role, SessionConfig};
use crate::git::GitError;
use crate::model::{ChatRequest, Message, ModelClient, ModelError, Speaker, ToolCall};

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
    setup: Setup<'a>,
    store: Store<'a>,
    /// The session as recorded so far.
    pub state: State,
    observer: Observer<'a>,
}

/// How a repeated failing call is refused, before the failure it repeats.
const REPEATED: &str = "not run again: identical to your previous call, which failed: ";

/// The tag before an interrupted call's result.
const INTERRUPTED: &str = "interrupted: the session was stopped while this call ran; what it did may already be recorded (list_runs, list_tasks)";

impl<'a> Engine<'a> {
    /// A new session: records `Started`.
    pub fn start(
        setup: Setup<'a>,
        repo: &'a git2::Repository,
        meta: Meta,
        observer: Observer<'a>,
    ) -> Result<Engine<'a>, EngineError> {
        let window = window_of(setup.client, meta.manager_models.first());
        let state = State::new(meta.clone(), window, setup.settings.hard_limit);
        let store = Store::open(repo, &meta.id)?;
        let mut engine = Engine {
            setup,
            store,
            state,
            observer,
        };
        engine.state.events = 0;
        engine.record(Event::Started { meta, window })?;
        Ok(engine)
    }

    /// A session rebuilt from its record.
    pub fn resume(
        setup: Setup<'a>,
        repo: &'a git2::Repository,
        state: State,
        observer: Observer<'a>,
    ) -> Result<Engine<'a>, EngineError> {
        let store = Store::open(repo, &state.meta.id)?;
        Ok(Engine {
            setup,
            store,
            state,
            observer,
        })
    }

    /// Records `event`, then applies it and shows it.
    fn record(&mut self, event: Event) -> Result<(), EngineError> {
        self.state.apply(&event, crate::notes::now_unix());
        self.store.append(&event, &self.state.summary())?;
        (self.observer)(&event, &self.state);
        Ok(())
    }

    fn message(
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
                content: said(&text),
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

    fn warning_due(&self, conv: Conv) -> Option<String> {
        let mut meter = self.state.conversation(conv)?.meter.clone();
        meter.warning_due().map(str::to_string)
    }

    /// Calls `conv`'s model on its conversation and records the answer.
    async fn call(&mut self, conv: Conv) -> Result<Option<Outcome>, EngineError> {
        let Some(c) = self.state.conversation(conv) else {
            return Ok(None);
        };
        let (role, system, tools, configured) = match conv {
            Conv::Manager(_) => (
                Role::Manager,
                &self.setup.manager_prompt,
                tools::manager_tools(),
                &self.state.meta.manager_models,
            ),
            Conv::Orchestrator(_) => (
                Role::Orchestrator,
                &self.setup.orchestrator_prompt,
                tools::orchestrator_tools(),
                &self.state.meta.orchestrator_models,
            ),
        };
        let mut candidates = vec![c.model.clone()];
        candidates.extend(configured.iter().filter(|m| **m != c.model).cloned());
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
        let answer = self.setup.client.chat(role, &candidates, &req).await;
        let completion = match answer {
            Ok(c) => c,
            Err(e) => return self.stop_on(conv, e).map(Some),
        };
        let spend = completion.spend();
        self.record(Event::Usage {
            conv,
            model: completion.model.clone(),
            window: window_of(self.setup.client, Some(&completion.model)),
            usage: completion.response.usage,
            usd: spend.cost_usd,
        })?;
        let mut r = completion.response;
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

    fn stop_on(&mut self, conv: Conv, e: ModelError) -> Result<Outcome, EngineError> {
        let budget = matches!(e, ModelError::Budget(_));
        let why = format!(
            "{} could not be asked: {e}; `git triad session --resume {}` continues from here",
            name(conv),
            self.state.meta.id
        );
        self.record(Event::Stopped { why: why.clone() })?;
        Ok(Outcome::Stopped { why, budget })
    }

    /// Runs the unanswered tool calls of `conv`'s last answer, then gives an orchestrator
    /// its context warning, if one is due, after the results.
    async fn run_calls(&mut self, conv: Conv) -> Result<Option<Outcome>, EngineError> {
        let calls = self
            .state
            .conversation(conv)
            .map(|c| c.unanswered())
            .unwrap_or_default();
        let limit = self.setup.settings.max_tool_calls as usize;
        let mut spawned = false;
        for call in calls {
            let made = self.calls_since_message(conv);
            let interrupted = self
                .state
                .started_calls
                .iter()
                .any(|(_, id, _)| *id == call.id);
            let result = if interrupted {
                Err(INTERRUPTED.to_string())
            } else if spawned {
                Err(format!("not run: {} answers first; call it again after that answer if it is still needed", self.state.orchestrator.as_ref().map_or("the new orchestrator".to_string(), |o| name(o.conv))))
            } else if made > limit + 5 {
                let why = format!(
                    "{} kept calling tools past session.max_tool_calls ({limit}) after being told to answer; `git triad session --resume {}` continues",
                    name(conv),
                    self.state.meta.id
                );
                self.record(Event::Stopped { why: why.clone() })?;
                return Ok(Some(Outcome::Stopped { why, budget: false }));
            } else if made > limit {
                Err(format!("the limit of {limit} tool calls for one message is reached (session.max_tool_calls): answer in text now"))
            } else if let Some(why) = self.repeated_failure(conv, &call) {
                Err(format!(
                    "{REPEATED}{why} Change the arguments, do something else, or answer in text."
                ))
            } else {
                self.record(Event::ToolStarted {
                    conv,
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                })?;
                let out = self.execute(conv, &call).await?;
                spawned = call.name == SPAWN && out.is_ok() && matches!(conv, Conv::Manager(_));
                out
            };
            // The spawn or a disconnect may have released this very conversation.
            if self.state.conversation(conv).is_none() {
                return Ok(None);
            }
            let answer = match result {
                Ok(out) => Message::tool_result(&call, out),
                Err(why) => Message::tool_error(&call, why),
            };
            self.message(conv, answer, None)?;
        }
        if matches!(conv, Conv::Orchestrator(_)) {
            if let Some(w) = self.warning_due(conv) {
                self.record(Event::Warned {
                    conv,
                    text: w.clone(),
                })?;
                self.message(conv, Message::user(format!("[git triad] {w}")), None)?;
            }
        }
        Ok(None)
    }

    /// The first line of the failure of `conv`'s previous tool call, when `call` is the
    /// same call again: a model that repeats a failing call verbatim is not indulged.
    fn repeated_failure(&self, conv: Conv, call: &ToolCall) -> Option<String> {
        let c = self.state.conversation(conv)?;
        let mut calls = c
            .messages
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .filter(|x| x.id != call.id);
        let prev = calls.next_back()?;
        if prev.name != call.name || prev.arguments != call.arguments {
            return None;
        }
        let result = c
            .messages
            .iter()
            .find(|m| m.tool_result.as_ref().is_some_and(|r| r.call_id == prev.id))?;
        let r = result.tool_result.as_ref()?;
        r.is_error.then(|| {
            let mut first = result.content.lines().next().unwrap_or("").trim();
            while let Some(rest) = first.strip_prefix(REPEATED) {
                first = rest;
            }
            crate::bounded::clip(first, 300)
        })
    }

    /// Tool calls `conv` made since it last got a message that was not a tool result.
    fn calls_since_message(&self, conv: Conv) -> usize {
        let Some(c) = self.state.conversation(conv) else {
            return 0;
        };
        let from = c
            .messages
            .iter()
            .rposition(|m| m.role == Speaker::User)
            .map_or(0, |i| i + 1);
        c.messages[from..].iter().map(|m| m.tool_calls.len()).sum()
    }

    async fn execute(
        &mut self,
        conv: Conv,
        call: &ToolCall,
    ) -> Result<Result<String, String>, EngineError> {
        Ok(match (conv, call.name.as_str()) {
            (Conv::Manager(_), SPAWN) => match tools::arg(&call.arguments, "prompt") {
                Ok(prompt) => Ok(self.spawn(prompt)?),
                Err(e) => Err(e),
            },
            (Conv::Manager(_), DISCONNECT) => {
                match self.state.orchestrator.as_ref().map(|o| o.conv) {
                    Some(o) => {
                        self.release(o, "the manager disconnected")?;
                        Ok("The threads are severed. You speak to the mortal once more.".into())
                    }
                    None => {
                        Err("no orchestrator is active: your words already reach the human".into())
                    }
                }
            }
            (Conv::Orchestrator(_), SPAWN | DISCONNECT) => {
                Err(format!("`{}` is the manager's tool, not yours", call.name))
            }
            (Conv::Manager(_), n @ ("list_tasks" | "list_runs" | "show_run")) => {
                self.setup.workshop.call(n, &call.arguments).await
            }
            (Conv::Manager(_), other) => Err(format!("there is no tool `{other}` for the manager")),
            (Conv::Orchestrator(_), other) => {
                self.setup.workshop.call(other, &call.arguments).await
            }
        })
    }

    fn release(&mut self, conv: Conv, why: &str) -> Result<(), EngineError> {
        if let Conv::Orchestrator(number) = conv {
            self.record(Event::Released {
                number,
                why: why.to_string(),
            })?;
        }
        Ok(())
    }

    /// Summons the next orchestrator with `prompt` and any hand-off waiting for it.
    fn spawn(&mut self, prompt: &str) -> Result<String, EngineError> {
        let number = self.state.orchestrators + 1;
        if let Some(o) = self.state.orchestrator.as_ref().map(|o| o.conv) {
            self.release(
                o,
                &format!("{} was summoned", name(Conv::Orchestrator(number))),
            )?;
        }
        let mut first = prompt.trim().to_string();
        if let Some(handoff) = self.state.pending_handoff.clone() {
            first = format!("{first}\n\n{handoff}");
        }
        let model = self
            .state
            .meta
            .orchestrator_models
            .first()
            .cloned()
            .unwrap_or_default();
        let window = window_of(self.setup.client, Some(&model));
        self.record(Event::Spawned {
            number,
            model,
            window,
        })?;
        self.message(Conv::Orchestrator(number), Message::user(first), None)?;
        Ok(format!(
            "{} awakens. Your words now reach them.",
            name(Conv::Orchestrator(number))
        ))
    }

    fn hand_off_if_full(&mut self) -> Result<(), EngineError> {
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
        let content = super::handoff::facts(&o);
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
    async fn hand_off_manager(&mut self) -> Result<Option<Outcome>, EngineError> {
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
                Message::user(super::handoff::MANAGER_REQUEST.to_string()),
                None,
            )?;
            let mut req = ChatRequest::new(
                Some(self.setup.manager_prompt.clone()),
                "",
                self.setup.settings.max_tokens,
            );
            req.messages = self.state.manager.messages.clone();
            req.purpose = Some("session manager hand-off".into());
            let mut candidates = vec![old.model.clone()];
            candidates.extend(
                self.state
                    .meta
                    .manager_models
                    .iter()
                    .filter(|m| **m != old.model)
                    .cloned(),
            );
            match self
                .setup
                .client
                .chat(Role::Manager, &candidates, &req)
                .await
            {
                Ok(c) => {
                    self.record(Event::Usage {
                        conv: old.conv,
                        model: c.model.clone(),
                        window: window_of(self.setup.client, Some(&c.model)),
                        usage: c.response.usage,
                        usd: c.spend().cost_usd,
                    })?;
                    self.message(old.conv, Message::assistant(c.response.text.clone()), None)?;
                    if !c.response.text.trim().is_empty() {
                        summary = Some(c.response.text);
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
        let summary = summary.unwrap_or_else(|| super::handoff::manager_facts(&self.state));
        let model = self.state.manager.model.clone();
        let text = super::handoff::manager_preamble(n, pct, &summary, &self.state, &waiting);
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
fn said(text: &str) -> String {
    if text.trim().is_empty() {
        "(said nothing)".into()
    } else {
        text.trim().to_string()
    }
}

/// The context window of registry model `name` (the default one when unknown).
fn window_of(client: &ModelClient, name: Option<&String>) -> u64 {
    name.and_then(|n| client.resolve(n).ok())
        .map_or(crate::config::schema::DEFAULT_CONTEXT_WINDOW, |m| {
            m.model.window()
        })
}
