//! The verify command: whether it may run (a TaskSpec's command runs only in a trusted
//! clone), and running it in a temporary worktree at the run's tip.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::building::points_at;
use super::{Run, RunError};
use crate::config::Config;
use crate::git::worktree::{CommandOutcome, TempWorktree};
use crate::git::ObjectId;
use crate::pipeline::observer::Progress;
use crate::privacy::mask_key_shaped;
use crate::redact::redact;
use crate::task::TaskSpec;

/// Lines of the command's output kept for the record and the arbiter.
const TAIL_LINES: usize = 60;

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

/// What the verifier is told when the command fails: that is an outright defect, the one
/// thing its stage exists to fix, and nothing else makes the run pass.
const FAILING: &str =
    "\nThe command FAILS, so the run cannot pass as it is: no review can approve a failing \
command. This is an outright defect: fix it now by changing the file the output points at (the \
code, or a test this run added whose expected value contradicts the TaskSpec's acceptance \
criteria; the tests the repository already had are evidence and stay as they are), in your \
answer format, and say in `summary` what you fixed. The command runs again on your fix.\n";

impl Run<'_> {
    /// Runs the verify command at `tip` and records its outcome (a fact for the verifier
    /// and the arbiter).
    pub(super) fn run_verify(&mut self, tip: ObjectId) -> Result<(), RunError> {
        let Some(outcome) = self.command_at(&tip) else {
            if let VerifyPlan::Skip(why) = &self.env.verify {
                self.env
                    .observer
                    .progress(&Progress::VerifySkipped { why: *why });
            }
            return Ok(());
        };
        self.state.verify = Some(outcome);
        self.state.verify_at = Some(tip);
        self.rec.event(&self.state, "verify command ran")?;
        Ok(())
    }

    /// The verify command's failure at a building stage's commit `at` (whose tree is
    /// `tree`), and whether the command passed at the run's base (asked once, the first time
    /// a stage fails it). A failure the base had too counts only when the output points at
    /// the task's files: a bug fix's failing test is the task's business, and the Verify
    /// stage's floor would reject it anyway, so the building stages are shown it as a plain
    /// test loop would be; a failure elsewhere (a broken tool, another module) holds no
    /// stage back. `None` when it passes, does not run, is off while building
    /// (`verify.while_building`), or failed at the base for reasons outside the task.
    pub(super) fn fails_verify(
        &mut self,
        at: &ObjectId,
        tree: &git2::Tree<'_>,
    ) -> Result<Option<(CommandOutcome, bool)>, RunError> {
        if !self.env.config.config.verify.while_building {
            return Ok(None);
        }
        let Some(outcome) = self.command_at(at) else {
            return Ok(None);
        };
        if outcome.exit_code == Some(0) {
            return Ok(None);
        }
        let passed_at_base = self.at_base()?.is_none_or(|o| o.exit_code == Some(0));
        if !passed_at_base && self.pointed(&outcome.tail, tree).is_empty() {
            return Ok(None);
        }
        Ok(Some((outcome, passed_at_base)))
    }

    /// Runs the verify command in a temporary worktree at `at`, with progress; `None` when
    /// the run's plan is not to run one. Its output is masked: the command runs code a model
    /// wrote, which may have read a key from a file, and the output goes to records and
    /// models.
    fn command_at(&self, at: &ObjectId) -> Option<CommandOutcome> {
        let VerifyPlan::Run { command, timeout } = &self.env.verify else {
            return None;
        };
        self.env
            .observer
            .progress(&Progress::VerifyStarted { command, at });
        let mut outcome = match TempWorktree::add(&self.env.repo_root(), at.as_str()) {
            Ok(wt) => wt.run(command, *timeout, TAIL_LINES),
            Err(e) => CommandOutcome {
                command: command.clone(),
                exit_code: None,
                timed_out: false,
                tail: format!("could not create the worktree: {e}"),
                duration_ms: 0,
            },
        };
        outcome.tail = mask_key_shaped(&outcome.tail).into_owned();
        outcome.command = redact(&outcome.command).into_owned();
        self.env
            .observer
            .progress(&Progress::VerifyFinished { outcome: &outcome });
        Some(outcome)
    }

    /// The verify command's outcome at the run's base (run once per process; recorded in the
    /// state as whether it passed). `None` when no command runs.
    fn at_base(&mut self) -> Result<Option<&CommandOutcome>, RunError> {
        if self.at_base.get().is_none() {
            let base = self.state.base.clone();
            let outcome = self.command_at(&base);
            if let Some(o) = &outcome {
                self.state.base_verify = Some(o.exit_code == Some(0));
                self.rec
                    .event(&self.state, "verify command ran at the run's base")?;
            }
            let _ = self.at_base.set(outcome);
        }
        Ok(self.at_base.get().and_then(Option::as_ref))
    }

    /// What a building stage is told before it starts when the verify command already fails
    /// at the run's base in the task's own files (a bug fix's failing test): the command and
    /// the end of its output, as a fact. A builder that is not shown the failure it must fix
    /// guesses (seen: a small model wrote the test file back unchanged three times); a test
    /// loop shows it. Empty when the command passes, does not run, is off while building, or
    /// fails elsewhere.
    pub(super) fn base_failure_facts(&mut self) -> Result<String, RunError> {
        if !self.env.config.config.verify.while_building {
            return Ok(String::new());
        }
        let base_tree = self.base_tree()?;
        let Some(outcome) = self.at_base()?.cloned() else {
            return Ok(String::new());
        };
        if outcome.exit_code == Some(0) {
            return Ok(String::new());
        }
        let pointed = self.pointed(&outcome.tail, &base_tree);
        if pointed.is_empty() {
            return Ok(String::new());
        }
        let lines: Vec<&str> = outcome.tail.lines().collect();
        let tail = lines[lines.len().saturating_sub(30)..].join("\n");
        Ok(format!(
            "## The verify command fails before any change (a fact)\n`{}` {} at the run's base. The end of its output:\n```\n{tail}\n```\n{}Make it pass by fixing the code; the tests the repository already has are evidence and stay as they are.\n",
            outcome.command,
            outcome
                .exit_code
                .map_or("is killed".to_string(), |c| format!("exits with {c}")),
            super::building::points_at(&pointed)
        ))
    }

    /// Where the failing command's output `tail` points, in the tree it ran at.
    fn pointed_at_verify(&self, tail: &str) -> String {
        let tree = self.state.verify_at.as_ref().and_then(|at| {
            let oid = at.oid().ok()?;
            self.env.repo.find_commit(oid).and_then(|c| c.tree()).ok()
        });
        tree.map_or_else(String::new, |t| points_at(&self.pointed(tail, &t)))
    }

    /// The verify command's result as the verifier is shown it.
    pub(super) fn verify_facts(&self) -> String {
        match (&self.state.verify, &self.env.verify) {
            (Some(v), _) => {
                let mut s = format!(
                    "## Verify command result (a fact)\ncommand: {}\nexit code: {}\noutput tail:\n{}\n",
                    v.command,
                    v.exit_code
                        .map_or("none (killed)".to_string(), |c| c.to_string()),
                    v.tail
                );
                if v.exit_code != Some(0) {
                    s.push_str(&self.pointed_at_verify(&v.tail));
                    s.push_str(FAILING);
                }
                s
            }
            (None, VerifyPlan::Skip(why)) => {
                format!("## Verify command\nnot run: {}\n", why.describe())
            }
            (None, VerifyPlan::Run { .. }) => {
                "## Verify command\nnot run: no verify command is configured\n".into()
            }
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
