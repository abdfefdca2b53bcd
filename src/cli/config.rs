//! `git triad config`: inspect the effective configuration.

use clap::{Args, Subcommand};

use toml::{Table, Value};

use super::{ok, out, CommandResult, Context};
use crate::config::{layers, RoleInEffect};

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
    /// One `key = value` line per setting, each with the layer it came from; a role's
    /// models are the ones in effect (profile, and what your keys let you call).
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
    let choice = loaded.profile_choice(&ctx.env, &[]);
    let roles = loaded.roles_in_effect(choice.name.as_deref());
    let mut merged = loaded.merged.clone();
    put_roles_in_effect(&mut merged, &roles);
    let role_origin = |key: &str| {
        roles
            .iter()
            .find(|r| key == format!("roles.{}.models", r.role))
            .map(RoleInEffect::describe)
    };
    let mut text = String::new();
    let prefix = args.prefix.as_deref().unwrap_or("");
    let matches =
        |k: &str| prefix.is_empty() || k == prefix || k.starts_with(&format!("{prefix}."));
    if args.origin {
        for (key, value) in layers::leaves(&merged) {
            if !matches(&key) {
                continue;
            }
            let origin = role_origin(&key)
                .or_else(|| loaded.origin(&key).map(|l| l.to_string()))
                .unwrap_or_else(|| "?".into());
            text.push_str(&format!("{key} = {value}  # {origin}\n"));
        }
    } else if prefix.is_empty() {
        text = toml::to_string(&merged).map_err(|e| super::CommandError::failure(e.to_string()))?;
    } else {
        for (key, value) in layers::leaves(&merged) {
            if matches(&key) {
                text.push_str(&format!("{key} = {value}\n"));
            }
        }
    }
    if !prefix.is_empty() && text.is_empty() {
        if !loaded.knows_key(prefix) {
            let sections: Vec<&String> = merged.keys().collect();
            return Err(super::CommandError::usage(format!(
                "`{prefix}` is not a configuration key"
            ))
            .hint(format!(
                "the keys start with {}; `git triad config show` prints them all",
                sections
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        text.push_str(&format!("# {prefix} is not set\n"));
    }
    if args.origin && matches("profile") {
        let name = choice.name.as_deref().unwrap_or("none");
        text.push_str(&format!(
            "# profile in effect: {name} ({})\n",
            choice.reason
        ));
    }
    if matches("roles") || matches("models") {
        text.push_str(&declared_offer(&loaded));
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

/// Replaces every role's `models` in `merged` by the list in effect, so what is shown is
/// what a command would use.
fn put_roles_in_effect(merged: &mut Table, roles: &[RoleInEffect]) {
    let table = merged
        .entry("roles")
        .or_insert_with(|| Value::Table(Table::new()));
    let Value::Table(table) = table else { return };
    for r in roles.iter().filter(|r| !r.models.0.is_empty()) {
        let role = table
            .entry(r.role.as_str())
            .or_insert_with(|| Value::Table(Table::new()));
        if let Value::Table(role) = role {
            let list = r.models.0.iter().cloned().map(Value::String).collect();
            role.insert("models".into(), Value::Array(list));
        }
    }
}

/// The lines offering the models the user declared with no role, or nothing.
fn declared_offer(loaded: &crate::config::LoadedConfig) -> String {
    let declared = loaded.declared_without_role();
    let Some(first) = declared.first() else {
        return String::new();
    };
    let described: Vec<String> = declared
        .iter()
        .map(|m| match loaded.uncallable_reason(m) {
            None => m.clone(),
            Some(why) => format!("{m} (cannot be called: {why})"),
        })
        .collect();
    format!(
        "# models you declared with no role: {}; they stand in for models you cannot call and, under profile = \"auto\" without a key, come first in every role; give one a role with `-c roles.implementer.models='[\"{first}\"]'` or [roles.<role>] in your config file\n",
        described.join(", ")
    )
}
