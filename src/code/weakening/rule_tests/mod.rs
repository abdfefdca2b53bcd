//! Each rule's tests, kept apart from the rules: they check a rule through the whole
//! check (`testing::found`, every rule at once), which the rules must not depend on.

mod exits;
mod params;
mod runner;
mod skips;
mod stubs;
