//! `git triad chamber`: the deliberation chamber (seed 003) on the command line. `ask`
//! opens a session and runs it; `respond`, `act` and `resume` are the founder's way on;
//! `list`, `show` and `stats` read the sessions recorded under `refs/triad/chamber/`.

mod records;

use std::io::{BufRead, IsTerminal, Write};

use clap::{Args, Subcommand, ValueEnum};

use super::{out, say, CommandError, CommandResult, Context};
use crate::chamber::{trace, FounderRole, Level, Session, Status};
use crate::cli::helper::{need_repo, ops, Terminal};
use crate::config::LoadedConfig;
use crate::exit::ExitCode;
use crate::ops::chamber::{Ask, ChamberError, Chambered};
use crate::ops::Ops;

/// Ask two or three models a question that has no single right answer, and let a
/// different arbiter synthesize (seed 003).
///
/// The panel answers independently (none sees another); written rules decide whether it
/// disagrees, and only then is there one round of cross-examination; the arbiter weighs
/// the evidence, keeps the minority and signs its name, or says honestly that there is no
/// consensus. Every phase is a commit under refs/triad/chamber/<id>
/// (`git show refs/triad/chamber/<id>:trace.md`).
///
/// Use it for a design choice, a scope cut, whether a flagged risk is real, an estimate.
/// A session costs about two calls per panelist and two for the arbiter; the caps are
/// chamber.sessions_per_day (10), chamber.session_usd ($3.00, checked before every call)
/// and chamber.monthly_usd ($100).
///
/// Example: git triad chamber ask "Split the parser into its own crate now?" --context src/parse.rs
#[derive(Debug, Args)]
pub struct ChamberArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: ChamberCommand,
}

/// The chamber's subcommands.
#[derive(Debug, Subcommand)]
pub enum ChamberCommand {
    /// Open a session on a question and run it to its synthesis.
    Ask(AskArgs),
    /// List the sessions, newest first.
    List(ListArgs),
    /// Show one session's whole trace: every answer, rule, round, action and cost.
    Show(ShowArgs),
    /// Give the founder's structured input (contributor, verifier, challenger) and go on.
    Respond(RespondArgs),
    /// Record the founder's action on a synthesis: accepted, revised or rejected.
    Act(ActArgs),
    /// Run the remaining phases of a session that stopped (a kill, a cap since raised).
    Resume(ResumeArgs),
    /// What the chamber decided and spent, and whether an arbiter-panelist wins too often.
    Stats(StatsArgs),
}

/// Criticality of a session you open (Level 1 needs no chamber).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum LevelArg {
    /// Auto-quorum, for reversible decisions: arbiter confidence 8/10 or more accepts,
    /// less escalates to Level 3.
    #[value(name = "2")]
    Two,
    /// With the founder: the estimated cost is shown and approved first.
    #[value(name = "3")]
    #[default]
    Three,
}

/// Open a session and run it.
#[derive(Debug, Default, Args)]
pub struct AskArgs {
    /// The decision to deliberate, as a question.
    pub question: String,
    /// Context every panelist reads: a TaskSpec id, a file, or a revision (repeatable).
    /// Private files (privacy.withhold, key-shaped content) are refused.
    #[arg(long, value_name = "FILE|REV|TASK")]
    pub context: Vec<String>,
    /// The panel: two or three distinct registry models (default chamber.panel, else the
    /// distinct models of the roles).
    #[arg(long, value_name = "M1,M2[,M3]", value_delimiter = ',')]
    pub panel: Vec<String>,
    /// The arbiter (default chamber.arbiter, else the first arbiter-role model).
    #[arg(long, value_name = "M")]
    pub arbiter: Option<String>,
    /// Criticality: 2 (auto-quorum) or 3 (with you).
    #[arg(long, value_enum, default_value_t = LevelArg::Three)]
    pub level: LevelArg,
    /// Your part at Level 3: approver (act on the synthesis), challenger (challenge it, up
    /// to two rounds), contributor (your input is weighed), verifier (your claim is checked).
    #[arg(long, value_enum, value_name = "ROLE")]
    pub founder_role: Option<FounderRole>,
    /// Approve a Level 3 session's estimated cost without asking (for scripts).
    #[arg(long)]
    pub yes: bool,
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Output formats of `chamber show` and `chamber list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// For the terminal.
    Text,
    /// For a pull request or a decision record.
    Markdown,
    /// The session record itself.
    Json,
}

/// List the sessions.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// Show one session.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// The session id (a unique prefix is enough).
    pub id: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
}

/// The founder's structured input.
#[derive(Debug, Args)]
pub struct RespondArgs {
    /// The session id.
    pub id: String,
    /// Your position in a few words.
    #[arg(long)]
    pub stance: String,
    /// Why.
    #[arg(long)]
    pub reasoning: String,
    /// How sure you are, 1 to 10.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=10))]
    pub confidence: u8,
    /// What you want weighed: a file, a measurement, a link (repeatable, at most five).
    #[arg(long, value_name = "POINTER")]
    pub evidence: Vec<String>,
    /// More context for a challenge round: a TaskSpec id, a file or a revision (repeatable).
    #[arg(long, value_name = "FILE|REV|TASK")]
    pub context: Vec<String>,
    /// Approve the next phases' cost without asking.
    #[arg(long)]
    pub yes: bool,
}

/// The founder's action on a synthesis.
#[derive(Debug, Args)]
pub struct ActArgs {
    /// The session id.
    pub id: String,
    /// What you did with the synthesis.
    #[arg(value_enum)]
    pub action: ActionArg,
    /// Why, or what you changed.
    #[arg(long)]
    pub note: Option<String>,
}

/// Actions on a synthesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ActionArg {
    /// Taken as it is.
    Accepted,
    /// Taken with changes (say which with --note).
    Revised,
    /// Not taken.
    Rejected,
}

/// Resume a session.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The session id.
    pub id: String,
    /// Approve the remaining phases' cost without asking.
    #[arg(long)]
    pub yes: bool,
}

/// The chamber's figures.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// How to print it (`--format json` or `--json`).
    #[command(flatten)]
    pub output: crate::cli::helper::Output,
}

/// Runs `git triad chamber`.
pub fn run(ctx: &Context, args: &ChamberArgs) -> CommandResult {
    match &args.command {
        ChamberCommand::Ask(a) => ask(ctx, a),
        ChamberCommand::List(a) => records::list(ctx, a),
        ChamberCommand::Show(a) => records::show(ctx, a),
        ChamberCommand::Respond(a) => records::respond(ctx, a),
        ChamberCommand::Act(a) => records::act(ctx, a),
        ChamberCommand::Resume(a) => records::resume(ctx, a),
        ChamberCommand::Stats(a) => records::stats(ctx, a),
    }
}

/// `chamber ask`: the operation opens the session ([`crate::ops::Ops::chamber_open`]), the
/// founder approves a Level 3 session's cost here, and the operation runs it.
fn ask(ctx: &Context, args: &AskArgs) -> CommandResult {
    let chambered = asked(ctx, args)?;
    finish(&chambered, args.output.json())
}

/// `chamber ask` up to the session as it stands, typed (a session's tool reads it; what it means
/// is still said by [`finish`]).
pub fn asked(ctx: &Context, args: &AskArgs) -> CommandResult<Chambered> {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    let opened = ops.chamber_open(
        &loaded,
        &Ask {
            question: args.question.clone(),
            context: args.context.clone(),
            panel: args.panel.clone(),
            arbiter: args.arbiter.clone(),
            level: match args.level {
                LevelArg::Two => Level::Two,
                LevelArg::Three => Level::Three,
            },
            founder_role: args.founder_role,
        },
    )?;
    warn(ctx, &opened.notices);
    if opened.session.assessment.level == Level::Three {
        approve(ctx, &ops, &loaded, &opened.session, args.yes)?;
    }
    Ok(ops.chamber_drive(&loaded, opened.session, opened.used)?)
}

/// Asks for approval of a Level 3 session's estimated cost on a terminal; `--yes`
/// approves; without a terminal and without `--yes`, refuses.
pub(super) fn approve(
    ctx: &Context,
    ops: &Ops<'_>,
    loaded: &LoadedConfig,
    session: &Session,
    yes: bool,
) -> CommandResult<()> {
    let est = ops.chamber_estimate(loaded, session);
    let what = format!(
        "Level 3 chamber session: panel {}, arbiter {}; estimated cost at most ${est:.4} \
         (cap {} a session, chamber.session_usd)",
        session.panel.join(", "),
        session.arbiter,
        crate::model::money::usd(loaded.config.chamber.session_usd)
    );
    if yes {
        if !ctx.quiet {
            say(&format!("chamber: {what}; approved with --yes"));
        }
        return Ok(());
    }
    if ctx.headless || !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(CommandError::usage(format!(
            "{what}; a Level 3 session needs your approval and there is no terminal to ask on"
        ))
        .hint("pass --yes to approve it from a script"));
    }
    let _ = write!(std::io::stderr(), "{what}\nProceed? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    if matches!(line.trim(), "y" | "Y" | "yes" | "Yes") {
        Ok(())
    } else {
        Err(CommandError::new(
            ExitCode::WaitingOnUser,
            "not approved: nothing was asked",
        ))
    }
}

impl From<ChamberError> for CommandError {
    fn from(e: ChamberError) -> Self {
        match e {
            ChamberError::Refused(why) => CommandError::usage(why),
            ChamberError::Limit(hit) => CommandError::new(ExitCode::BudgetExceeded, hit.0),
            ChamberError::Stopped { id, hit } => CommandError::new(ExitCode::BudgetExceeded, hit.0)
                .hint(format!(
                    "the session is recorded as stopped: `git triad chamber show {id}`; raise the cap \
                     (-c chamber.session_usd=…) and `git triad chamber resume {id}`"
                )),
            ChamberError::Local(e) => (*e).into(),
            e @ (ChamberError::NotRecorded { .. } | ChamberError::Runtime(_)) => {
                CommandError::failure(e.to_string())
            }
        }
    }
}

fn warn(ctx: &Context, notices: &[String]) {
    if !ctx.quiet {
        for n in notices {
            say(&format!("warning: {n}"));
        }
    }
}

/// Prints where a session stands and returns the exit code its standing means
/// ([`crate::ops::exit::chamber_exit`]: 6 while it waits on you, 0 once accepted, 1 with no
/// synthesis), with the next step.
pub fn finish(chambered: &Chambered, json: bool) -> CommandResult {
    let session = &chambered.session;
    let text = if json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(session).unwrap_or_default()
        )
    } else {
        trace::summary(session)
    };
    out(&text)?;
    let id = &session.id;
    let next = |line: String| say(&format!("hint: {line}"));
    match session.status {
        Status::AwaitingInput => {
            next(format!(
                "the panel has answered; give your input as {}: git triad chamber respond {id} \
                 --stance … --reasoning … --confidence N [--evidence …]",
                session.founder_role.map_or("founder", |r| r.as_str())
            ));
            Ok(chambered.exit)
        }
        Status::AwaitingAction if session.escalated() => {
            next(format!(
                "escalated to Level 3: git triad chamber act {id} accepted|revised|rejected"
            ));
            Ok(chambered.exit)
        }
        Status::AwaitingAction => {
            let challenge = session.founder_role == Some(FounderRole::Challenger)
                && session.challenges.len() < crate::chamber::engine::MAX_CHALLENGES;
            next(format!(
                "act on it: git triad chamber act {id} accepted|revised|rejected{}",
                if challenge {
                    format!(", or challenge it: git triad chamber respond {id} --stance …")
                } else {
                    String::new()
                }
            ));
            Ok(chambered.exit)
        }
        Status::AutoAccepted | Status::Closed => Ok(chambered.exit),
        Status::Stopped | Status::Open => Err(CommandError::new(
            chambered.exit,
            format!(
                "chamber session {id} has no synthesis: {}",
                session
                    .stop_reason
                    .as_deref()
                    .unwrap_or("it stopped before the arbiter answered")
            ),
        )
        .hint(format!("its trace: git triad chamber show {id}"))
        .hint(format!(
            "once the cause is fixed (a model back up, a cap raised): git triad chamber resume {id}"
        ))),
    }
}
