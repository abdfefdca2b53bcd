//! The one error type of the command line: an exit code, the error with its causes, hints.
//! Every conversion from a library error, with its hints, is in [`convert`].

mod convert;

pub use convert::{local_error, run_error, CHECK_PURPOSE};

use std::fmt::Write as _;

use crate::exit::ExitCode;
use crate::redact::Redactor;

/// An error on its way to the user.
#[derive(Debug)]
pub struct CommandError {
    /// The exit code it maps to.
    pub kind: ExitCode,
    /// What went wrong, with its cause chain.
    pub error: Box<dyn std::error::Error + Send + Sync>,
    /// What to do next, one line each.
    pub hints: Vec<String>,
    /// Stdout was closed by the reader (`git triad log | head`): exit quietly.
    pub broken_pipe: bool,
}

/// Result of a subcommand.
pub type CommandResult<T = ExitCode> = Result<T, CommandError>;

impl CommandError {
    /// An error with an exit code.
    pub fn new(kind: ExitCode, error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        CommandError {
            kind,
            error: error.into(),
            hints: Vec::new(),
            broken_pipe: false,
        }
    }

    /// A general failure (exit 1).
    pub fn failure(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::new(ExitCode::Error, error)
    }

    /// A usage or configuration error (exit 2).
    pub fn usage(error: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::new(ExitCode::Usage, error)
    }

    /// Adds a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }

    /// The causes of the error, outermost first, each once: an error that prints its
    /// source inline does not have it repeated.
    pub fn causes(&self) -> Vec<String> {
        let mut causes = Vec::new();
        let mut source = self.error.source();
        let mut last = self.error.to_string();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !last.contains(&text) {
                causes.push(text.clone());
            }
            last = text;
            source = cause.source();
        }
        causes
    }

    /// Renders `error: …`, `caused by: …` lines and `hint: …` lines, secrets redacted.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "error: {}", self.error);
        for cause in self.causes() {
            let _ = writeln!(s, "caused by: {cause}");
        }
        for h in &self.hints {
            let _ = writeln!(s, "hint: {h}");
        }
        // Errors quote servers and models: shown as text, never obeyed.
        crate::safe::text(&Redactor::global().redact(&s)).into_owned()
    }
}
