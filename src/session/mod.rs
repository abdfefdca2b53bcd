//! Hierarchical sessions (seed 002): the human talks to a manager, which summons
//! orchestrators, which do the work through blocking git triad tools (TaskSpecs, reviewed
//! pipeline runs, reviews, the chamber) on a session branch of their own. Each conversation's
//! context is accounted from the usage its server reports; an orchestrator is warned at 70 %
//! and 85 % and handed off at the hard limit, and a full manager hands off to a fresh one.
//! Every message, tool call and hand-off is recorded under `refs/triad/sessions/<id>` as it
//! happens, so `git triad session --resume` rebuilds both conversations after a kill.
//!
//! - [`record`]: the events and their store in git;
//! - [`state`]: the session as the events made it;
//! - [`engine`]: the router, the calls and the hand-offs;
//! - [`tools`] and [`act`]: what the manager and the orchestrators may do;
//! - [`handoff`]: what a handed-off conversation passes on;
//! - [`context`]: how full a window is.

pub mod act;
pub mod action;
mod calls;
pub mod context;
pub mod engine;
pub mod handoff;
pub mod product;
pub mod record;
pub mod state;
pub mod tools;
pub mod transcript;
