//! The exit codes of `git triad`, named in one place.

/// Every way the `git-triad` process can end.
///
/// Scripts, hooks and CI block on these numbers, so they never change meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// The command did what was asked (a run ended APPROVE or FLAG).
    Ok = 0,
    /// Something failed; the message says what and what to do.
    Error = 1,
    /// The command line or the configuration was not usable.
    Usage = 2,
    /// The arbiter halted the pipeline (circuit breaker).
    Halt = 3,
    /// A stage used up its retries and the policy was not to halt.
    RetriesExhausted = 4,
    /// The run's budget would have been exceeded; it stopped before spending more.
    BudgetExceeded = 5,
    /// The run waits on the user (a stage answered NEEDS_INFO).
    WaitingOnUser = 6,
    /// Another git triad process is working on the same run; nothing was done.
    Busy = 7,
}

impl ExitCode {
    /// The numeric process exit status.
    pub fn code(self) -> i32 {
        self as i32
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}
