//! The `[session]` section: the limits of a hierarchical session (`git triad session`, seed
//! 002). Split from [`super::schema`], which holds the rest of the configuration.

use serde::{Deserialize, Serialize};

/// How far a session's conversations may go before the session steps in.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SessionConfig {
    /// Share of a model's context window (0.85 to 1.0) at which its conversation is handed
    /// off without waiting for its report; the seed's warnings come at 70 % and 85 %.
    #[serde(default = "default_hard_limit")]
    pub hard_limit: f64,
    /// Messages the manager and an orchestrator may exchange before the human is asked
    /// again: a loop guard for models that keep talking.
    #[serde(default = "default_max_exchanges")]
    pub max_exchanges: u32,
    /// Tool calls one conversation may make in answer to one message.
    #[serde(default = "default_max_tool_calls")]
    pub max_tool_calls: u32,
    /// Output token cap of each manager and orchestrator call.
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// Hard stop of one session in USD, its manager's and orchestrators' calls (the runs
    /// they start have their own cap, `budget.run_usd`); 0: no cap.
    #[serde(default = "default_session_usd")]
    pub session_usd: f64,
}

/// Share of the window at which a session's hand-off is forced, unless configured otherwise.
pub const DEFAULT_HARD_LIMIT: f64 = 0.95;

fn default_hard_limit() -> f64 {
    DEFAULT_HARD_LIMIT
}
fn default_max_exchanges() -> u32 {
    40
}
fn default_max_tool_calls() -> u32 {
    25
}
fn default_max_tokens() -> u32 {
    2048
}
fn default_session_usd() -> f64 {
    10.0
}

impl Default for SessionConfig {
    fn default() -> Self {
        SessionConfig {
            hard_limit: default_hard_limit(),
            max_exchanges: default_max_exchanges(),
            max_tool_calls: default_max_tool_calls(),
            max_tokens: default_max_tokens(),
            session_usd: default_session_usd(),
        }
    }
}
