//! The session's tool calls: running a conversation's pending calls (with the limits, the
//! refusal of a repeated failing call, and an honest answer for a call a kill interrupted),
//! the manager's routing tools (summoning and releasing orchestrators) and the orchestrator's
//! tools through the [`super::act::Workshop`].

use super::engine::{window_of, Engine, EngineError, Outcome};
use super::record::{name, Conv, Event};
use super::tools::{self, DISCONNECT, SPAWN};
use crate::model::{Message, Speaker, ToolCall};

/// How a repeated failing call is refused, before the failure it repeats.
const REPEATED: &str = "not run again: identical to your previous call, which failed: ";

/// The tag before an interrupted call's result.
const INTERRUPTED: &str = "interrupted: the session was stopped while this call ran; what it did may already be recorded (list_runs, list_tasks)";

impl Engine<'_> {
    /// Runs the unanswered tool calls of `conv`'s last answer, then gives an orchestrator
    /// its context warning, if one is due, after the results.
    pub(super) async fn run_calls(&mut self, conv: Conv) -> Result<Option<Outcome>, EngineError> {
        let calls = self
            .state
            .conversation(conv)
            .map(|c| c.unanswered())
            .unwrap_or_default();
        let limit = self.setup.settings.max_tool_calls as usize;
        let mut spawned = false;
        for call in calls {
            let made = self.calls_since_message(conv);
            let interrupted = self.state.started_calls.contains(&call.id);
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
    pub(super) fn calls_since_message(&self, conv: Conv) -> usize {
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

    pub(super) fn release(&mut self, conv: Conv, why: &str) -> Result<(), EngineError> {
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
}
