//! The display fields of a stored line, read leniently: what `show`, `log`, the pre-push
//! gate's explanation and the display note print.

use serde::Deserialize;
use serde_json::Value;

use super::kind::LineKind;
use crate::arbiter::{Coverage, Floor};
use crate::verdict::Verdict;

/// A stored line's display fields as every reader shows them (`show`, the pre-push gate's
/// explanation, the rewrite copier). Lines written by git triad carry them all; a
/// hand-written line may leave most out, and a field of the wrong type reads as absent, so
/// a reader never falls back to poking at JSON by string keys.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadLine {
    /// `review`, `reconciliation` or `override`.
    #[serde(deserialize_with = "lenient")]
    pub kind: Option<String>,
    /// When it was written.
    #[serde(deserialize_with = "lenient")]
    pub ts: Option<String>,
    /// The commit it was written on.
    #[serde(deserialize_with = "lenient")]
    pub commit: Option<String>,
    /// That commit's patch id.
    #[serde(deserialize_with = "lenient")]
    pub patch_id: Option<String>,
    /// Its verdict (read in any case, see [`read_note`]).
    #[serde(deserialize_with = "lenient")]
    pub verdict: Option<Verdict>,
    /// What the model answered, when a floor raised it.
    #[serde(deserialize_with = "lenient")]
    pub model_verdict: Option<Verdict>,
    /// The floor the facts imposed.
    #[serde(deserialize_with = "lenient")]
    pub floor: Option<Floor>,
    /// What the issues that count support, with why, when it differs from what the model
    /// answered (a review lowered to what its evidence stands on).
    #[serde(deserialize_with = "lenient")]
    pub derived: Option<Floor>,
    /// The stage reviewed (`architect` … `verify`, `review`, `run`, `reconcile`).
    #[serde(deserialize_with = "lenient")]
    pub stage: Option<String>,
    /// Which attempt at the stage.
    #[serde(deserialize_with = "lenient")]
    pub attempt: Option<u64>,
    /// The arbiter.
    #[serde(deserialize_with = "lenient")]
    pub arbiter_model: Option<String>,
    /// The model reviewed.
    #[serde(deserialize_with = "lenient")]
    pub reviewed_model: Option<String>,
    /// The arbiter's confidence, 0–1.
    #[serde(deserialize_with = "lenient")]
    pub confidence: Option<f64>,
    /// The arbiter's reasoning.
    #[serde(deserialize_with = "lenient")]
    pub reasoning: Option<String>,
    /// The issues, each read as leniently as the line.
    #[serde(deserialize_with = "lenient")]
    pub issues: Option<Vec<ReadIssue>>,
    /// What the review saw: the files reviewed and those not reviewed, with why.
    #[serde(deserialize_with = "lenient")]
    pub coverage: Option<Coverage>,
    /// An override: the verdict it clears.
    #[serde(deserialize_with = "lenient")]
    pub overrides: Option<String>,
    /// An override: who wrote it.
    #[serde(deserialize_with = "lenient")]
    pub who: Option<String>,
    /// An override: why.
    #[serde(deserialize_with = "lenient")]
    pub reason: Option<String>,
    /// An override: the lines it answers.
    #[serde(deserialize_with = "lenient")]
    pub answers: Option<Vec<String>>,
    /// A copy: the commit it was copied from.
    #[serde(deserialize_with = "lenient")]
    pub reattached_from: Option<String>,
}

/// One issue of a [`ReadLine`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadIssue {
    /// `critical`, `warning`, `suggestion` (or a synonym).
    #[serde(deserialize_with = "lenient")]
    pub severity: Option<String>,
    /// What kind of defect.
    #[serde(deserialize_with = "lenient")]
    pub category: Option<String>,
    /// The file.
    #[serde(deserialize_with = "lenient")]
    pub path: Option<String>,
    /// First line.
    #[serde(deserialize_with = "lenient")]
    pub start_line: Option<u64>,
    /// Last line.
    #[serde(deserialize_with = "lenient")]
    pub end_line: Option<u64>,
    /// The enclosing symbol.
    #[serde(deserialize_with = "lenient")]
    pub symbol: Option<ReadSymbol>,
    /// What is wrong.
    #[serde(deserialize_with = "lenient")]
    pub description: Option<String>,
    /// The lines the model quoted (what pins a finding to code wherever it moves).
    #[serde(deserialize_with = "lenient")]
    pub quote: Option<String>,
    /// Why the finding does not count toward the verdict (its quote is not in the file, its
    /// probe passes, a person overrode it before), when it does not.
    #[serde(deserialize_with = "lenient")]
    pub demoted: Option<String>,
}

impl ReadIssue {
    /// How serious, most serious first (seed 000: critical, warning, suggestion; common
    /// synonyms ranked alike; unknown last).
    pub fn rank(&self) -> u8 {
        match self
            .severity
            .as_deref()
            .unwrap_or("")
            .to_ascii_lowercase()
            .as_str()
        {
            "critical" | "blocker" | "error" | "high" => 0,
            "warning" | "major" | "medium" => 1,
            "suggestion" | "minor" | "low" | "info" => 2,
            _ => 3,
        }
    }

    /// Whether it counts toward the verdict (it was not demoted).
    pub fn counts(&self) -> bool {
        self.demoted.is_none()
    }

    /// Where it is: `path:line`, the path alone, or `(no file)`.
    pub fn place(&self) -> String {
        match (&self.path, self.start_line) {
            (Some(p), Some(l)) => format!("{p}:{l}"),
            (Some(p), None) => p.to_string(),
            _ => "(no file)".into(),
        }
    }
}

/// The enclosing symbol of a [`ReadIssue`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ReadSymbol {
    /// `function`, `class`, …
    pub kind: String,
    /// Its name.
    pub name: String,
}

/// A field that reads as `None` when absent, null or of another type.
fn lenient<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    let v = Value::deserialize(d)?;
    Ok(serde_json::from_value(v).ok())
}

impl ReadLine {
    /// Reads a stored line's display fields; a value that is not an object reads as a line
    /// with no fields.
    pub fn of(line: &Value) -> ReadLine {
        ReadLine::deserialize(line).unwrap_or_default()
    }

    /// Whether it is a human override.
    pub fn is_override(&self) -> bool {
        self.kind.as_deref() == Some(LineKind::Override.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_fields_of_full_and_hand_written_lines() {
        let full = include_str!("../../../tests/fixtures/v1/notes.jsonl")
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["kind"] == "review")
            .unwrap();
        let read = ReadLine::of(&full);
        assert_eq!(read.kind.as_deref(), Some("review"));
        assert!(read.verdict.is_some() && read.arbiter_model.is_some() && read.issues.is_some());
        let hand: Value = serde_json::from_str(
            r#"{"v":1,"kind":"review","verdict":"HALT","attempt":"two","issues":[{"path":7}]}"#,
        )
        .unwrap();
        let read = ReadLine::of(&hand);
        assert_eq!(read.verdict, Some(Verdict::Halt));
        assert_eq!(
            read.attempt, None,
            "a field of the wrong type reads as absent"
        );
        assert_eq!(read.issues.unwrap()[0].path, None);
        assert_eq!(ReadLine::of(&Value::Null), ReadLine::default());
    }
}
