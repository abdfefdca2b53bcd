//! A stage's NEEDS_INFO questions, answered from what the run already has before anyone
//! waits: one call to a judge model with the TaskSpec and the files the stage was shown, and
//! an answer counts only when the words it rests on are found in its source. A question the
//! task answers is not a question for a person (seen: a verifier asked "what is the purpose
//! of the function?" of a task that said it, and the run waited on the user).

use schemars::JsonSchema;
use serde::Deserialize;

use super::step::{BlockOn, Cx, Journal, RunError};
use crate::arbiter::service::{candidates, Arbiter};
use crate::config::prompt;
use crate::git::TreeFiles;
use crate::model::structured::schema_for;
use crate::model::ChatRequest;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::Transcript;
use crate::pipeline::stage::Stage;

/// Most characters of the stage's files the judge is shown.
const MAX_FILE_CHARS: usize = 24_000;

/// What the judge answers.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskedAnswers {
    /// One entry a question, in order.
    #[schemars(length(max = 12))]
    pub answers: Vec<AskedAnswer>,
}

/// One question, answered from the task or the code, or not.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AskedAnswer {
    /// The question, as asked.
    #[schemars(length(max = 500))]
    pub question: String,
    /// Whether the TaskSpec or a file answers it.
    pub answered: bool,
    /// The answer, when it is answered.
    #[schemars(length(max = 800))]
    pub answer: String,
    /// The exact words it rests on.
    #[schemars(length(max = 600))]
    pub quote: String,
    /// `TaskSpec`, or the path of the file quoted.
    #[schemars(length(max = 200))]
    pub source: String,
}

/// The questions the task and the code answer, and those left for a person.
pub(super) struct Asked {
    /// (question, answer, source), each resting on a quote found in its source.
    pub answered: Vec<(String, String, String)>,
    /// The questions nothing answers.
    pub unanswered: Vec<String>,
}

impl Asked {
    /// What the stage is told on its next attempt: the answers and where each is written.
    pub fn block(&self) -> String {
        let mut s = String::from(
            "## YOUR QUESTIONS, ANSWERED FROM THE TASK AND THE CODE\n\nEach answer below is written in the TaskSpec or in a file you were shown; do the work with them.\n\n",
        );
        for (q, a, source) in &self.answered {
            s.push_str(&format!("- Q: {q}\n  A: {a} (from {source})\n"));
        }
        s
    }
}

/// Asks a judge model (never `stage_model`) which of `questions` the TaskSpec or the files
/// of the stage's tree answer; `None` when no judge could answer (the questions go to a
/// person, as before).
pub(super) fn from_task(
    cx: &Cx<'_>,
    j: &mut Journal<'_>,
    stage: Stage,
    stage_model: &str,
    questions: &[String],
) -> Result<Option<Asked>, RunError> {
    if questions.is_empty() {
        return Ok(None);
    }
    let task = cx.spec.render();
    let tree = cx.tree(j.state.tip(), "reading the files the stage was shown")?;
    let files = TreeFiles::new(cx.repo(), tree);
    let mut shown = String::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for path in files.paths() {
        if !cx.spec.in_scope(&path) || path.starts_with(".triad/") {
            continue;
        }
        let Some(text) = files.text(&path) else {
            continue;
        };
        if cx.privacy.check(&path, Some(text.as_bytes())).is_some() {
            continue;
        }
        if shown.len() + text.len() > MAX_FILE_CHARS {
            continue;
        }
        shown.push_str(&format!("### {path}\n```\n{text}\n```\n"));
        texts.push((path, text));
    }
    let asked: String = questions
        .iter()
        .enumerate()
        .map(|(i, q)| format!("{}. {q}\n", i + 1))
        .collect();
    let user = format!(
        "ANSWER FROM THE TASK: the {stage} stage asked these questions.\n\n{asked}\n## The TaskSpec\n{task}\n\n## The files the stage was shown\n{}\n",
        if shown.is_empty() {
            "(none)".to_string()
        } else {
            shown
        }
    );
    let system = prompt(&cx.env.config.config, "answerer", Some(&cx.env.repo_root()));
    let mut req = ChatRequest::new(Some(system), user, 2048);
    req.schema = Some(schema_for::<AskedAnswers>("asked_answers"));
    req.temperature = Some(0.0);
    req.purpose = Some("needs-info".into());
    let pool = j
        .state
        .arbiter_pool(cx.env.config, cx.env.profile.as_deref());
    let judges = candidates(None, &pool, &|m| {
        m == stage_model || same_wire_model(cx.env.config, m, stage_model)
    });
    let judged = match Arbiter::new(cx.env.client, judges)
        .judge::<AskedAnswers>(&req, stage_model)
        .await_blocking()
    {
        Ok(judged) => judged,
        Err(e) => {
            tracing::warn!("the stage's questions could not be checked against the task: {e}");
            return Ok(None);
        }
    };
    j.state.add_spend(judged.spend);
    j.transcript(&Transcript::new(
        stage.as_str(),
        "answerer",
        judged.exchange.clone(),
    ));
    Ok(Some(checked(questions, &judged.value, &task, &texts)))
}

/// The judge's answers held to their quotes: an answer counts only when its quote is found
/// (whitespace folded) in its source, the TaskSpec or a file it was shown; every question
/// without such an answer is left for a person.
fn checked(
    questions: &[String],
    judged: &AskedAnswers,
    task: &str,
    files: &[(String, String)],
) -> Asked {
    let fold = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut answered = Vec::new();
    let mut unanswered = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        // By its question's words, else by its place.
        let found = judged
            .answers
            .iter()
            .find(|a| fold(&a.question) == fold(q))
            .or_else(|| judged.answers.get(i))
            .filter(|a| a.answered && !a.answer.trim().is_empty())
            .filter(|a| {
                let quote = fold(&a.quote);
                if quote.len() < 8 {
                    return false;
                }
                let source = a.source.trim();
                let text = if source.eq_ignore_ascii_case("taskspec") {
                    Some(task)
                } else {
                    files
                        .iter()
                        .find(|(p, _)| p == source)
                        .map(|(_, t)| t.as_str())
                };
                text.is_some_and(|t| fold(t).contains(&quote))
            });
        match found {
            Some(a) => answered.push((
                q.clone(),
                a.answer.trim().to_string(),
                a.source.trim().to_string(),
            )),
            None => unanswered.push(q.clone()),
        }
    }
    Asked {
        answered,
        unanswered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(answered: bool, quote: &str, source: &str) -> AskedAnswer {
        AskedAnswer {
            question: "q".into(),
            answered,
            answer: "a".into(),
            quote: quote.into(),
            source: source.into(),
        }
    }

    #[test]
    fn an_answer_counts_only_on_a_quote_found_in_its_source() {
        let questions: Vec<String> = ["purpose?", "name?", "format?", "depth?"]
            .map(String::from)
            .to_vec();
        let judged = AskedAnswers {
            answers: vec![
                answer(true, "counts   the words\nof a text", "TaskSpec"),
                answer(true, "def word_count(text):", "stats.py"),
                answer(true, "a sentence nobody wrote", "TaskSpec"),
                answer(false, "", ""),
            ],
        };
        let task = "# Task\n\nword_count counts the words of a text.";
        let files = [(
            "stats.py".to_string(),
            "def word_count(text):\n    pass\n".to_string(),
        )];
        let asked = checked(&questions, &judged, task, &files);
        let answered: Vec<&str> = asked.answered.iter().map(|(q, _, _)| q.as_str()).collect();
        assert_eq!(answered, ["purpose?", "name?"]);
        assert_eq!(asked.unanswered, ["format?", "depth?"]);
        assert!(asked.block().contains("(from stats.py)"));
    }
}
