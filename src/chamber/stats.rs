//! `chamber stats`: what the chamber decided and spent, and the periodic review the seed
//! asks for: when the arbiter is also a panelist, how often its own view wins the arbitrated
//! sessions (above 50 %, the choice of arbiter deserves a second look).

use std::collections::BTreeMap;

use serde::Serialize;

use super::limits::used;
use super::{Session, Status};
use crate::config::ChamberConfig;

/// Share of arbitrated sessions above which an arbiter-panelist's wins are warned about.
pub const WIN_WARNING: f64 = 0.5;

/// One arbiter's record as arbiter-panelist.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ArbiterRecord {
    /// Sessions where it was also a panelist, the panel diverged and it synthesized.
    pub arbitrated: u32,
    /// Of those, sessions whose synthesis took its own panelist stance.
    pub own_view_won: u32,
}

/// The figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Sessions recorded.
    pub sessions: u32,
    /// Per status.
    pub by_status: BTreeMap<String, u32>,
    /// Sessions whose synthesis was the honest "no consensus".
    pub no_consensus: u32,
    /// Level 2 sessions escalated to Level 3.
    pub escalated: u32,
    /// Founder actions, per action.
    pub actions: BTreeMap<String, u32>,
    /// Sessions started today, and the limit (0: none).
    pub today: (u32, u32),
    /// USD this month, and the cap (0: none).
    pub month_usd: (f64, f64),
    /// USD of every recorded session.
    pub total_usd: f64,
    /// Per arbiter model.
    pub arbiters: BTreeMap<String, ArbiterRecord>,
    /// What the founder should look at.
    pub warnings: Vec<String>,
}

/// Computes the figures over every recorded session.
pub fn stats(sessions: &[Session], config: &ChamberConfig, now_unix: u64) -> Stats {
    let mut st = Stats {
        sessions: sessions.len() as u32,
        ..Stats::default()
    };
    for s in sessions {
        *st.by_status
            .entry(s.status.as_str().to_string())
            .or_default() += 1;
        if s.no_consensus() {
            st.no_consensus += 1;
        }
        if s.escalated() {
            st.escalated += 1;
        }
        for a in &s.actions {
            *st.actions.entry(a.action.as_str().to_string()).or_default() += 1;
        }
        st.total_usd += s.spend().cost_usd;
        for won in s.rounds.iter().filter_map(|r| r.arbiter_view_won) {
            let rec = st.arbiters.entry(s.arbiter.clone()).or_default();
            rec.arbitrated += 1;
            rec.own_view_won += u32::from(won);
        }
    }
    let u = used(sessions, now_unix);
    st.today = (u.today, config.sessions_per_day);
    st.month_usd = (u.month_usd, config.monthly_usd);
    for (model, rec) in &st.arbiters {
        let share = f64::from(rec.own_view_won) / f64::from(rec.arbitrated.max(1));
        if share > WIN_WARNING {
            st.warnings.push(format!(
                "{model}'s own panelist view won {} of the {} arbitrated sessions it judged as \
                 arbiter and panelist ({:.0} % > 50 %): re-evaluate the choice of arbiter \
                 (chamber.arbiter)",
                rec.own_view_won,
                rec.arbitrated,
                share * 100.0
            ));
        }
    }
    let waiting = sessions
        .iter()
        .filter(|s| matches!(s.status, Status::AwaitingAction | Status::AwaitingInput))
        .count();
    if waiting > 0 {
        st.warnings.push(format!(
            "{waiting} session(s) wait for you (`git triad chamber list`)"
        ));
    }
    st
}

/// The figures as text.
pub fn text(st: &Stats) -> String {
    let mut out = format!("Chamber sessions: {}\n", st.sessions);
    for (status, n) in &st.by_status {
        out.push_str(&format!("  {status}: {n}\n"));
    }
    out.push_str(&format!(
        "No consensus: {}\nEscalated from Level 2: {}\n",
        st.no_consensus, st.escalated
    ));
    if !st.actions.is_empty() {
        let list: Vec<String> = st.actions.iter().map(|(a, n)| format!("{a} {n}")).collect();
        out.push_str(&format!("Founder actions: {}\n", list.join(", ")));
    }
    let cap = |v: f64| {
        if v > 0.0 {
            format!("${v:.2}")
        } else {
            "no cap".into()
        }
    };
    out.push_str(&format!(
        "Today: {} session(s) of {}\nThis month: ${:.4} of {}\nAll sessions: ${:.4}\n",
        st.today.0,
        if st.today.1 > 0 {
            st.today.1.to_string()
        } else {
            "no limit".into()
        },
        st.month_usd.0,
        cap(st.month_usd.1),
        st.total_usd
    ));
    for (model, rec) in &st.arbiters {
        out.push_str(&format!(
            "Arbiter {model} as panelist: own view won {} of {} arbitrated session(s)\n",
            rec.own_view_won, rec.arbitrated
        ));
    }
    out
}
