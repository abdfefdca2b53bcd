//! The arbiter's synthesis checked against the facts of the session. Its word is kept
//! verbatim in the trace; what the session stands on is the checked version, and every
//! correction is a notice saying what was claimed and what the facts were.

use super::answer::{Disagreement, Minority, Synthesis};
use super::divergence::same_stance;
use super::{final_answers, Session};

/// The checked synthesis and what the check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked {
    /// What the session stands on.
    pub synthesis: Synthesis,
    /// Each correction, in words.
    pub notices: Vec<String>,
    /// Whether the synthesis took the arbiter's own panelist stance, when that question
    /// arises (the arbiter is a panelist, the panel diverged, there is a synthesis).
    pub arbiter_view_won: Option<bool>,
}

/// A panelist confidence from which a disagreement is "with high confidence".
const HIGH_CONFIDENCE: u8 = 8;

/// Checks `claimed`, the arbiter's synthesis for round `at` of `session`.
pub fn check(session: &Session, at: usize, claimed: Synthesis) -> Checked {
    let round = &session.rounds[at];
    let finals = final_answers(round);
    let mut s = claimed;
    let mut notices = Vec::new();

    // Names: only panelists can hold a position or a minority view.
    let on_panel = |name: &str| session.panel.iter().any(|p| p == name);
    let strangers: Vec<String> = s
        .positions
        .iter()
        .map(|p| p.panelist.clone())
        .chain(s.minority.iter().map(|m| m.panelist.clone()))
        .filter(|n| !on_panel(n))
        .collect();
    if !strangers.is_empty() {
        notices.push(format!(
            "the arbiter named {} as panelist(s), but the panel is {}: those entries are left out",
            strangers.join(", "),
            session.panel.join(", ")
        ));
        s.positions.retain(|p| on_panel(&p.panelist));
        s.minority.retain(|m| on_panel(&m.panelist));
    }

    // Honest uncertainty: a "consensus" over a panel that still disagrees, everyone at
    // high confidence, is not one.
    let split = finals
        .iter()
        .any(|(_, a)| !same_stance(&a.stance, &finals[0].1.stance));
    let all_sure = finals.iter().all(|(_, a)| a.confidence >= HIGH_CONFIDENCE);
    if s.consensus && split && all_sure && finals.len() >= 2 {
        notices.push(format!(
            "the arbiter claimed a consensus, but the panelists still disagree, each with \
             confidence {HIGH_CONFIDENCE}/10 or more ({}): recorded as no consensus",
            finals
                .iter()
                .map(|(m, a)| format!("{m}: {} at {}/10", a.stance.trim(), a.confidence))
                .collect::<Vec<_>>()
                .join("; ")
        ));
        s.consensus = false;
        s.disagreement = Disagreement::Substantive;
    }
    if !s.consensus {
        s.answer = super::no_consensus_text(finals.len());
    }

    // Minority views are preserved, whether or not the arbiter listed them.
    if s.consensus {
        for (m, a) in &finals {
            let listed = s.minority.iter().any(|x| &x.panelist == m);
            if !same_stance(&a.stance, &s.stance) && !listed {
                notices.push(format!(
                    "{m}'s view differs from the synthesis and the arbiter did not list it: kept \
                     as a minority view"
                ));
                s.minority.push(Minority {
                    panelist: m.clone(),
                    view: crate::bounded::clip(
                        &format!("{}: {}", a.stance.trim(), a.reasoning.trim()),
                        600,
                    ),
                });
            }
        }
    }

    // The conflict-of-interest self-check is required of an arbiter that is a panelist.
    if session.arbiter_is_panelist && s.self_check.trim().is_empty() {
        notices.push(format!(
            "{} is also a panelist but gave no self-check on its own view's weight",
            session.arbiter
        ));
    }

    let diverged = round
        .divergence
        .as_deref()
        .is_some_and(super::divergence::diverged);
    let arbiter_view_won = (session.arbiter_is_panelist && diverged && s.consensus)
        .then(|| {
            finals
                .iter()
                .find(|(m, _)| m == &session.arbiter)
                .map(|(_, a)| same_stance(&a.stance, &s.stance))
        })
        .flatten();
    Checked {
        synthesis: s,
        notices,
        arbiter_view_won,
    }
}
