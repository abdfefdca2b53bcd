//! `git triad chamber`: the deliberation chamber (seed 003) on the command line. `ask`
//! opens a session and runs it; `respond`, `act` and `resume` are the founder's way on;
//! `list`, `show` and `stats` read the sessions recorded under `refs/triad/chamber/`.

mod args;
mod records;
mod session;

pub use args::{
    ActArgs, ActionArg, AskArgs, ChamberArgs, ChamberCommand, LevelArg, ListArgs, RespondArgs,
    ResumeArgs, ShowArgs, StatsArgs, TraceFormat,
};
pub use session::finish;
use session::{approve, warn};

use super::{CommandError, CommandResult, Context};
use crate::chamber::Level;
use crate::cli::helper::{need_repo, ops, Terminal};
use crate::exit::ExitCode;
use crate::ops::chamber::{Ask, ChamberError, Chambered};

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
