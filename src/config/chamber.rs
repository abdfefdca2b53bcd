//! The `[chamber]` section and a profile's chamber: who deliberates and what it may spend
//! (seed 003). Split from [`super::schema`], which holds the rest of the configuration.

use serde::{Deserialize, Serialize};

use super::schema::ModelList;

/// The deliberation chamber (seed 003): who sits on the panel, who arbitrates, and what it
/// may spend.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChamberConfig {
    /// Two or three registry models answering independently (empty: the distinct models of
    /// the effective roles, at most three).
    #[serde(default)]
    pub panel: ModelList,
    /// The model that synthesizes (empty: the first model of the arbiter role).
    #[serde(default)]
    pub arbiter: String,
    /// Sessions a day in this repository (0: no limit).
    #[serde(default = "default_sessions_per_day")]
    pub sessions_per_day: u32,
    /// Hard stop per session in USD, checked before every call (0: no cap).
    #[serde(default = "default_session_usd")]
    pub session_usd: f64,
    /// Chamber spending a calendar month in USD (0: no cap).
    #[serde(default = "default_chamber_monthly_usd")]
    pub monthly_usd: f64,
    /// Output token cap of each chamber call.
    #[serde(default = "default_chamber_max_tokens")]
    pub max_tokens: u32,
}

fn default_sessions_per_day() -> u32 {
    10
}
fn default_session_usd() -> f64 {
    3.0
}
fn default_chamber_monthly_usd() -> f64 {
    100.0
}
fn default_chamber_max_tokens() -> u32 {
    1024
}

impl Default for ChamberConfig {
    fn default() -> Self {
        ChamberConfig {
            panel: ModelList::default(),
            arbiter: String::new(),
            sessions_per_day: default_sessions_per_day(),
            session_usd: default_session_usd(),
            monthly_usd: default_chamber_monthly_usd(),
            max_tokens: default_chamber_max_tokens(),
        }
    }
}

/// A profile's chamber: the panel and the arbiter that work with its models.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileChamber {
    /// Two or three distinct models.
    #[serde(default)]
    pub panel: ModelList,
    /// The model that synthesizes.
    #[serde(default)]
    pub arbiter: String,
}
