//! The workflows a run can follow, by name: the names only, declared once. What each
//! workflow does is the pipeline's (`pipeline/workflow/`, one folder a workflow).
//!
//! A leaf, so that every layer reads workflow names the same way: the command line's
//! `--workflow` (clap's [`ValueEnum`]), the session tools' schema, the run that the pipeline
//! plans, and the tests that hold the documentation to them. A new workflow is one line in
//! the list below.

use clap::builder::PossibleValue;
use clap::ValueEnum;

crate::names::named! {
    /// How a run produces its solution before the Verify stage, by the name `--workflow`
    /// takes and every other place writes.
    pub enum Workflow: "a workflow", written snake_case {
        /// Architect → Implement → Refactor, one model after the other.
        Sequential,
        /// Several models build a solution each, alone and at the same time, review and vote
        /// on each other's, and the winner enhances its own with the best of the others
        /// (seed 001 §5.2).
        Parallel,
        /// Several models argue for an approach in position papers with explicit trade-offs,
        /// rebut each other and give final arguments; the tiebreaker judges, and the winning
        /// position is the architect's input to the usual sequential stages (seed 001 §5.3).
        Debate,
        /// Several models build a solution each, at the same time; an arbiter that is none of
        /// them reviews every solution with the usual evidence and the best review wins; the
        /// winner goes on to Verify as it was built (seed 001 §7, Tournament).
        Tournament,
    }
}

impl Default for Workflow {
    /// The first declared: sequential.
    fn default() -> Self {
        Workflow::ALL[0]
    }
}

/// `--workflow` takes exactly the names of [`Workflow::as_str`].
impl ValueEnum for Workflow {
    fn value_variants<'a>() -> &'a [Self] {
        &Workflow::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_reads_back_and_nothing_else_does() {
        for w in Workflow::ALL {
            assert_eq!(w.as_str().parse::<Workflow>(), Ok(w));
            assert_eq!(w.to_string(), w.as_str());
            assert_eq!(<Workflow as ValueEnum>::from_str(w.as_str(), false), Ok(w));
        }
        assert_eq!(Workflow::default(), Workflow::ALL[0]);
        assert_eq!(
            "Debate".parse::<Workflow>().unwrap_err(),
            "`Debate` is not a workflow (sequential, parallel, debate, tournament)"
        );
    }
}
