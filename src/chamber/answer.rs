//! What the chamber's models answer, as schemas the client enforces: a panelist's answer,
//! the arbiter's initial assessment and its synthesis; and the founder's input, which has
//! the panelist's shape (seed 003, Structured founder input).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A panelist's answer (and the founder's input, which has the same shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PanelAnswer {
    /// The position in a few words: "yes", "no-go", "defer pending X".
    #[schemars(length(min = 1, max = 120))]
    pub stance: String,
    /// Why, with the trade-offs weighed.
    #[schemars(length(max = 2000))]
    pub reasoning: String,
    /// 1 (a guess) to 10 (certain).
    #[schemars(range(min = 1, max = 10))]
    pub confidence: u8,
    /// The primary evidence, most important first.
    #[schemars(length(max = 5))]
    pub evidence: Vec<String>,
}

/// The founder's structured input: a stance, their reasoning, their confidence and what
/// they want weighed (seed 003).
pub type FounderInput = PanelAnswer;

/// The arbiter's initial look at the independent answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InitialAssessment {
    /// Whether the panel disagrees on substance.
    pub meaningful_disagreement: bool,
    /// The point of disagreement, or why the differences are only surface.
    #[schemars(length(max = 600))]
    pub why: String,
}

/// How good the evidence behind one position is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Quality {
    /// Verifiable and to the point.
    Strong,
    /// Plausible, partly verifiable.
    Moderate,
    /// Intuition, or beside the point.
    Weak,
}

/// The arbiter's weighing of one panelist's position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Position {
    /// The panelist (its model name).
    pub panelist: String,
    /// The quality of its evidence.
    pub evidence_quality: Quality,
    /// Why.
    #[schemars(length(max = 400))]
    pub note: String,
}

/// A view the synthesis does not follow, kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Minority {
    /// Whose view it is.
    pub panelist: String,
    /// The view.
    #[schemars(length(max = 600))]
    pub view: String,
}

/// Surface or substance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Disagreement {
    /// The panel agrees.
    None,
    /// Different words, same substance.
    Surface,
    /// A real difference.
    Substantive,
}

/// Where a decision question resolves (required after a challenge).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Resolution {
    /// Go ahead.
    #[serde(rename = "GO")]
    Go,
    /// Do not.
    #[serde(rename = "NO-GO")]
    NoGo,
    /// Not decidable on what is known.
    #[serde(rename = "NEED MORE DATA")]
    NeedMoreData,
    /// Not a decision question.
    #[serde(rename = "none")]
    NotApplicable,
}

impl Resolution {
    /// As the seed spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Go => "GO",
            Resolution::NoGo => "NO-GO",
            Resolution::NeedMoreData => "NEED MORE DATA",
            Resolution::NotApplicable => "none",
        }
    }
}

/// The arbiter's synthesis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Synthesis {
    /// False when the honest answer is that the chamber could not reach consensus.
    pub consensus: bool,
    /// The synthesized answer.
    #[schemars(length(max = 1500))]
    pub answer: String,
    /// Its position in a few words.
    #[schemars(length(max = 120))]
    pub stance: String,
    /// Why, documented.
    #[schemars(length(max = 2000))]
    pub reasoning: String,
    /// Surface or substantive disagreement.
    pub disagreement: Disagreement,
    /// The evidence quality of each position.
    #[schemars(length(max = 4))]
    pub positions: Vec<Position>,
    /// The views the synthesis does not follow.
    #[schemars(length(max = 4))]
    pub minority: Vec<Minority>,
    /// The arbiter's confidence in the synthesis, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    pub confidence: u8,
    /// Whether its own panelist view got undue weight (when it is also a panelist).
    #[schemars(length(max = 600))]
    pub self_check: String,
    /// GO, NO-GO, NEED MORE DATA, or none.
    pub resolution: Resolution,
}
