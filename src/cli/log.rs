//! `git triad log`: the runs of this repository, or one run in detail.

use clap::{Args, ValueEnum};

use super::helper::{load_run, need_repo};
use super::{out, CommandResult, Context};
use crate::exit::ExitCode;
use crate::pipeline::{scan_runs, CorruptRun, RunState};
use crate::report::run::{self as report, RunReport};

/// Output formats of `git triad log`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// For the terminal.
    #[default]
    Text,
    /// A report to paste into a pull request.
    Markdown,
    /// Machine-readable.
    Json,
}

/// List runs, or show one run's stages, attempts, verdicts, issues and cost.
#[derive(Debug, Args)]
pub struct LogArgs {
    /// A run id; without it, every run is listed.
    pub run_id: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub format: LogFormat,
}

/// Runs `git triad log`.
pub fn run(ctx: &Context, args: &LogArgs) -> CommandResult {
    logged(ctx, args).map(|_| ExitCode::Ok)
}

/// The runs `git triad log` showed: every run whose record loads and those that do not
/// (the list), or the one asked for.
#[derive(Debug)]
pub struct Logged {
    /// The runs, newest first (one: the run asked for).
    pub runs: Vec<RunState>,
    /// The runs whose record does not load (only when listing).
    pub corrupt: Vec<CorruptRun>,
}

/// Prints what `git triad log` prints and answers the runs it showed, typed.
pub fn logged(ctx: &Context, args: &LogArgs) -> CommandResult<Logged> {
    let repo = need_repo(ctx)?;
    let Some(id) = &args.run_id else {
        let (runs, corrupt) = scan_runs(repo);
        let text = match args.format {
            LogFormat::Json => {
                let mut all: Vec<serde_json::Value> = runs
                    .iter()
                    .map(|r| serde_json::to_value(RunReport::of(r)).unwrap_or_default())
                    .collect();
                all.extend(corrupt.iter().map(
                    |c| serde_json::json!({"run": c.id, "status": CorruptRun::STATUS, "message": c.why}),
                ));
                format!("{}\n", serde_json::Value::Array(all))
            }
            _ if runs.is_empty() && corrupt.is_empty() => {
                "no runs yet: start one with `git triad run --task <slug>`\n".to_string()
            }
            _ => report::list(repo, &runs) + &corrupt_lines(&corrupt),
        };
        out(&text)?;
        return Ok(Logged { runs, corrupt });
    };
    let state = load_run(repo, id)?;
    let text = match args.format {
        LogFormat::Json => format!("{}\n", RunReport::of(&state).to_json()),
        LogFormat::Text => {
            let mut text = report::detail(repo, &state, false);
            let rescue = super::helper::rescue(ctx, &state);
            for h in super::explain::run_hints(&state, rescue.as_ref()) {
                text.push_str(&format!("next: {h}\n"));
            }
            text
        }
        LogFormat::Markdown => report::detail(repo, &state, true),
    };
    out(&text)?;
    Ok(Logged {
        runs: vec![state],
        corrupt: Vec::new(),
    })
}

/// The runs whose record does not load, one line each, and what to do about them.
fn corrupt_lines(corrupt: &[CorruptRun]) -> String {
    let mut s = String::new();
    for c in corrupt {
        s.push_str(&format!("{}  corrupt: {}\n", c.id, c.why));
    }
    if let Some(first) = corrupt.first() {
        s.push_str(&format!(
            "next: a corrupt run record is kept as it is; read it with `git log -p refs/triad/runs/{}`, or remove it with `git update-ref -d refs/triad/runs/{}`\n",
            first.id, first.id
        ));
    }
    s
}
