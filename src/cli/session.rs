//! `git triad session`: a hierarchical session (seed 002) on the command line. The human
//! talks to a manager; the manager summons orchestrators that work through git triad on a
//! session branch. `--headless` reads the human's lines from stdin or `--script`, prints
//! the transcript, and exits when the script is answered; `list` and `show` read the
//! sessions recorded under `refs/triad/sessions/`.

use std::io::BufRead;
use std::path::PathBuf;
use std::sync::{mpsc, Arc};

use clap::{Args, Subcommand};

use super::helper::{client_for, ensure_local_servers, need_repo};
use super::{ok, out, say, CommandError, CommandResult, Context};
use crate::config::schema::Role;
use crate::exit::ExitCode;
use crate::session::act::{self, Workshop};
use crate::session::engine::{Engine, HumanInput, Outcome, Setup};
use crate::session::product::Product;
use crate::session::record::{self, Meta};
use crate::session::state::State;
use crate::session::transcript;
use crate::tui::session::SessionScreen;

/// Talk to a manager that summons orchestrators to do long work through git triad.
///
/// You speak to the manager (roles.manager), a terse oracle by default (prompts.manager).
/// It clarifies what you want, then summons an orchestrator (roles.orchestrator) with the
/// whole task; from then on the two talk, and you may interject. The orchestrator works only
/// through git triad, on the session branch triad/session/<id> (never your branch): it writes
/// TaskSpecs, runs the reviewed pipeline on them, reviews commits, asks the chamber, and reads
/// files. Each conversation's context is counted from the usage its server reports: an
/// orchestrator is warned at 70 % and 85 % and handed off at session.hard_limit (95 %); a
/// full manager hands off to a fresh one. Everything is recorded under
/// refs/triad/sessions/<id> as it happens; --resume continues after a crash or a kill.
///
/// On a terminal, the session has a screen: the conversation with tagged speakers, context
/// bars for the manager and the current orchestrator, the tool at work (`◈ run_pipeline
/// (3)`) and an input line. A line typed while the models work is an interjection: it
/// reaches the manager as `Human: …` at the next exchange. Keys: Enter sends, PgUp/PgDn
/// scroll, Ctrl-U clears the line, Ctrl-D (or /quit) leaves at your next turn, Ctrl-C
/// leaves at your turn and, pressed twice while the models work, stops at once (the record
/// keeps everything: --resume continues).
///
/// Headless (--headless, --script, --no-tui, or no terminal): one line per message from
/// stdin; a line starting with `+` is an interjection. In a --script file, empty lines and
/// lines starting with `#` are skipped.
///
/// Example: git triad session --headless --script plan.txt
#[derive(Debug, Args)]
pub struct SessionArgs {
    /// What to do (without one: a session).
    #[command(subcommand)]
    pub command: Option<SessionCommand>,
    /// No terminal UI: human lines from stdin (or --script), the transcript on stdout; exits
    /// when the input is answered.
    #[arg(long)]
    pub headless: bool,
    /// Read the human's lines from FILE (implies --headless).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// Continue a session (default: the newest). With --script, the lines it already took
    /// are skipped.
    #[arg(long, value_name = "ID", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
}

/// The session subcommands.
#[derive(Debug, Subcommand)]
pub enum SessionCommand {
    /// List the sessions, newest first.
    List(ListArgs),
    /// Show one session's transcript: every message, tool call, warning and hand-off.
    Show(ShowArgs),
}

/// List the sessions.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Show one session.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session id (`git triad session list`).
    pub id: String,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Runs `git triad session`.
pub fn run(ctx: &Context, args: &SessionArgs, product: Arc<dyn Product>) -> CommandResult {
    match &args.command {
        Some(SessionCommand::List(a)) => list(ctx, a),
        Some(SessionCommand::Show(a)) => show(ctx, a),
        None => session(ctx, args, product),
    }
}

fn list(ctx: &Context, args: &ListArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let sessions = record::list(repo);
    if args.output.json() {
        let all = serde_json::to_value(&sessions).unwrap_or_default();
        out(&format!("{all}\n"))?;
        return ok();
    }
    if sessions.is_empty() {
        out("no sessions yet: start one with `git triad session`\n")?;
        return ok();
    }
    let mut s = String::new();
    for x in sessions {
        s.push_str(&format!(
            "{}  {}  {} orchestrator(s), {} manager(s), ${:.4} in its own calls, {} events{}\n    {}\n",
            x.meta.id,
            crate::clock::format_ts(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(x.updated)
            ),
            x.orchestrators,
            x.managers,
            x.spent_usd,
            x.events,
            x.stopped.as_deref().map_or(String::new(), |w| format!(
                ", stopped: {}",
                crate::bounded::clip(w, 80)
            )),
            if x.title.is_empty() {
                "(no line yet)"
            } else {
                &x.title
            }
        ));
    }
    out(&s)?;
    ok()
}

/// The events of session `id`, and the session they make (`hard_limit` from the config);
/// `each` sees every event with the session as it was right after it.
fn load(
    repo: &git2::Repository,
    id: &str,
    hard_limit: f64,
    mut each: impl FnMut(&record::Event, &State),
) -> CommandResult<(Vec<record::Event>, State)> {
    let events = record::load(repo, id)?.ok_or_else(|| {
        CommandError::usage(format!("no session `{id}`"))
            .hint("`git triad session list` shows the sessions")
    })?;
    let mut state: Option<State> = None;
    for e in &events {
        match state.as_mut() {
            None => state = State::replay(std::slice::from_ref(e), hard_limit),
            Some(st) => st.apply(e, st.updated),
        }
        if let Some(st) = &state {
            each(e, st);
        }
    }
    let state = state.ok_or_else(|| {
        CommandError::failure(format!(
            "the record of session `{id}` does not start with its start"
        ))
    })?;
    Ok((events, state))
}

fn show(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let hard_limit = ctx.load_config()?.config.session.hard_limit;
    // The transcript event by event, each line shown with the session as it was then.
    let mut s = String::new();
    let (events, state) = load(repo, &args.id, hard_limit, |e, st| {
        for line in transcript::lines(e, st) {
            s.push_str(&line);
            s.push('\n');
        }
    })?;
    if args.output.json() {
        out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&events).unwrap_or_default()
        ))?;
        return ok();
    }
    s.push_str(&format!(
        "\n{} events, {} orchestrator(s), ${:.4} in its own calls (its runs: `git triad usage`); context: manager {} %{}\n",
        state.events,
        state.orchestrators,
        state.spent_usd,
        state.manager.meter.percent(),
        state
            .orchestrator
            .as_ref()
            .map_or(String::new(), |o| format!(
                ", {} {} %",
                record::name(o.conv),
                o.meter.percent()
            ))
    ));
    out(&s)?;
    ok()
}

/// Human lines: a script's, or stdin's read by a thread, with the `+` rule for interjections.
struct Lines {
    rx: mpsc::Receiver<String>,
    held: Option<String>,
}

impl Lines {
    fn script(text: &str, skip: usize) -> Lines {
        let (tx, rx) = mpsc::channel();
        for l in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .skip(skip)
        {
            let _ = tx.send(l.to_string());
        }
        Lines { rx, held: None }
    }

    fn stdin() -> Lines {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines().map_while(Result::ok) {
                let line = line.trim().to_string();
                if !line.is_empty() && tx.send(line).is_err() {
                    break;
                }
            }
        });
        Lines { rx, held: None }
    }
}

fn strip_plus(line: String) -> String {
    match line.strip_prefix('+') {
        Some(rest) => rest.trim().to_string(),
        None => line,
    }
}

impl HumanInput for Lines {
    fn next_line(&mut self) -> Option<String> {
        self.held
            .take()
            .or_else(|| self.rx.recv().ok())
            .map(strip_plus)
    }

    fn interjection(&mut self) -> Option<String> {
        if self.held.is_none() {
            self.held = self.rx.try_recv().ok();
        }
        if self.held.as_deref().is_some_and(|l| l.starts_with('+')) {
            return self.held.take().map(strip_plus);
        }
        None
    }
}

/// `git triad session` itself: a new session, or one resumed, driving `product` as its tools.
fn session(ctx: &Context, args: &SessionArgs, product: Arc<dyn Product>) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let profile = loaded.active_profile(&ctx.env);
    let hard_limit = loaded.config.session.hard_limit;
    // A resumed session's conversation so far, to show where it stands.
    let mut replayed = Vec::new();
    let mut collect = |e: &record::Event, s: &State| replayed.extend(transcript::lines(e, s));
    let resumed = match &args.resume {
        None => None,
        Some(id) if id.is_empty() => {
            let newest = record::list(repo).into_iter().next().ok_or_else(|| {
                CommandError::usage("there is no session to resume")
                    .hint("start one with `git triad session`")
            })?;
            Some(load(repo, &newest.meta.id, hard_limit, &mut collect)?.1)
        }
        Some(id) => Some(load(repo, id, hard_limit, &mut collect)?.1),
    };
    let meta = match &resumed {
        Some(s) => s.meta.clone(),
        None => new_meta(repo, &loaded, profile.as_deref())?,
    };
    let mut models = meta.manager_models.clone();
    models.extend(meta.orchestrator_models.iter().cloned());
    ensure_local_servers(ctx, &loaded, &models)?;
    let worktree = act::ensure_worktree(repo, &meta.id, &meta.base)
        .map_err(|e| CommandError::failure(format!("cannot prepare the session worktree: {e}")))?;
    let client = client_for(ctx, repo, &loaded);
    client.set_run(Some(&format!("session/{}", meta.id)));
    let settings = loaded.config.session.clone();
    if settings.session_usd > 0.0 {
        let spent = resumed.as_ref().map_or(0.0, |s| s.spent_usd);
        client.set_budget_after(Some(settings.session_usd), spent);
    }
    // On a terminal (stdin and stdout), without --headless or --script: the screen.
    let screen = if !args.headless && args.script.is_none() && ctx.tui(&[0, 1]) {
        let title = format!("GIT TRIAD · SESSION {}", meta.id);
        Some(
            SessionScreen::open(&title)
                .map_err(|e| CommandError::failure(format!("cannot open the screen: {e}")))?,
        )
    } else {
        None
    };
    let root = repo.workdir();
    let setup = Setup {
        repo,
        client: &client,
        manager_prompt: crate::config::prompt(&loaded.config, "manager", root),
        orchestrator_prompt: crate::config::prompt(&loaded.config, "orchestrator", root),
        settings,
        workshop: Workshop {
            worktree,
            product,
            privacy: crate::privacy::Privacy::from_config(&loaded.config),
            progress: screen.as_ref().map(|(s, _)| s.progress()),
        },
    };
    let observer: crate::session::engine::Observer<'_> = match &screen {
        Some((s, _)) => s.observer(),
        None => Box::new(|e: &record::Event, s: &State| {
            let lines = transcript::lines(e, s);
            if !lines.is_empty() {
                let _ = out(&format!("{}\n", lines.join("\n")));
            }
        }),
    };
    let skip = resumed.as_ref().map_or(0, |s| s.human_lines);
    let mut engine = match resumed {
        Some(state) => {
            if !ctx.quiet {
                say(&format!(
                    "triad: resuming session {} ({} events, {} human line(s) taken); {}",
                    state.meta.id,
                    state.events,
                    state.human_lines,
                    transcript::standing(&state)
                ));
            }
            match &screen {
                Some((s, _)) => s.replay(replayed),
                None if !ctx.quiet => {
                    for line in transcript::recap(&replayed, 6) {
                        say(&format!("  │ {line}"));
                    }
                }
                None => {}
            }
            Engine::resume(setup, state, observer)?
        }
        None => Engine::start(setup, meta, observer)?,
    };
    let (screen, mut input): (_, Box<dyn HumanInput>) = match (screen, &args.script) {
        (Some((screen, typed)), _) => (Some(screen), Box::new(typed)),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                CommandError::usage(format!("cannot read the script {}: {e}", path.display()))
            })?;
            (None, Box::new(Lines::script(&text, skip)))
        }
        (None, None) => (None, Box::new(Lines::stdin())),
    };
    let rt = super::runtime()?;
    let id = engine.state.meta.id.clone();
    let code = loop {
        match rt.block_on(engine.advance(input.as_mut()))? {
            Outcome::HumanTurn => match input.next_line() {
                Some(line) => engine.human(&line)?,
                None => break ExitCode::Ok,
            },
            Outcome::Stopped { budget, .. } => {
                break if budget {
                    ExitCode::BudgetExceeded
                } else {
                    ExitCode::Error
                }
            }
        }
    };
    if let Some(screen) = screen {
        screen.close();
        if let Some(why) = &engine.state.stopped {
            say(&format!("triad: session {id} stopped: {why}"));
        }
    }
    if !ctx.quiet {
        say(&format!(
            "triad: session {id} is recorded: `git triad session show {id}`; continue with `git triad session --resume {id}`"
        ));
    }
    Ok(code)
}

fn new_meta(
    repo: &git2::Repository,
    loaded: &crate::config::LoadedConfig,
    profile: Option<&str>,
) -> CommandResult<Meta> {
    let manager_models = loaded.role_models(Role::Manager, profile);
    let orchestrator_models = loaded.role_models(Role::Orchestrator, profile);
    for (role, list) in [
        (Role::Manager, &manager_models),
        (Role::Orchestrator, &orchestrator_models),
    ] {
        if list.is_empty() {
            return Err(CommandError::usage(format!("no model is configured for the {role} role"))
                .hint(format!("set roles.{role}.models, e.g. `git triad config set roles.{role}.models <model>` (models with tool calling)")));
        }
    }
    let base = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .map_err(|_| {
            CommandError::usage("this repository has no commit yet")
                .hint("a session branches from HEAD: commit something first")
        })?
        .id()
        .to_string();
    let id = crate::clock::new_run_id();
    Ok(Meta {
        branch: act::branch(&id),
        id,
        started: crate::clock::now_unix(),
        base,
        manager_models,
        orchestrator_models,
    })
}
