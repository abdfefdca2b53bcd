//! The four stages of the pipeline and which of them the arbiter reviews.

use serde::{Deserialize, Serialize};

use crate::config::{ArbiterMode, Role};

/// A pipeline stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// Scaffold: structure, interfaces.
    Architect,
    /// Logic.
    Implement,
    /// Quality, tests, edge cases.
    Refactor,
    /// Validation and the implementation summary.
    Verify,
}

impl Stage {
    /// All stages in order.
    pub const ALL: [Stage; 4] = [
        Stage::Architect,
        Stage::Implement,
        Stage::Refactor,
        Stage::Verify,
    ];

    /// The stage name (`implement`).
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Architect => "architect",
            Stage::Implement => "implement",
            Stage::Refactor => "refactor",
            Stage::Verify => "verify",
        }
    }

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

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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
