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
    /// The status git triad ends with when it ends itself on Ctrl-C (a second one while a
    /// session's models work): the shell's convention for a process SIGINT ended, 128 + 2,
    /// so a script reads it as it would the signal. Not one of git triad's own outcomes, so
    /// not in [`ExitCode::ALL`] nor read back by [`ExitCode::from_code`].
    pub const INTERRUPTED: i32 = 128 + 2;

    /// Every exit code, in numeric order.
    pub const ALL: [ExitCode; 8] = [
        ExitCode::Ok,
        ExitCode::Error,
        ExitCode::Usage,
        ExitCode::Halt,
        ExitCode::RetriesExhausted,
        ExitCode::BudgetExceeded,
        ExitCode::WaitingOnUser,
        ExitCode::Busy,
    ];

    /// The numeric process exit status.
    pub fn code(self) -> i32 {
        self as i32
    }

    /// The exit code a process ended with, if it is one of ours (a panic's 101 or a
    /// signal's is not).
    pub fn from_code(code: i32) -> Option<ExitCode> {
        ExitCode::ALL.into_iter().find(|c| c.code() == code)
    }

    /// What the code means in a few words, as the command line's help, the man page and the
    /// README's table all give it.
    pub fn meaning(self) -> &'static str {
        match self {
            ExitCode::Ok => "ok",
            ExitCode::Error => "error",
            ExitCode::Usage => "usage",
            ExitCode::Halt => "HALT",
            ExitCode::RetriesExhausted => "retries exhausted",
            ExitCode::BudgetExceeded => "budget exceeded",
            ExitCode::WaitingOnUser => "waiting on you",
            ExitCode::Busy => "run busy in another process",
        }
    }

    /// What the code says about the command that ended with it, in one phrase for a reader
    /// that acts on it (a session's orchestrator reading back a `git triad` it ran); `None`
    /// for an error or a usage mistake, which its own message and hints say better.
    pub fn outcome(self) -> Option<&'static str> {
        match self {
            ExitCode::Ok => Some("done"),
            ExitCode::Error | ExitCode::Usage => None,
            ExitCode::Halt => Some("HALT: the arbiter stopped the run for a human"),
            ExitCode::RetriesExhausted => Some("a stage used up its retries"),
            ExitCode::BudgetExceeded => {
                Some("the budget would have been exceeded; nothing more was spent")
            }
            ExitCode::WaitingOnUser => Some("waiting: questions to answer or a decision to make"),
            ExitCode::Busy => Some("busy: another git triad process holds this run"),
        }
    }

    /// Every code with its meaning, as one sentence: `Exit codes: 0 ok, 1 error, …`.
    pub fn summary() -> String {
        let each: Vec<String> = ExitCode::ALL
            .iter()
            .map(|c| format!("{} {}", c.code(), c.meaning()))
            .collect();
        format!("Exit codes: {}.", each.join(", "))
    }
}

impl From<ExitCode> for std::process::ExitCode {
    fn from(code: ExitCode) -> Self {
        std::process::ExitCode::from(code as u8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_numbered_in_order_and_read_back() {
        for (i, c) in ExitCode::ALL.into_iter().enumerate() {
            assert_eq!(c.code(), i as i32);
            assert_eq!(ExitCode::from_code(c.code()), Some(c));
        }
        assert_eq!(ExitCode::from_code(101), None);
        assert_eq!(ExitCode::INTERRUPTED, 128 + libc::SIGINT);
        assert_eq!(ExitCode::from_code(ExitCode::INTERRUPTED), None);
        assert!(ExitCode::summary().starts_with("Exit codes: 0 ok, 1 error, 2 usage, 3 HALT,"));
    }
}
