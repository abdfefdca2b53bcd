//! Measured fitness for people (text, markdown) and machines (JSON): what `git triad bench
//! --report` prints, and the fitness column of `git triad models list`.

use serde_json::{json, Value};

use crate::config::{Config, Role};
use crate::routing::store::{FitnessEntry, FitnessStore, Freshness, FRESH_DAYS};
use crate::routing::TASK_SET_VERSION;

/// One row: an entry and, when stale, why.
struct Row<'a> {
    entry: &'a FitnessEntry,
    stale: Option<String>,
}

impl Row<'_> {
    /// The score with its marks: `*` stale, `~` not a full score.
    fn score(&self) -> String {
        format!(
            "{:.2}{}{}",
            self.entry.figures.score,
            if self.stale.is_some() { "*" } else { "" },
            if self.entry.is_full() { "" } else { "~" }
        )
    }
}

/// The latest entry of `model` in `role` with its freshness; `None` when none was made.
fn row<'a>(
    store: &'a FitnessStore,
    config: &Config,
    model: &str,
    role: Role,
    now: u64,
) -> Option<Row<'a>> {
    match store.freshness(config, model, role, now) {
        Freshness::Fresh(entry) => Some(Row { entry, stale: None }),
        Freshness::Stale(entry, why) => Some(Row {
            entry,
            stale: Some(why),
        }),
        Freshness::Missing => None,
    }
}

/// The latest entry of every model and role, by role then score, with its freshness.
fn rows<'a>(store: &'a FitnessStore, config: &Config, now: u64) -> Vec<Row<'a>> {
    let mut keys: Vec<(Role, &str)> = store
        .entries
        .iter()
        .map(|e| (e.role, e.model.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    let mut rows: Vec<Row<'a>> = keys
        .into_iter()
        .filter_map(|(role, model)| row(store, config, model, role, now))
        .collect();
    rows.sort_by(|a, b| {
        (a.entry.role, a.stale.is_some())
            .cmp(&(b.entry.role, b.stale.is_some()))
            .then(b.entry.figures.score.total_cmp(&a.entry.figures.score))
            .then(a.entry.model.cmp(&b.entry.model))
    });
    rows
}

fn cells(r: &Row<'_>) -> [String; 9] {
    let f = &r.entry.figures;
    let (tin, tout) = f.tokens_per_task();
    [
        r.entry.role.to_string(),
        r.entry.model.clone(),
        r.score(),
        f.counts(),
        f.without_probes_counts(),
        format!("{tin:.0}+{tout:.0}"),
        format!("{:.1} s", f.latency_per_task_ms() / 1000.0),
        format!("{:.4}", f.cost_per_task()),
        r.entry.date.clone(),
    ]
}

const HEADER: [&str; 9] = [
    "ROLE",
    "MODEL",
    "SCORE",
    "COUNTS",
    "SAME ANSWERS, NO PROBES",
    "TOKENS/TASK",
    "LATENCY/TASK",
    "$/TASK",
    "MEASURED",
];

fn stale_notes(rows: &[Row<'_>]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            r.stale
                .as_ref()
                .map(|why| format!("{} as {}: {why}", r.entry.model, r.entry.role))
        })
        .collect()
}

fn partial_notes(rows: &[Row<'_>]) -> Vec<String> {
    rows.iter()
        .filter_map(|r| {
            r.entry
                .partial()
                .map(|why| format!("{} as {}: {why}", r.entry.model, r.entry.role))
        })
        .collect()
}

/// What the `~` mark means, before its notes.
const PARTIAL: &str = "~ not a full score, never used for routing (`git triad bench` without --tasks measures every task)";

const NOTHING: &str = "nothing measured yet: `git triad bench` measures the models of your roles (`--models a,b` for others)\n";

/// The stored measurements as a table for the terminal.
pub fn text(store: &FitnessStore, config: &Config, now: u64) -> String {
    let rows = rows(store, config, now);
    if rows.is_empty() {
        return NOTHING.to_string();
    }
    let mut table = vec![HEADER.map(str::to_string)];
    table.extend(rows.iter().map(cells));
    let mut s = format!(
        "measured fitness (task set {TASK_SET_VERSION}; score 0-1: build tasks passed, or reviews' recall x clean changes not rejected, with the reviews' claims checked by their probes)\n"
    );
    s.push_str(&super::table::render_table(&table));
    let notes = stale_notes(&rows);
    if !notes.is_empty() {
        s.push_str(&format!(
            "\n* stale, never used for routing (a measurement lasts {FRESH_DAYS} days, with the task set it was made with):\n"
        ));
        for n in notes {
            s.push_str(&format!("  {n}\n"));
        }
    }
    let partial = partial_notes(&rows);
    if !partial.is_empty() {
        s.push_str(&format!("\n{PARTIAL}:\n"));
        for n in partial {
            s.push_str(&format!("  {n}\n"));
        }
    }
    s
}

/// The stored measurements as a markdown table.
pub fn markdown(store: &FitnessStore, config: &Config, now: u64) -> String {
    let rows = rows(store, config, now);
    if rows.is_empty() {
        return NOTHING.to_string();
    }
    let mut s = format!("### Measured fitness (task set {TASK_SET_VERSION})\n\n");
    s.push_str(&format!("| {} |\n", HEADER.join(" | ")));
    s.push_str(&format!("|{}\n", "---|".repeat(HEADER.len())));
    for r in &rows {
        s.push_str(&format!("| {} |\n", cells(r).join(" | ")));
    }
    let notes = stale_notes(&rows);
    if !notes.is_empty() {
        s.push_str("\n\\* stale, never used for routing:\n\n");
        for n in notes {
            s.push_str(&format!("- {n}\n"));
        }
    }
    let partial = partial_notes(&rows);
    if !partial.is_empty() {
        s.push_str(&format!("\n\\{PARTIAL}:\n\n"));
        for n in partial {
            s.push_str(&format!("- {n}\n"));
        }
    }
    s
}

/// One stored measurement as `bench --report --json` prints it: its raw figures and whether
/// it is fresh enough to route by.
#[derive(Debug, serde::Serialize)]
struct EntryJson<'a> {
    #[serde(flatten)]
    entry: &'a FitnessEntry,
    fresh: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stale: Option<String>,
    /// It measured the whole task set: a score routing may pick by.
    full: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    partial: Option<String>,
}

/// The stored measurements as JSON: every latest entry with its raw figures and freshness.
pub fn json(store: &FitnessStore, config: &Config, now: u64) -> Value {
    let entries: Vec<EntryJson> = rows(store, config, now)
        .into_iter()
        .map(|r| EntryJson {
            entry: r.entry,
            fresh: r.stale.is_none(),
            stale: r.stale,
            full: r.entry.is_full(),
            partial: r.entry.partial(),
        })
        .collect();
    json!({"task_set": TASK_SET_VERSION, "fresh_days": FRESH_DAYS, "entries": entries})
}

/// A model's fitness in a few characters per role for `git triad models list`:
/// `arch 0.80 impl 0.67 arb 0.83`, a `*` after a stale score, a `~` after one that is not
/// a full score, `-` when nothing is measured.
pub fn column(store: &FitnessStore, config: &Config, model: &str, now: u64) -> String {
    let parts: Vec<String> = Role::PIPELINE
        .iter()
        .filter_map(|role| {
            let short = match role {
                Role::Architect => "arch",
                Role::Implementer => "impl",
                Role::Refactorer => "refac",
                Role::Verifier => "verif",
                Role::Arbiter => "arb",
                Role::Tiebreaker => "tie",
                Role::Manager | Role::Orchestrator => return None,
            };
            row(store, config, model, *role, now).map(|r| format!("{short} {}", r.score()))
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(" ")
    }
}
