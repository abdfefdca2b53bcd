//! The user's answers to NEEDS_INFO questions: the `Q:`/`A:` text format (answer files and
//! the editor template), matching answers to the recorded questions, and the markdown block a
//! resumed stage gets.
//!
//! Format: `Q: <question>` starts a question, `A: <answer>` starts its answer; following lines
//! continue whichever came last; lines starting with `#` are comments.

use super::error::TaskError;
use super::state::Answer;

/// The text the editor opens for answering `questions` asked by `specialist`.
pub fn template(slug: &str, specialist: &str, questions: &[String]) -> String {
    let mut s = format!(
        "# Answers for task `{slug}`: the {specialist} stage asked {} question(s).\n\
         # Write each answer after its `A:`; an answer may go on over several lines.\n\
         # Lines starting with `#` are ignored. Save and quit to record the answers;\n\
         # leave every answer empty to abort.\n",
        questions.len()
    );
    if questions.is_empty() {
        s.push_str("\nQ: What should the stage know to continue?\nA: \n");
    }
    for q in questions {
        s.push_str(&format!("\nQ: {}\nA: \n", one_line(q)));
    }
    s
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses `Q:`/`A:` text into question/answer pairs, in order.
pub fn parse(text: &str) -> Result<Vec<Answer>, TaskError> {
    enum In {
        Nothing,
        Question,
        Answer,
    }
    let mut pairs: Vec<Answer> = Vec::new();
    let mut at = In::Nothing;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            continue;
        }
        if let Some(q) = trimmed.strip_prefix("Q:") {
            pairs.push(Answer {
                question: q.trim().to_string(),
                answer: String::new(),
            });
            at = In::Question;
        } else if let Some(a) = trimmed.strip_prefix("A:") {
            let Some(last) = pairs.last_mut() else {
                return Err(TaskError::BadAnswers(format!(
                    "line {}: an `A:` before any `Q:`",
                    n + 1
                )));
            };
            if matches!(at, In::Answer) {
                return Err(TaskError::BadAnswers(format!(
                    "line {}: a second `A:` for the question \"{}\"",
                    n + 1,
                    last.question
                )));
            }
            last.answer = a.trim().to_string();
            at = In::Answer;
        } else {
            let Some(last) = pairs.last_mut() else {
                if trimmed.is_empty() {
                    continue;
                }
                return Err(TaskError::BadAnswers(format!(
                    "line {}: text before the first `Q:`",
                    n + 1
                )));
            };
            let field = match at {
                In::Answer => &mut last.answer,
                _ => &mut last.question,
            };
            if !field.is_empty() || !trimmed.is_empty() {
                field.push('\n');
                field.push_str(line.trim_end());
            }
        }
    }
    for p in &mut pairs {
        p.question = p.question.trim().to_string();
        p.answer = p.answer.trim().to_string();
    }
    Ok(pairs)
}

/// The answers to `questions` in `text`: `Q:`/`A:` pairs matched to them (see
/// [`match_questions`]), or, when the text has no `Q:` or `A:` line and one question was
/// asked, the whole text (comment lines left out) as its answer.
pub fn read(text: &str, questions: &[String]) -> Result<Vec<Answer>, TaskError> {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    let pairs = lines.iter().any(|l| {
        let t = l.trim_start();
        t.starts_with("Q:") || t.starts_with("A:")
    });
    if pairs {
        return match_questions(questions, parse(text)?);
    }
    let free = lines.join("\n").trim().to_string();
    match questions {
        [only] if !free.is_empty() => Ok(vec![Answer {
            question: only.clone(),
            answer: free,
        }]),
        [_] => Err(TaskError::BadAnswers("no answer was given".into())),
        _ => Err(TaskError::BadAnswers(format!(
            "an answer without `Q:`/`A:` lines answers a single question, and the stage asked {}",
            questions.len()
        ))),
    }
}

/// Matches parsed pairs to the recorded questions (by text, else by position when the counts
/// agree). Every recorded question needs a non-empty answer; extra pairs are kept as context.
pub fn match_questions(questions: &[String], given: Vec<Answer>) -> Result<Vec<Answer>, TaskError> {
    if given.iter().all(|a| a.answer.is_empty()) {
        return Err(TaskError::BadAnswers("no answer was given".into()));
    }
    let same_count = given.len() == questions.len();
    let mut used = vec![false; given.len()];
    let mut out = Vec::new();
    let mut missing = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        let key = one_line(q);
        let found = given
            .iter()
            .position(|a| one_line(&a.question) == key)
            .filter(|&j| !used[j])
            .or_else(|| (same_count && !used[i]).then_some(i));
        match found {
            Some(j) if !given[j].answer.is_empty() => {
                used[j] = true;
                out.push(Answer {
                    question: q.clone(),
                    answer: given[j].answer.clone(),
                });
            }
            _ => missing.push(format!("\"{key}\"")),
        }
    }
    if !missing.is_empty() {
        return Err(TaskError::BadAnswers(format!(
            "no answer for {}",
            missing.join(", ")
        )));
    }
    for (j, a) in given.into_iter().enumerate() {
        if !used[j] && !a.answer.is_empty() {
            out.push(a);
        }
    }
    Ok(out)
}

/// The `## ANSWERS FROM THE USER` block for a resumed stage's prompt.
pub fn markdown(answers: &[Answer]) -> String {
    let mut s = String::from(
        "## ANSWERS FROM THE USER\n\nYou asked for information before continuing. The user answered; \
         use these answers and do not ask the same questions again.\n\n",
    );
    for (i, a) in answers.iter().enumerate() {
        let answer = a.answer.replace('\n', "\n   ");
        s.push_str(&format!(
            "{}. **Q:** {}\n   **A:** {answer}\n",
            i + 1,
            one_line(&a.question)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_round_trips() {
        let qs = vec!["Which DB?".to_string(), "Which port?".to_string()];
        let filled = template("t", "implement", &qs)
            .replace("Which DB?\nA: ", "Which DB?\nA: Postgres\n  version 16")
            .replace("Which port?\nA: ", "Which port?\nA: 5432");
        let parsed = parse(&filled).unwrap();
        let matched = match_questions(&qs, parsed).unwrap();
        assert_eq!(matched[0].answer, "Postgres\n  version 16");
        assert_eq!(matched[1].answer, "5432");
        assert!(markdown(&matched).starts_with("## ANSWERS FROM THE USER"));
    }

    #[test]
    fn free_text_answers_a_single_question_and_only_then() {
        let one = vec!["Which DB?".to_string()];
        let got = read("# my answer\nPostgres 16,\n  the one we run\n", &one).unwrap();
        assert_eq!(got[0].question, "Which DB?");
        assert_eq!(got[0].answer, "Postgres 16,\n  the one we run");
        // Pairs still work with one question.
        assert_eq!(
            read("Q: Which DB?\nA: Redis", &one).unwrap()[0].answer,
            "Redis"
        );
        let e = read("  \n# nothing\n", &one).unwrap_err();
        assert!(e.to_string().contains("no answer"), "{e}");
        let two = vec!["a?".to_string(), "b?".to_string()];
        let e = read("Postgres", &two).unwrap_err();
        assert!(
            e.to_string()
                .contains("answers a single question, and the stage asked 2"),
            "{e}"
        );
    }

    #[test]
    fn unanswered_questions_and_bad_text_are_refused() {
        let qs = vec!["a?".to_string(), "b?".to_string()];
        let e = match_questions(&qs, parse("Q: a?\nA: yes\nQ: b?\nA:\n").unwrap()).unwrap_err();
        assert!(e.to_string().contains("\"b?\""), "{e}");
        assert!(match_questions(&qs, parse(&template("t", "x", &qs)).unwrap()).is_err());
        assert!(parse("hello\nQ: a?").is_err());
        assert!(parse("A: x").is_err());
        // Reworded questions still match by position.
        let m = match_questions(&qs, parse("Q: A?\nA: 1\nQ: B?\nA: 2").unwrap()).unwrap();
        assert_eq!((m[0].question.as_str(), m[1].answer.as_str()), ("a?", "2"));
    }
}
