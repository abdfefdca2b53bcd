//! A stage's NEEDS_INFO questions, answered from what the run already has before anyone
//! waits: the run's own facts about the tree the stage was shown (a requirement left undone,
//! the verify command failing, a failing example), and one call to a judge model with the
//! TaskSpec, those files and those facts, whose answer counts only when the words it rests
//! on are found in its source. A question the task or the facts answer is not a question for
//! a person: it becomes a retry with the answer, as an unmet requirement does (seen: a
//! verifier asked "what is the purpose of the function?" of a task that said it, and "why
//! is the current implementation not meeting R2?" of a run whose facts said no test called
//! the function R2 names; both runs waited on the user).

use schemars::JsonSchema;
use serde::Deserialize;

use super::facts::{tree_facts, unmet};
use super::step::{BlockOn, Cx, Journal, RunError};
use crate::arbiter::service::{candidates, Arbiter};
use crate::config::prompt;
use crate::git::TreeFiles;
use crate::model::structured::schema_for;
use crate::model::ChatRequest;
use crate::pipeline::plan::same_wire_model;
use crate::pipeline::record::Transcript;
use crate::pipeline::stage::Stage;
use crate::task::TaskSpec;

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

/// The questions the task, the code and the run's facts answer, and those left for a person.
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
            "## YOUR QUESTIONS, ANSWERED FROM THE TASK AND THE CODE\n\nEach answer below is written in the TaskSpec, in a file you were shown, or in what the run's tools established about your work; do the work with them.\n\n",
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
    let facts = run_facts(cx, j, &tree)?;
    let by_facts = answered_by_facts(&cx.spec, questions, &facts);
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
    let facts_text = facts.join("\n");
    let user = format!(
        "ANSWER FROM THE TASK: the {stage} stage asked these questions.\n\n{asked}\n## The TaskSpec\n{task}\n\n## The files the stage was shown\n{}\n\n## {FACTS_SOURCE}: what the run's tools established about these files\n{}\n",
        if shown.is_empty() {
            "(none)".to_string()
        } else {
            shown
        },
        if facts.is_empty() {
            "(every fact holds)".to_string()
        } else {
            facts.iter().map(|f| format!("- {f}\n")).collect()
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
    // Questions the facts answer by name need no judge; the others are asked.
    let open: Vec<String> = questions
        .iter()
        .zip(&by_facts)
        .filter(|(_, f)| f.is_none())
        .map(|(q, _)| q.clone())
        .collect();
    let judged = if open.is_empty() {
        None
    } else {
        match Arbiter::new(cx.env.client, judges)
            .judge::<AskedAnswers>(&req, stage_model)
            .await_blocking()
        {
            Ok(judged) => {
                j.state.add_spend(judged.spend);
                j.transcript(&Transcript::new(
                    stage.as_str(),
                    "answerer",
                    judged.exchange.clone(),
                ));
                Some(judged.value)
            }
            Err(e) => {
                tracing::warn!("the stage's questions could not be checked against the task: {e}");
                None
            }
        }
    };
    if judged.is_none() && by_facts.iter().all(Option::is_none) {
        return Ok(None);
    }
    let mut sources = texts;
    sources.push((FACTS_SOURCE.to_string(), facts_text));
    let mut asked = match &judged {
        Some(value) => checked(questions, value, &task, &sources),
        None => Asked {
            answered: Vec::new(),
            unanswered: questions.to_vec(),
        },
    };
    // The facts' own answers stand whatever the judge said.
    for (q, fact) in questions.iter().zip(by_facts) {
        let Some(fact) = fact else { continue };
        asked.unanswered.retain(|u| u != q);
        if !asked.answered.iter().any(|(aq, _, _)| aq == q) {
            asked
                .answered
                .push((q.clone(), fact, FACTS_SOURCE.to_string()));
        }
    }
    Ok(Some(asked))
}

/// The source name of what the run's tools established, for the judge and its quotes.
const FACTS_SOURCE: &str = "the run's facts";

/// What the run's tools established against the tree the stage was shown, one sentence
/// each: the typed requirements it leaves undone, the verify command failing there (with
/// its last lines), the critical findings (a failing example, a weakened test). Empty when
/// every fact holds.
fn run_facts(cx: &Cx<'_>, j: &Journal<'_>, tree: &git2::Tree<'_>) -> Result<Vec<String>, RunError> {
    let mut facts: Vec<String> = unmet(cx, tree)?.into_iter().map(|u| u.why).collect();
    let at_tip = j.state.verify_at() == Some(j.state.tip());
    if let Some(v) = j
        .state
        .verify()
        .filter(|v| at_tip && v.exit_code != Some(0))
    {
        let how = match (v.timed_out, v.exit_code) {
            (true, _) => "was killed by its timeout".to_string(),
            (false, Some(code)) => format!("exits {code}"),
            (false, None) => "was killed".to_string(),
        };
        facts.push(format!(
            "the verify command `{}` {how} on these files; its last lines: {}",
            v.command,
            crate::bounded::clip(v.tail.trim(), 1_500)
        ));
    }
    facts.extend(
        tree_facts(cx, Stage::Verify, tree)?
            .findings()
            .into_iter()
            .filter(|f| f.severity == "critical")
            .map(|f| f.reason),
    );
    Ok(facts)
}

/// For each question, the facts that answer it by name: those that speak of a requirement
/// id, a function the requirements name, or a file they name, which the question names too
/// (as a word). A question about the work the facts find undone ("why does it not meet
/// R2?") is answered by them, whatever a judge model makes of it.
fn answered_by_facts(
    spec: &TaskSpec,
    questions: &[String],
    facts: &[String],
) -> Vec<Option<String>> {
    let mut names: Vec<String> = spec.requirements.iter().map(|r| r.id.clone()).collect();
    names.extend(spec.named_functions());
    names.extend(
        spec.requirements
            .iter()
            .flat_map(|r| r.files.iter().cloned()),
    );
    names.retain(|n| !n.trim().is_empty());
    questions
        .iter()
        .map(|q| {
            let named: Vec<&String> = names.iter().filter(|n| names_word(q, n)).collect();
            let lines: Vec<&str> = facts
                .iter()
                .filter(|f| named.iter().any(|n| names_word(f, n)))
                .map(String::as_str)
                .collect();
            (!lines.is_empty()).then(|| lines.join("; "))
        })
        .collect()
}

/// Whether `text` holds `name` as a word of its own (not inside a longer identifier).
fn names_word(text: &str, name: &str) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
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
    fn a_question_naming_what_the_facts_find_undone_is_answered_by_them() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n[[requirements]]\nid = \"R1\"\ntext = \"x\"\nfunctions = [\"char_count\"]\n[[requirements]]\nid = \"R2\"\ntext = \"a test\"\nfiles = [\"tests/test_t.py\"]\n",
            ".triad/tasks/t.toml",
            "t",
        )
        .unwrap();
        let facts = vec![
            "R2 is delivered in tests/test_t.py, which the change leaves as it was".to_string(),
        ];
        let questions: Vec<String> = [
            "Why is the current implementation not meeting the task's R2?",
            "Should tests/test_t.py use pytest?",
            "Which rounding mode, R12 or R1?",
            "What is the purpose of char_count?",
        ]
        .map(String::from)
        .to_vec();
        let got = answered_by_facts(&spec, &questions, &facts);
        assert_eq!(got[0].as_deref(), Some(facts[0].as_str()));
        assert_eq!(got[1].as_deref(), Some(facts[0].as_str()));
        // R1 is met (no fact speaks of it) and R12 is not R2.
        assert_eq!(got[2], None);
        assert_eq!(got[3], None);
        assert!(
            names_word("is R2?", "R2") && !names_word("R22", "R2") && !names_word("my_R2", "R2")
        );
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
