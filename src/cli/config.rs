//! `git triad config`: inspect the effective configuration.

use clap::{Args, Subcommand};

use super::{ok, out, CommandResult, Context};
use crate::config::layers;

/// Inspect the layered configuration (defaults < user < repo < git config < env < -c).
#[derive(Debug, Args)]
pub struct ConfigArgs {
    /// What to show.
    #[command(subcommand)]
    pub command: ConfigCommand,
}

/// `git triad config` subcommands.
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the effective configuration as TOML.
    Show(ShowArgs),
}

/// Print the effective configuration.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// One `key = value` line per setting, each with the layer it came from.
    #[arg(long)]
    pub origin: bool,
    /// Only keys starting with this prefix (e.g. `arbiter` or `providers.openai`).
    pub prefix: Option<String>,
}

/// Runs `git triad config`.
pub fn run(ctx: &Context, args: &ConfigArgs) -> CommandResult {
    match &args.command {
        ConfigCommand::Show(show) => run_show(ctx, show),
    }
}

fn run_show(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let loaded = ctx.load_config()?;
    let mut text = String::new();
    let prefix = args.prefix.as_deref().unwrap_or("");
    let matches =
        |k: &str| prefix.is_empty() || k == prefix || k.starts_with(&format!("{prefix}."));
    if args.origin {
        for (key, value) in layers::leaves(&loaded.merged) {
            if !matches(&key) {
                continue;
            }
            let origin = loaded
                .origin(&key)
                .map(|l| l.to_string())
                .unwrap_or_else(|| "?".into());
            text.push_str(&format!("{key} = {value}  # {origin}\n"));
        }
    } else if prefix.is_empty() {
        text = toml::to_string(&loaded.merged)
            .map_err(|e| super::CommandError::failure(e.to_string()))?;
    } else {
        for (key, value) in layers::leaves(&loaded.merged) {
            if matches(&key) {
                text.push_str(&format!("{key} = {value}\n"));
            }
        }
    }
    if args.origin && matches("profile") {
        let choice = loaded.profile_choice(&ctx.env, &[]);
        let name = choice.name.as_deref().unwrap_or("none");
        text.push_str(&format!(
            "# profile in effect: {name} ({})\n",
            choice.reason
        ));
    }
    if args.origin {
        for ignored in loaded.ignored.iter().filter(|i| matches(&i.key)) {
            text.push_str(&format!("# {ignored}\n"));
        }
    }
    if !loaded.trusted {
        text.push_str("# this clone is not trusted: .triad/config.toml may not set providers, key variables, commands, prices, transport or more retries\n");
    }
    out(&text)?;
    ok()
}
