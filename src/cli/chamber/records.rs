//! The chamber subcommands that work on recorded sessions: list, show, respond, act,
//! resume, stats.

use super::super::{ok, out, CommandError, CommandResult, Context};
use super::args::{
    ActArgs, ActionArg, ListArgs, RespondArgs, ResumeArgs, ShowArgs, StatsArgs, TraceFormat,
};
use super::session::{approve, finish, warn};
use crate::chamber::founder;
use crate::chamber::store::{self, Store};
use crate::chamber::{open, stats as chamber_stats, trace, FounderAction, FounderInput, Level};
use crate::chamber::{Session, Status};
use crate::cli::helper::{need_repo, ops, Terminal};

fn load(repo: &git2::Repository, id: &str) -> CommandResult<Session> {
    store::resolve(repo, id)
        .map_err(|e| CommandError::usage(e).hint("`git triad chamber list` shows the sessions"))
}

fn save(repo: &git2::Repository, session: &Session, what: &str) -> CommandResult<()> {
    Store::open(repo, &session.id)
        .phase(session, what)
        .map_err(|e| {
            CommandError::failure(format!("cannot record chamber session {}: {e}", session.id))
        })
}

/// `chamber list`.
pub(super) fn list(ctx: &Context, args: &ListArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let sessions = store::list(repo);
    let text = match args.format {
        TraceFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&sessions).unwrap_or_default()
        ),
        _ if sessions.is_empty() => {
            "No chamber sessions yet (git triad chamber ask \"<question>\" opens one).\n".into()
        }
        _ => sessions.iter().map(trace::line).collect(),
    };
    out(&text)?;
    ok()
}

/// `chamber show`.
pub(super) fn show(ctx: &Context, args: &ShowArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let session = load(repo, &args.id)?;
    let text = match args.format {
        TraceFormat::Text => trace::text(&session),
        TraceFormat::Markdown => trace::markdown(&session),
        TraceFormat::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&session).unwrap_or_default()
        ),
    };
    out(&text)?;
    ok()
}

/// `chamber respond`: records the input, then runs what it starts (the claim check, the
/// synthesis, a challenge round).
pub(super) fn respond(ctx: &Context, args: &RespondArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let session = load(repo, &args.id)?;
    if args.evidence.len() > 5 {
        return Err(CommandError::usage(
            "at most five --evidence pointers: put the primary one first",
        ));
    }
    let input = FounderInput {
        stance: args.stance.trim().to_string(),
        reasoning: args.reasoning.trim().to_string(),
        confidence: args.confidence,
        evidence: args.evidence.clone(),
    };
    if input.stance.is_empty() {
        return Err(CommandError::usage("--stance is empty"));
    }
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    let answered = ops.chamber_respond(&loaded, session, input, &args.context)?;
    // Approved before the input is recorded: a refusal leaves the session as it was, so
    // the same `respond` with --yes still works.
    if answered.session.assessment.level == Level::Three {
        approve(ctx, &ops, &loaded, &answered.session, args.yes)?;
    }
    let chambered = ops.chamber_go_on(&loaded, answered)?;
    finish(&chambered, false)
}

/// `chamber act`.
pub(super) fn act(ctx: &Context, args: &ActArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let mut session = load(repo, &args.id)?;
    let action = match args.action {
        ActionArg::Accepted => FounderAction::Accepted,
        ActionArg::Revised => FounderAction::Revised,
        ActionArg::Rejected => FounderAction::Rejected,
    };
    if session.status == Status::Closed {
        return Err(CommandError::usage(format!(
            "session {} is closed: its founder action is already {}",
            session.id,
            session.founder_action.map_or("-", |a| a.as_str())
        )));
    }
    founder::act(&mut session, action, args.note.clone()).map_err(CommandError::usage)?;
    save(
        repo,
        &session,
        &format!("founder action: {}", action.as_str()),
    )?;
    out(&format!(
        "Chamber session {}: {} by the founder; closed.\n",
        session.id,
        action.as_str()
    ))?;
    ok()
}

/// `chamber resume`.
pub(super) fn resume(ctx: &Context, args: &ResumeArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let mut session = load(repo, &args.id)?;
    match session.status {
        Status::Open | Status::Stopped => {}
        Status::AwaitingInput => {
            return Err(CommandError::usage(format!(
                "session {} waits on your input: git triad chamber respond {} --stance …",
                session.id, session.id
            )))
        }
        s => {
            return Err(CommandError::usage(format!(
                "session {} is {}: nothing to resume",
                session.id,
                s.as_str()
            )))
        }
    }
    if let Some(round) = session.rounds.last_mut() {
        let answered = crate::chamber::answered(&round.answers).len();
        if answered < 2 && !round.answers.is_empty() {
            // Its earlier phase commit keeps the failed answers, and their cost still
            // counts; the panel is asked again.
            session.discarded.append(&mut round.answers);
            session
                .notices
                .push("resumed after too few answers: the panel was asked again".into());
        }
    }
    if let Some(round) = session.rounds.last_mut() {
        if round.effective.is_none() && round.synthesis.as_ref().is_some_and(|t| t.answer.is_none())
        {
            // Its earlier phase commit keeps the failed call, and its cost still counts;
            // the arbiter is asked again.
            session.discarded.extend(round.synthesis.take());
            session
                .notices
                .push("resumed after the arbiter gave no synthesis: it was asked again".into());
        }
    }
    session.stop_reason = None;
    let host = Terminal { ctx };
    let ops = ops(ctx, repo, &host);
    if session.assessment.level == Level::Three {
        approve(ctx, &ops, &loaded, &session, args.yes)?;
    }
    let used = open::used(repo, Some(&session.id));
    let chambered = ops.chamber_drive(&loaded, session, used)?;
    finish(&chambered, false)
}

/// `chamber stats`.
pub(super) fn stats(ctx: &Context, args: &StatsArgs) -> CommandResult {
    let repo = need_repo(ctx)?;
    let loaded = ctx.load_config()?;
    let sessions = store::list(repo);
    let st = chamber_stats::stats(&sessions, &loaded.config.chamber, crate::clock::now_unix());
    warn(ctx, &st.warnings);
    let text = if args.output.json() {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&st).unwrap_or_default()
        )
    } else {
        chamber_stats::text(&st)
    };
    out(&text)?;
    ok()
}
