//! Routing by measured fitness: a standard task set graded by facts ([`tasks`], [`grade`]),
//! run on models by `git triad bench` ([`bench`](mod@bench), with the reviewers'
//! [`selfpref`]), kept per user ([`store`]) and shared on request ([`share`]), and used by
//! roles set to `auto` to pick their models under a routing mode ([`route`]).

pub mod bench;
pub mod compare;
pub mod grade;
pub mod route;
pub mod selfpref;
pub mod share;
pub mod store;
pub mod tasks;

pub use store::{FitnessEntry, FitnessStore, Freshness};
pub use tasks::{TaskSet, TASK_SET_VERSION};
