//! Routing by measured fitness: the standard task set ([`tasks`]), the figures measured on it
//! kept per user ([`store`]) and shared on request ([`share`]), and used by roles set to
//! `auto` to pick their models under a routing mode ([`route`]); the plain test loop a run is
//! compared with ([`compare`]). Measuring them is
//! [`crate::bench`]'s work, above the pipeline whose code it measures.

pub mod compare;
pub mod route;
pub mod share;
pub mod store;
pub mod tasks;

pub use store::{FitnessEntry, FitnessStore, Freshness};
pub use tasks::{TaskSet, TASK_SET_VERSION};
