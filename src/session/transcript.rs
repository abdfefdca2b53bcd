//! A session as people read it: one line (or a few) per event, the seed's tagged speakers
//! (`You:`, `Manager:`, `Orchestrator II:`), tool calls as `◈ run_pipeline (3)`, and the
//! session's own notices as `git triad:`. The headless transcript and `session show` are both
//! this, event by event.

use super::record::{name, Conv, Event};
use super::state::State;
use crate::model::Speaker;

/// The lines `event` shows, given the session `state` after it was applied.
pub fn lines(event: &Event, state: &State) -> Vec<String> {
    match event {
        Event::Started { meta, .. } => vec![format!(
            "git triad: session {} on branch {} (manager: {}; orchestrators: {})",
            meta.id,
            meta.branch,
            meta.manager_models.join(", "),
            meta.orchestrator_models.join(", ")
        )],
        Event::Human { text, interjection } => vec![if *interjection {
            format!("You (interjecting): {text}")
        } else {
            format!("You: {text}")
        }],
        Event::Message {
            conv,
            message,
            from,
            ..
        } => message_lines(*conv, message, *from, state),
        Event::Usage { .. } | Event::ToolStarted { .. } => Vec::new(),
        Event::Warned { conv, text } => vec![format!(
            "git triad: {} is at {} % of its context window: {text}",
            name(*conv),
            state.conversation(*conv).map_or(0, |c| c.meter.percent())
        )],
        Event::Spawned { number, model, .. } => vec![format!(
            "git triad: {} awakens ({model})",
            name(Conv::Orchestrator(*number))
        )],
        Event::Released { number, why } => vec![format!(
            "git triad: {} is released ({why})",
            name(Conv::Orchestrator(*number))
        )],
        Event::HandOff { from, forced, .. } => vec![format!(
            "git triad: {} hands off{}",
            name(Conv::Orchestrator(*from)),
            if *forced {
                ", forced at the hard limit: the facts of its record go to the next one"
            } else {
                " with its report"
            }
        )],
        Event::ManagerHandOff { to, model, .. } => vec![format!(
            "git triad: the manager's window filled; {} takes over ({model}) with its hand-off",
            name(Conv::Manager(*to))
        )],
        Event::ToHuman { speaker, text } => vec![format!("{speaker}: {text}")],
        Event::Stopped { why } => vec![format!("git triad: stopped: {why}")],
    }
}

fn message_lines(
    conv: Conv,
    message: &crate::model::Message,
    from: Option<Conv>,
    state: &State,
) -> Vec<String> {
    let text = message.content.trim();
    if let Some(r) = &message.tool_result {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let mark = if r.is_error { "✗" } else { "→" };
        return vec![format!("    {mark} {}", crate::bounded::clip(first, 160))];
    }
    if message.role == Speaker::Assistant {
        let count = state.conversation(conv).map_or(0, |c| c.tool_calls());
        let n = message.tool_calls.len();
        // What a model says beside its tool calls reaches nobody else: it is shown here.
        let said = (n > 0 && !text.is_empty()).then(|| format!("{}: {text}", name(conv)));
        return said
            .into_iter()
            .chain(message.tool_calls.iter().enumerate().map(|(i, c)| {
                format!(
                    "  ◈ {}: {} ({})",
                    name(conv),
                    c.name,
                    count.saturating_sub(n) + i + 1
                )
            }))
            .collect();
    }
    match from {
        Some(Conv::Manager(_)) => vec![format!("Manager → {}: {text}", name(conv))],
        Some(Conv::Orchestrator(_)) if text.starts_with("[git triad]") => {
            vec![format!(
                "git triad: {}",
                text.trim_start_matches("[git triad]").trim()
            )]
        }
        Some(Conv::Orchestrator(_)) => vec![text.to_string()],
        // The human's lines show as their own events, the warnings as `Warned`.
        None => Vec::new(),
    }
}

/// Where a recorded session stands, in words, for the one who resumes it.
pub fn standing(state: &State) -> String {
    let working = !state.manager.unanswered().is_empty()
        || state.manager.awaiting()
        || state.orchestrator.as_ref().is_some_and(|o| {
            !o.unanswered().is_empty() || o.awaiting() || o.undelivered().is_some()
        });
    if let Some(why) = &state.stopped {
        format!("it had stopped ({why}); it goes on from there")
    } else if !state.started_calls.is_empty() {
        "a tool call was cut off: the model is told, and the work goes on".into()
    } else if working {
        "it was at work: it goes on where the record ends".into()
    } else {
        "it waits for you: the manager had answered (its last words are below); your next line goes on".into()
    }
}

/// The last `n` lines of a transcript, the session's own notices left out unless nothing
/// else is there: what was said last.
pub fn recap(lines: &[String], n: usize) -> Vec<String> {
    let said: Vec<&String> = lines
        .iter()
        .filter(|l| !l.starts_with("git triad:") && !l.trim_start().starts_with('→'))
        .collect();
    let from = said.len().saturating_sub(n);
    said[from..].iter().map(|l| l.to_string()).collect()
}
