//! What to do next after a run stopped: the library records typed facts; this module turns
//! them into advice with command lines (errors get theirs in `cli::error`).

use crate::model::Cause;
use crate::pipeline::record::{ModelFailure, NoRewind};
use crate::pipeline::resume::Rescue;
use crate::pipeline::{RunState, RunStatus, StopReason};
use crate::task::outcome::Outcome;

/// `git triad resume <run> --rewind N --model M`, with what it redoes and who reviews it.
pub fn rescue_line(run: &str, r: &Rescue) -> String {
    let reviewed = r
        .arbiter
        .as_deref()
        .map_or(String::new(), |a| format!(", reviewed by {a}"));
    format!(
        "redo the {} stage{} on {}{reviewed}: git triad resume {run} --rewind {} --model {}",
        r.stage,
        if r.stages > 1 {
            " and what follows"
        } else {
            ""
        },
        r.model,
        r.stages,
        r.model
    )
}

/// The next steps for a run in `state`, one command or option per line, the way `git
/// rebase` ends a stop: for a halted run the exact rewind that can run (`rescue`, chosen
/// by the pipeline), the settings that would have let it go on, and how to abort.
pub fn run_hints(state: &RunState, rescue: Option<&Rescue>) -> Vec<String> {
    let mut hints = stop_hints(state);
    if matches!(
        state.status(),
        RunStatus::Halted | RunStatus::RetriesExhausted
    ) {
        if let Some(r) = rescue {
            hints.insert(0, rescue_line(state.run_id(), r));
        }
        hints.push(format!(
            "to abort: git branch -D {} (the run stays in `git triad log`; `git triad task close {} --reason ...` closes the task)",
            state.branch(),
            state.task()
        ));
    }
    hints
}

/// What to do about the way `state` stopped.
fn stop_hints(state: &RunState) -> Vec<String> {
    let run = state.run_id();
    let task = state.task();
    let Some(reason) = state.stop_reason() else {
        return vec![format!(
            "`git triad resume {run}` continues it from its last recorded event"
        )];
    };
    match reason {
        StopReason::Finished { .. } => vec![],
        StopReason::NothingChanged => vec![format!(
            "the models answered without changing the code; `git triad log {run}` shows each attempt; run the task again with stronger models (--implementer <model>)"
        )],
        StopReason::ArbiterHalt { stage, .. } => {
            let halted = state
                .stages()
                .iter()
                .find(|s| s.stage == *stage)
                .and_then(|s| s.attempts.last())
                .and_then(|a| a.commit.as_ref())
                .map_or("<commit>", |c| c.short());
            vec![
                format!("or accept the work as it is, on the record: git triad override {halted} --verdict FLAG --reason \"...\""),
            ]
        }
        StopReason::RetriesHalt { stage, .. } => vec![
            format!(
                "or run the task again with other models: git triad run --task {task} --{} <model> (or -c roles.{}.models='[\"<model>\", ...]')",
                stage.role(),
                stage.role()
            ),
            format!("or with more tries, or going back one stage on the next model instead of halting: git triad -c arbiter.on_exhausted=rewind run --task {task} --max-retries 4"),
        ],
        StopReason::RetriesExhausted { why, .. } => match why {
            NoRewind::NoOtherModel { role } => vec![format!(
                "give the {role} role more models (-c roles.{role}.models='[\"a\", \"b\"]') and run the task again"
            )],
            NoRewind::NoEarlierStage => {
                vec!["run the task again with other models, or raise --max-retries".into()]
            }
        },
        StopReason::Outcome { meta, .. } if meta.outcome == Outcome::NeedsInfo => vec![format!(
            "answer with `git triad task answer {task}`, then `git triad resume {run}`"
        )],
        StopReason::Outcome { meta, decision, .. } if meta.outcome == Outcome::Blocked => {
            let deps = decision
                .as_ref()
                .map(|d| d.created_tasks.join(", "))
                .unwrap_or_default();
            vec![
                format!("do the dependency task(s) {deps} and close each: `git triad task close <dep> --reason done`; the run continues by itself when the last one closes (or `git triad resume {run}`)"),
                format!("`git triad task show {task}` shows what each is"),
            ]
        }
        StopReason::Outcome { meta, .. }
            if meta.outcome == Outcome::OutOfScope && state.status() == RunStatus::WaitingOnUser =>
        {
            vec![format!(
                "give the work to a stage (`git triad task reassign {task} --to <stage> --reason ...`), then `git triad resume {run}`; or do it by hand and `git triad task close {task}`"
            )]
        }
        StopReason::Outcome { .. } => vec![format!(
            "`git triad task show {task}` shows the task's state and next action"
        )],
        StopReason::ModelFailed {
            failure, causes, ..
        } => match failure {
            ModelFailure::Schema => vec![
                "choose a stronger model for that role (--arbiter-model, -c roles.arbiter.models=...) and run the task again".into(),
            ],
            ModelFailure::Budget => vec![format!(
                "continue with a higher cap: git triad resume {run} --budget <USD>"
            )],
            ModelFailure::Window => vec![
                "nothing was sent: make the input smaller (the TaskSpec's requirements and scope) or give the role a model with a larger window (-c roles.<role>.models=...)".into(),
                format!("then: git triad resume {run}"),
            ],
            ModelFailure::Provider => {
                let mut hints = cause_hints(causes);
                hints.push(format!("then: git triad resume {run}"));
                hints
            }
        },
        StopReason::Reconciliation { .. } => vec![
            "options: fix by hand on the branch, re-run the task, or override with `git triad override`".into(),
        ],
        StopReason::NoteNotWritten { .. } => vec![
            "check that refs/notes/triad can be updated (`git notes --ref triad list`; is another git process holding a lock?)".into(),
            format!("then `git triad resume {run}`"),
        ],
        StopReason::GitFailed { .. } => vec![format!(
            "`git triad resume {run}` continues from the last recorded event"
        )],
        StopReason::Consensus { outcome, .. } if outcome == "deadlock" => vec![
            format!("`git triad log {run}` shows every proposal and ballot"),
            format!("name a tiebreaker that did not vote (-c roles.tiebreaker.models='[\"<model>\"]'), then `git triad resume {run}`"),
        ],
        StopReason::Consensus { .. } => vec![
            format!("`git triad log {run}` shows the deliberation: the objections and the amendments asked for"),
            "options: fix by hand on the branch, re-run the task without --consensus, or with other models".into(),
        ],
        StopReason::Parallel { .. } => vec![
            format!("`git triad log {run}` shows every candidate, its branch and the vote"),
            "make at least two different candidate models answer (`git triad models list`), or name a tiebreaker that is not a candidate (-c roles.tiebreaker.models='[\"<model>\"]'), then run the task again".into(),
        ],
        StopReason::Debate { .. } => vec![
            format!("`git triad log {run}` shows every position, rebuttal and final argument, and who dropped out"),
            "make at least two different debater models answer (`git triad models list`, --candidates M1,M2), or name a tiebreaker that did not argue (-c roles.tiebreaker.models='[\"<model>\"]'), then run the task again".into(),
        ],
        StopReason::Chamber { session, .. } => vec![
            format!("read the synthesis: git triad chamber show {session}"),
            format!("act on it: git triad chamber act {session} accepted|revised|rejected [--note ...], then `git triad resume {run}`"),
        ],
        StopReason::Legacy { .. } => vec![],
    }
}

/// What to do about provider failures of these kinds, one line per kind: start the server
/// or fix its URL, check or set the key, wait for a failing provider. A kind nobody can act
/// on but by trying again says so.
pub fn cause_hints<'a>(causes: impl IntoIterator<Item = &'a Cause>) -> Vec<String> {
    let mut hints: Vec<String> = Vec::new();
    for c in causes {
        let hint = match c {
            Cause::Refused { provider, url } => format!(
                "nothing listens at {url}: start the server there, or point `providers.{provider}.base_url` at where it runs (`git triad config show providers.{provider}` shows it)"
            ),
            Cause::Unreachable { provider, url } => format!(
                "{url} cannot be reached: check the host name and your network, or `providers.{provider}.base_url`"
            ),
            Cause::KeyRefused { var: Some(var) } => format!(
                "the server refused the key in {var}: check that it is this provider's and still valid"
            ),
            Cause::KeyRefused { var: None } => {
                "the server asks for a key: set `api_key_env` on the provider to the variable that holds it".into()
            }
            Cause::KeyMissing { var } => format!("set {var} in your shell"),
            Cause::Timeout => {
                "the model did not answer in time: raise `transport.timeout_secs` (or the role's `timeout_secs`) or use a faster model".into()
            }
            Cause::Server { status } => format!(
                "the provider is failing or limiting requests (HTTP {status}): try again later, or use another model"
            ),
            Cause::Malformed => {
                "the server's answers are not of its protocol: check that `base_url` is the API's root (for OpenAI-compatible servers, ending in /v1)".into()
            }
            Cause::NotFound | Cause::Other => continue,
        };
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    if hints.is_empty() {
        hints.push("`git triad models list` shows which models can be called".into());
    }
    hints
}
