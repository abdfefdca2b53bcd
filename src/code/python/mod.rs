//! Python in the evidence engine: what a Python import statement names, and whether the
//! module it names exists for this repository.
//!
//! - `imports.rs`: import statements as [`Import`](crate::code::Import)s, with the run-time
//!   guards that make a missing module acceptable;
//! - `resolve.rs`: the resolver (standard library, the repository's modules, declared
//!   dependencies, an installed virtualenv);
//! - `deps.rs` with `names.rs`: what the project's manifests declare, as import names;
//! - `venv.rs`: what a virtualenv on disk has installed.

mod deps;
mod imports;
mod names;
mod resolve;
mod venv;

pub(crate) use imports::{python_sites, spread_optional};
pub(crate) use resolve::{sys_path_roots, PyResolver};
