//! The founder's part (seed 003, Level 3): who sits on the panel, what a session may cost
//! before it is approved, the structured input (`chamber respond`) and the action on the
//! synthesis (`chamber act`).

use super::engine::MAX_CHALLENGES;
use super::{
    ActionEntry, FounderAction, FounderInput, FounderRole, Round, Session, Status, Verification,
};
use crate::config::schema::{Config, Role};

/// Largest panel the seed describes.
pub const MAX_PANEL: usize = 3;

/// The panel and the arbiter: `--panel`/`--arbiter`, else the configured ones
/// (`configured`: `[chamber]`, else the profile's), else the distinct models of the
/// effective roles (`roles` gives a role's models after the active profile; at most three)
/// and the first arbiter-role model.
pub fn panel(
    config: &Config,
    roles: &dyn Fn(Role) -> Vec<String>,
    configured: &(Vec<String>, String),
    panel: &[String],
    arbiter: Option<&str>,
) -> Result<(Vec<String>, String), String> {
    let mut chosen: Vec<String> = if !panel.is_empty() {
        panel.to_vec()
    } else if !configured.0.is_empty() {
        configured.0.clone()
    } else {
        let mut from_roles = Vec::new();
        for role in Role::PIPELINE {
            for m in roles(role) {
                if !from_roles.contains(&m) && from_roles.len() < MAX_PANEL {
                    from_roles.push(m);
                }
            }
        }
        from_roles
    };
    chosen.dedup();
    let mut seen = Vec::new();
    for m in &chosen {
        if seen.contains(m) {
            return Err(format!(
                "`{m}` is on the panel twice; a panel is distinct models"
            ));
        }
        seen.push(m.clone());
    }
    if chosen.len() < 2 || chosen.len() > MAX_PANEL {
        return Err(format!(
            "a chamber panel is two or three distinct models, not {} ({}); set chamber.panel \
             or pass --panel M1,M2[,M3]",
            chosen.len(),
            chosen.join(", ")
        ));
    }
    let arbiter = match arbiter {
        Some(a) => a.to_string(),
        None if !configured.1.is_empty() => configured.1.clone(),
        None => roles(Role::Arbiter)
            .into_iter()
            .next()
            .ok_or("no chamber arbiter: set chamber.arbiter or pass --arbiter M")?,
    };
    for m in chosen.iter().chain(std::iter::once(&arbiter)) {
        if !config.models.contains_key(m) {
            return Err(format!(
                "`{m}` is not in the model registry (`git triad models` lists it)"
            ));
        }
    }
    Ok((chosen, arbiter))
}

/// What `chamber respond` did.
#[derive(Debug, Clone, PartialEq)]
pub enum Responded {
    /// The input will be weighed by the arbiter (contributor).
    Contributed,
    /// The claim will be checked by the panel (verifier).
    ToVerify,
    /// The panel answers again with the challenge (challenger), round `n`.
    Challenged(usize),
}

/// Takes the founder's structured input, as the session's founder role means it.
pub fn respond(
    session: &mut Session,
    input: FounderInput,
    added_context: Option<String>,
) -> Result<Responded, String> {
    let role = session.founder_role.ok_or_else(|| {
        format!(
            "session {} has no founder role (Level {}): there is nothing to respond to",
            session.id,
            session.assessment.level.as_str()
        )
    })?;
    let done = match (role, session.status) {
        (FounderRole::Contributor, Status::AwaitingInput) => {
            session.founder_input = Some(input);
            record(session, FounderAction::Contributed, None);
            Responded::Contributed
        }
        (FounderRole::Verifier, Status::AwaitingInput) => {
            session.verification = Some(Verification {
                claim: input,
                outcome: String::new(),
                sources: Vec::new(),
            });
            record(session, FounderAction::Verified, None);
            Responded::ToVerify
        }
        (FounderRole::Challenger, Status::AwaitingAction) => {
            if session.challenges.len() >= MAX_CHALLENGES {
                return Err(format!(
                    "session {} already had {MAX_CHALLENGES} challenge rounds; it resolved to {}: \
                     act on it with `git triad chamber act {} accepted|revised|rejected`",
                    session.id,
                    session.resolution.as_deref().unwrap_or("NEED MORE DATA"),
                    session.id
                ));
            }
            let mut text = super::brief::render_answer(&input);
            if let Some(more) = added_context {
                text.push_str(&format!("\n{more}"));
            }
            session.challenges.push(input);
            let n = session.challenges.len();
            session.rounds.push(Round {
                kind: format!("challenge {n}"),
                added_context: Some(format!("The founder challenges the synthesis:\n{text}")),
                ..Round::default()
            });
            record(session, FounderAction::Challenged, None);
            Responded::Challenged(n)
        }
        (role, status) => {
            return Err(format!(
                "session {} is {} and its founder role is {}: {}",
                session.id,
                status.as_str(),
                role.as_str(),
                match role {
                    FounderRole::Approver =>
                        "an approver acts on the synthesis with `chamber act`, it gives no input",
                    FounderRole::Challenger =>
                        "a challenge answers a synthesis; there is none waiting",
                    FounderRole::Contributor | FounderRole::Verifier =>
                        "input is taken once, before the synthesis",
                }
            ))
        }
    };
    session.status = Status::Open;
    Ok(done)
}

/// Records the founder's action on the synthesis (accepted, revised, rejected).
pub fn act(
    session: &mut Session,
    action: FounderAction,
    note: Option<String>,
) -> Result<(), String> {
    if !matches!(
        action,
        FounderAction::Accepted | FounderAction::Revised | FounderAction::Rejected
    ) {
        return Err(format!(
            "`{}` is not an action on a synthesis",
            action.as_str()
        ));
    }
    match session.status {
        Status::Open | Status::AwaitingInput => Err(format!(
            "session {} is {}: there is no synthesis to act on yet{}",
            session.id,
            session.status.as_str(),
            if session.status == Status::AwaitingInput {
                " (give your input with `git triad chamber respond`)"
            } else {
                " (`git triad chamber resume` runs its remaining phases)"
            }
        )),
        _ if session.synthesis().is_none() => Err(format!(
            "session {} has no synthesis to act on ({}): `git triad chamber resume {}` asks \
             again",
            session.id,
            session.stop_reason.as_deref().unwrap_or("it stopped"),
            session.id
        )),
        _ => {
            session.founder_role.get_or_insert(FounderRole::Approver);
            record(session, action, note);
            session.status = Status::Closed;
            Ok(())
        }
    }
}

fn record(session: &mut Session, action: FounderAction, note: Option<String>) {
    session.founder_action = Some(action);
    session.actions.push(ActionEntry {
        action,
        note,
        at: crate::clock::now_ts(),
    });
}
