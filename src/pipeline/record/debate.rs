//! What a debate run (`--workflow debate`, seed 001 §5.3) records: who argued, each
//! debater's position paper, rebuttal and final argument with what each call cost, who
//! dropped out and when, and the tiebreaker's judgment naming the winning position.

use serde::{Deserialize, Serialize};

use crate::model::Spend;

/// The three rounds every debater speaks in, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DebatePhase {
    /// Each debater proposes its approach with explicit trade-offs, alone.
    Papers,
    /// Each debater reads the others' papers and rebuts them.
    Rebuttals,
    /// Each debater updates its position with the criticisms it accepts.
    Finals,
}

impl DebatePhase {
    /// Every phase, in the order they are held.
    pub const ALL: [DebatePhase; 3] = [
        DebatePhase::Papers,
        DebatePhase::Rebuttals,
        DebatePhase::Finals,
    ];

    /// The phase as a log shows it ("position paper", "rebuttal", "final argument").
    pub fn speech(self) -> &'static str {
        match self {
            DebatePhase::Papers => "position paper",
            DebatePhase::Rebuttals => "rebuttal",
            DebatePhase::Finals => "final argument",
        }
    }
}

/// Where the debate of a run stands. Each phase is recorded before the next begins (the
/// calls of one phase run together, like a parallel fan-out), so a killed run resumes at
/// the phase it was in without paying again for the phases it finished.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DebateState {
    /// The models asked to argue, in the order given (`--candidates`, else the implementer
    /// role's distinct models).
    pub models: Vec<String>,
    /// Who judges: the tiebreaker role's first model that did not argue, else the arbiter
    /// role's; `None` when every such model is a debater.
    pub tiebreaker: Option<String>,
    /// One per model, in order, with its letter and its speeches so far.
    pub debaters: Vec<Debater>,
    /// Wall time of each phase held (all its calls together), in milliseconds; a phase a
    /// kill interrupted appears again when it is held again.
    #[serde(default)]
    pub phase_ms: Vec<(DebatePhase, u64)>,
    /// The tiebreaker's judgment, once made.
    #[serde(default)]
    pub judgment: Option<Judgment>,
    /// Whether the debate is over and its winning position is the architect's input.
    #[serde(default)]
    pub done: bool,
}

/// What a debate does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DebateNext {
    /// These debaters (models) speak in this phase, together.
    Speak(DebatePhase, Vec<String>),
    /// Fewer than two debaters still stand: there is no debate to judge.
    TooFew,
    /// Every phase is held: the tiebreaker judges.
    Judge,
    /// Judged: the winning position goes to the architect.
    Conclude,
}

impl DebateState {
    /// A debate among `models` judged by `tiebreaker`, nobody having spoken yet.
    pub fn new(models: Vec<String>, tiebreaker: Option<String>) -> DebateState {
        let debaters = models
            .iter()
            .enumerate()
            .map(|(i, m)| Debater {
                model: m.clone(),
                label: letter(i),
                paper: None,
                rebuttal: None,
                final_argument: None,
                absent: None,
            })
            .collect();
        DebateState {
            models,
            tiebreaker,
            debaters,
            ..Default::default()
        }
    }

    /// The debaters still in the debate: those that answered every phase they were asked.
    pub fn standing(&self) -> impl Iterator<Item = &Debater> {
        self.debaters.iter().filter(|d| d.absent.is_none())
    }

    /// Whether fewer debaters stand than were asked: such a debate is never presented as
    /// the full panel.
    pub fn degraded(&self) -> bool {
        self.standing().count() < self.models.len()
    }

    /// The debater `model`.
    pub fn debater(&self, model: &str) -> Option<&Debater> {
        self.debaters.iter().find(|d| d.model == model)
    }

    /// The debater `model`, to record what it said.
    pub fn debater_mut(&mut self, model: &str) -> Option<&mut Debater> {
        self.debaters.iter_mut().find(|d| d.model == model)
    }

    /// The standing debater whose letter is `label` (case and spaces ignored).
    pub fn by_label(&self, label: &str) -> Option<&Debater> {
        let label = label.trim().to_ascii_lowercase();
        let label = label.trim_start_matches("position").trim();
        self.standing()
            .find(|d| d.label.eq_ignore_ascii_case(label))
    }

    /// What comes next: the first phase some standing debater has not spoken in, then the
    /// judgment, then the hand-over to the architect. Two debaters must stand throughout.
    pub fn next(&self) -> DebateNext {
        if self.standing().count() < 2 {
            return DebateNext::TooFew;
        }
        for phase in DebatePhase::ALL {
            let waiting: Vec<String> = self
                .standing()
                .filter(|d| d.speech(phase).is_none())
                .map(|d| d.model.clone())
                .collect();
            if !waiting.is_empty() {
                return DebateNext::Speak(phase, waiting);
            }
        }
        if self.judgment.is_none() {
            DebateNext::Judge
        } else {
            DebateNext::Conclude
        }
    }

    /// Every call's cost and latency, added up.
    pub fn spend(&self) -> Spend {
        let mut total = self
            .judgment
            .as_ref()
            .map_or_else(Spend::default, |j| j.spend);
        for d in &self.debaters {
            for phase in DebatePhase::ALL {
                if let Some(s) = d.speech(phase) {
                    total += s.spend;
                }
            }
        }
        total
    }

    /// Who dropped out, with when and why, in one line (for a stop that must say it).
    pub fn fates(&self) -> String {
        self.debaters
            .iter()
            .map(|d| match &d.absent {
                None => format!("{}: argued", d.model),
                Some(a) => format!(
                    "{}: dropped out at the {}: {}",
                    d.model,
                    a.phase.speech(),
                    a.why
                ),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// One debater: a model, the letter its position goes by, and what it said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Debater {
    /// The model.
    pub model: String,
    /// Its position's letter (`A`, `B`, ...): the others and the judge see the letter, not
    /// the model's name, so the argument is judged and not its author.
    pub label: String,
    /// Its position paper.
    pub paper: Option<Speech>,
    /// Its rebuttal of the others' papers.
    pub rebuttal: Option<Speech>,
    /// Its final argument.
    pub final_argument: Option<Speech>,
    /// Set when it could not answer: it left the debate then.
    #[serde(default)]
    pub absent: Option<Absence>,
}

impl Debater {
    /// What it said in `phase`, if it did.
    pub fn speech(&self, phase: DebatePhase) -> Option<&Speech> {
        match phase {
            DebatePhase::Papers => self.paper.as_ref(),
            DebatePhase::Rebuttals => self.rebuttal.as_ref(),
            DebatePhase::Finals => self.final_argument.as_ref(),
        }
    }

    /// Records what it said in `phase`.
    pub fn set_speech(&mut self, phase: DebatePhase, speech: Speech) {
        let slot = match phase {
            DebatePhase::Papers => &mut self.paper,
            DebatePhase::Rebuttals => &mut self.rebuttal,
            DebatePhase::Finals => &mut self.final_argument,
        };
        *slot = Some(speech);
    }

    /// Its latest statement of its position: the final argument, else the paper.
    pub fn position(&self) -> Option<&Speech> {
        self.final_argument.as_ref().or(self.paper.as_ref())
    }
}

/// Why and when a debater left the debate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Absence {
    /// The phase it could not answer.
    pub phase: DebatePhase,
    /// Why (the error, redacted).
    pub why: String,
}

/// One speech of a debater.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Speech {
    /// The approach in a few words (papers and final arguments).
    #[serde(default)]
    pub approach: String,
    /// The position (papers, final arguments) or the rebuttal's summary.
    pub text: String,
    /// The explicit trade-offs: what the approach gains and what it costs.
    #[serde(default)]
    pub tradeoffs: Vec<String>,
    /// A rebuttal's argument against each other position (by model).
    #[serde(default)]
    pub against: Vec<Against>,
    /// What it concedes (a rebuttal) or took from the criticism (a final argument).
    #[serde(default)]
    pub concessions: Vec<String>,
    /// What the call cost, with its latency.
    pub spend: Spend,
}

/// A rebuttal's argument against one other position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// The rebutted debater's model.
    pub model: String,
    /// The argument.
    pub argument: String,
}

/// The tiebreaker's decision document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Judgment {
    /// The tiebreaker's model.
    pub model: String,
    /// The winning debater's model.
    pub winner: String,
    /// The winning position's letter.
    pub label: String,
    /// Why this position, naming the arguments accepted and rejected.
    pub justification: String,
    /// What the architect must build, as decided: the winning position with the valid
    /// points of the others.
    pub decision: String,
    /// What the call cost, with its latency.
    pub spend: Spend,
}

/// The letter of the `i`th debater (A, B, ... Z, then A2, B2, ...).
pub fn letter(i: usize) -> String {
    let c = (b'A' + (i % 26) as u8) as char;
    if i < 26 {
        c.to_string()
    } else {
        format!("{c}{}", i / 26 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said() -> Speech {
        Speech {
            text: "x".into(),
            ..Default::default()
        }
    }

    fn speak(d: &mut DebateState, model: &str, phase: DebatePhase) {
        d.debater_mut(model).unwrap().set_speech(phase, said());
    }

    #[test]
    fn phases_follow_each_other_and_only_the_silent_are_asked() {
        let mut d = DebateState::new(vec!["a".into(), "b".into(), "c".into()], Some("t".into()));
        assert_eq!(
            d.next(),
            DebateNext::Speak(
                DebatePhase::Papers,
                vec!["a".into(), "b".into(), "c".into()]
            )
        );
        speak(&mut d, "a", DebatePhase::Papers);
        assert_eq!(
            d.next(),
            DebateNext::Speak(DebatePhase::Papers, vec!["b".into(), "c".into()])
        );
        speak(&mut d, "b", DebatePhase::Papers);
        d.debater_mut("c").unwrap().absent = Some(Absence {
            phase: DebatePhase::Papers,
            why: "down".into(),
        });
        assert!(d.degraded());
        assert_eq!(
            d.next(),
            DebateNext::Speak(DebatePhase::Rebuttals, vec!["a".into(), "b".into()])
        );
        for phase in [DebatePhase::Rebuttals, DebatePhase::Finals] {
            speak(&mut d, "a", phase);
            speak(&mut d, "b", phase);
        }
        assert_eq!(d.next(), DebateNext::Judge);
        assert!(d
            .fates()
            .contains("c: dropped out at the position paper: down"));
    }

    #[test]
    fn one_standing_debater_is_no_debate() {
        let mut d = DebateState::new(vec!["a".into(), "b".into()], None);
        speak(&mut d, "a", DebatePhase::Papers);
        speak(&mut d, "b", DebatePhase::Papers);
        d.debater_mut("b").unwrap().absent = Some(Absence {
            phase: DebatePhase::Rebuttals,
            why: "timeout".into(),
        });
        assert_eq!(d.next(), DebateNext::TooFew);
    }

    #[test]
    fn labels_find_standing_debaters_only() {
        let mut d = DebateState::new(vec!["a".into(), "b".into(), "c".into()], None);
        assert_eq!(d.by_label(" b").map(|x| x.model.as_str()), Some("b"));
        assert_eq!(
            d.by_label("Position C").map(|x| x.model.as_str()),
            Some("c")
        );
        d.debater_mut("c").unwrap().absent = Some(Absence {
            phase: DebatePhase::Finals,
            why: "down".into(),
        });
        assert!(d.by_label("C").is_none());
        assert!(d.by_label("Z").is_none());
    }
}
