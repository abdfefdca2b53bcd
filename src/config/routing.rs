//! The routing modes: how a role set to `auto` picks among measured models (seed 001 §7).
//! Split from [`super::schema`], which holds the rest of the configuration.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a role set to `auto` picks among the models measured by `git triad bench`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RoutingMode {
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

/// How many implementers a `tournament` routing sets against each other.
pub const TOURNAMENT_K: usize = 3;

impl RoutingMode {
    /// Every mode, in the order the help lists them.
    pub const ALL: [RoutingMode; 5] = [
        RoutingMode::Quality,
        RoutingMode::Cost,
        RoutingMode::Speed,
        RoutingMode::Hybrid,
        RoutingMode::Tournament,
    ];

    /// The lowercase name used in config and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RoutingMode::Quality => "quality",
            RoutingMode::Cost => "cost",
            RoutingMode::Speed => "speed",
            RoutingMode::Hybrid => "hybrid",
            RoutingMode::Tournament => "tournament",
        }
    }
}

impl fmt::Display for RoutingMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for RoutingMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RoutingMode::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!("`{s}` is not a routing mode (quality, cost, speed, hybrid, tournament)")
            })
    }
}
