//! The four stages of the pipeline and which of them the arbiter reviews.

use crate::config::{ArbiterMode, Role};

crate::names::named! {
    /// A pipeline stage, by the name the record, the notes and the prompts write
    /// (`implement`).
    #[derive(PartialOrd, Ord)]
    pub enum Stage: "a stage", written snake_case {
        /// Scaffold: structure, interfaces.
        Architect,
        /// Logic.
        Implement,
        /// Quality, tests, edge cases.
        Refactor,
        /// Validation and the implementation summary.
        Verify,
    }
}

impl Stage {
    /// The role that performs the stage.
    pub fn role(self) -> Role {
        match self {
            Stage::Architect => Role::Architect,
            Stage::Implement => Role::Implementer,
            Stage::Refactor => Role::Refactorer,
            Stage::Verify => Role::Verifier,
        }
    }

    /// Position in the pipeline (0-based).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Whether the arbiter reviews this stage in `mode` (seed 000 §B6).
    pub fn reviewed(self, mode: ArbiterMode) -> bool {
        match mode {
            ArbiterMode::Off => false,
            ArbiterMode::Final => self == Stage::Verify,
            ArbiterMode::Bookend => matches!(self, Stage::Architect | Stage::Verify),
            ArbiterMode::Full => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_review_the_right_stages() {
        assert!(Stage::Architect.reviewed(ArbiterMode::Bookend));
        assert!(!Stage::Implement.reviewed(ArbiterMode::Bookend));
        assert!(Stage::Verify.reviewed(ArbiterMode::Final));
        assert!(!Stage::Architect.reviewed(ArbiterMode::Final));
        assert!(Stage::Refactor.reviewed(ArbiterMode::Full));
        assert!(!Stage::Verify.reviewed(ArbiterMode::Off));
    }
}
