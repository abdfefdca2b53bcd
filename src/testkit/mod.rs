//! Test support that ships inside the library so integration tests, shell tests and the
//! `triad-fake-llm` binary can share it.
//!
//! Nothing here is used by `git triad` itself; it exists so tests never need the internet or
//! real API keys, while still exercising the real HTTP clients end to end.

pub mod fake_llm;
