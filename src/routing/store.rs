//! Measured fitness, kept per user in `$XDG_DATA_HOME/git-triad/fitness.json` (else
//! `~/.local/share/git-triad/fitness.json`): for each model and role, what `git triad bench`
//! measured, with the task-set version, the date and every raw figure, so a score can always
//! be traced back to the answers it came from.
//!
//! A measurement is used only while it is fresh: made with the current task set, within
//! [`FRESH_DAYS`], of the model the registry name still stands for. Anything else is said to
//! be stale, with why, and never used to pick a model.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::tasks::TASK_SET_VERSION;
use crate::config::{Config, Role};

/// The format of the file this build writes.
pub const STORE_VERSION: u32 = 1;

/// How many days a measurement stays fresh.
pub const FRESH_DAYS: u64 = 30;

/// The raw figures of one model in one role over a task set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Figures {
    /// Answers asked for (tasks × repeats).
    pub attempts: u32,
    /// In [0, 1]: the pass rate of build tasks; recall × (1 − false-positive rate) of
    /// reviews.
    pub score: f64,
    /// Build answers that passed every check.
    pub passed: u32,
    /// Build answers whose edits all applied.
    pub edits_applied: u32,
    /// Reviews of bug cases.
    pub bugs: u32,
    /// Bug cases caught (an issue anchored on the bug's lines, FLAG or worse).
    pub caught: u32,
    /// Reviews of clean cases.
    pub clean: u32,
    /// Clean cases answered with a usable APPROVE or FLAG.
    pub clean_ok: u32,
    /// Clean cases rejected or halted.
    pub false_positives: u32,
    /// Clean cases flagged (reported, not scored).
    pub flagged_clean: u32,
    /// Answers that could not be used at all (unreadable, invalid JSON after a repair).
    pub unusable: u32,
    /// Prompt tokens, all answers.
    pub input_tokens: u64,
    /// Completion tokens, all answers.
    pub output_tokens: u64,
    /// Model latency, all answers, in milliseconds.
    pub latency_ms: u64,
    /// Cost at the registry's prices, all answers.
    pub cost_usd: f64,
    /// Reviews only: how often it let its own failing answers through compared with other
    /// models' (see `git triad bench`, [`SelfPreference`]); not part of the score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub self_preference: Option<SelfPreference>,
    /// Reviews only: the same answers with their verdicts derived as if probes did not
    /// exist (every anchored claim counts at its severity), so what the probes change is
    /// measured on the same words; the figures above are derived with probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_probes: Option<UnprobedFigures>,
}

/// Review figures derived without probes (see [`Figures::without_probes`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct UnprobedFigures {
    /// Bug cases caught.
    pub caught: u32,
    /// Clean cases rejected or halted.
    pub false_positives: u32,
    /// Clean cases flagged.
    pub flagged_clean: u32,
}

impl Figures {
    /// Reviews only: the same answers' figures derived without probes, as
    /// `caught 1/3, 2/3 clean rejected` (`-` for build figures or older measurements).
    pub fn without_probes_counts(&self) -> String {
        match &self.without_probes {
            Some(w) if self.bugs + self.clean > 0 => format!(
                "caught {}/{}, {}/{} clean rejected",
                w.caught, self.bugs, w.false_positives, self.clean
            ),
            _ => "-".into(),
        }
    }

    fn per(&self, total: f64) -> f64 {
        if self.attempts == 0 {
            0.0
        } else {
            total / f64::from(self.attempts)
        }
    }

    /// Mean USD an answer.
    pub fn cost_per_task(&self) -> f64 {
        self.per(self.cost_usd)
    }

    /// Mean model latency an answer, in milliseconds.
    pub fn latency_per_task_ms(&self) -> f64 {
        self.per(self.latency_ms as f64)
    }

    /// Mean (input, output) tokens an answer.
    pub fn tokens_per_task(&self) -> (f64, f64) {
        (
            self.per(self.input_tokens as f64),
            self.per(self.output_tokens as f64),
        )
    }

    /// Fills in the score from the counts: the pass rate of build answers, or for reviews
    /// recall × the share of clean cases answered with a usable APPROVE or FLAG.
    pub fn compute_score(&mut self) {
        self.score = if self.bugs + self.clean > 0 {
            let recall = if self.bugs == 0 {
                1.0
            } else {
                f64::from(self.caught) / f64::from(self.bugs)
            };
            let specificity = if self.clean == 0 {
                1.0
            } else {
                f64::from(self.clean_ok) / f64::from(self.clean)
            };
            recall * specificity
        } else if self.attempts == 0 {
            0.0
        } else {
            f64::from(self.passed) / f64::from(self.attempts)
        };
    }

    /// The counts behind the score, in words: `5/7 passed` or `caught 4/6 bugs, 1/4 clean
    /// rejected`.
    pub fn counts(&self) -> String {
        if self.bugs + self.clean > 0 {
            let mut s = format!(
                "caught {}/{} bugs, {}/{} clean rejected",
                self.caught, self.bugs, self.false_positives, self.clean
            );
            if self.flagged_clean > 0 {
                s.push_str(&format!(", {} flagged", self.flagged_clean));
            }
            if self.unusable > 0 {
                s.push_str(&format!(", {} unusable", self.unusable));
            }
            if let Some(p) = &self.self_preference {
                s.push_str(&format!("; {}", p.describe()));
            }
            s
        } else {
            format!("{}/{} passed", self.passed, self.attempts)
        }
    }
}

/// One answer's result, as measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskFigure {
    /// The task id.
    pub task: String,
    /// Whether it counted as a success (passed, caught, or a clean case not rejected).
    pub passed: bool,
    /// What happened, in one line.
    pub detail: String,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Model latency in milliseconds.
    pub latency_ms: u64,
    /// Cost in USD.
    pub cost_usd: f64,
}

/// What one bench measured of one model in one role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitnessEntry {
    /// Registry name.
    pub model: String,
    /// Provider at measurement time.
    pub provider: String,
    /// Model id sent on the wire at measurement time.
    pub wire_id: String,
    /// The role.
    pub role: Role,
    /// [`TASK_SET_VERSION`] at measurement time.
    pub task_set: u32,
    /// Which tasks ran (`standard`, `quick`, or ids).
    pub tasks: String,
    /// Answers asked for each task.
    pub repeat: u32,
    /// Unix time of the measurement.
    pub measured_at: u64,
    /// Its date (UTC), for people.
    pub date: String,
    /// The figures.
    pub figures: Figures,
    /// Every answer's result.
    #[serde(default)]
    pub results: Vec<TaskFigure>,
}

impl FitnessEntry {
    /// Whether it measured the whole task set (`--tasks standard`, less only the tasks whose
    /// tests cannot run on this machine): a bench on some tasks is not a full score, and
    /// routing does not pick by it.
    pub fn is_full(&self) -> bool {
        self.tasks == "standard" || self.tasks.starts_with("standard without ")
    }

    /// How many different tasks it ran (its answers' tasks; older entries without them: its
    /// answers over its repeats).
    pub fn task_count(&self) -> usize {
        let distinct: std::collections::BTreeSet<&str> =
            self.results.iter().map(|r| r.task.as_str()).collect();
        if distinct.is_empty() {
            (self.figures.attempts / self.repeat.max(1)) as usize
        } else {
            distinct.len()
        }
    }

    /// Whether any answer counted as a success: a task passed, a bug caught, a clean
    /// change not rejected. A model that passed nothing is never routed to.
    pub fn passed_any(&self) -> bool {
        self.results.iter().any(|r| r.passed)
            || self.figures.passed + self.figures.caught + self.figures.clean_ok > 0
    }

    /// Why it is not a full score, in words (`measured on 1 task (quick), not the whole
    /// set`), or `None` when it is one.
    pub fn partial(&self) -> Option<String> {
        if self.is_full() {
            return None;
        }
        let n = self.task_count();
        Some(format!(
            "measured on {n} task{} (`--tasks {}`), not the whole set: not a full score",
            if n == 1 { "" } else { "s" },
            self.tasks
        ))
    }
}

/// Whether a measurement may be used now.
#[derive(Debug, Clone, PartialEq)]
pub enum Freshness<'a> {
    /// Usable.
    Fresh(&'a FitnessEntry),
    /// Not usable, and why.
    Stale(&'a FitnessEntry, String),
    /// Never measured.
    Missing,
}

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// I/O.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// Read or write.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Not the store's JSON.
    #[error("{path} is not a fitness file this version can read: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        message: String,
    },
}

/// Every measurement on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitnessStore {
    /// [`STORE_VERSION`].
    pub v: u32,
    /// Measurements, the latest per model, role and task-set version.
    pub entries: Vec<FitnessEntry>,
}

impl Default for FitnessStore {
    fn default() -> Self {
        FitnessStore {
            v: STORE_VERSION,
            entries: Vec::new(),
        }
    }
}

impl FitnessStore {
    /// Where the store lives: `$XDG_DATA_HOME/git-triad/fitness.json`, else
    /// `$HOME/.local/share/git-triad/fitness.json`.
    pub fn path(env: &[(String, String)]) -> Option<PathBuf> {
        let get = |k: &str| {
            env.iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.is_empty())
        };
        let base = get("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| get("HOME").map(|h| Path::new(&h).join(".local/share")))?;
        Some(base.join("git-triad").join("fitness.json"))
    }

    /// Reads the store; a missing file is an empty store.
    pub fn load(path: &Path) -> Result<FitnessStore, StoreError> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| StoreError::Corrupt {
                path: path.to_path_buf(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FitnessStore::default()),
            Err(source) => Err(StoreError::Io {
                what: "read",
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    /// Writes the store (to a temporary file renamed into place, so a reader never sees half
    /// of it).
    pub fn save(&self, path: &Path) -> Result<(), StoreError> {
        let io = |source| StoreError::Io {
            what: "write",
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, format!("{text}\n")).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }

    /// Adds a measurement, replacing the one of the same model, role and task-set version.
    pub fn record(&mut self, entry: FitnessEntry) {
        self.entries.retain(|e| {
            !(e.model == entry.model && e.role == entry.role && e.task_set == entry.task_set)
        });
        self.entries.push(entry);
    }

    /// The latest measurement of a model in a role, whatever its freshness.
    pub fn latest(&self, model: &str, role: Role) -> Option<&FitnessEntry> {
        self.entries
            .iter()
            .filter(|e| e.model == model && e.role == role)
            .max_by_key(|e| (e.task_set, e.measured_at))
    }

    /// Whether the latest measurement of `model` in `role` may be used at `now`.
    pub fn freshness(&self, config: &Config, model: &str, role: Role, now: u64) -> Freshness<'_> {
        let Some(e) = self.latest(model, role) else {
            return Freshness::Missing;
        };
        if e.task_set != TASK_SET_VERSION {
            return Freshness::Stale(
                e,
                format!(
                    "measured with task set {}, the current one is {TASK_SET_VERSION}",
                    e.task_set
                ),
            );
        }
        let age_days = now.saturating_sub(e.measured_at) / 86_400;
        if age_days > FRESH_DAYS {
            return Freshness::Stale(
                e,
                format!("measured {age_days} days ago (older than {FRESH_DAYS})"),
            );
        }
        if let Some(m) = config.models.get(model) {
            let wire = m.wire_id(model);
            if m.provider != e.provider || wire != e.wire_id {
                return Freshness::Stale(
                    e,
                    format!(
                        "measured as `{}` on {}; the registry now sends `{wire}` to {}",
                        e.wire_id, e.provider, m.provider
                    ),
                );
            }
        }
        Freshness::Fresh(e)
    }
}

/// How often a reviewer let known-bad changes through: its own, and other models'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SelfPreference {
    /// Its own failing answers it judged.
    pub own_judged: u32,
    /// Of those, answered APPROVE or FLAG.
    pub own_let_through: u32,
    /// Other models' failing answers it judged.
    pub others_judged: u32,
    /// Of those, answered APPROVE or FLAG.
    pub others_let_through: u32,
}

impl SelfPreference {
    /// Own rate minus others' rate, in percentage points (positive: kinder to itself);
    /// `None` without answers of both kinds.
    pub fn points(&self) -> Option<f64> {
        let rate = |through: u32, judged: u32| {
            (judged > 0).then(|| f64::from(through) / f64::from(judged))
        };
        Some(
            (rate(self.own_let_through, self.own_judged)?
                - rate(self.others_let_through, self.others_judged)?)
                * 100.0,
        )
    }

    /// `self-preference +25 pts (own 2/2, others 3/4 let through)`, or why there is none.
    pub fn describe(&self) -> String {
        let counts = format!(
            "own {}/{}, others {}/{} let through",
            self.own_let_through, self.own_judged, self.others_let_through, self.others_judged
        );
        match self.points() {
            Some(p) => format!("self-preference {p:+.0} pts ({counts})"),
            None => format!("self-preference not measured ({counts})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(model: &str, wire: &str, task_set: u32, measured_at: u64) -> FitnessEntry {
        FitnessEntry {
            model: model.into(),
            provider: "openai".into(),
            wire_id: wire.into(),
            role: Role::Implementer,
            task_set,
            tasks: "standard".into(),
            repeat: 1,
            measured_at,
            date: crate::clock::date_of(measured_at),
            figures: Figures::default(),
            results: vec![],
        }
    }

    #[test]
    fn a_measurement_is_fresh_only_with_this_task_set_recently_of_the_same_wire_model() {
        let config = crate::config::LoadedConfig::load(&crate::config::LoadOptions {
            user_file: Some("/nonexistent/config.toml".into()),
            ..Default::default()
        })
        .unwrap()
        .config;
        let now = 1_795_305_600;
        let day = 86_400;
        let mut store = FitnessStore::default();
        let fresh =
            |s: &FitnessStore, m: &str| match s.freshness(&config, m, Role::Implementer, now) {
                Freshness::Fresh(_) => "fresh".to_string(),
                Freshness::Stale(_, why) => why,
                Freshness::Missing => "missing".to_string(),
            };
        assert_eq!(fresh(&store, "gpt-5"), "missing");
        store.record(entry("gpt-5", "gpt-5", TASK_SET_VERSION, now - 3 * day));
        assert_eq!(fresh(&store, "gpt-5"), "fresh");
        store.record(entry("gpt-5", "gpt-5", TASK_SET_VERSION, now - 40 * day));
        assert_eq!(
            store.entries.len(),
            1,
            "a new measurement replaces the old one"
        );
        assert_eq!(
            fresh(&store, "gpt-5"),
            "measured 40 days ago (older than 30)"
        );
        store.record(entry("gpt-4.1", "gpt-4.1-2025", TASK_SET_VERSION, now));
        assert_eq!(
            fresh(&store, "gpt-4.1"),
            "measured as `gpt-4.1-2025` on openai; the registry now sends `gpt-4.1` to openai"
        );
        store.record(entry("gpt-5-mini", "gpt-5-mini", TASK_SET_VERSION + 1, now));
        assert!(fresh(&store, "gpt-5-mini")
            .starts_with(&format!("measured with task set {}", TASK_SET_VERSION + 1)));
    }

    #[test]
    fn the_figure_needs_both_kinds_and_is_the_difference_of_rates() {
        let f = SelfPreference {
            own_judged: 2,
            own_let_through: 2,
            others_judged: 4,
            others_let_through: 1,
        };
        assert_eq!(f.points(), Some(75.0));
        assert_eq!(
            f.describe(),
            "self-preference +75 pts (own 2/2, others 1/4 let through)"
        );
        let none = SelfPreference { own_judged: 0, ..f };
        assert_eq!(none.points(), None);
        assert!(none.describe().starts_with("self-preference not measured"));
    }
}
