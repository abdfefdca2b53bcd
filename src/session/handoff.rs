//! What a conversation that is handed off passes on. An orchestrator past 85 % reports in
//! its own words; one stopped at the hard limit passes the facts of its record instead: the
//! tools it called and what they answered. A manager whose window fills writes a hand-off
//! for a fresh manager, or, too full even for that, the facts go. The texts only: when a
//! hand-off happens is the engine's ([`super::engine`]).

use super::record::{name, Conv};
use super::state::{Conversation, State};
use crate::model::Speaker;

/// What a full manager is asked before a fresh one takes over.
pub const MANAGER_REQUEST: &str = "[git triad] Your context window is nearly full: a fresh manager takes over after this answer, knowing only what you write now. Write the hand-off, no tools: what the human wants and prefers, what has been done (tasks, runs and their verdicts), what remains, which orchestrator is active and what it is doing.";

/// Most tool calls a forced hand-off lists.
const CALLS_LISTED: usize = 30;

/// The facts of what orchestrator `o` did: each tool call with the first line of its answer,
/// and its last words.
pub fn facts(o: &Conversation) -> String {
    let last = o
        .messages
        .iter()
        .rev()
        .find(|m| m.role == Speaker::Assistant && !m.content.trim().is_empty())
        .map_or("(none)".to_string(), |m| {
            crate::bounded::clip(m.content.trim(), 1000)
        });
    record_of(o, &format!("Its last words: {last}"))
}

/// An orchestrator's own report past 85 %, whole, followed by what its record shows: the
/// next orchestrator gets the claim and the facts to check it by.
pub fn report(o: &Conversation, report: &str) -> String {
    record_of(
        o,
        &format!("Its report, in its own words:\n{}", report.trim()),
    )
}

/// The tool calls of `o` with the first line of each answer, `said`, and `o`'s task.
fn record_of(o: &Conversation, said: &str) -> String {
    let mut lines = Vec::new();
    for (i, m) in o.messages.iter().enumerate() {
        for call in &m.tool_calls {
            let answer = o.messages[i + 1..]
                .iter()
                .find(|r| r.tool_result.as_ref().is_some_and(|t| t.call_id == call.id));
            let first = answer
                .map(|r| {
                    let line = r
                        .content
                        .lines()
                        .find(|l| !l.trim().is_empty())
                        .unwrap_or("");
                    let failed = r.tool_result.as_ref().is_some_and(|t| t.is_error);
                    format!(
                        "{}{}",
                        if failed { "failed: " } else { "" },
                        crate::bounded::clip(line, 200)
                    )
                })
                .unwrap_or_else(|| "no answer".into());
            lines.push(format!(
                "- {} {} → {first}",
                call.name,
                crate::bounded::clip(&call.arguments.to_string(), 200)
            ));
        }
    }
    let total = lines.len();
    if total > CALLS_LISTED {
        lines.drain(..total - CALLS_LISTED);
        lines.insert(
            0,
            format!("- ({} earlier calls left out)", total - CALLS_LISTED),
        );
    }
    let task = o.messages.first().map_or(String::new(), |m| {
        crate::bounded::clip(m.content.trim(), 1500)
    });
    format!(
        "What the record shows {} did ({} tool calls):\n{}\n\n{said}\n\nIts task was:\n{task}",
        name(o.conv),
        total,
        if lines.is_empty() {
            "- nothing".to_string()
        } else {
            lines.join("\n")
        }
    )
}

/// The facts a manager too full to write its hand-off passes on.
pub fn manager_facts(state: &State) -> String {
    let said: Vec<String> = state
        .human_said
        .iter()
        .map(|l| format!("- {}", crate::bounded::clip(l, 300)))
        .collect();
    let mut s = format!(
        "(written by git triad from the record: the manager was too full to write it)\nThe human said ({} lines; the latest {} here):\n{}\n",
        state.human_lines,
        said.len(),
        said.join("\n")
    );
    s.push_str(&format!(
        "Orchestrators summoned so far: {}.\n",
        state.orchestrators
    ));
    if let Some(o) = &state.orchestrator {
        s.push_str(&format!("\n{}", facts(o)));
    }
    s
}

/// The first message of the manager that takes over from manager `n`.
pub fn manager_preamble(n: u32, pct: u32, summary: &str, state: &State, waiting: &str) -> String {
    let active = match &state.orchestrator {
        Some(o) => format!(
            "{} is active: your answers go to it, and its answers come to you.",
            name(o.conv)
        ),
        None => "No orchestrator is active: your answers go to the human.".into(),
    };
    let mut s = format!(
        "[git triad] You take over as the manager from {}, whose context window filled ({pct} %). Its hand-off:\n\n{}\n\n{active}",
        name(Conv::Manager(n)),
        summary.trim()
    );
    if !waiting.trim().is_empty() {
        s.push_str(&format!(
            "\n\nWhat was waiting for an answer:\n\n{}",
            waiting.trim()
        ));
    }
    s
}
