//! The chamber's caps (seed 003, Rate Limits and Cost Control): sessions a day, USD a
//! session (a hard stop checked before every call) and USD a month, counted from the
//! sessions recorded in this repository. Approaching a limit (80 %) notifies; reaching one
//! stops with the figures.

use crate::clock::{day_start_unix, month_start_unix};
use crate::config::ChamberConfig;
use crate::model::money::usd;

use super::Session;

/// The share of a limit at which the user is told it is near.
pub const NOTIFY_AT: f64 = 0.8;

/// A limit reached: nothing more is spent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct LimitHit(pub String);

/// What the recorded sessions used of the periods' limits.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Used {
    /// Sessions started today (UTC).
    pub today: u32,
    /// USD spent by sessions started this calendar month (UTC).
    pub month_usd: f64,
}

/// Counts today's sessions and this month's spending. A session that stopped before any
/// model answered it (a provider down, a key missing) is not one of the day's sessions; what
/// it spent still counts for the month.
pub fn used(sessions: &[Session], now_unix: u64) -> Used {
    let day = day_start_unix(now_unix);
    let month = month_start_unix(now_unix);
    let mut u = Used::default();
    for s in sessions {
        let unanswered =
            s.status == super::Status::Stopped && s.turns().all(|t| t.answer.is_none());
        if s.created_unix >= day && !unanswered {
            u.today += 1;
        }
        if s.created_unix >= month {
            u.month_usd += s.spend().cost_usd;
        }
    }
    u
}

/// Whether a new session may start; `Ok` carries the notices of limits it approaches.
pub fn may_start(config: &ChamberConfig, used: Used) -> Result<Vec<String>, LimitHit> {
    let mut notices = Vec::new();
    if config.sessions_per_day > 0 {
        let limit = config.sessions_per_day;
        if used.today >= limit {
            return Err(LimitHit(format!(
                "the chamber's daily limit is reached: {} of {limit} sessions today \
                 (chamber.sessions_per_day); the count starts again at 00:00 UTC",
                used.today
            )));
        }
        if f64::from(used.today + 1) >= NOTIFY_AT * f64::from(limit) {
            notices.push(format!(
                "this is session {} of the {limit} allowed today (chamber.sessions_per_day)",
                used.today + 1
            ));
        }
    }
    if config.monthly_usd > 0.0 {
        let cap = config.monthly_usd;
        if used.month_usd >= cap {
            return Err(LimitHit(format!(
                "the chamber's monthly budget is spent: {} of {} this month \
                 (chamber.monthly_usd)",
                usd(used.month_usd),
                usd(cap)
            )));
        }
        if used.month_usd >= NOTIFY_AT * cap {
            notices.push(format!(
                "the chamber has spent {} of its {} this month (chamber.monthly_usd)",
                usd(used.month_usd),
                usd(cap)
            ));
        }
    }
    Ok(notices)
}

/// The hard stop within a session: refuses a call whose worst case would cross the
/// session's cap or the month's.
#[derive(Debug, Clone, Copy)]
pub struct Guard {
    session_cap: Option<f64>,
    month_cap: Option<f64>,
    month_before: f64,
}

impl Guard {
    /// A guard for one session, given what the month spent before it.
    pub fn new(config: &ChamberConfig, month_before: f64) -> Self {
        Guard {
            session_cap: Some(config.session_usd).filter(|c| *c > 0.0),
            month_cap: Some(config.monthly_usd).filter(|c| *c > 0.0),
            month_before,
        }
    }

    /// Checks a call costing at most `estimate` when the session has spent `spent`.
    pub fn check(&self, spent: f64, estimate: f64) -> Result<(), LimitHit> {
        if let Some(cap) = self.session_cap {
            if spent + estimate > cap {
                return Err(LimitHit(format!(
                    "the session's hard stop: ${spent:.4} spent, the next call may cost up to \
                     ${estimate:.4}, the cap is {} (chamber.session_usd)",
                    usd(cap)
                )));
            }
        }
        if let Some(cap) = self.month_cap {
            let month = self.month_before + spent;
            if month + estimate > cap {
                return Err(LimitHit(format!(
                    "the chamber's monthly budget: ${month:.4} spent this month, the next call \
                     may cost up to ${estimate:.4}, the cap is {} (chamber.monthly_usd)",
                    usd(cap)
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(day: u32, session: f64, month: f64) -> ChamberConfig {
        ChamberConfig {
            sessions_per_day: day,
            session_usd: session,
            monthly_usd: month,
            ..ChamberConfig::default()
        }
    }

    #[test]
    fn the_daily_limit_notifies_then_stops() {
        let c = config(10, 3.0, 100.0);
        let ok = |today| {
            may_start(
                &c,
                Used {
                    today,
                    month_usd: 0.0,
                },
            )
        };
        assert!(ok(0).unwrap().is_empty());
        assert!(ok(7).unwrap()[0].contains("session 8 of the 10"));
        let hit = ok(10).unwrap_err();
        assert!(hit.0.contains("10 of 10 sessions today"), "{hit}");
        assert!(may_start(
            &config(0, 3.0, 100.0),
            Used {
                today: 99,
                month_usd: 0.0
            }
        )
        .is_ok());
    }

    #[test]
    fn the_month_notifies_then_stops() {
        let c = config(10, 3.0, 100.0);
        let at = |usd| {
            may_start(
                &c,
                Used {
                    today: 0,
                    month_usd: usd,
                },
            )
        };
        assert!(at(79.0).unwrap().is_empty());
        assert!(at(85.0).unwrap()[0].contains("$85.00 of its $100.00"));
        assert!(at(100.0).unwrap_err().0.contains("monthly budget is spent"));
    }

    #[test]
    fn the_session_stop_is_checked_before_the_call() {
        let g = Guard::new(&config(10, 0.5, 100.0), 0.0);
        assert!(g.check(0.2, 0.3).is_ok());
        let hit = g.check(0.3, 0.25).unwrap_err();
        assert!(hit.0.contains("cap is $0.50"), "{hit}");
        // A cap below a cent is written as it is, never rounded up past the call it refuses.
        let hit = Guard::new(&config(10, 0.005, 100.0), 0.0)
            .check(0.0, 0.0051)
            .unwrap_err();
        assert!(hit.0.contains("up to $0.0051, the cap is $0.005 "), "{hit}");
        let g = Guard::new(&config(10, 0.0, 1.0), 0.9);
        assert!(g.check(0.05, 0.1).unwrap_err().0.contains("monthly"));
    }
}
