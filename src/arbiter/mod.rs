//! The arbiter: an independent, adversarial reviewer whose verdicts rest on re-anchored
//! quotes and on deterministic floors the model cannot talk away.

pub mod anchor;
pub mod coverage;
pub mod evidence;
pub mod feedback;
pub mod floor;
pub mod gather;
pub mod parts;
pub mod reconciliation;
pub mod request;
pub mod review;
pub mod schema;
pub mod service;

pub use schema::{
    Alternative, ArbiterAnswer, ArbiterReview, Category, Coverage, Floor, Issue, IssueAnswer,
    LeftOut, Severity, Verdict,
};
