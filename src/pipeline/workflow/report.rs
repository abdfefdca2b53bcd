//! What a run's reports show of its workflow: the end-of-run line, the section of
//! `git triad log <run>` and the part of `--json`, each asked of the workflow's folder.

use serde::Serialize;

use super::debate::report::DebateReport;
use super::parallel::report::ParallelReport;
use crate::pipeline::record::{registry, WorkflowState};

/// A workflow's part of a run's `--json` report: each workflow's key, null unless the run
/// followed it (the shape of earlier builds).
#[derive(Debug, Default, Serialize)]
pub struct WorkflowReport<'a> {
    /// The parallel exploration or tournament.
    pub parallel: Option<ParallelReport<'a>>,
    /// The debate.
    pub debate: Option<DebateReport<'a>>,
}

/// The workflow's part of a run's `--json` report.
pub fn report(w: &WorkflowState) -> WorkflowReport<'_> {
    WorkflowReport {
        parallel: w.parallel().map(ParallelReport::of),
        debate: w.debate().map(DebateReport::of),
    }
}

/// Generates [`summary`] and [`render`] from the registry.
macro_rules! reports {
    ($( $variant:ident => $folder:ident :: $record:ident, $plan:ident; )+) => {
        /// The workflow's line in the end-of-run summary (empty for a sequential run).
        pub fn summary(w: &WorkflowState) -> String {
            match w {
                WorkflowState::Sequential => String::new(),
                $( WorkflowState::$variant(r) => super::$folder::report::summary(r), )+
            }
        }

        /// The workflow's section of `git triad log <run>` (empty for a sequential run).
        pub fn render(w: &WorkflowState, md: bool) -> String {
            match w {
                WorkflowState::Sequential => String::new(),
                $( WorkflowState::$variant(r) => super::$folder::report::render(r, md), )+
            }
        }
    };
}

registry!(reports);
