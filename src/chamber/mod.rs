//! The deliberation chamber (seed 003): for a decision with no single right answer, two or
//! three models answer the same question alone, disagreement is detected by written rules,
//! one round of cross-examination follows it, and an arbiter synthesizes: weighing evidence,
//! keeping the minority, signing its name, and saying so when there is no consensus.
//!
//! A session is data ([`Session`]), advanced by [`engine`] one phase at a time and stored by
//! [`store`] as one commit per phase under `refs/triad/chamber/<id>`. The founder's part
//! (approval, input, action) is in [`founder`]; the caps in [`limits`]; the rules that decide
//! whether the panel disagrees in [`divergence`].

pub mod answer;
pub mod brief;
pub mod divergence;
pub mod engine;
pub mod facts;
pub mod founder;
pub mod limits;
pub mod open;
pub mod stats;
pub mod store;
pub mod trace;

use serde::{Deserialize, Serialize};

use crate::model::Spend;

pub use answer::{FounderInput, PanelAnswer, Synthesis};
pub use divergence::RuleResult;

/// The seed's answer when the arbiter finds no consensus (with the number of perspectives).
pub fn no_consensus_text(perspectives: usize) -> String {
    let n = match perspectives {
        2 => "Two".to_string(),
        3 => "Three".to_string(),
        n => n.to_string(),
    };
    format!(
        "Chamber could not reach arbitrated consensus. {n} qualified perspectives disagree \
         substantively. Founder review recommended."
    )
}

/// How much a decision matters, per the criticality policy.
/// The words a Level 2 session's criteria gain when its arbiter's confidence escalates it.
pub const ESCALATED: &str = "escalated to Level 3";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// Auto-quorum: no founder; an arbiter confidence of 8/10 or more accepts, less escalates.
    #[serde(rename = "2")]
    Two,
    /// Full quorum with the founder, who approves the cost first.
    #[serde(rename = "3")]
    Three,
}

impl Level {
    /// `2` or `3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Two => "2",
            Level::Three => "3",
        }
    }
}

/// The founder's part in a Level 3 session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FounderRole {
    /// Approves the session and acts on its synthesis.
    Approver,
    /// Challenges the synthesis: the panel answers again with the challenge (two rounds at
    /// most), and the session resolves to GO, NO-GO or NEED MORE DATA.
    Challenger,
    /// Gives a structured input the arbiter weighs like an expert's, not as an order.
    Contributor,
    /// Makes a claim the panel checks as a hypothesis; claim and outcome are both kept.
    Verifier,
}

impl FounderRole {
    /// The seed's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FounderRole::Approver => "approver",
            FounderRole::Challenger => "challenger",
            FounderRole::Contributor => "contributor",
            FounderRole::Verifier => "verifier",
        }
    }
}

/// What the founder did, as the trace's `founder_action`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FounderAction {
    /// Took the synthesis as it is.
    Accepted,
    /// Took it with changes.
    Revised,
    /// Did not take it.
    Rejected,
    /// Challenged it (the panel answered again).
    Challenged,
    /// Gave input the arbiter weighed.
    Contributed,
    /// Had a claim checked.
    Verified,
}

impl FounderAction {
    /// The seed's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FounderAction::Accepted => "accepted",
            FounderAction::Revised => "revised",
            FounderAction::Rejected => "rejected",
            FounderAction::Challenged => "challenged",
            FounderAction::Contributed => "contributed",
            FounderAction::Verified => "verified",
        }
    }
}

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Phases are still to run (a killed session resumes here).
    Open,
    /// Waiting for the founder's input (`chamber respond`).
    AwaitingInput,
    /// A synthesis (or the honest "no consensus") waits for the founder's action.
    AwaitingAction,
    /// Level 2 accepted it automatically (arbiter confidence 8/10 or more).
    AutoAccepted,
    /// The founder acted on it.
    Closed,
    /// Stopped before a synthesis: a cap, or fewer than two panelists answered.
    Stopped,
}

impl Status {
    /// The name shown in lists.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Open => "open",
            Status::AwaitingInput => "awaiting input",
            Status::AwaitingAction => "awaiting action",
            Status::AutoAccepted => "auto-accepted",
            Status::Closed => "closed",
            Status::Stopped => "stopped",
        }
    }
}

/// Why the level is what it is (the criticality assessment of the trace).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Assessment {
    /// The level chosen.
    pub level: Level,
    /// Which criteria fired, in words.
    pub criteria: Vec<String>,
    /// Who decided: `--level`, a run's stage, or a Level 2 escalation.
    pub source: String,
}

/// One piece of context every panelist gets, identically.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextItem {
    /// What it is: a file path, `rev:<rev>`, `task:<slug>`, `run:<id>`.
    pub label: String,
    /// The text as the panel saw it (clipped; private files withheld).
    pub text: String,
}

/// One model call of a session, kept verbatim with what the facts were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// The registry name of the model asked.
    pub model: String,
    /// The id sent on the wire.
    #[serde(default)]
    pub requested_id: String,
    /// The id the server answered with, if it said one.
    #[serde(default)]
    pub reported_id: Option<String>,
    /// The server answered as a different model than asked (shown, never silently taken).
    #[serde(default)]
    pub model_mismatch: bool,
    /// The answer as JSON, when there is one.
    #[serde(default)]
    pub answer: Option<serde_json::Value>,
    /// Why there is no answer (timeout, provider error, schema, a cap).
    #[serde(default)]
    pub failure: Option<String>,
    /// What the call cost.
    #[serde(default)]
    pub spend: Spend,
}

impl Turn {
    /// The panel answer of this turn, if it has one.
    pub fn panel_answer(&self) -> Option<PanelAnswer> {
        self.answer
            .as_ref()
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    }
}

/// The panelists who answered, with their answers, in panel order.
pub fn answered(turns: &[Turn]) -> Vec<(String, PanelAnswer)> {
    turns
        .iter()
        .filter_map(|t| t.panel_answer().map(|a| (t.model.clone(), a)))
        .collect()
}

/// Each panelist's last word in a round: after cross-examination if it answered there,
/// else its independent answer.
pub fn final_answers(round: &Round) -> Vec<(String, PanelAnswer)> {
    answered(&round.answers)
        .into_iter()
        .map(|(m, a)| {
            let later = round
                .cross
                .iter()
                .find(|t| t.model == m)
                .and_then(Turn::panel_answer);
            (m, later.unwrap_or(a))
        })
        .collect()
}

/// One pass of the panel: independent answers, the divergence check, at most one
/// cross-examination, the arbiter's synthesis. A challenge adds another round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Round {
    /// `initial`, `challenge 1`, `challenge 2`.
    pub kind: String,
    /// What the founder added for this round (a challenge, a verified claim).
    #[serde(default)]
    pub added_context: Option<String>,
    /// The independent answers (phase 1), one per panelist.
    #[serde(default)]
    pub answers: Vec<Turn>,
    /// The arbiter's initial assessment of disagreement.
    #[serde(default)]
    pub assessment: Option<Turn>,
    /// Every divergence rule with its result (set once evaluated).
    #[serde(default)]
    pub divergence: Option<Vec<RuleResult>>,
    /// The cross-examination answers (empty: none was held).
    #[serde(default)]
    pub cross: Vec<Turn>,
    /// Whether the cross-examination round is done (or was not needed).
    #[serde(default)]
    pub cross_done: bool,
    /// Verifier mode: each panelist's check of the founder's claim.
    #[serde(default)]
    pub checks: Vec<Turn>,
    /// The arbiter's synthesis call (its answer verbatim, as claimed).
    #[serde(default)]
    pub synthesis: Option<Turn>,
    /// The synthesis after the fact checks (what the session stands on).
    #[serde(default)]
    pub effective: Option<Synthesis>,
    /// When the arbiter is also a panelist and the panel diverged: whether the synthesis
    /// took the arbiter's own panelist stance (`chamber stats` warns above 50 %).
    #[serde(default)]
    pub arbiter_view_won: Option<bool>,
}

/// A verifier-mode claim and what the panel found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The founder's claim, verbatim.
    pub claim: FounderInput,
    /// `verified` or `falsified` when every panelist who checked it agrees, else
    /// `undetermined`.
    pub outcome: String,
    /// What the check was given besides the claim, read and run by git triad, not by a
    /// model: the files and revisions the claim's evidence names, and the repository's
    /// tests run in the box at HEAD. Each checker is asked to cite them by label.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<ContextItem>,
}

/// One founder action, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionEntry {
    /// What was done.
    pub action: FounderAction,
    /// Their note.
    #[serde(default)]
    pub note: Option<String>,
    /// When (RFC 3339, UTC).
    pub at: String,
}

/// A whole session: everything the trace keeps (seed 003, Audit Trail).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// `YYYYMMDD-HHMMSS-xxxx`.
    pub id: String,
    /// When it started (RFC 3339, UTC).
    pub created: String,
    /// When it started (Unix seconds), for the daily and monthly caps.
    pub created_unix: u64,
    /// The exact question.
    pub question: String,
    /// The exact context.
    #[serde(default)]
    pub context: Vec<ContextItem>,
    /// The criticality assessment.
    pub assessment: Assessment,
    /// The founder's role (required at Level 3).
    #[serde(default)]
    pub founder_role: Option<FounderRole>,
    /// The panel asked, in order.
    pub panel: Vec<String>,
    /// The arbiter, named in every report.
    pub arbiter: String,
    /// The arbiter is also on the panel: its prompt carries the conflict-of-interest clause.
    #[serde(default)]
    pub arbiter_is_panelist: bool,
    /// The rounds, in order.
    #[serde(default)]
    pub rounds: Vec<Round>,
    /// The founder's structured input (contributor), verbatim.
    #[serde(default)]
    pub founder_input: Option<FounderInput>,
    /// The founder's challenges, verbatim, in order (challenger).
    #[serde(default)]
    pub challenges: Vec<FounderInput>,
    /// A verifier-mode claim and its outcome.
    #[serde(default)]
    pub verification: Option<Verification>,
    /// The latest founder action (required in every Level 3 trace once acted).
    #[serde(default)]
    pub founder_action: Option<FounderAction>,
    /// Every founder action, in order.
    #[serde(default)]
    pub actions: Vec<ActionEntry>,
    /// GO, NO-GO or NEED MORE DATA, once a challenge round resolved.
    #[serde(default)]
    pub resolution: Option<String>,
    /// Where it stands.
    pub status: Status,
    /// Why it stopped, when it did.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// What the user must know: a model that answered under another id, a degraded panel,
    /// a cap approaching, a claim of the arbiter the facts contradict.
    #[serde(default)]
    pub notices: Vec<String>,
    /// The run (and stage) that opened it, if any.
    #[serde(default)]
    pub opened_by: Option<String>,
    /// Wall time spent in phases so far, in milliseconds.
    #[serde(default)]
    pub duration_ms: u64,
    /// Failed turns a resume asked again: out of the rounds, still in the cost.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub discarded: Vec<Turn>,
}

impl Session {
    /// Who sits where, in one sentence the trace shows the founder and the dossier shows
    /// the arbiter: `Panel: a, b. Arbiter: c (also a panelist).`
    pub fn seats(&self) -> String {
        format!(
            "Panel: {}. Arbiter: {}{}.",
            self.panel.join(", "),
            self.arbiter,
            if self.arbiter_is_panelist {
                " (also a panelist)"
            } else {
                " (not a panelist)"
            }
        )
    }

    /// The latest synthesis, after the fact checks.
    pub fn synthesis(&self) -> Option<Synthesis> {
        self.rounds.iter().rev().find_map(|r| r.effective.clone())
    }

    /// Every turn of the session, in order.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.rounds
            .iter()
            .flat_map(|r| {
                r.answers
                    .iter()
                    .chain(r.assessment.iter())
                    .chain(r.cross.iter())
                    .chain(r.checks.iter())
                    .chain(r.synthesis.iter())
            })
            .chain(self.discarded.iter())
    }

    /// What the session cost, in all.
    pub fn spend(&self) -> Spend {
        let mut total = Spend::default();
        for t in self.turns() {
            total += t.spend;
        }
        total
    }

    /// What each model cost (panelists and arbiter), in panel order, arbiter last.
    pub fn spend_by_model(&self) -> Vec<(String, Spend)> {
        let mut names: Vec<String> = self.panel.clone();
        if !names.contains(&self.arbiter) {
            names.push(self.arbiter.clone());
        }
        names
            .into_iter()
            .map(|m| {
                let mut s = Spend::default();
                for t in self.turns().filter(|t| t.model == m) {
                    s += t.spend;
                }
                (m, s)
            })
            .collect()
    }

    /// Whether a Level 2 session's arbiter confidence sent it to the founder (Level 3).
    pub fn escalated(&self) -> bool {
        self.assessment
            .criteria
            .iter()
            .any(|c| c.contains(ESCALATED))
    }

    /// Whether the honest "no consensus" is the outcome.
    pub fn no_consensus(&self) -> bool {
        self.synthesis().is_some_and(|s| !s.consensus)
    }
}
