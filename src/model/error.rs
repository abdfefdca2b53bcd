//! Why a model call produced no usable answer: an unknown model, the budget, every model
//! of the role failing, a request too large for every window, or an answer that does not
//! follow its schema after a repair.

use super::budget::BudgetExceeded;
use super::cause::{summarize, Cause, Failure};
use super::window::Overflow;
use crate::config::Role;

/// Why a model call produced no usable answer.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The model name is not in the registry.
    #[error("model `{0}` is not registered")]
    UnknownModel(String),
    /// A call would cross the budget; nothing was sent.
    #[error(transparent)]
    Budget(#[from] BudgetExceeded),
    /// Every model of the role failed or was unavailable.
    #[error("no model could answer for the {}: {}", serving(*.role, .purpose.as_deref()), summarize(.failures))]
    AllFailed {
        /// The role.
        role: Role,
        /// What the call was for when the role alone does not say it (`chamber-panelist`):
        /// the request's [`ChatRequest::purpose`].
        purpose: Option<String>,
        /// Each model tried, with why it failed and the kind of failure.
        failures: Vec<Failure>,
    },
    /// The request does not fit the context window of any model that could take it;
    /// nothing was sent.
    #[error("the request for the {} does not fit the context window of its models: {}", serving(*.role, .purpose.as_deref()), overflows.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    TooLarge {
        /// The role.
        role: Role,
        /// What the call was for, as in [`ModelError::AllFailed`].
        purpose: Option<String>,
        /// The figures, per model.
        overflows: Vec<Overflow>,
    },
    /// The answer did not follow the schema, even after one repair request.
    #[error("{model} answered with JSON that does not follow the `{schema}` schema, even after a repair request: {}", .errors.join("; "))]
    SchemaViolation {
        /// The model.
        model: String,
        /// The schema name.
        schema: String,
        /// Validation errors of the last answer.
        errors: Vec<String>,
    },
}

/// What a call served, as an error names it: its purpose (`chamber-panelist` → `chamber
/// panelist`), else its role (`implementer role`).
fn serving(role: Role, purpose: Option<&str>) -> String {
    match purpose {
        Some(p) => p.replace('-', " "),
        None => format!("{role} role"),
    }
}

impl ModelError {
    /// The kinds of the provider failures behind it, one per model that failed (none for
    /// an error that is not a provider's).
    pub fn causes(&self) -> Vec<&Cause> {
        match self {
            ModelError::AllFailed { failures, .. } => failures.iter().map(|f| &f.cause).collect(),
            _ => Vec::new(),
        }
    }
}
