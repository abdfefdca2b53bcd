//! Probes: a claim about code, made runnable.
//!
//! A reviewer's "this returns the wrong value for an empty list" is a claim; a probe is the
//! few lines of code that would show it (`assert mean([]) == 0`). git triad runs each probe
//! against the reviewed tree, in the same kind of sandbox as the verify command (a scratch
//! copy of the tree, a minimal environment, a timeout, bounded output, no network where the
//! OS allows it, trusted clones only), and records what it showed:
//!
//! - [`ProbeOutcome::Confirmed`]: the probe fails, so the defect is real (the failing call,
//!   the expected and the actual value are kept);
//! - [`ProbeOutcome::Refuted`]: the probe passes, so the claimed defect does not happen;
//! - [`ProbeOutcome::Broken`]: the probe itself does not run (a syntax error, a name the
//!   code never had), so it shows nothing;
//! - [`ProbeOutcome::Unprobed`]: it was not run (an untrusted clone, a language without a
//!   runner, no probe given), and why;
//! - [`ProbeOutcome::Irrelevant`]: it fails, but not on anything the change did (`assert
//!   False`, a comparison of constants, a function the probe replaced itself): recorded,
//!   never counted.
//!
//! The outcome is decided outside the process the code under review runs in: that process
//! reports values, never verdicts ([`python`], [`value`]). For a review of a change, a
//! probe that fails is run on the base tree too where the base has the file, and both
//! outcomes are kept: a probe that fails the same way there describes behaviour the change
//! did not alter.
//!
//! Python probes are statements with `assert` (the module under review is star-imported
//! first); Rust probes are a `#[test]` function's body, run with `cargo test` where the
//! repository's verify command is `cargo test`-based. The TaskSpec's acceptance examples go
//! through the same runner.

mod behaviour;
mod examples;
mod intent;
mod mutants;
mod python;
mod regress;
mod result;
mod rust;
mod sandbox;
mod settings;
mod value;
mod weakening;

pub use behaviour::{
    BehaviourDiff, Difference, InputSource, BEHAVIOUR_CHANGED, BEHAVIOUR_REGRESSION, UNASKED_CHANGE,
};
pub use examples::{run_examples, ExampleRun, FAILING_EXAMPLE, UNGUARDED, UNRUNNABLE_EXAMPLE};
pub use intent::{keeps_behaviour, Intent};
pub use python::module_of;
pub use regress::{command_for, test_run, TestCommand, TestRun, TestRuns, REGRESSED_TEST};
pub use result::{BaseResult, ChangedLines, ProbeOutcome, ProbeResult};
pub use settings::ProbeSettings;
pub use weakening::Decided;

use std::cell::OnceCell;

use git2::{Repository, Tree};

use crate::code::Lang;
use sandbox::Sandbox;

/// One probe to run: the file of the tree it is about (its language and module), and its
/// code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeSpec {
    /// The reviewed file the probe exercises, from the repository's root.
    pub path: String,
    /// The probe's code, in that file's language.
    pub code: String,
}

/// What a probe runner may do in this repository.
#[derive(Debug, Clone)]
pub enum ProbePolicy {
    /// Run probes, with these settings (a trusted clone).
    Run(ProbeSettings),
    /// Run none, for this reason (an untrusted clone: the code under review would run).
    Off(String),
}

impl ProbePolicy {
    /// The policy for a clone: probes run code of the repository, so only a trusted clone
    /// runs them (the same rule as a TaskSpec's verify command).
    pub fn for_clone(trusted: bool, settings: ProbeSettings) -> ProbePolicy {
        if trusted {
            ProbePolicy::Run(settings)
        } else {
            ProbePolicy::Off(
                "not run: this clone is not trusted (probes run the repository's code; `git config triad.trusted true` trusts it)"
                    .into(),
            )
        }
    }
}

/// Runs probes against one tree of a repository, exported once into a scratch directory
/// the first time a probe needs it.
pub struct ProbeRunner<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
    policy: ProbePolicy,
    sandbox: OnceCell<Result<Sandbox, String>>,
    /// The change under review: what it changed, and the tree it changed.
    change: Option<(ChangedLines, Option<Tree<'r>>)>,
    base_sandbox: OnceCell<Result<Sandbox, String>>,
}

impl<'r> ProbeRunner<'r> {
    /// A runner for `tree`.
    pub fn new(repo: &'r Repository, tree: Tree<'r>, policy: ProbePolicy) -> Self {
        ProbeRunner {
            repo,
            tree,
            policy,
            sandbox: OnceCell::new(),
            change: None,
            base_sandbox: OnceCell::new(),
        }
    }

    /// The same runner for a review of a change: `changed` lines decide whether a failing
    /// probe is about the change, and a failing probe runs on `base` too (when given).
    pub fn about_change(mut self, changed: ChangedLines, base: Option<Tree<'r>>) -> Self {
        self.change = Some((changed, base));
        self
    }

    /// The change this runner reviews, as what a behaviour diff of it is taken on: the
    /// base tree, the new tree and the lines changed; `None` when no change with a base is
    /// known (see [`Self::behaviour`]).
    pub fn pair(&self) -> Option<(git2::Oid, git2::Oid, &ChangedLines)> {
        let (changed, Some(base)) = self.change.as_ref()? else {
            return None;
        };
        Some((base.id(), self.tree.id(), changed))
    }

    /// Whether probes run at all here, and if not why.
    pub fn off(&self) -> Option<&str> {
        match &self.policy {
            ProbePolicy::Off(why) => Some(why),
            ProbePolicy::Run(_) => None,
        }
    }

    /// Runs every probe and returns one result each, in order. Probes never share a
    /// process: one probe's state cannot change another's outcome.
    pub fn run(&self, probes: &[ProbeSpec]) -> Vec<ProbeResult> {
        let settings = match &self.policy {
            ProbePolicy::Off(why) => {
                return probes.iter().map(|_| ProbeResult::unprobed(why)).collect()
            }
            ProbePolicy::Run(s) => s,
        };
        let mut results: Vec<Option<ProbeResult>> = vec![None; probes.len()];
        let mut rust = Vec::new();
        for (i, p) in probes.iter().enumerate() {
            if p.code.trim().is_empty() {
                results[i] = Some(ProbeResult::unprobed("no probe was given"));
                continue;
            }
            match Lang::from_path(&p.path) {
                Some(Lang::Python) => {
                    let functions = self.changed_functions(Lang::Python);
                    let about = self.change.as_ref().map(|(changed, _)| python::About {
                        changed,
                        functions: &functions,
                    });
                    let mut result = match self.sandbox() {
                        Ok(sb) => python::run(sb, settings, &p.path, &p.code, about.as_ref()),
                        Err(why) => ProbeResult::broken(why.clone()),
                    };
                    if result.outcome == ProbeOutcome::Confirmed {
                        result.base = self.at_base(settings, p);
                    }
                    results[i] = Some(result)
                }
                Some(Lang::Rust) => rust.push(i),
                None => {
                    results[i] = Some(ProbeResult::unprobed(format!(
                        "not run: git triad has no probe runner for {}",
                        p.path
                    )))
                }
            }
        }
        if !rust.is_empty() {
            let batch: Vec<&str> = rust.iter().map(|&i| probes[i].code.as_str()).collect();
            let ran = match self.sandbox() {
                Ok(sb) => rust::run(sb, settings, &batch),
                Err(why) => batch
                    .iter()
                    .map(|_| rust::Ran::from(ProbeResult::broken(why)))
                    .collect(),
            };
            let functions = self.changed_functions(Lang::Rust);
            let mut confirmed = Vec::new();
            for (i, mut r) in rust.into_iter().zip(ran) {
                if r.result.outcome == ProbeOutcome::Confirmed && self.change.is_some() {
                    if rust::about_change(&probes[i].code, r.line, &functions) {
                        confirmed.push(i);
                    } else {
                        r.result.outcome = ProbeOutcome::Irrelevant;
                        r.result.detail = format!(
                            "irrelevant: its failing assertion holds no value computed by a function the change added or modified ({})",
                            r.result.detail
                        );
                    }
                }
                results[i] = Some(r.result);
            }
            // Where the base has the code, the confirmed ones run there too.
            if let Some(base) = self.change.as_ref().and_then(|(_, b)| b.as_ref()) {
                if !confirmed.is_empty() {
                    if let Ok(sb) = self
                        .base_sandbox
                        .get_or_init(|| Sandbox::export(self.repo, base))
                        .as_ref()
                    {
                        let codes: Vec<&str> =
                            confirmed.iter().map(|&i| probes[i].code.as_str()).collect();
                        for (i, b) in confirmed.iter().zip(rust::run(sb, settings, &codes)) {
                            if let Some(r) = results[*i].as_mut() {
                                r.base = Some(BaseResult {
                                    outcome: b.result.outcome,
                                    actual: b.result.actual,
                                });
                            }
                        }
                    }
                }
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| ProbeResult::broken("the probe did not run")))
            .collect()
    }

    /// The layers of the box around the last probe this runner ran (`None` when none ran).
    pub fn layers(&self) -> Option<crate::sandbox::Layers> {
        self.sandbox.get()?.as_ref().ok()?.layers()
    }

    fn sandbox(&self) -> Result<&Sandbox, &String> {
        self.sandbox
            .get_or_init(|| Sandbox::export(self.repo, &self.tree))
            .as_ref()
    }

    /// The functions of `lang` whose definitions hold a line the change under review added
    /// or modified (empty when no change is known).
    fn changed_functions(&self, lang: Lang) -> std::collections::BTreeSet<String> {
        let Some((changed, _)) = &self.change else {
            return Default::default();
        };
        let kind = match lang {
            Lang::Rust => "fn",
            _ => "function",
        };
        let files = crate::git::TreeFiles::new(self.repo, self.tree.clone());
        changed
            .iter()
            .filter(|(path, _)| Lang::from_path(path) == Some(lang))
            .filter_map(|(path, lines)| Some((files.text(path)?, lines)))
            .flat_map(|(text, lines)| {
                crate::code::outline(lang, &text)
                    .into_iter()
                    .filter(|s| s.kind == kind)
                    .filter(|s| {
                        lines
                            .iter()
                            .any(|l| (s.start_line..=s.end_line).contains(l))
                    })
                    .map(|s| s.name)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// The behaviour diff of the change this runner reviews (see [`behaviour`]): its changed
    /// Python functions called on the base and the new tree on the same inputs (their tests'
    /// calls, docstring examples, `examples`, made-up values). `None` when probes do not run
    /// here or the runner knows no change; the error is a sentence for the record.
    pub fn behaviour(&self, examples: &[String]) -> Option<Result<BehaviourDiff, String>> {
        let ProbePolicy::Run(settings) = &self.policy else {
            return None;
        };
        let (changed, Some(base)) = self.change.as_ref()? else {
            return None;
        };
        Some(behaviour::behaviour_diff(
            self.repo, base, &self.tree, changed, examples, settings,
        ))
    }

    /// Whether the change from `base` to this runner's tree weakens the tests the pattern
    /// rules' `signals` point at, decided by running the tests ([`weakening::decide`]):
    /// `configured` (the verify command) or a command found from the tree. `None` when
    /// probes do not run here or nothing can be run.
    pub fn weakening(&self, base: &Tree<'_>, signals: &[crate::code::Finding]) -> Option<Decided> {
        let ProbePolicy::Run(settings) = &self.policy else {
            return None;
        };
        let command = command_for(self.repo, &self.tree, settings.verify_command.as_deref())?;
        Some(weakening::decide(
            self.repo, base, &self.tree, signals, &command, settings,
        ))
    }

    /// The repository's tests run on the base of the change this runner reviews and on the
    /// change ([`regress`]): `configured` (the verify command) or a command found from the
    /// tree. `None` when probes do not run here, no change is known or nothing can be run.
    pub fn tests(&self, configured: Option<&str>) -> Option<Result<TestRuns, String>> {
        let ProbePolicy::Run(settings) = &self.policy else {
            return None;
        };
        let (_, Some(base)) = self.change.as_ref()? else {
            return None;
        };
        let command = command_for(self.repo, &self.tree, configured)?;
        Some(regress::test_runs(
            self.repo, base, &self.tree, &command, settings,
        ))
    }

    /// What the Python probe `p` shows on the change's base, where the base has its file.
    fn at_base(&self, settings: &ProbeSettings, p: &ProbeSpec) -> Option<BaseResult> {
        let base = self.change.as_ref()?.1.as_ref()?;
        base.get_path(std::path::Path::new(&p.path)).ok()?;
        let sb = self
            .base_sandbox
            .get_or_init(|| Sandbox::export(self.repo, base))
            .as_ref()
            .ok()?;
        let r = python::run(sb, settings, &p.path, &p.code, None);
        Some(BaseResult {
            outcome: r.outcome,
            actual: r.actual,
        })
    }
}

#[cfg(test)]
mod tests;
