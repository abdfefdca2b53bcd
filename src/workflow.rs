//! The workflows a run can follow, named in one place.
//!
//! A leaf, so that every layer reads workflow names the same way: the command line's
//! `--workflow` (clap's [`ValueEnum`]), the session tools' schema, the run that the pipeline
//! plans, and the tests that hold the documentation to them. A new workflow is one line in
//! the list below; what it does is the pipeline's (`pipeline/workflow/`).

use clap::builder::PossibleValue;
use clap::ValueEnum;

/// Declares [`Workflow`] from one line per workflow (its doc comment, its variant, the name
/// every place writes): the enum, [`Workflow::ALL`] in the order given (the default first)
/// and [`Workflow::as_str`] all come from that line, so they cannot disagree.
macro_rules! workflows {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )+) => {
        /// How a run produces its solution before the Verify stage.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Workflow {
            $( $(#[$doc])* $variant, )+
        }

        impl Workflow {
            /// Every workflow, the default first.
            pub const ALL: [Workflow; [$($name),+].len()] = [$(Workflow::$variant),+];

            /// The name `--workflow` takes and every other place writes.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( Workflow::$variant => $name, )+
                }
            }
        }
    };
}

workflows! {
    /// Architect → Implement → Refactor, one model after the other.
    Sequential = "sequential",
    /// Several models build a solution each, alone and at the same time, review and vote
    /// on each other's, and the winner enhances its own with the best of the others
    /// (seed 001 §5.2).
    Parallel = "parallel",
    /// Several models argue for an approach in position papers with explicit trade-offs,
    /// rebut each other and give final arguments; the tiebreaker judges, and the winning
    /// position is the architect's input to the usual sequential stages (seed 001 §5.3).
    Debate = "debate",
    /// Several models build a solution each, at the same time; an arbiter that is none of
    /// them reviews every solution with the usual evidence and the best review wins; the
    /// winner goes on to Verify as it was built (seed 001 §7, Tournament).
    Tournament = "tournament",
}

impl Default for Workflow {
    /// The first declared: sequential.
    fn default() -> Self {
        Workflow::ALL[0]
    }
}

impl Workflow {
    /// Every name, in the order of [`Workflow::ALL`].
    pub fn names() -> [&'static str; Workflow::ALL.len()] {
        Workflow::ALL.map(Workflow::as_str)
    }
}

impl std::fmt::Display for Workflow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Workflow {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Workflow::ALL
            .into_iter()
            .find(|w| w.as_str() == s)
            .ok_or_else(|| format!("`{s}` is not a workflow ({})", Workflow::names().join(", ")))
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
