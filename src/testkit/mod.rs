//! Test support shared by the integration tests, benches, shell tests and the
//! `triad-fake-llm` binary, compiled only with the `test-fakes` feature: the shipped library
//! leaves it out, and tests and benches get it through the package's self dev-dependency
//! (see `Cargo.toml`) without passing `--features`.
//!
//! Nothing here is used by `git triad` itself; it exists so tests never need the internet or
//! real API keys, while still exercising the real HTTP clients end to end.

pub mod fake_llm;
