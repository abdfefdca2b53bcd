//! Why a run stopped, as typed data: the record keeps the facts; `log`, `run` and `resume`
//! render them (the command line adds what to do next).

use serde::{Deserialize, Serialize};

use crate::arbiter::{Issue, Verdict};
use crate::config::Role;
use crate::git::ObjectId;
use crate::model::Cause;
use crate::pipeline::stage::Stage;
use crate::task::outcome::{outcome_details, Outcome, StageMeta};
use crate::task::ArbiterDecision;

/// Which kind of model failure stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelFailure {
    /// The next call would have crossed a spending cap.
    Budget,
    /// No valid structured answer, even after the repair request.
    Schema,
    /// Every candidate model failed (network, provider, circuit breaker).
    Provider,
    /// The request did not fit the context window of any candidate model; nothing was sent.
    Window,
}

/// Why a stage that used up its retries could not rewind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NoRewind {
    /// The stage is the first one.
    NoEarlierStage,
    /// The earlier stage's role has no other model left.
    NoOtherModel {
        /// That role.
        role: Role,
    },
}

/// Why a run stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum StopReason {
    /// Every stage is done (and reconciled, when asked).
    Finished {
        /// The final verdict; `None` when no stage was reviewed.
        verdict: Option<Verdict>,
        /// The stages whose work was dropped for breaking what the run's best evidenced
        /// commit showed, each with why (the result is that commit).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        dropped: Vec<String>,
    },
    /// Every stage answered, but the run's diff against its base is empty: nothing was
    /// built, so nothing is approved.
    NothingChanged,
    /// The arbiter halted the pipeline at a stage.
    ArbiterHalt {
        /// The stage.
        stage: Stage,
        /// Who halted it.
        arbiter_model: String,
        /// The arbiter's reasoning.
        reasoning: String,
        /// The most severe issues (at most three).
        issues: Vec<Issue>,
    },
    /// A stage used up its retries and the policy is to stop for a human.
    RetriesHalt {
        /// The stage.
        stage: Stage,
        /// Attempts in its last retry budget.
        tries: u32,
        /// What became of the last one.
        last: String,
    },
    /// A stage used up its retries and the rewind policy could not rewind.
    RetriesExhausted {
        /// The stage.
        stage: Stage,
        /// Why not.
        why: NoRewind,
    },
    /// A stage answered an outcome other than APPROVE (seed 004).
    Outcome {
        /// The stage.
        stage: Stage,
        /// Its whole metadata block.
        meta: Box<StageMeta>,
        /// How the task state machine routed it, when it could be recorded.
        decision: Option<ArbiterDecision>,
    },
    /// A model call failed.
    ModelFailed {
        /// The stage, or `reconcile`.
        step: String,
        /// What kind of failure.
        failure: ModelFailure,
        /// The error, redacted.
        error: String,
        /// The kinds of the provider failures behind it, one per distinct kind (nothing
        /// listening at a URL, a refused key, ...): what the command line advises on.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        causes: Vec<Cause>,
    },
    /// The reconciliation rejected the result after its one retry, or halted.
    Reconciliation {
        /// REJECT or HALT.
        verdict: Verdict,
        /// Whether the one rewind was already used.
        after_retry: bool,
        /// The reconciliation arbiter's reasoning.
        reasoning: String,
        /// The gaps, one per line.
        gaps: String,
    },
    /// A verdict note could not be written; the pre-push gate reads only notes, so the run
    /// does not go on without it.
    NoteNotWritten {
        /// The commit the note belongs on.
        commit: ObjectId,
        /// Why it failed.
        error: String,
    },
    /// A repository operation failed in the middle of the run.
    GitFailed {
        /// The error.
        error: String,
    },
    /// The consensus stage could not let the result proceed: the agents kept asking for
    /// changes after every redo allowed, or no tiebreaker could settle a deadlock (then the
    /// user decides, with every proposal in the record).
    Consensus {
        /// `amend`, `reject`, or `deadlock`.
        outcome: String,
        /// How the last decision was reached, or why none was.
        detail: String,
        /// Every proposal and ballot, for the person who decides.
        proposals: String,
    },
    /// Parallel exploration could not go on: fewer than two candidates built a solution,
    /// or the vote tied and no model outside the candidates could break the tie.
    Parallel {
        /// What happened, with every candidate's fate.
        detail: String,
    },
    /// The debate could not go on: fewer than two debaters stood, or the tiebreaker could
    /// not judge (then the user decides, with every position in the record).
    Debate {
        /// What happened, with every debater's fate.
        detail: String,
    },
    /// A decision went to the chamber, whose Level 2 session escalated to Level 3: the
    /// founder acts on its synthesis, then the run resumes with it.
    Chamber {
        /// The stage whose decision it is.
        stage: Stage,
        /// The session.
        session: String,
        /// What opened it.
        trigger: String,
    },
    /// Written by format 1, which kept only a sentence.
    Legacy {
        /// That sentence.
        message: String,
    },
}

impl StopReason {
    /// What happened, as sentences of fact (no advice: the command line adds that).
    pub fn describe(&self) -> String {
        match self {
            StopReason::Finished {
                verdict: Some(v),
                dropped,
            } if !dropped.is_empty() => format!(
                "all stages done on the run's best evidenced commit; final verdict {v}; dropped: {}",
                dropped.join("; ")
            ),
            StopReason::Finished {
                verdict: Some(v), ..
            } => {
                format!("all stages done; final verdict {v}")
            }
            StopReason::Finished { verdict: None, .. } => {
                "all stages done; no stage was reviewed (arbiter mode off)".into()
            }
            StopReason::NothingChanged => "every stage answered, but the run changed no file: its diff against the base is empty, so nothing is approved".into(),
            StopReason::ArbiterHalt {
                stage,
                arbiter_model,
                reasoning,
                issues,
            } => {
                let mut s = format!(
                    "the arbiter ({arbiter_model}) halted the pipeline at the {stage} stage: {}",
                    one_line(reasoning, "no reasoning given")
                );
                for i in issues {
                    s.push_str(&format!(
                        "\n  - {} {}:{} {}",
                        i.severity.as_str(),
                        i.path,
                        i.start_line.map_or("?".to_string(), |l| l.to_string()),
                        i.description
                    ));
                }
                s
            }
            StopReason::Parallel { detail } => {
                format!("parallel exploration stopped: {detail}")
            }
            StopReason::Debate { detail } => {
                format!("the debate stopped: {detail}; every position is in the record for you to decide")
            }
            StopReason::Consensus {
                outcome, detail, ..
            } if outcome == "deadlock" => format!(
                "the consensus deadlocked and no tiebreaker could decide ({detail}); every proposal is in the record for you to decide"
            ),
            StopReason::Consensus { outcome, detail, .. } => format!(
                "the consensus would not let the refactored result proceed: {outcome} ({detail}), after every redo allowed"
            ),
            StopReason::RetriesHalt { stage, tries, last } => format!(
                "the {stage} stage failed {tries} attempt{} (the last: {last}); stopping for a human",
                if *tries == 1 { "" } else { "s" }
            ),
            StopReason::RetriesExhausted { stage, why } => format!(
                "the {stage} stage used up its retries and {}",
                match why {
                    NoRewind::NoEarlierStage => "there is no earlier stage to rewind to".into(),
                    NoRewind::NoOtherModel { role } =>
                        format!("the {role} role has no other model to rewind to"),
                }
            ),
            StopReason::Outcome {
                stage,
                meta,
                decision,
            } => {
                let details = outcome_details(meta);
                let routed = decision.as_ref().map_or(String::new(), |d| {
                    format!(
                        "\nThe arbiter routed the task: {}{}{}",
                        d.decision,
                        d.assigned_to
                            .as_deref()
                            .map(|a| format!(" to {a}"))
                            .unwrap_or_default(),
                        if d.note.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", d.note)
                        }
                    )
                });
                if meta.outcome == Outcome::NeedsInfo {
                    format!("the {stage} stage needs information before it can continue ({details}).{routed}")
                } else if meta.outcome == Outcome::Blocked {
                    format!("the {stage} stage is blocked and the run waits for its dependencies: {details}{routed}")
                } else {
                    format!(
                        "the {stage} stage answered {} instead of doing the work: {details}{routed}",
                        meta.outcome.as_str()
                    )
                }
            }
            StopReason::ModelFailed {
                step,
                failure,
                error,
                ..
            } => match failure {
                ModelFailure::Schema => format!(
                    "the {step} step could not be completed: {error}. Without a valid answer nothing is approved"
                ),
                ModelFailure::Budget => {
                    format!("the {step} stage stopped before crossing the budget: {error}")
                }
                ModelFailure::Provider => format!("the {step} stage stopped: {error}"),
                ModelFailure::Window => {
                    format!("the {step} stage stopped before sending anything: {error}")
                }
            },
            StopReason::Reconciliation {
                verdict,
                after_retry,
                reasoning,
                gaps,
            } => format!(
                "reconciliation {verdict}{}: {}\nGaps:\n{gaps}",
                if *after_retry { " after its one retry" } else { "" },
                one_line(reasoning, "the output does not match the TaskSpec"),
            ),
            StopReason::NoteNotWritten { commit, error } => format!(
                "the verdict note on {} could not be written ({error}); the run stopped, because the pre-push gate reads only notes",
                commit.short()
            ),
            StopReason::GitFailed { error } => {
                format!("a repository operation failed: {error}")
            }
            StopReason::Chamber {
                stage,
                session,
                trigger,
            } => format!(
                "the {stage} stage's decision ({trigger}) went to the chamber; session {session} \
                 was not confident enough to decide alone (Level 2 escalated to Level 3) and waits \
                 for your action"
            ),
            StopReason::Legacy { message } => message.clone(),
        }
    }
}

/// The first meaningful line of `text`, at most 100 characters, with whatever a terminal
/// would obey shown as text ([`crate::safe::line`]): it becomes commit subjects and summary
/// lines.
pub fn one_line(text: &str, fallback: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap_or(fallback);
    let line = crate::safe::line(line);
    let mut s: String = line.chars().take(100).collect();
    if line.chars().count() > 100 {
        s.push('…');
    }
    s
}
