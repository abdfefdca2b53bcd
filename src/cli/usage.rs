//! `git triad usage`: what the models cost, from this repository's ledger, against the caps.

use clap::Args;

use super::{out, say, CommandError, CommandResult, Context};
use crate::cli::helper::need_repo;
use crate::model::budget::Ledger;
use crate::model::usage::usage;

/// Show what the models cost: per day, month, model, role and run, against the caps.
///
/// Every call git triad makes in this repository (runs, reviews, benches, checks) is
/// appended to .git/triad/ledger.jsonl, which is never shared; budget.daily_usd and
/// budget.monthly_usd are enforced against it before each call. A period that has used 80 %
/// of its cap or more is warned about on stderr.
///
/// Example: git triad usage --days 7
#[derive(Debug, Args)]
pub struct UsageArgs {
    /// Days the per-day, model, role and run tables cover, today included (months and caps
    /// always read the whole ledger).
    #[arg(long, value_name = "N", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(1..=3660))]
    pub days: u32,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Runs `git triad usage`.
pub fn run(ctx: &Context, args: &UsageArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let path = crate::git::paths::ledger(repo);
    let records = Ledger::new(path.clone()).read().map_err(|e| {
        CommandError::failure(format!("cannot read the ledger {}: {e}", path.display()))
    })?;
    let report = usage(
        &records,
        &loaded.config.budget,
        crate::clock::now_unix(),
        args.days,
    );
    let warnings = crate::report::cost::usage_warnings(&report);
    if !ctx.quiet {
        for w in &warnings {
            say(&format!("warning: {w}"));
        }
    }
    let text = if args.output.json() {
        let json = crate::report::cost::UsageJson {
            usage: &report,
            warnings,
        };
        format!("{}\n", serde_json::to_string(&json).unwrap_or_default())
    } else {
        crate::report::cost::usage_text(&report, &path.display().to_string())
    };
    out(&text)?;
    super::ok()
}
