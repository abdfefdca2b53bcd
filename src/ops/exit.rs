//! What each outcome means as an exit code, in one place: a run's status, a reconciliation's
//! verdict, a review against its threshold, a chamber session's standing, and a run continued
//! after the command that unblocked it. Every front end (the command line, a session's tools,
//! `bench --compare`) reads these; none maps a status itself.

use crate::chamber::Status;
use crate::exit::ExitCode;
use crate::pipeline::RunStatus;
use crate::verdict::Verdict;

/// The exit code of a run that ended with `status`.
pub fn run_exit(status: RunStatus) -> ExitCode {
    match status {
        RunStatus::Approved | RunStatus::Flagged => ExitCode::Ok,
        RunStatus::Halted => ExitCode::Halt,
        RunStatus::RetriesExhausted => ExitCode::RetriesExhausted,
        RunStatus::BudgetExceeded => ExitCode::BudgetExceeded,
        RunStatus::WaitingOnUser => ExitCode::WaitingOnUser,
        RunStatus::Failed | RunStatus::Running => ExitCode::Error,
    }
}

/// The exit code of a reconciliation: its verdict when it reached one (HALT stops, REJECT
/// fails), else what the run's status means.
pub fn reconcile_exit(verdict: Option<Verdict>, status: RunStatus) -> ExitCode {
    match verdict {
        Some(Verdict::Halt) => ExitCode::Halt,
        Some(Verdict::Reject) => ExitCode::Error,
        Some(_) => ExitCode::Ok,
        None => run_exit(status),
    }
}

/// The exit code of a review whose verdict is `verdict`, when `fail_at` is the least verdict
/// that fails it: HALT is always 3, a failing verdict 1, anything below 0.
pub fn review_exit(verdict: Verdict, fail_at: Verdict) -> ExitCode {
    if verdict == Verdict::Halt {
        ExitCode::Halt
    } else if verdict >= fail_at {
        ExitCode::Error
    } else {
        ExitCode::Ok
    }
}

/// The exit code of a chamber session that stands at `status`: 6 while it waits on the
/// founder (input, or an action on its synthesis), 0 once accepted or closed, 1 when it has
/// no synthesis (stopped, or never got one).
pub fn chamber_exit(status: Status) -> ExitCode {
    match status {
        Status::AwaitingInput | Status::AwaitingAction => ExitCode::WaitingOnUser,
        Status::AutoAccepted | Status::Closed => ExitCode::Ok,
        Status::Stopped | Status::Open => ExitCode::Error,
    }
}

/// The exit code of a command after which an unblocked run went on in the same process:
/// the command's own failure stands, else the continued run's outcome is the answer.
pub fn continued_exit(first: ExitCode, continued: ExitCode) -> ExitCode {
    if first == ExitCode::Ok {
        continued
    } else {
        first
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_review_fails_at_its_threshold_and_halt_is_always_three() {
        assert_eq!(review_exit(Verdict::Flag, Verdict::Halt), ExitCode::Ok);
        assert_eq!(
            review_exit(Verdict::Reject, Verdict::Reject),
            ExitCode::Error
        );
        assert_eq!(review_exit(Verdict::Flag, Verdict::Flag), ExitCode::Error);
        assert_eq!(review_exit(Verdict::Halt, Verdict::Flag), ExitCode::Halt);
        assert_eq!(review_exit(Verdict::Approve, Verdict::Flag), ExitCode::Ok);
    }

    #[test]
    fn a_continued_run_answers_only_after_a_command_that_succeeded() {
        assert_eq!(continued_exit(ExitCode::Ok, ExitCode::Halt), ExitCode::Halt);
        assert_eq!(
            continued_exit(ExitCode::Error, ExitCode::Ok),
            ExitCode::Error
        );
    }

    #[test]
    fn a_reconciliation_without_a_verdict_is_its_runs_status() {
        assert_eq!(
            reconcile_exit(None, RunStatus::WaitingOnUser),
            ExitCode::WaitingOnUser
        );
        assert_eq!(
            reconcile_exit(Some(Verdict::Reject), RunStatus::Approved),
            ExitCode::Error
        );
    }
}
