//! What the models of a debate are asked and answer: the position paper, the rebuttal, the
//! final argument and the judgment, and the block that hands the winning position to the
//! architect. Positions appear under letters, never under their model's name, so the
//! judge weighs arguments, not authors.

use schemars::JsonSchema;
use serde::Deserialize;

use crate::pipeline::record::{DebatePhase, DebateState, Debater, Judgment, Speech};

/// Characters of one speech shown to another model.
const SPEECH_CHARS: usize = 8_000;

/// A position paper (the structured answer).
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct PaperAnswer {
    /// The approach in a few words.
    pub approach: String,
    /// The approach, concretely: files, functions, data, error handling.
    pub position: String,
    /// Its trade-offs, explicitly: what it gains and what it costs.
    pub tradeoffs: Vec<String>,
}

/// A rebuttal of the other positions.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RebuttalAnswer {
    /// One argument per other position.
    pub rebuttals: Vec<RebuttalItem>,
    /// What the other positions get right.
    #[serde(default)]
    pub concessions: Vec<String>,
}

/// One argument of a [`RebuttalAnswer`].
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct RebuttalItem {
    /// The rebutted position's letter.
    pub position: String,
    /// Where it is wrong or weaker, with evidence.
    pub argument: String,
}

/// A final argument.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct FinalAnswer {
    /// The approach in a few words.
    pub approach: String,
    /// The position as it now stands.
    pub position: String,
    /// Its trade-offs, explicitly.
    pub tradeoffs: Vec<String>,
    /// What it changed in answer to the criticisms it accepts.
    #[serde(default)]
    pub changed: Vec<String>,
}

/// The tiebreaker's judgment.
#[derive(Debug, Deserialize, JsonSchema)]
pub(super) struct JudgmentAnswer {
    /// The winning position's letter.
    pub winner: String,
    /// Why it wins: the arguments accepted and rejected, and from which positions.
    pub justification: String,
    /// What the architect must build, concretely.
    pub decision: String,
}

impl PaperAnswer {
    /// The paper as recorded, bounded.
    pub(super) fn into_speech(self) -> Speech {
        Speech {
            approach: crate::bounded::clip(&self.approach, 200),
            text: crate::bounded::clip(&self.position, SPEECH_CHARS),
            tradeoffs: clipped(self.tradeoffs),
            ..Default::default()
        }
    }
}

impl FinalAnswer {
    /// The final argument as recorded, bounded; `changed` becomes its concessions.
    pub(super) fn into_speech(self) -> Speech {
        Speech {
            approach: crate::bounded::clip(&self.approach, 200),
            text: crate::bounded::clip(&self.position, SPEECH_CHARS),
            tradeoffs: clipped(self.tradeoffs),
            concessions: clipped(self.changed),
            ..Default::default()
        }
    }
}

impl RebuttalAnswer {
    /// The rebuttal as `own` said it: arguments against positions that are not its own and
    /// that stand, by model.
    pub(super) fn into_speech(self, d: &DebateState, own: &str) -> Speech {
        let mut against = Vec::new();
        let mut text = Vec::new();
        for r in self.rebuttals {
            let argument = crate::bounded::clip(&r.argument, 2_000);
            match d.by_label(&r.position).filter(|x| x.model != own) {
                Some(x) => {
                    text.push(format!("against {}: {argument}", x.label));
                    against.push(crate::pipeline::record::Against {
                        model: x.model.clone(),
                        argument,
                    });
                }
                None => text.push(format!(
                    "against `{}` (no other position): {argument}",
                    r.position
                )),
            }
        }
        Speech {
            text: text.join("\n"),
            against,
            concessions: clipped(self.concessions),
            ..Default::default()
        }
    }
}

fn clipped(items: Vec<String>) -> Vec<String> {
    items
        .into_iter()
        .take(12)
        .map(|t| crate::bounded::clip(&t, 1_000))
        .collect()
}

fn statement(s: &Speech) -> String {
    let mut o = String::new();
    if !s.approach.is_empty() {
        o.push_str(&format!("Approach: {}\n", s.approach));
    }
    o.push_str(&crate::bounded::clip(&s.text, SPEECH_CHARS));
    o.push('\n');
    if !s.tradeoffs.is_empty() {
        o.push_str("Trade-offs:\n");
        for t in &s.tradeoffs {
            o.push_str(&format!("- {t}\n"));
        }
    }
    if !s.concessions.is_empty() {
        o.push_str("Concedes / changed:\n");
        for t in &s.concessions {
            o.push_str(&format!("- {t}\n"));
        }
    }
    o
}

fn speech_of(d: &Debater, phase: DebatePhase, heading: &str) -> String {
    match d.speech(phase) {
        Some(s) => format!("### {heading} {}\n{}\n", d.label, statement(s)),
        None => String::new(),
    }
}

/// The request of debater `own` in `phase`; `context` is the task and the code, as the
/// architect would be shown them.
pub(super) fn ask(context: &str, d: &DebateState, own: &Debater, phase: DebatePhase) -> String {
    let mut s = format!("{context}\n## THE DEBATE\nQUESTION: how should this task be built? Several models argue; you argue position {}.\n", own.label);
    let others: Vec<&Debater> = d.standing().filter(|x| x.model != own.model).collect();
    match phase {
        DebatePhase::Papers => s.push_str(
            "\nWrite your position paper: the approach you propose (`approach`, a few words; `position`, concretely), and its trade-offs (`tradeoffs`: what it gains, what it costs). The other positions are written at the same time; you will see them next.\n",
        ),
        DebatePhase::Rebuttals => {
            s.push_str("\n## THE OTHER POSITION PAPERS\n");
            for x in &others {
                s.push_str(&speech_of(x, DebatePhase::Papers, "position"));
            }
            s.push_str("\n## YOUR OWN POSITION PAPER\n");
            s.push_str(&speech_of(own, DebatePhase::Papers, "position"));
            let letters: Vec<&str> = others.iter().map(|x| x.label.as_str()).collect();
            s.push_str(&format!(
                "\nWrite your rebuttal: one argument against each of {} (`rebuttals`, with the position's letter), and what they get right (`concessions`).\n",
                letters.join(", ")
            ));
        }
        DebatePhase::Finals => {
            s.push_str("\n## THE POSITIONS AND THEIR REBUTTALS\n");
            for x in d.standing() {
                s.push_str(&speech_of(x, DebatePhase::Papers, "position"));
            }
            s.push_str("\n## WHAT THE OTHERS SAID AGAINST YOUR POSITION\n");
            for x in &others {
                for a in x
                    .rebuttal
                    .iter()
                    .flat_map(|r| r.against.iter())
                    .filter(|a| a.model == own.model)
                {
                    s.push_str(&format!("- {}: {}\n", x.label, a.argument));
                }
            }
            s.push_str(&format!(
                "\nWrite your final argument for position {}: the approach as it now stands, its trade-offs, and what you changed in answer to the criticisms you accept (`changed`).\n",
                own.label
            ));
        }
    }
    s
}

/// The tiebreaker's request: every position, its rebuttal and its final argument, and who
/// dropped out.
pub(super) fn judgment(context: &str, d: &DebateState) -> String {
    let mut s = format!("{context}\n## THE DEBATE\nQUESTION: which position should the architect build? Judge the debate below and name one winner.\n");
    for x in &d.debaters {
        s.push_str(&format!("\n## POSITION {}\n", x.label));
        if let Some(a) = &x.absent {
            s.push_str(&format!(
                "(its debater dropped out at the {}: it cannot win)\n",
                a.phase.speech()
            ));
        }
        s.push_str(&speech_of(x, DebatePhase::Papers, "paper of"));
        s.push_str(&speech_of(x, DebatePhase::Rebuttals, "rebuttal by"));
        s.push_str(&speech_of(x, DebatePhase::Finals, "final argument of"));
    }
    let letters: Vec<&str> = d.standing().map(|x| x.label.as_str()).collect();
    s.push_str(&format!(
        "\nChoose one of {} (`winner`), justify the choice (`justification`), and write what the architect must build (`decision`).\n",
        letters.join(", ")
    ));
    s
}

/// What the architect is shown of the debate: the winning position as it finally stood,
/// the judge's justification and decision.
pub(crate) fn architect_block(d: &DebateState, j: &Judgment) -> String {
    let mut s = format!(
        "## THE DEBATE'S DECISION (build this design)\nThe approach was debated by {} model(s){}; the judge ({}) chose position {}.\n",
        d.standing().count(),
        if d.degraded() {
            format!(" ({} of {} asked took part to the end)", d.standing().count(), d.models.len())
        } else {
            String::new()
        },
        j.model,
        j.label
    );
    if let Some(w) = d.debater(&j.winner).and_then(Debater::position) {
        s.push_str(&format!("\n### The winning position\n{}", statement(w)));
    }
    s.push_str(&format!(
        "\n### Why it won\n{}\n\n### What to build\n{}\n",
        j.justification, j.decision
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::record::Absence;

    fn debate() -> DebateState {
        let mut d = DebateState::new(
            vec!["m1".into(), "m2".into(), "m3".into()],
            Some("judge".into()),
        );
        for (m, said) in [("m1", "one"), ("m2", "two")] {
            let x = d.debater_mut(m).unwrap();
            x.paper = Some(Speech {
                approach: format!("paper {said}"),
                text: format!("paper text {said}"),
                ..Default::default()
            });
            x.final_argument = Some(Speech {
                approach: format!("final {said}"),
                text: format!("final text {said}"),
                tradeoffs: vec![format!("costs {said}")],
                ..Default::default()
            });
        }
        d.debater_mut("m3").unwrap().absent = Some(Absence {
            phase: DebatePhase::Papers,
            why: "down".into(),
        });
        d
    }

    #[test]
    fn a_rebuttal_keeps_arguments_against_other_standing_positions_only() {
        let d = debate();
        let a = RebuttalAnswer {
            rebuttals: vec![
                RebuttalItem {
                    position: "B".into(),
                    argument: "too long".into(),
                },
                RebuttalItem {
                    position: "A".into(),
                    argument: "mine is wrong".into(),
                },
                RebuttalItem {
                    position: "C".into(),
                    argument: "gone".into(),
                },
            ],
            concessions: vec![],
        };
        let s = a.into_speech(&d, "m1");
        assert_eq!(s.against.len(), 1);
        assert_eq!(s.against[0].model, "m2");
        assert!(s.text.contains("against B: too long"), "{}", s.text);
        assert!(
            s.text.contains("against `A` (no other position)"),
            "{}",
            s.text
        );
    }

    #[test]
    fn the_architect_gets_the_winners_final_position_and_the_degraded_panel() {
        let d = debate();
        let j = Judgment {
            model: "judge".into(),
            winner: "m2".into(),
            label: "B".into(),
            justification: "B is simpler".into(),
            decision: "build B".into(),
            spend: Default::default(),
        };
        let s = architect_block(&d, &j);
        assert!(s.contains("the judge (judge) chose position B"), "{s}");
        assert!(s.contains("(2 of 3 asked took part to the end)"), "{s}");
        assert!(
            s.contains("final text two") && s.contains("costs two"),
            "{s}"
        );
        assert!(!s.contains("final text one"), "{s}");
        assert!(s.contains("B is simpler") && s.contains("build B"), "{s}");
        let asked = judgment("CTX", &d);
        assert!(asked.contains("Choose one of A, B "), "{asked}");
        assert!(
            asked.contains("dropped out at the position paper"),
            "{asked}"
        );
    }
}
