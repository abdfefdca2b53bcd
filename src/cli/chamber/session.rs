//! What every chamber subcommand does with a session: ask the founder to approve a Level 3
//! session's cost, say its warnings, and say where it stands with the exit code that means.

use std::io::{BufRead, IsTerminal, Write};

use crate::chamber::{trace, FounderRole, Session, Status};
use crate::cli::{out, say, CommandError, CommandResult, Context};
use crate::config::LoadedConfig;
use crate::exit::ExitCode;
use crate::ops::chamber::Chambered;
use crate::ops::Ops;

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

/// Says each of `notices` as a warning (none with `--quiet`).
pub(super) fn warn(ctx: &Context, notices: &[String]) {
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
