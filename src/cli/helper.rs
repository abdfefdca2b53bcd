//! The command helper: only what two or more subcommands share, so that no subcommand
//! imports another. The repository, the model client with its ledger and local servers, the
//! command line as the operations' host ([`Terminal`]) and the [`ops`] it calls, a run's
//! record and report with the exit code the operations give its status, the user's fitness measurements and the routes they give, commits and
//! the notes trust, and how a report is asked for JSON ([`Output`]). What a run does is the pipeline's ([`crate::pipeline::drive`]).

use std::path::PathBuf;

use super::{out, say, CommandError, CommandResult, Context};
use crate::config::{LoadedConfig, RoutingMode};
use crate::exit::ExitCode;
use crate::model::budget::Ledger;
use crate::model::ModelClient;
use crate::ops::Ran;
use crate::pipeline::{self, Recorder, RunState};
use crate::routing::route::Routing;
use crate::routing::FitnessStore;

/// A budget is a finite, positive amount of USD: `0`, a negative number, `NaN` or `inf`
/// would otherwise mean "no cap".
pub(crate) fn parse_budget(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        Ok(_) => Err(format!(
            "`{s}` is not a budget: give a positive amount of USD, e.g. 2 or 0.5"
        )),
        Err(_) => Err(format!("`{s}` is not a number of USD")),
    }
}

/// The repository, or an error that says how to get one.
pub fn need_repo(ctx: &Context) -> CommandResult<&git2::Repository> {
    ctx.repo.as_ref().ok_or_else(|| {
        ctx.unopenable_repo().unwrap_or_else(|| {
            CommandError::usage("not inside a git repository")
                .hint("run git triad inside a repository, or pass -C <path>")
        })
    })
}

/// Reopens the deferrals whose revisit date has come (seed 004's revisit trigger, see
/// [`crate::task::lifecycle::reopen_due`]) and says each once, on stderr: the commands that
/// read the task list call it first.
pub fn reopen_due(ctx: &Context, repo: &git2::Repository) -> CommandResult<()> {
    for t in crate::task::lifecycle::reopen_due(repo).map_err(CommandError::from)? {
        if !ctx.quiet {
            say(&format!(
                "triad: task `{}` was deferred and its revisit date has come: it is {} again; next: {}",
                t.slug, t.state, t.next_action
            ));
        }
    }
    Ok(())
}

/// Loads a run's record, or says there is no such run.
pub fn load_run(repo: &git2::Repository, id: &str) -> CommandResult<RunState> {
    Recorder::open(repo, id)
        .load()
        .map_err(CommandError::failure)?
        .ok_or_else(|| {
            CommandError::usage(format!("there is no run `{id}`"))
                .hint("`git triad log` lists the runs of this repository")
        })
}

/// The rewind that can take up a halted `state` with this command's configuration (see
/// [`pipeline::resume::rescue`]), redoing the stage it stopped at.
pub fn rescue(ctx: &Context, state: &RunState) -> Option<pipeline::resume::Rescue> {
    let loaded = ctx.load_config().ok()?;
    pipeline::resume::rescue(&loaded, &ctx.env, state, 1)
}

/// Prints a run's outcome (text or `--json`) and returns the exit code of its status.
pub fn report(ctx: &Context, state: &RunState, json: bool) -> CommandResult {
    let hints = super::explain::run_hints(state, rescue(ctx, state).as_ref());
    if json {
        let report = crate::report::run::RunReport::of(state).with_hints(hints);
        out(&format!("{}\n", report.to_json()))?;
    } else {
        let mut s = crate::report::run::summary(state);
        for h in hints {
            s.push_str(&format!("next: {h}\n"));
        }
        s.push_str(&format!(
            "see: git log --notes=triad {}   |   git triad log {}\n",
            state.branch(),
            state.run_id()
        ));
        out(&s)?;
    }
    Ok(crate::ops::exit::run_exit(state.status()))
}

/// Where the fitness file is, or an error saying how to give one.
pub fn store_path(ctx: &Context) -> CommandResult<PathBuf> {
    FitnessStore::path(&ctx.env).ok_or_else(|| {
        CommandError::failure("there is no data directory for the fitness measurements").hint(
            "set HOME, or XDG_DATA_HOME to the directory that should hold git-triad/fitness.json",
        )
    })
}

/// Reads the fitness file.
pub fn load_store(ctx: &Context) -> CommandResult<FitnessStore> {
    let path = store_path(ctx)?;
    FitnessStore::load(&path).map_err(|e| {
        CommandError::failure(e).hint(format!(
            "move {} aside; `git triad bench` measures again",
            path.display()
        ))
    })
}

/// The commit a revision names, with a usage error that says how to name one.
pub(crate) fn resolve_commit<'r>(
    repo: &'r git2::Repository,
    rev: &str,
) -> CommandResult<git2::Commit<'r>> {
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| {
            CommandError::usage(format!("`{rev}` does not name a commit: {}", e.message()))
                .hint("use a commit id, a branch, a tag or an expression like HEAD~2")
        })
}

/// The remotes whose fetched verdict notes the user trusts (`notes.trusted_remotes`), for
/// commands that read notes. A configuration that does not load trusts no remote: reading
/// then counts fewer overrides, never more (the pre-push gate fails closed instead).
pub(crate) fn note_trust(ctx: &Context) -> crate::notes::Trust {
    match ctx.load_config() {
        Ok(loaded) => crate::notes::Trust::new(&loaded.config.notes.trusted_remotes),
        Err(e) => {
            tracing::warn!(
                "no remote's notes are trusted: the configuration does not load ({})",
                e.error
            );
            crate::notes::Trust::default()
        }
    }
}

/// The abbreviated id and subject of a commit, for messages.
pub(crate) fn short_and_subject(commit: &git2::Commit<'_>) -> (String, String) {
    let short = commit
        .as_object()
        .short_id()
        .ok()
        .and_then(|b| b.as_str().ok().map(str::to_string))
        .unwrap_or_else(|| commit.id().to_string()[..12].to_string());
    (
        short,
        commit.summary().ok().flatten().unwrap_or("").to_string(),
    )
}

/// A client for `loaded`'s models whose calls are also appended to the repository's cost
/// ledger (the daily and monthly caps read it).
pub fn client_for(ctx: &Context, repo: &git2::Repository, loaded: &LoadedConfig) -> ModelClient {
    let ledger = Ledger::new(crate::git::paths::ledger(repo));
    ModelClient::new(&loaded.config, ctx.env_lookup()).with_ledger(ledger, &loaded.config)
}

/// The command line as a run's host: notes are `triad: …` lines on stderr (none with
/// `--quiet`), and the run shows live on a terminal, else as progress lines.
pub struct Terminal<'c> {
    /// The command's context.
    pub ctx: &'c Context,
}

impl pipeline::Host for Terminal<'_> {
    fn note(&self, line: &str) {
        if !self.ctx.quiet {
            say(&format!("triad: {line}"));
        }
    }

    fn say(&self, line: &str) {
        if !self.ctx.quiet {
            say(line);
        }
    }

    fn watch(
        &self,
        client: &ModelClient,
        start: &RunState,
        go: pipeline::drive::Go<'_>,
    ) -> pipeline::drive::Driven {
        if self.ctx.tui(&[2]) {
            crate::tui::run::watch(client, start, go)
        } else {
            go(&super::progress::Lines {
                enabled: !self.ctx.quiet,
            })
        }
    }
}

/// The operations, for this command, in `repo`, with `host` as their caller.
pub fn ops<'a>(
    ctx: &'a Context,
    repo: &'a git2::Repository,
    host: &'a dyn pipeline::Host,
) -> crate::ops::Ops<'a> {
    crate::ops::Ops {
        repo,
        env: &ctx.env,
        keys: ctx.env_lookup(),
        trusted: ctx.trusted(),
        host,
    }
}

/// Resumes run `run_id` (`git triad resume`, and a run whose last dependency closed),
/// reports how it ended, and gives it back typed.
pub fn resume_run(
    ctx: &Context,
    run_id: &str,
    budget: Option<f64>,
    rewind: Option<crate::pipeline::resume::Rewind<'_>>,
    json: bool,
) -> CommandResult<Ran> {
    let repo = need_repo(ctx)?;
    let host = Terminal { ctx };
    let ran = ops(ctx, repo, &host).resume(ctx.load_config()?, run_id, budget, rewind)?;
    report(ctx, &ran.state, json)?;
    Ok(ran)
}

/// After a command that may have finished task `slug` (`task close`, a `run`) and ended
/// `done`: the run that waited on it continues in this process, if the operations say one
/// does, and the exit code is what both mean together ([`crate::ops::exit::continued_exit`]).
pub fn continue_unblocked(
    ctx: &Context,
    slug: &str,
    done: CommandResult,
    json: bool,
) -> CommandResult {
    continue_after(ctx, slug, done, json).map(|(exit, _)| exit)
}

/// [`continue_unblocked`], with the run that continued, if one did, as its typed outcome.
pub fn continue_after(
    ctx: &Context,
    slug: &str,
    done: CommandResult,
    json: bool,
) -> CommandResult<(ExitCode, Option<Ran>)> {
    let repo = need_repo(ctx)?;
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    let Some(run_id) = ops.unblocked(slug)? else {
        return done.map(|exit| (exit, None));
    };
    let first = done?;
    let ran = ops.continue_unblocked(ctx.load_config()?, slug, &run_id)?;
    let continued = report(ctx, &ran.state, json)?;
    Ok((
        crate::ops::exit::continued_exit(first, continued),
        Some(ran),
    ))
}

/// Starts the local llama.cpp servers that `models` need, if they are not running.
pub fn ensure_local_servers(
    ctx: &Context,
    loaded: &LoadedConfig,
    models: &[String],
) -> CommandResult<()> {
    let host = Terminal { ctx };
    Ok(pipeline::drive::ensure_local_servers(
        loaded, &ctx.env, models, &host,
    )?)
}

/// The routes of the roles to route (see [`crate::pipeline::plan::routes`]).
pub fn routes(
    ctx: &Context,
    loaded: &LoadedConfig,
    profile: Option<&str>,
    forced: Option<RoutingMode>,
) -> CommandResult<Option<Routing>> {
    Ok(pipeline::plan::routes(loaded, &ctx.env, profile, forced)?)
}

/// The formats of a report that is text or JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TextOrJson {
    /// For people.
    #[default]
    Text,
    /// One JSON value on stdout, for tools.
    Json,
}

/// How a report is printed: `--format text|json`, or `--json` for `--format json`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Output {
    /// Output format: text or json.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with = "json")]
    pub format: Option<TextOrJson>,
    /// Print JSON on stdout (the same as --format json).
    #[arg(long)]
    pub json: bool,
}

impl Output {
    /// Whether JSON was asked for.
    pub fn json(&self) -> bool {
        self.json || self.format == Some(TextOrJson::Json)
    }
}
