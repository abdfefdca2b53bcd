//! A session as its events made it (seed 002's AppState): both conversations, who is
//! talking to whom, the context of each. The engine never changes a
//! session but by recording an event and applying it here, so a session rebuilt from its
//! record after a kill is the session that was running.

use super::context::{ContextMeter, Pressure};
use super::record::{Conv, Event, Meta, Summary};
use crate::model::{Message, Speaker, ToolCall};

/// Human lines a session keeps at hand for a manager hand-off written from facts.
pub const HUMAN_KEPT: usize = 20;

/// One model conversation: the manager's or an orchestrator's.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// Which one.
    pub conv: Conv,
    /// The model it runs on (the last that answered).
    pub model: String,
    /// Every message, in order.
    pub messages: Vec<Message>,
    /// How full its window is.
    pub meter: ContextMeter,
    /// Whether its last final answer has gone where it goes.
    pub delivered: bool,
    /// Whether any answer of it was delivered yet (a new orchestrator works until then).
    pub answered: bool,
}

impl Conversation {
    fn new(conv: Conv, model: &str, window: u64, hard_limit: f64) -> Conversation {
        Conversation {
            conv,
            model: model.to_string(),
            messages: Vec::new(),
            meter: ContextMeter::new(window, hard_limit),
            delivered: true,
            answered: false,
        }
    }

    /// Tool calls it made so far.
    pub fn tool_calls(&self) -> usize {
        self.messages.iter().map(|m| m.tool_calls.len()).sum()
    }

    /// Whether its last message waits for the model's answer.
    pub fn awaiting(&self) -> bool {
        self.messages
            .last()
            .is_some_and(|m| m.role != Speaker::Assistant)
    }

    /// The calls of its last answer that have no result yet.
    pub fn unanswered(&self) -> Vec<ToolCall> {
        let Some(at) = self
            .messages
            .iter()
            .rposition(|m| m.role == Speaker::Assistant)
        else {
            return Vec::new();
        };
        let answered: Vec<&str> = self.messages[at + 1..]
            .iter()
            .filter_map(|m| m.tool_result.as_ref().map(|r| r.call_id.as_str()))
            .collect();
        self.messages[at]
            .tool_calls
            .iter()
            .filter(|c| !answered.contains(&c.id.as_str()))
            .cloned()
            .collect()
    }

    /// Its last final answer (an assistant message without tool calls) that is still to be
    /// delivered.
    pub fn undelivered(&self) -> Option<&str> {
        let last = self.messages.last()?;
        (!self.delivered && last.role == Speaker::Assistant && last.tool_calls.is_empty())
            .then_some(last.content.as_str())
    }

    /// Everything said to it since its last answer, as one text: what a fresh conversation
    /// taking over must still answer.
    pub fn waiting_text(&self) -> String {
        let from = self
            .messages
            .iter()
            .rposition(|m| m.role == Speaker::Assistant)
            .map_or(0, |i| i + 1);
        self.messages[from..]
            .iter()
            .map(|m| match &m.tool_result {
                Some(r) => format!("(result of your {} call) {}", r.name, m.content),
                None => m.content.clone(),
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// The whole session.
#[derive(Debug, Clone)]
pub struct State {
    /// Who and where.
    pub meta: Meta,
    /// The manager now talking.
    pub manager: Conversation,
    /// The orchestrator the manager talks to, if one is active.
    pub orchestrator: Option<Conversation>,
    /// Orchestrators summoned so far.
    pub orchestrators: u32,
    /// A hand-off waiting for the next orchestrator's first message.
    pub pending_handoff: Option<String>,
    /// Human lines taken so far.
    pub human_lines: usize,
    /// The human's first line.
    pub title: String,
    /// The human's latest lines (at most [`HUMAN_KEPT`]), for a hand-off written from facts.
    pub human_said: Vec<String>,
    /// Manager-orchestrator exchanges since the human last spoke.
    pub exchanges: u32,
    /// Ids of the calls started and not answered (a kill interrupted them).
    pub started_calls: Vec<String>,
    /// The cost of the session's own calls in USD.
    pub spent_usd: f64,
    /// Why the session last stopped, cleared when the human speaks again.
    pub stopped: Option<String>,
    /// Events applied.
    pub events: u64,
    /// Unix seconds of the last event applied.
    pub updated: u64,
    hard_limit: f64,
}

impl State {
    /// A session that has just started.
    pub fn new(meta: Meta, window: u64, hard_limit: f64) -> State {
        let model = meta.manager_models.first().cloned().unwrap_or_default();
        State {
            manager: Conversation::new(Conv::Manager(1), &model, window, hard_limit),
            orchestrator: None,
            orchestrators: 0,
            pending_handoff: None,
            human_lines: 0,
            title: String::new(),
            human_said: Vec::new(),
            exchanges: 0,
            started_calls: Vec::new(),
            spent_usd: 0.0,
            stopped: None,
            events: 0,
            updated: meta.started,
            meta,
            hard_limit,
        }
    }

    /// The session rebuilt from its events; `None` when they do not start with `Started`.
    pub fn replay(events: &[Event], hard_limit: f64) -> Option<State> {
        let Some(Event::Started { meta, window }) = events.first() else {
            return None;
        };
        let mut state = State::new(meta.clone(), *window, hard_limit);
        for e in events {
            state.apply(e, state.updated);
        }
        Some(state)
    }

    /// The conversation `conv`, if it is the current manager or orchestrator.
    pub fn conversation(&self, conv: Conv) -> Option<&Conversation> {
        if self.manager.conv == conv {
            return Some(&self.manager);
        }
        self.orchestrator.as_ref().filter(|o| o.conv == conv)
    }

    fn conversation_mut(&mut self, conv: Conv) -> Option<&mut Conversation> {
        if self.manager.conv == conv {
            return Some(&mut self.manager);
        }
        self.orchestrator.as_mut().filter(|o| o.conv == conv)
    }

    /// What `session.json` holds now.
    pub fn summary(&self) -> Summary {
        Summary {
            meta: self.meta.clone(),
            events: self.events,
            updated: self.updated,
            title: crate::bounded::clip(&self.title, 120),
            orchestrators: self.orchestrators,
            managers: match self.manager.conv {
                Conv::Manager(n) => n,
                Conv::Orchestrator(_) => 1,
            },
            spent_usd: self.spent_usd,
            stopped: self.stopped.clone(),
        }
    }

    /// Whether the current manager's window is full enough to hand it off.
    pub fn manager_full(&self) -> bool {
        self.manager.meter.pressure() >= Pressure::Critical
    }

    /// Applies one event at unix time `now`.
    pub fn apply(&mut self, event: &Event, now: u64) {
        self.events += 1;
        self.updated = now;
        match event {
            Event::Started { .. } => {}
            Event::Human { text, .. } => {
                if self.human_lines == 0 {
                    self.title = text.clone();
                }
                self.human_lines += 1;
                self.human_said.push(text.clone());
                if self.human_said.len() > HUMAN_KEPT {
                    self.human_said.remove(0);
                }
                self.exchanges = 0;
                self.stopped = None;
            }
            Event::Message {
                conv,
                message,
                from,
                merge,
            } => {
                if let Some(from) = from {
                    if let Some(c) = self.conversation_mut(*from) {
                        c.delivered = true;
                        c.answered = true;
                    }
                    if matches!(from, Conv::Orchestrator(_)) {
                        self.exchanges += 1;
                    }
                }
                let Some(c) = self.conversation_mut(*conv) else {
                    return;
                };
                match c.messages.last_mut() {
                    Some(last) if *merge && last.role == Speaker::User => {
                        last.content.push_str("\n\n");
                        last.content.push_str(&message.content);
                    }
                    _ => c.messages.push(message.clone()),
                }
                if message.role == Speaker::Assistant {
                    c.delivered = !message.tool_calls.is_empty();
                }
                if let Some(r) = &message.tool_result {
                    self.started_calls.retain(|id| *id != r.call_id);
                }
            }
            Event::Usage {
                conv,
                model,
                window,
                usage,
                usd,
            } => {
                self.spent_usd += usd;
                let hard_limit = self.hard_limit;
                if let Some(c) = self.conversation_mut(*conv) {
                    if c.meter.window() != *window {
                        c.meter = c.meter.resized(*window, hard_limit);
                    }
                    c.meter.observe(usage);
                    c.model = model.clone();
                }
            }
            Event::Warned { conv, .. } => {
                if let Some(c) = self.conversation_mut(*conv) {
                    c.meter.warning_due();
                }
            }
            Event::ToolStarted { call_id, .. } => self.started_calls.push(call_id.clone()),
            Event::Spawned {
                number,
                model,
                window,
            } => {
                self.orchestrators = self.orchestrators.max(*number);
                self.orchestrator = Some(Conversation::new(
                    Conv::Orchestrator(*number),
                    model,
                    *window,
                    self.hard_limit,
                ));
                self.pending_handoff = None;
            }
            Event::Released { number, .. } => {
                if self
                    .orchestrator
                    .as_ref()
                    .is_some_and(|o| o.conv == Conv::Orchestrator(*number))
                {
                    self.orchestrator = None;
                }
            }
            Event::HandOff { content, from, .. } => {
                self.pending_handoff = Some(format!(
                    "## Hand-off from {}\n\n{content}",
                    super::record::name(Conv::Orchestrator(*from))
                ));
            }
            Event::ManagerHandOff {
                to,
                model,
                window,
                summary,
            } => {
                let mut next =
                    Conversation::new(Conv::Manager(*to), model, *window, self.hard_limit);
                next.messages.push(Message::user(summary.clone()));
                self.manager = next;
            }
            Event::ToHuman { .. } => {
                self.manager.delivered = true;
                self.exchanges = 0;
            }
            Event::Stopped { why } => self.stopped = Some(why.clone()),
        }
    }
}
