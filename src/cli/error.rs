//! The one error type of the command line: an exit code, the error with its causes, hints.

use std::fmt::Write as _;

use crate::config::ConfigError;
use crate::exit::ExitCode;
use crate::model::ModelError;
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

    /// Renders `error: …`, `caused by: …` lines and `hint: …` lines, secrets redacted.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "error: {}", self.error);
        let mut source = self.error.source();
        let mut last = self.error.to_string();
        while let Some(cause) = source {
            let text = cause.to_string();
            // Errors that print their source inline would repeat it.
            if !last.contains(&text) {
                let _ = writeln!(s, "caused by: {text}");
            }
            last = text;
            source = cause.source();
        }
        for h in &self.hints {
            let _ = writeln!(s, "hint: {h}");
        }
        Redactor::global().redact(&s)
    }
}

impl From<std::io::Error> for CommandError {
    fn from(e: std::io::Error) -> Self {
        let broken = e.kind() == std::io::ErrorKind::BrokenPipe;
        let mut err = CommandError::failure(e);
        err.broken_pipe = broken;
        err
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        let hints: Vec<String> = match &e {
            ConfigError::Untrusted { path, .. } => vec![
                format!(
                    "read {} first: a committed config could send your code and keys elsewhere or run commands",
                    path.display()
                ),
                "if you trust this clone, run `git config triad.trusted true` (stored in .git/config, never cloned)".into(),
                "or put those settings in ~/.config/git-triad/config.toml instead".into(),
            ],
            ConfigError::Parse { path, .. } => vec![format!("fix the TOML syntax in {path}")],
            ConfigError::Invalid { .. } => {
                vec!["`git triad config show --origin` shows every value and where it came from".into()]
            }
            ConfigError::BadKey(_) | ConfigError::BadOverride(_) => {
                vec!["example: git triad -c arbiter.mode=full run --task my-task".into()]
            }
            ConfigError::Read { .. } => vec![],
        };
        let mut err = CommandError::usage(e);
        err.hints = hints;
        err
    }
}

impl From<ModelError> for CommandError {
    fn from(e: ModelError) -> Self {
        match &e {
            ModelError::Budget(b) => {
                let scope = b.scope;
                CommandError::new(ExitCode::BudgetExceeded, e).hint(match scope {
                    "run" => "raise the cap with `--budget <USD>` or `-c budget.run_usd=<USD>`"
                        .to_string(),
                    other => {
                        format!("the {other}ly cap is `budget.{other}ly_usd`; raise it, or wait")
                    }
                })
            }
            ModelError::AllFailed { role, .. } => {
                let role = *role;
                CommandError::failure(e)
                    .hint(
                        "`git triad models list` shows which models are reachable; `git triad models check <model>` tests one",
                    )
                    .hint(format!(
                        "choose other models with `-c roles.{role}.models='[\"<model>\", ...]'`"
                    ))
            }
            ModelError::UnknownModel(_) => {
                CommandError::usage(e).hint("`git triad models list` shows the registered models")
            }
            ModelError::SchemaViolation { .. } => CommandError::failure(e).hint(
                "a stronger model for this role usually fixes this; see `git triad models list`",
            ),
        }
    }
}

impl From<git2::Error> for CommandError {
    fn from(e: git2::Error) -> Self {
        CommandError::failure(e)
    }
}
