//! `git triad local`: the llama.cpp servers of the offline default.

use clap::{Args, Subcommand};

use super::{ok, out, CommandResult, Context};
use crate::model::local;

/// Start, stop or inspect the local llama.cpp servers (the `local` profile).
///
/// `scripts/local-models` builds llama-server and fetches the models into the cache
/// (`$GIT_TRIAD_LOCAL_CACHE`, default `~/.cache/git-triad/local`); these commands run one
/// server per model on 127.0.0.1 with pid files and logs in `<cache>/run/`.
#[derive(Debug, Args)]
pub struct LocalArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: LocalCommand,
}

/// `git triad local` subcommands.
#[derive(Debug, Subcommand)]
pub enum LocalCommand {
    /// Start the servers that are not answering (waits until they do).
    Start,
    /// Stop the servers started by `git triad local start`.
    Stop,
    /// Show each server: port, model, pid, answering or not.
    Status,
}

/// Runs `git triad local`.
pub fn run(ctx: &Context, args: &LocalArgs) -> CommandResult {
    let loaded = ctx.load_config()?;
    let cache = local::cache_dir(&ctx.env);
    match args.command {
        LocalCommand::Start => {
            let started = local::start(&loaded.config, &cache, &[])
                .map_err(|e| super::error::local_error(e, &cache))?;
            if started.is_empty() {
                out("the local servers are already running\n")?;
            }
            for s in started {
                out(&format!("started {s}\n"))?;
            }
        }
        LocalCommand::Stop => {
            // What killed runs left in this repository goes too.
            if let Some(repo) = &ctx.repo {
                super::say_each(&crate::git::leftover::clean(repo.commondir()), ctx.quiet);
            }
            let outcomes = local::stop(&cache);
            if outcomes.is_empty() {
                out("no local server started by git triad is running\n")?;
            }
            for o in outcomes {
                let (provider, pid) = (o.provider, o.pid);
                out(&match o.standing {
                    local::Standing::Ours => format!("stopped {provider} (pid {pid})\n"),
                    local::Standing::Gone => format!(
                        "{provider} (pid {pid}) is no longer running; its pid file was removed\n"
                    ),
                    local::Standing::Reused(why) => format!(
                        "{provider}: pid {pid} is no longer its server ({why}); it was left alone and the pid file removed\n"
                    ),
                })?;
            }
        }
        LocalCommand::Status => {
            // Columns as wide as their longest cell: a provider name is longer than any
            // fixed width picked once (triad-local-coder-1-5b pushed its row out of line).
            let rows: Vec<[String; 4]> = local::status(&loaded.config, &cache)
                .into_iter()
                .map(|s| {
                    let state = match (s.answering, s.pid) {
                        (true, Some(p)) => format!("answering (pid {p})"),
                        (true, None) => "answering (not started by git triad)".to_string(),
                        (false, Some(p)) => format!("not answering (pid {p} alive)"),
                        (false, None) => "stopped".to_string(),
                    };
                    [s.server.provider.to_string(), s.base_url, s.model_id, state]
                })
                .collect();
            out(&crate::report::render_table(&rows))?;
        }
    }
    ok()
}
