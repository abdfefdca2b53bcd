//! Hierarchical sessions (seed 002): a manager that summons orchestrators, which work
//! through blocking git triad tools, each handing off before its context window fills.
//!
//! This module holds what the session loop will stand on; [`context`] is the accounting of
//! how full a model's window is, from the usage its server reported.

pub mod context;
