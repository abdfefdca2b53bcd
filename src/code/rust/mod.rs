//! Rust in the evidence engine: what a `use` or `extern crate` names, and whether that path
//! exists in the crate's module tree or among its declared dependencies.
//!
//! - `imports.rs`: use trees flattened into one [`Import`](crate::code::Import) per leaf;
//! - `resolve.rs`: the resolver (external crates, `crate::`/`self::`/`super::` paths);
//! - `items.rs`: what a module defines, read from its syntax tree;
//! - `cargo.rs`: what a crate's `Cargo.toml` lets its code import.

mod cargo;
mod imports;
mod items;
mod resolve;

pub(crate) use imports::{rust_sites, use_leaves, Leaf};
pub(crate) use items::outer_attributes;
pub(crate) use resolve::RustResolver;
