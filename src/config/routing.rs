//! The routing modes: how a role set to `auto` picks among measured models (seed 001 §7).
//! Split from [`super::schema`], which holds the rest of the configuration.

crate::names::named! {
    /// How a role set to `auto` picks among the models measured by `git triad bench`: the
    /// name `--routing` takes and the configuration writes (`routing`).
    #[derive(Default)]
    pub enum RoutingMode: "a routing mode", written snake_case {
        /// The best measured score.
        #[default]
        Quality,
        /// The lowest measured cost a task among the models scoring within 90 % of the best.
        Cost,
        /// The lowest measured latency a task among the models scoring within 90 % of the best.
        Speed,
        /// The best weighted balance: 60 % score, 20 % cost, 20 % latency.
        Hybrid,
        /// Ranked as `quality`, and the implement stage becomes a tournament: the best
        /// [`TOURNAMENT_K`] implementers build a solution each at once, an arbiter that is none
        /// of them reviews every one, and the best review goes on.
        Tournament,
    }
}

/// How many implementers a `tournament` routing sets against each other.
pub const TOURNAMENT_K: usize = 3;
