//! A session in git: `refs/triad/sessions/<id>`, one commit per event, appended as it
//! happens. The tree holds `session.json` (who, where, and a summary for `session list`) and
//! `events/<n>.json`, one file per event in order, so a kill at any instant loses at most the
//! event being written, and `git log refs/triad/sessions/<id>` lists what happened.

use std::collections::BTreeMap;

use git2::{Oid, Repository};
use serde::{Deserialize, Serialize};

use crate::git::record::Chain;
use crate::git::{self, Context as _, GitError};
use crate::model::{Message, Usage};

/// Where sessions live.
pub const PREFIX: &str = "refs/triad/sessions/";

/// Which conversation an event belongs to: the manager's or an orchestrator's, by number
/// (from 1; a manager that took over from a full one has the next number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conv {
    /// Manager `n`.
    Manager(u32),
    /// Orchestrator `n`.
    Orchestrator(u32),
}

/// What a session is, fixed when it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// The session id.
    pub id: String,
    /// Unix seconds when it started.
    pub started: u64,
    /// The commit the session branch started from.
    pub base: String,
    /// The session branch, where orchestrators commit TaskSpecs (never the user's branch).
    pub branch: String,
    /// The manager role's models, in order of preference.
    pub manager_models: Vec<String>,
    /// The orchestrator role's models, in order of preference.
    pub orchestrator_models: Vec<String>,
}

/// One thing that happened, in the order it happened. Replaying the events rebuilds both
/// conversations exactly ([`super::state::State`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The session began.
    Started {
        /// Who and where.
        meta: Meta,
        /// The first manager's context window, in tokens.
        window: u64,
    },
    /// A line from the human.
    Human {
        /// What they said.
        text: String,
        /// Said while an orchestrator was active (a `+` line): it reaches the manager as
        /// `Human: …` at the next exchange.
        interjection: bool,
    },
    /// A message added to a conversation. `from` names the conversation whose answer it
    /// carries (that answer is then delivered); `merge` adds it to the conversation's last
    /// message, which is still waiting for an answer, instead of starting a new one.
    Message {
        /// The conversation it joins.
        conv: Conv,
        /// The message.
        message: Message,
        /// Whose final answer this delivers, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<Conv>,
        /// Appended to the waiting last message.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        merge: bool,
    },
    /// What a call of `conv` used and cost, as the server reported it.
    Usage {
        /// The conversation.
        conv: Conv,
        /// The registry model that answered.
        model: String,
        /// Its context window in tokens.
        window: u64,
        /// The tokens.
        usage: Usage,
        /// Cost in USD.
        usd: f64,
    },
    /// A context warning given to `conv` (the text is in the message that carries it).
    Warned {
        /// The conversation warned.
        conv: Conv,
        /// The warning.
        text: String,
    },
    /// A tool call began (a kill before its result leaves it unanswered; resume says so).
    ToolStarted {
        /// The conversation that called it.
        conv: Conv,
        /// The call id.
        call_id: String,
        /// The tool.
        name: String,
    },
    /// Orchestrator `number` was summoned; its first message follows as a `Message`.
    Spawned {
        /// Its number.
        number: u32,
        /// The model it starts on.
        model: String,
        /// Its context window in tokens.
        window: u64,
    },
    /// The current orchestrator went out of scope.
    Released {
        /// Its number.
        number: u32,
        /// Why: a new spawn, a disconnect, a forced hand-off.
        why: String,
    },
    /// An orchestrator's hand-off: its own report past 85 %, or at the hard limit the facts
    /// the session gathered (`forced`). The next orchestrator's first message carries it.
    HandOff {
        /// The orchestrator that handed off.
        from: u32,
        /// What the next one needs.
        content: String,
        /// Forced at the hard limit, not reported.
        forced: bool,
    },
    /// The manager's window filled: manager `to` takes over with `summary`.
    ManagerHandOff {
        /// The new manager's number.
        to: u32,
        /// The model it starts on.
        model: String,
        /// Its context window.
        window: u64,
        /// What it is told: the summary and what was waiting for an answer.
        summary: String,
    },
    /// The manager's answer reached the human (or a notice of the session's own did).
    ToHuman {
        /// Who speaks: `Manager` or `git triad`.
        speaker: String,
        /// The text.
        text: String,
    },
    /// The session stopped before the human's turn: a cap, a provider failure, a loop guard.
    Stopped {
        /// Why, and how to go on.
        why: String,
    },
}

/// `session.json`: what `session list` shows without replaying every event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Who and where.
    pub meta: Meta,
    /// Events recorded.
    pub events: u64,
    /// Unix seconds of the last event.
    pub updated: u64,
    /// The human's first line, clipped.
    pub title: String,
    /// Orchestrators summoned so far.
    pub orchestrators: u32,
    /// Managers so far (more than one after a manager hand-off).
    pub managers: u32,
    /// The sessions' own calls' cost in USD.
    pub spent_usd: f64,
    /// Why it last stopped, when it did.
    pub stopped: Option<String>,
}

/// Appends a session's events to its ref.
pub struct Store<'r> {
    chain: Chain<'r>,
    next: u64,
}

impl<'r> Store<'r> {
    /// The record of session `id`, positioned after its last event.
    pub fn open(repo: &'r Repository, id: &str) -> Result<Self, GitError> {
        let chain = Chain::open(repo, format!("{PREFIX}{id}"));
        let next = match chain.exists() {
            true => event_names(repo, chain.refname())?.len() as u64,
            false => 0,
        };
        Ok(Store { chain, next })
    }

    /// Appends `event` and the summary as they now are: one commit.
    pub fn append(&mut self, event: &Event, summary: &Summary) -> Result<(), GitError> {
        let files = BTreeMap::from([
            (format!("events/{:08}.json", self.next), pretty(event)),
            ("session.json".to_string(), pretty(summary)),
        ]);
        let msg = format!("triad session {}: {}\n", summary.meta.id, describe(event));
        self.chain.append(files, &msg)?;
        self.next += 1;
        Ok(())
    }
}

/// A record value as pretty JSON (plain data: serializing it cannot fail).
fn pretty<T: Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_default()
}

/// One line for the commit message of `event`.
fn describe(event: &Event) -> String {
    match event {
        Event::Started { .. } => "started".into(),
        Event::Human { interjection, .. } => {
            if *interjection {
                "the human interjects".into()
            } else {
                "the human speaks".into()
            }
        }
        Event::Message { conv, message, .. } => match message.tool_calls.len() {
            0 => format!("{} gets a {:?} message", name(*conv), message.role).to_lowercase(),
            n => format!("{} calls {n} tool(s)", name(*conv)),
        },
        Event::Usage { conv, usage, .. } => {
            format!("{} used {} tokens", name(*conv), usage.input_tokens)
        }
        Event::Warned { conv, .. } => format!("{} warned about its context", name(*conv)),
        Event::ToolStarted {
            conv, name: tool, ..
        } => format!("{} runs {tool}", name(*conv)),
        Event::Spawned { number, .. } => format!("orchestrator {number} summoned"),
        Event::Released { number, .. } => format!("orchestrator {number} released"),
        Event::HandOff { from, forced, .. } => {
            format!(
                "orchestrator {from} hands off{}",
                if *forced { " (forced)" } else { "" }
            )
        }
        Event::ManagerHandOff { to, .. } => format!("manager {to} takes over"),
        Event::ToHuman { .. } => "the human is answered".into(),
        Event::Stopped { .. } => "stopped".into(),
    }
}

/// `Manager 1`, `Orchestrator II`: how a conversation is named to people.
pub fn name(conv: Conv) -> String {
    match conv {
        Conv::Manager(1) => "Manager".into(),
        Conv::Manager(n) => format!("Manager {}", roman(n)),
        Conv::Orchestrator(n) => format!("Orchestrator {}", roman(n)),
    }
}

/// `n` in Roman numerals (the seed's Orchestrator I, II, III…); plain digits past 3999.
pub fn roman(mut n: u32) -> String {
    if n == 0 || n > 3999 {
        return n.to_string();
    }
    const DIGITS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut s = String::new();
    for (v, d) in DIGITS {
        while n >= v {
            s.push_str(d);
            n -= v;
        }
    }
    s
}

fn event_names(repo: &Repository, refname: &str) -> Result<Vec<(String, Oid)>, GitError> {
    let Some(tip) = git::ref_target(repo, refname) else {
        return Ok(Vec::new());
    };
    let tree = repo
        .find_commit(tip)
        .and_then(|c| c.tree())
        .ctx(format!("reading {refname}"))?;
    let Some(dir) = tree.get_name("events") else {
        return Ok(Vec::new());
    };
    let dir = repo
        .find_tree(dir.id())
        .ctx(format!("reading the events of {refname}"))?;
    let mut names: Vec<(String, Oid)> = dir
        .iter()
        .filter_map(|e| Some((e.name().ok()?.to_string(), e.id())))
        .collect();
    names.sort();
    Ok(names)
}

/// Every event of session `id`, in order; `None` when there is no such session.
pub fn load(repo: &Repository, id: &str) -> Result<Option<Vec<Event>>, GitError> {
    let refname = format!("{PREFIX}{id}");
    if git::ref_target(repo, &refname).is_none() {
        return Ok(None);
    }
    let mut events = Vec::new();
    for (name, oid) in event_names(repo, &refname)? {
        let blob = repo.find_blob(oid).ctx(format!("reading events/{name}"))?;
        let event = serde_json::from_slice(blob.content()).map_err(|e| {
            GitError::Command(format!("events/{name} of {refname} is unreadable: {e}"))
        })?;
        events.push(event);
    }
    Ok(Some(events))
}

/// The summary of every readable session, newest first.
pub fn list(repo: &Repository) -> Vec<Summary> {
    let mut out: Vec<Summary> = Vec::new();
    if let Ok(refs) = repo.references_glob(&format!("{PREFIX}*")) {
        for name in refs
            .flatten()
            .filter_map(|r| r.name().ok().map(str::to_string))
        {
            if let Ok(Some(bytes)) = git::record::read_file(repo, &name, "session.json") {
                if let Ok(s) = serde_json::from_slice::<Summary>(&bytes) {
                    out.push(s);
                }
            }
        }
    }
    out.sort_by(|a, b| (b.meta.started, &b.meta.id).cmp(&(a.meta.started, &a.meta.id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roman_numerals_name_orchestrators_as_the_seed_does() {
        let names: Vec<String> = [1, 2, 3, 4, 9, 14, 40, 3999, 4000]
            .into_iter()
            .map(roman)
            .collect();
        assert_eq!(
            names,
            [
                "I",
                "II",
                "III",
                "IV",
                "IX",
                "XIV",
                "XL",
                "MMMCMXCIX",
                "4000"
            ]
        );
        assert_eq!(name(Conv::Orchestrator(2)), "Orchestrator II");
        assert_eq!(name(Conv::Manager(1)), "Manager");
    }
}
