//! How a run stands, named once: the status `run.json` records, `log` and `--json` print,
//! and the task state machine moves a task on when a run ends (see [`super::lifecycle`]).
//! It lives with tasks, below the pipeline that sets it, so that both read the same value.

crate::names::named! {
    /// How a run stands.
    pub enum RunStatus: "a run status", written snake_case {
        /// Working (or killed while working: `resume` continues it).
        Running,
        /// Finished; the final verdict was APPROVE.
        Approved,
        /// Finished; the final verdict was FLAG.
        Flagged,
        /// The arbiter (or an escalation) halted the run.
        Halted,
        /// Retries used up and no escalation left.
        RetriesExhausted,
        /// Stopped before crossing the budget.
        BudgetExceeded,
        /// A stage asked the user for information.
        WaitingOnUser,
        /// Stopped by an error (provider down, a note that could not be written, ...);
        /// `resume` retries.
        Failed,
    }
}

impl RunStatus {
    /// Whether `resume` may continue the run.
    pub fn resumable(self) -> bool {
        matches!(
            self,
            RunStatus::Running
                | RunStatus::Failed
                | RunStatus::BudgetExceeded
                | RunStatus::WaitingOnUser
        )
    }

    /// Whether the run has ended (every status but `running`).
    pub fn ended(self) -> bool {
        self != RunStatus::Running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_round_trips_and_is_written_as_run_json_always_wrote_it() {
        for s in RunStatus::ALL {
            assert_eq!(RunStatus::parse(s.as_str()), Some(s));
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(
                serde_json::from_value::<RunStatus>(json.clone()).unwrap(),
                s
            );
            assert_eq!(json, s.as_str());
        }
        // The names every run.json, `log --format json` and a session's tool result carry.
        assert_eq!(
            RunStatus::NAMES,
            [
                "running",
                "approved",
                "flagged",
                "halted",
                "retries_exhausted",
                "budget_exceeded",
                "waiting_on_user",
                "failed"
            ]
        );
        assert!(!RunStatus::Running.ended() && RunStatus::ALL[1..].iter().all(|s| s.ended()));
    }
}
