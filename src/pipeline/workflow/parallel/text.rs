//! What the models of a parallel exploration are asked and answer: the cross-review with
//! its vote, the tiebreaker's choice among tied candidates, and what the winner is shown
//! for its synthesis. Candidates appear under letters, never under their model's name, so
//! a vote judges the work.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::pipeline::record::{ParallelState, Rating};

/// Characters of one candidate's diff shown to another model.
const DIFF_CHARS: usize = 40_000;

/// A candidate's review of the others and its vote (the structured answer).
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct ReviewAnswer {
    /// One rating per other candidate.
    pub ratings: Vec<RatingAnswer>,
    /// The letter of the best other candidate.
    pub vote: String,
    /// Why that one.
    pub reason: String,
}

/// One rating in a [`ReviewAnswer`].
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RatingAnswer {
    /// The rated candidate's letter.
    pub candidate: String,
    /// 1 (unusable) to 10 (nothing to improve).
    pub score: i64,
    /// Why.
    pub reason: String,
}

/// The tiebreaker's choice among the tied candidates.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct TieAnswer {
    /// The chosen candidate's letter.
    pub winner: String,
    /// Why, for a developer reading only this.
    pub justification: String,
}

/// One candidate as another model is shown it.
pub(super) struct Shown<'a> {
    /// Its letter.
    pub label: &'a str,
    /// Its diff against the base.
    pub diff: &'a str,
}

fn block(label: &str, diff: &str) -> String {
    format!(
        "### candidate {label}\n```diff\n{}\n```\n",
        crate::bounded::clip(diff, DIFF_CHARS)
    )
}

/// The cross-review request of the candidate `own` (shown last, as its own), with the
/// reason its previous ballot was refused, if it was.
pub(super) fn review(
    task: &str,
    own: &Shown<'_>,
    others: &[Shown<'_>],
    refused: Option<&str>,
) -> String {
    let mut s = format!("QUESTION: rate the other candidates' solutions and vote for the best of them\n\nTASK:\n{task}\n\n## THE OTHER CANDIDATES\n");
    for o in others {
        s.push_str(&block(o.label, o.diff));
    }
    s.push_str(&format!(
        "\n## YOUR OWN SOLUTION (candidate {}; you may not vote for it)\n",
        own.label
    ));
    s.push_str(&block(own.label, own.diff));
    let letters: Vec<&str> = others.iter().map(|o| o.label).collect();
    s.push_str(&format!(
        "\nRate each of {} from 1 to 10 and vote for one of them.\n",
        letters.join(", ")
    ));
    if let Some(why) = refused {
        s.push_str(&format!(
            "\n## YOUR PREVIOUS BALLOT WAS REFUSED\n{why}. This is your last chance to vote: choose one of {}.\n",
            letters.join(", ")
        ));
    }
    s
}

/// The tiebreaker's request: the tied candidates, the ratings they received and the votes.
pub(super) fn tie(task: &str, p: &ParallelState, tied: &[Shown<'_>]) -> String {
    let why = if p.present().count() == 2 {
        "there are two candidates, and each could vote only for the other, so the vote cannot choose"
    } else {
        "the candidates' vote is tied"
    };
    let mut s = format!("QUESTION: {why}; choose the best solution among the tied ones\n\nTASK:\n{task}\n\n## THE TIED CANDIDATES\n");
    for t in tied {
        s.push_str(&block(t.label, t.diff));
        let model = p
            .candidates
            .iter()
            .find(|c| c.label == t.label)
            .map_or("", |c| c.model.as_str());
        for (by, r) in ratings_of(p, model) {
            s.push_str(&format!(
                "- rated {}/10 by candidate {by}: {}\n",
                r.score, r.reason
            ));
        }
    }
    let letters: Vec<&str> = tied.iter().map(|t| t.label).collect();
    s.push_str(&format!(
        "\nChoose one of {} and justify the choice.\n",
        letters.join(", ")
    ));
    s
}

/// What the winner is shown of the others for its synthesis: their diffs and ratings, and
/// the ratings its own solution received.
pub(super) fn synthesis(p: &ParallelState, winner: &str, others: &[Shown<'_>]) -> String {
    let mut s = String::from("## THE OTHER CANDIDATES' SOLUTIONS\n");
    for o in others {
        s.push_str(&block(o.label, o.diff));
        let model = p
            .candidates
            .iter()
            .find(|c| c.label == o.label)
            .map_or("", |c| c.model.as_str());
        for (by, r) in ratings_of(p, model) {
            s.push_str(&format!("- rated {}/10 by {by}: {}\n", r.score, r.reason));
        }
    }
    s.push_str("\n## WHAT THE OTHERS SAID OF YOUR SOLUTION\n");
    for (by, r) in ratings_of(p, winner) {
        s.push_str(&format!("- {}/10 by {by}: {}\n", r.score, r.reason));
    }
    s
}

/// The ratings `model`'s solution received, with the rating candidate's letter.
fn ratings_of<'a>(
    p: &'a ParallelState,
    model: &'a str,
) -> impl Iterator<Item = (&'a str, &'a Rating)> {
    p.reviews.iter().flat_map(move |r| {
        let by = p
            .candidate(&r.reviewer)
            .map_or(r.reviewer.as_str(), |c| c.label.as_str());
        r.ratings
            .iter()
            .filter(move |x| x.candidate == model)
            .map(move |x| (by, x))
    })
}

/// The letter of the `i`th candidate (A, B, ... Z, then A2, B2, ...).
pub(super) fn letter(i: usize) -> String {
    let c = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26 + 1)
    }
}
