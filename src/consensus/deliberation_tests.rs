use super::*;
use crate::consensus::ballot::Choice::{self, *};

fn voters(n: usize) -> Vec<Voter> {
    (0..n)
        .map(|i| Voter {
            model: format!("m{i}"),
            role: "implementer".into(),
        })
        .collect()
}

fn ballot(voter: &str, choice: Choice) -> Ballot {
    Ballot {
        voter: voter.into(),
        role: "implementer".into(),
        choice,
        rationale: format!("{voter} says {choice}"),
        confidence: 0.7,
        objections: vec![Objection {
            text: format!("{voter} objects"),
            evidence: String::new(),
        }],
        amendments: vec![format!("{voter} amendment")],
    }
}

fn vote(d: &mut Deliberation, round: u32, choices: &[Choice]) {
    for (i, c) in choices.iter().enumerate() {
        d.record_ballot(round, ballot(&format!("m{i}"), *c));
    }
}

fn rebut(d: &mut Deliberation, voter: &str) {
    d.record_rebuttal(
        voter,
        RebuttalAnswer {
            argument: "the majority missed the empty input".into(),
            evidence: "calc.py:7".into(),
        },
    );
}

fn rule(d: &mut Deliberation, compelling: bool) {
    d.record_ruling(Ruling {
        compelling,
        justification: "weighed".into(),
    });
}

#[test]
fn all_agree_proceeds_at_once() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    assert_eq!(
        d.next(),
        Next::Vote {
            round: 1,
            voters: vec!["m0".into(), "m1".into(), "m2".into()]
        }
    );
    vote(&mut d, 1, &[Approve, Approve, Approve]);
    let Next::Done(dec) = d.next() else {
        panic!("{:?}", d.next())
    };
    assert_eq!(
        (dec.choice, dec.by, dec.rounds),
        (Approve, DecidedBy::Unanimous, 1)
    );
    assert!(dec.dissent.is_empty());
}

#[test]
fn a_majority_wins_after_an_unconvincing_rebuttal_with_the_dissent_kept() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    vote(&mut d, 1, &[Approve, Reject, Approve]);
    assert_eq!(
        d.next(),
        Next::Rebut {
            voters: vec!["m1".into()]
        }
    );
    rebut(&mut d, "m1");
    assert_eq!(d.next(), Next::Rule);
    rule(&mut d, false);
    let Next::Done(dec) = d.next() else { panic!() };
    assert_eq!((dec.choice, dec.by), (Approve, DecidedBy::Majority));
    assert_eq!(dec.dissent.len(), 1);
    assert_eq!(dec.dissent[0].voter, "m1");
    assert_eq!(dec.dissent[0].objections[0].text, "m1 objects");
}

#[test]
fn a_compelling_rebuttal_orders_a_revote_and_each_dissenter_rebuts_once() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    vote(&mut d, 1, &[Approve, Reject, Approve]);
    rebut(&mut d, "m1");
    rule(&mut d, true);
    assert_eq!(
        d.next(),
        Next::Vote {
            round: 2,
            voters: vec!["m0".into(), "m1".into(), "m2".into()]
        }
    );
    // The same dissenter again: its one rebuttal is spent, the majority stands.
    vote(&mut d, 2, &[Approve, Reject, Approve]);
    let Next::Done(dec) = d.next() else {
        panic!("{:?}", d.next())
    };
    assert_eq!((dec.by, dec.rounds), (DecidedBy::Majority, 2));
}

#[test]
fn after_three_rounds_the_tiebreaker_decides_alone() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    // Each round a new dissenter, each rebuttal compelling.
    let rounds = [
        [Approve, Reject, Approve],
        [Reject, Approve, Approve],
        [Approve, Approve, Reject],
    ];
    for (i, choices) in rounds.iter().enumerate() {
        let n = i as u32 + 1;
        vote(&mut d, n, choices);
        let dissenter = format!("m{}", choices.iter().position(|c| *c == Reject).unwrap());
        assert_eq!(
            d.next(),
            Next::Rebut {
                voters: vec![dissenter.clone()]
            }
        );
        rebut(&mut d, &dissenter);
        rule(&mut d, true);
    }
    assert_eq!(d.next(), Next::Unilateral);
    assert_eq!(d.rounds.len() as u32, MAX_ROUNDS);
    d.record_unilateral(UnilateralAnswer {
        choice: Amend,
        justification: "both sides have a point".into(),
        amendments: vec!["guard empty input".into()],
    });
    let Next::Done(dec) = d.next() else { panic!() };
    assert_eq!(
        (dec.choice, dec.by, dec.rounds),
        (Amend, DecidedBy::Unilateral, 3)
    );
    assert_eq!(dec.justification, "both sides have a point");
    assert_eq!(
        dec.dissent.len(),
        3,
        "every ballot differed from the ruling"
    );
}

#[test]
fn no_majority_takes_position_papers_and_a_justified_selection() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    vote(&mut d, 1, &[Approve, Amend, Reject]);
    assert_eq!(
        d.next(),
        Next::Papers {
            voters: vec!["m0".into(), "m1".into(), "m2".into()]
        }
    );
    for (i, c) in [Approve, Amend, Reject].iter().enumerate() {
        d.record_paper(
            &format!("m{i}"),
            PaperAnswer {
                choice: *c,
                position: format!("paper {i}"),
                tradeoffs: vec!["slower".into()],
                amendments: vec![format!("change {i}")],
            },
        );
    }
    assert_eq!(d.next(), Next::Select);
    let err = d
        .record_selection(SelectionAnswer {
            winner: 4,
            justification: "x".into(),
        })
        .unwrap_err();
    assert!(err.contains("1 to 3"), "{err}");
    assert_eq!(
        d.next(),
        Next::Select,
        "an out-of-range pick decides nothing"
    );
    d.record_selection(SelectionAnswer {
        winner: 2,
        justification: "the amendment keeps the design and fixes the gap".into(),
    })
    .unwrap();
    let Next::Done(dec) = d.next() else { panic!() };
    assert_eq!((dec.choice, dec.by), (Amend, DecidedBy::Tiebreaker));
    assert_eq!(dec.amendments, vec!["change 1"]);
    assert_eq!(dec.dissent.len(), 2);
}

/// A voter who chose what the selected paper argues agreed with the decision: only the
/// ballots for another choice are its dissent, whoever wrote the paper.
#[test]
fn a_selected_paper_keeps_as_dissent_only_the_ballots_for_another_choice() {
    let mut d = Deliberation::new(voters(4), Some("t".into()));
    vote(&mut d, 1, &[Approve, Approve, Reject, Reject]);
    let Next::Papers { voters } = d.next() else {
        panic!("a two-two split has no majority")
    };
    for (i, v) in voters.iter().enumerate() {
        let choice = if i < 2 { Approve } else { Reject };
        d.record_paper(
            v,
            PaperAnswer {
                choice,
                position: format!("paper {i}"),
                tradeoffs: Vec::new(),
                amendments: Vec::new(),
            },
        );
    }
    d.record_selection(SelectionAnswer {
        winner: 1,
        justification: "the tests it names pass".into(),
    })
    .unwrap();
    let Next::Done(dec) = d.next() else { panic!() };
    let dissenters: Vec<&str> = dec.dissent.iter().map(|b| b.voter.as_str()).collect();
    assert_eq!((dec.choice, dissenters), (Approve, vec!["m2", "m3"]));
}

#[test]
fn a_two_agent_split_is_a_tie_for_the_tiebreaker() {
    let mut d = Deliberation::new(voters(2), Some("t".into()));
    vote(&mut d, 1, &[Approve, Reject]);
    assert!(matches!(d.next(), Next::Papers { .. }));
}

#[test]
fn an_absent_agent_degrades_the_panel_and_one_agent_cannot_agree_alone() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    d.record_absent("m2", "provider down");
    assert!(d.degraded());
    vote(&mut d, 1, &[Approve, Approve]);
    let Next::Done(dec) = d.next() else { panic!() };
    assert_eq!(dec.by, DecidedBy::Unanimous);

    let mut d = Deliberation::new(voters(2), Some("t".into()));
    d.record_absent("m1", "no valid answer");
    assert_eq!(d.next(), Next::Unilateral);
}

/// A dissenter whose rebuttal call failed leaves the panel, but its ballot stands: the
/// majority decides, with its dissent kept, never "unanimous".
#[test]
fn a_dissenter_lost_before_its_rebuttal_leaves_a_majority_not_a_unanimity() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    vote(&mut d, 1, &[Approve, Approve, Amend]);
    assert_eq!(
        d.next(),
        Next::Rebut {
            voters: vec!["m2".into()]
        }
    );
    d.record_absent("m2", "the rebuttal call failed");
    let Next::Done(dec) = d.next() else {
        panic!("{:?}", d.next())
    };
    assert_eq!((dec.choice, dec.by), (Approve, DecidedBy::Majority));
    assert_eq!(dec.dissent.len(), 1);
    assert_eq!(dec.dissent[0].voter, "m2");
    assert!(d.degraded());
}

#[test]
fn a_deliberation_read_back_from_json_continues_where_it_stopped() {
    let mut d = Deliberation::new(voters(3), Some("t".into()));
    vote(&mut d, 1, &[Approve, Reject, Approve]);
    rebut(&mut d, "m1");
    let text = serde_json::to_string(&d).unwrap();
    let back: Deliberation = serde_json::from_str(&text).unwrap();
    assert_eq!(back, d);
    assert_eq!(back.next(), Next::Rule);
}
