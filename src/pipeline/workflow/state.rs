//! Which workflow a run follows and what it has recorded of it: one value of the run's
//! record, so a run is in exactly one workflow, and what the rest of the pipeline asks of a
//! workflow's record (is it under way, which models it calls, how a report shows it) is
//! answered here once for all of them.

use serde::{Deserialize, Serialize};

use super::debate::record::DebateState;
use super::debate::report::{self as debate_report, DebateReport};
use super::parallel::record::ParallelState;
use super::parallel::report::{self as parallel_report, ParallelReport};
use crate::workflow::Workflow;

/// The workflow of a run with its record. `run.json` keeps the keys of earlier builds
/// (`parallel`, `debate`; a tournament is a parallel record with judges), so every record
/// written before reads the same.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "Keys", into = "Keys")]
pub enum WorkflowState {
    /// Architect → Implement → Refactor: nothing of its own to record.
    #[default]
    Sequential,
    /// Parallel exploration: candidates, votes, winner, synthesis.
    Parallel(ParallelState),
    /// Debate: papers, rebuttals, final arguments, the judgment.
    Debate(DebateState),
    /// Tournament: candidates and the judges' reviews.
    Tournament(ParallelState),
}

/// How [`WorkflowState`] is written in `run.json`.
#[derive(Default, Serialize, Deserialize)]
struct Keys {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parallel: Option<ParallelState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    debate: Option<DebateState>,
}

impl From<Keys> for WorkflowState {
    fn from(k: Keys) -> Self {
        match (k.parallel, k.debate) {
            (Some(p), _) if p.tournament() => WorkflowState::Tournament(p),
            (Some(p), _) => WorkflowState::Parallel(p),
            (None, Some(d)) => WorkflowState::Debate(d),
            (None, None) => WorkflowState::Sequential,
        }
    }
}

impl From<WorkflowState> for Keys {
    fn from(w: WorkflowState) -> Self {
        match w {
            WorkflowState::Sequential => Keys::default(),
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => Keys {
                parallel: Some(p),
                debate: None,
            },
            WorkflowState::Debate(d) => Keys {
                parallel: None,
                debate: Some(d),
            },
        }
    }
}

/// A workflow's part of a run's `--json` report: each workflow's key, null unless the run
/// followed it (the shape of earlier builds).
#[derive(Debug, Default, Serialize)]
pub struct WorkflowReport<'a> {
    /// The parallel exploration or tournament.
    pub parallel: Option<ParallelReport<'a>>,
    /// The debate.
    pub debate: Option<DebateReport<'a>>,
}

impl WorkflowState {
    /// The workflow's name.
    pub fn kind(&self) -> Workflow {
        match self {
            WorkflowState::Sequential => Workflow::Sequential,
            WorkflowState::Parallel(_) => Workflow::Parallel,
            WorkflowState::Debate(_) => Workflow::Debate,
            WorkflowState::Tournament(_) => Workflow::Tournament,
        }
    }

    /// Whether the workflow still has steps before the run's stages take over.
    pub fn under_way(&self) -> bool {
        match self {
            WorkflowState::Sequential => false,
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => !p.done,
            WorkflowState::Debate(d) => !d.done,
        }
    }

    /// Whether the workflow chooses the solution itself (by vote or by review), so no
    /// consensus stage has a refactor stage to send back.
    pub fn chooses_solution(&self) -> bool {
        matches!(
            self,
            WorkflowState::Parallel(_) | WorkflowState::Tournament(_)
        )
    }

    /// Every model the workflow itself calls: candidates or debaters, the tiebreaker, a
    /// tournament's judges.
    pub fn models(&self) -> Vec<String> {
        match self {
            WorkflowState::Sequential => Vec::new(),
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => p
                .models
                .iter()
                .chain(&p.tiebreaker)
                .chain(&p.judges)
                .cloned()
                .collect(),
            WorkflowState::Debate(d) => d.models.iter().chain(&d.tiebreaker).cloned().collect(),
        }
    }

    /// The parallel exploration or tournament, for those workflows.
    pub fn parallel(&self) -> Option<&ParallelState> {
        match self {
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => Some(p),
            _ => None,
        }
    }

    /// The debate, for that workflow.
    pub fn debate(&self) -> Option<&DebateState> {
        match self {
            WorkflowState::Debate(d) => Some(d),
            _ => None,
        }
    }

    /// The parallel record, to record its phases (a run of another workflow becomes a
    /// parallel one, as a record that had none took one up).
    pub fn parallel_mut(&mut self) -> &mut ParallelState {
        if self.parallel().is_none() {
            *self = WorkflowState::Parallel(ParallelState::default());
        }
        match self {
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => p,
            _ => unreachable!("made parallel above"),
        }
    }

    /// The debate record, to record its phases (as [`WorkflowState::parallel_mut`]).
    pub fn debate_mut(&mut self) -> &mut DebateState {
        if self.debate().is_none() {
            *self = WorkflowState::Debate(DebateState::default());
        }
        match self {
            WorkflowState::Debate(d) => d,
            _ => unreachable!("made a debate above"),
        }
    }

    /// The workflow's line in the end-of-run summary (empty for a sequential run).
    pub fn summary(&self) -> String {
        match self {
            WorkflowState::Sequential => String::new(),
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => {
                parallel_report::summary(p)
            }
            WorkflowState::Debate(d) => debate_report::summary(d),
        }
    }

    /// The workflow's section of `git triad log <run>` (empty for a sequential run).
    pub fn render(&self, md: bool) -> String {
        match self {
            WorkflowState::Sequential => String::new(),
            WorkflowState::Parallel(p) | WorkflowState::Tournament(p) => {
                parallel_report::render(p, md)
            }
            WorkflowState::Debate(d) => debate_report::render(d, md),
        }
    }

    /// The workflow's part of a run's `--json` report.
    pub fn report(&self) -> WorkflowReport<'_> {
        WorkflowReport {
            parallel: self.parallel().map(ParallelReport::of),
            debate: self.debate().map(DebateReport::of),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record of each workflow reads back as the same workflow, through the keys earlier
    /// builds wrote: a tournament is told from a parallel run by its judges.
    #[test]
    fn every_workflow_reads_back_from_the_keys_earlier_builds_wrote() {
        let tournament = ParallelState {
            models: vec!["a".into(), "b".into()],
            judges: vec!["j".into()],
            ..Default::default()
        };
        let states = [
            WorkflowState::Sequential,
            WorkflowState::Parallel(ParallelState::default()),
            WorkflowState::Debate(DebateState::new(vec!["a".into(), "b".into()], None)),
            WorkflowState::Tournament(tournament),
        ];
        for (state, kind) in states.into_iter().zip(Workflow::ALL) {
            assert_eq!(state.kind(), kind);
            let json = serde_json::to_value(&state).unwrap();
            let keys: Vec<&String> = json.as_object().unwrap().keys().collect();
            let expected: &[&str] = match kind {
                Workflow::Sequential => &[],
                Workflow::Debate => &["debate"],
                _ => &["parallel"],
            };
            assert_eq!(keys, expected, "{kind}");
            let back: WorkflowState = serde_json::from_value(json).unwrap();
            assert_eq!(back, state);
        }
    }
}
