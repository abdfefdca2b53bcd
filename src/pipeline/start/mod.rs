//! What a run starts from, shared by the plan ([`super::plan`]) and the workflows
//! ([`super::workflow`]) below both: the request and what it resolves to ([`request`]), the
//! models of every stage and panel under the cross-model rule ([`models`]), and why a run
//! cannot start ([`error`]). The plan calls each workflow's own plan, and a workflow's plan
//! takes these back: kept here, they make no circle.

mod error;
mod models;
mod request;

pub use error::{panel_workflows, StartError};
pub use models::{assign_models, same_wire_model};
pub(in crate::pipeline) use models::{callable_of, panel};
pub use request::{choose, routes, Choice, Planned, RunRequest};
