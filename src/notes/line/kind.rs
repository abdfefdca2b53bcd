//! The kinds of note line, by the word each line's `kind` field carries.

crate::names::named! {
    /// The kinds of line, as the `kind` field names them (the writer's [`super::Record`]
    /// is tagged with the same words).
    pub enum LineKind: "a kind of note line", written snake_case {
        /// An arbiter's review.
        Review,
        /// A finished run's reconciliation.
        Reconciliation,
        /// A person overruling verdicts.
        Override,
    }
}

/// The kinds of line that carry a verdict on the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictKind {
    /// An arbiter's review (a stage, `git triad review --note`, a stopped run's tip).
    Review,
    /// The reconciliation of a finished run against its TaskSpec.
    Reconciliation,
}

impl VerdictKind {
    /// The `kind` on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Review => LineKind::Review.as_str(),
            VerdictKind::Reconciliation => LineKind::Reconciliation.as_str(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_are_the_words_the_first_release_wrote() {
        assert_eq!(LineKind::NAMES, ["review", "reconciliation", "override"]);
        assert_eq!(VerdictKind::Review.as_str(), "review");
        assert_eq!(VerdictKind::Reconciliation.as_str(), "reconciliation");
    }
}
