//! The consensus layer (seed 001 §6, seed 000 §B9): how the pipeline's models decide
//! together instead of only handing work down the line.
//!
//! - [`ballot`]: positions, ballots and how a vote splits;
//! - [`deliberation`]: the decision tree as a resumable state machine;
//! - [`envelope`]: the message every agent sends, as the run records it;
//! - [`suggestion`]: cross-domain suggestions and who decides on them.
//!
//! This module decides nothing by calling models: it holds the rules. The pipeline makes
//! the calls and feeds the answers in.

pub mod ballot;
pub mod deliberation;
pub mod envelope;
pub mod prompt;
pub mod suggestion;

pub use ballot::{tally, Ballot, BallotAnswer, Choice, Objection, Split};
pub use deliberation::{DecidedBy, Decision, Deliberation, Next, Voter, MAX_ROUNDS};
