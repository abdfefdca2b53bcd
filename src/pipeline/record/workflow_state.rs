//! Which workflow a run follows and what it has recorded of it: one value of the run's
//! record, so a run is in exactly one workflow, and what the rest of the pipeline asks of a
//! workflow's record (is it under way, which models it calls, how a report shows it) is
//! answered here once for all of them.

use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::debate::DebateState;
use super::followed::Followed;
use super::parallel::ParallelState;
use crate::workflow_name::Workflow;

/// The workflows with a record of their own, one line each: the variant of
/// [`crate::workflow_name::Workflow`] it follows, its folder and record type (in
/// `pipeline/record/<folder>.rs`, implementing [`Followed`]), and the function of the
/// workflow's folder (`pipeline/workflow/<folder>/`) that plans its record from the run's
/// panel. The run loop calls `<folder>::step` while it is under way. Every generator
/// reads this list (the run's [`WorkflowState`] here; the workflows' plan, step and report
/// in `pipeline::workflow`), and they match on `Workflow` exhaustively, so a workflow
/// named but not registered does not compile.
macro_rules! registry {
    ($then:ident) => {
        $then! {
            Parallel => parallel::ParallelState, plan;
            Debate => debate::DebateState, plan;
            Tournament => parallel::ParallelState, plan_tournament;
        }
    };
}

pub(crate) use registry;

/// Generates [`WorkflowState`] and what it answers from [`registry`].
macro_rules! declare_state {
    ($( $variant:ident => $folder:ident :: $record:ident, $plan:ident; )+) => {
        /// The workflow of a run with its record: sequential (nothing of its own), or one
        /// of the registry's, each holding its folder's record.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub enum WorkflowState {
            /// Architect → Implement → Refactor: nothing of its own to record.
            #[default]
            Sequential,
            $(
                #[doc = concat!("`", stringify!($variant), "`, with its record.")]
                $variant($record),
            )+
        }

        impl WorkflowState {
            /// The workflow's name.
            pub fn kind(&self) -> Workflow {
                match self {
                    WorkflowState::Sequential => Workflow::Sequential,
                    $( WorkflowState::$variant(_) => Workflow::$variant, )+
                }
            }

            /// Whether the workflow still has steps before the stages take over.
            pub fn under_way(&self) -> bool {
                match self {
                    WorkflowState::Sequential => false,
                    $( WorkflowState::$variant(r) => r.under_way(), )+
                }
            }

            /// Whether the workflow chooses the solution itself (by vote or by review), so
            /// no consensus stage has a refactor stage to send back.
            pub fn chooses_solution(&self) -> bool {
                match self {
                    WorkflowState::Sequential => false,
                    $( WorkflowState::$variant(r) => r.chooses_solution(), )+
                }
            }

            /// Every model the workflow itself calls.
            pub fn models(&self) -> Vec<String> {
                match self {
                    WorkflowState::Sequential => Vec::new(),
                    $( WorkflowState::$variant(r) => r.models(), )+
                }
            }


        }

        /// Written in `run.json` as its record under the record's key (nothing for a
        /// sequential run): the keys of earlier builds, `parallel` and `debate`.
        impl Serialize for WorkflowState {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(None)?;
                match self {
                    WorkflowState::Sequential => {}
                    $( WorkflowState::$variant(r) => map.serialize_entry(
                        <$record as Followed>::KEY,
                        r,
                    )?, )+
                }
                map.end()
            }
        }

        /// Read from the first registered record key present whose record is a run of
        /// that workflow (the other keys of the run's record are not its own); none is a
        /// sequential run.
        impl<'de> Deserialize<'de> for WorkflowState {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let keys = Map::<String, Value>::deserialize(d)?;
                $(
                    let key = <$record as Followed>::KEY;
                    if let Some(v) = keys.get(key).filter(|v| !v.is_null()) {
                        let record: $record =
                            serde_json::from_value(v.clone()).map_err(D::Error::custom)?;
                        if record.workflow() == Workflow::$variant {
                            return Ok(WorkflowState::$variant(record));
                        }
                    }
                )+
                Ok(WorkflowState::Sequential)
            }
        }
    };
}

registry!(declare_state);

impl WorkflowState {
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
