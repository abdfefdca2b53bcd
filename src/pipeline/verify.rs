//! Whether a run's verify command runs, and which: a TaskSpec's own command only in a
//! trusted clone (it is a committed file), else the configured one. Running it is the run's
//! ([`super::run`]).

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::task::TaskSpec;

/// Why the verify command is not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifySkip {
    /// The TaskSpec names a command, and a committed file may not run commands in a clone
    /// that is not trusted.
    Untrusted,
    /// Neither the TaskSpec nor the configuration names a command.
    NotConfigured,
}

impl VerifySkip {
    /// The reason as a fact (for the verifier's prompt and the record).
    pub fn describe(self) -> &'static str {
        match self {
            VerifySkip::Untrusted => {
                "the TaskSpec's verify command was not run: this clone is not trusted"
            }
            VerifySkip::NotConfigured => "no verify command is configured",
        }
    }
}

/// Whether and how a run's verify command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyPlan {
    /// Run this command with this timeout.
    Run {
        /// The shell command.
        command: String,
        /// When it is killed.
        timeout: Duration,
    },
    /// Do not run a command.
    Skip(VerifySkip),
}

impl VerifyPlan {
    /// The plan for `spec`: its own command only when the clone is `trusted` (the TaskSpec
    /// is a committed file), else the configured one (which never comes from an untrusted
    /// repository: see the configuration's trust rules).
    pub fn decide(spec: &TaskSpec, config: &Config, trusted: bool) -> VerifyPlan {
        let default_timeout = config.verify.timeout_secs;
        if let Some(v) = spec
            .verify
            .as_ref()
            .filter(|v| !v.command.trim().is_empty())
        {
            return if trusted {
                VerifyPlan::Run {
                    command: v.command.clone(),
                    timeout: Duration::from_secs(v.timeout_secs.unwrap_or(default_timeout)),
                }
            } else {
                VerifyPlan::Skip(VerifySkip::Untrusted)
            };
        }
        match config.verify.command.trim() {
            "" => VerifyPlan::Skip(VerifySkip::NotConfigured),
            c => VerifyPlan::Run {
                command: c.to_string(),
                timeout: Duration::from_secs(default_timeout),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LoadOptions, LoadedConfig};

    fn config(verify_command: &str) -> Config {
        let mut c = LoadedConfig::load(&LoadOptions {
            user_file: Some("/nonexistent/x.toml".into()),
            ..LoadOptions::default()
        })
        .unwrap()
        .config;
        c.verify.command = verify_command.into();
        c
    }

    fn spec(verify: Option<&str>) -> TaskSpec {
        let mut text = "title = \"t\"\ndescription = \"d\"\n".to_string();
        if let Some(v) = verify {
            text.push_str(&format!("[verify]\ncommand = \"{v}\"\ntimeout_secs = 7\n"));
        }
        TaskSpec::parse(&text, ".triad/tasks/t.toml", "t").unwrap()
    }

    #[test]
    fn a_committed_command_runs_only_in_a_trusted_clone() {
        let c = config("");
        assert_eq!(
            VerifyPlan::decide(&spec(Some("make test")), &c, false),
            VerifyPlan::Skip(VerifySkip::Untrusted)
        );
        assert_eq!(
            VerifyPlan::decide(&spec(Some("make test")), &c, true),
            VerifyPlan::Run {
                command: "make test".into(),
                timeout: Duration::from_secs(7)
            }
        );
    }

    #[test]
    fn the_configured_command_is_the_fallback() {
        assert_eq!(
            VerifyPlan::decide(&spec(None), &config(""), true),
            VerifyPlan::Skip(VerifySkip::NotConfigured)
        );
        let c = config("cargo test");
        assert!(matches!(
            VerifyPlan::decide(&spec(None), &c, false),
            VerifyPlan::Run { ref command, .. } if command == "cargo test"
        ));
    }
}
