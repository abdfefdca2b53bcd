//! Model text never reaches a terminal raw: an escape sequence, an OSC title, a bell, a
//! carriage return or a bidirectional override in what a model wrote is shown as text by every
//! command that prints it, in a pipe as on a terminal, and stage commits and notes carry it
//! escaped too (`git log` prints them raw). JSON output keeps the data exact, as `\u` escapes.

use git_triad::testkit::fake_llm::Reply;
use serde_json::{json, Value};

use crate::common::Run;
use crate::pipeline::{answer, arbiter, happy_rules, review, run_json, stage, Scenario};

/// What a hostile model writes: colour, an OSC window title ended by BEL, a screen clear, a
/// carriage return and a right-to-left override.
const HOSTILE: &str = "sub()\u{1b}[31m red \u{1b}]0;pwned\u{7} \u{202e}txt.exe\r\u{1b}[2J done";

/// Characters a terminal obeys.
fn obeyed(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` (what `what` printed) holds no character a terminal obeys, and shows the hostile
/// text escaped: the model's words reached it, as words.
#[track_caller]
fn shown_safely(what: &str, text: &str) {
    if let Some(c) = text.chars().find(|c| obeyed(*c)) {
        panic!("{what} printed U+{:04X} raw:\n{text}", c as u32);
    }
    assert!(
        text.contains("^[[31m red ^[]0;pwned^G <U+202E>txt.exe^M^[[2J done"),
        "{what} does not show the model's text escaped:\n{text}"
    );
}

/// The same for JSON: the data is exact once parsed, and the text is safe.
#[track_caller]
fn json_safely(what: &str, text: &str) -> Value {
    if let Some(c) = text.chars().find(|c| obeyed(*c)) {
        panic!("{what} printed U+{:04X} raw:\n{text}", c as u32);
    }
    assert!(text.contains("\\u202e"), "{what}: {text}");
    let v: Value = serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        v.to_string().contains('\u{202e}'),
        "{what}: the data was altered"
    );
    v
}

fn ok(run: &Run) -> String {
    run.ok();
    run.stdout.clone()
}

/// A run whose implementer's summary and the architect review's issue are hostile.
fn hostile_run() -> (Scenario, String) {
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![Reply::text(answer(
            "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n",
            HOSTILE,
        ))],
    );
    let issue = json!({"severity": "suggestion", "category": "pattern", "path": "calc.py",
        "start_line": 1, "end_line": 1, "quote": "def add(a, b):", "description": HOSTILE,
        "suggestion": HOSTILE, "evidence": "read the code"});
    rules[4] = arbiter("architect", vec![review("APPROVE", json!([issue]))]);
    let s = Scenario::new(rules);
    let run = s.run(&[]);
    let out = run_json(&ok(&run));
    assert_eq!(out["status"], "approved", "{out}");
    // The live progress on stderr.
    if let Some(c) = run.stderr.chars().find(|c| obeyed(*c)) {
        panic!(
            "run's stderr printed U+{:04X} raw:\n{}",
            c as u32, run.stderr
        );
    }
    (s, out["run"].as_str().unwrap().to_string())
}

#[test]
fn log_show_task_and_git_show_model_text_escaped() {
    let (s, id) = hostile_run();
    let triad = |args: &[&str]| s.env.triad(&s.repo, args);

    shown_safely("log <run>", &ok(&triad(&["log", &id])));
    shown_safely(
        "log <run> --format markdown",
        &ok(&triad(&["log", &id, "--format", "markdown"])),
    );
    // The JSON summary of a run carries no model text; it is safe all the same.
    let json = ok(&triad(&["log", &id, "--format", "json"]));
    assert!(!json.chars().any(obeyed), "{json}");

    // The stage commits: their subjects, as `git log` prints them.
    let branch = format!("triad/add-sub/{id}");
    let subjects = s.git(&["log", "--format=%s%n%b", &format!("main..{branch}")]);
    shown_safely("the stage commits", &subjects);

    // The verdict notes, as `git log --notes=triad` prints them.
    let notes = s.git(&[
        "log",
        "--notes=triad",
        "--format=%N",
        &format!("main..{branch}"),
    ]);
    assert!(!notes.chars().any(obeyed), "notes hold raw text:\n{notes}");
    assert!(notes.contains("\\u202e"), "{notes}");

    // `show` of the reviewed architect commit: the issue.
    let architect = s.git(&["rev-list", "--reverse", &format!("main..{branch}")]);
    let architect = architect.lines().next().unwrap();
    shown_safely("show", &ok(&triad(&["show", architect])));
    json_safely("show --json", &ok(&triad(&["show", architect, "--json"])));
}

#[test]
fn task_show_and_list_print_a_stages_questions_escaped() {
    let asks = format!(
        "I need to know more.\n```json\n{}\n```\n",
        json!({"summary": HOSTILE, "confidence": 0.5, "outcome": "NEEDS_INFO",
               "questions": [HOSTILE], "suggestions": [], "objections": []})
    );
    let mut rules = happy_rules();
    rules[1] = stage("implement", vec![Reply::text(asks)]);
    let s = Scenario::new(rules);
    s.run(&[]).expect_code(6);
    let triad = |args: &[&str]| s.env.triad(&s.repo, args);
    shown_safely("task show", &ok(&triad(&["task", "show", "add-sub"])));
    let list = ok(&triad(&["task", "list"]));
    assert!(!list.chars().any(obeyed), "task list: {list}");
    let runs = ok(&triad(&["log"]));
    assert!(!runs.chars().any(obeyed), "log: {runs}");
}

#[test]
fn review_prints_the_arbiters_text_escaped_in_every_format() {
    let issue = json!({"severity": "suggestion", "category": "pattern", "path": "calc.py",
        "start_line": 1, "end_line": 1, "quote": "def add(a, b):", "description": HOSTILE,
        "suggestion": "fix", "evidence": "read the code"});
    let rule = git_triad::testkit::fake_llm::Rule::named("review")
        .model("model-b")
        .reply(Reply::json(review("FLAG", json!([issue]))))
        .repeat_last(true);
    let s = Scenario::new(vec![rule]);
    s.env.write_files(
        &s.repo,
        &[(
            "calc.py",
            "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n",
        )],
    );
    s.env.commit_all(&s.repo, "sub");
    let review = |format: &str| {
        s.env
            .triad(&s.repo, &["review", "HEAD~1..HEAD", "--format", format])
    };
    shown_safely("review", &ok(&review("text")));
    shown_safely("review --format markdown", &ok(&review("markdown")));
    json_safely("review --format json", &ok(&review("json")));
    json_safely("review --format sarif", &ok(&review("sarif")));
}

#[test]
fn an_error_quoting_a_server_is_shown_escaped() {
    // A server whose error body carries escape sequences: the error the user reads quotes it.
    let rule = git_triad::testkit::fake_llm::Rule::named("down")
        .model("model-a")
        .reply(Reply {
            body: Some(json!({"error": {"message": HOSTILE, "type": "invalid_request_error"}})),
            ..Reply::status(400)
        })
        .repeat_last(true);
    let s = Scenario::new(vec![rule]);
    let run = s.env.triad(&s.repo, &["models", "check", "model-a"]);
    assert_ne!(run.code, 0);
    if let Some(c) = run.stderr.chars().find(|c| obeyed(*c)) {
        panic!("the error printed U+{:04X} raw:\n{}", c as u32, run.stderr);
    }
    assert!(run.stderr.contains("<U+202E>"), "{}", run.stderr);
}

#[test]
fn a_model_id_a_server_reports_is_shown_escaped_in_output_and_warnings() {
    let rule = git_triad::testkit::fake_llm::Rule::named("odd")
        .model("model-a")
        .reply(Reply::text("ok").reported_model(HOSTILE));
    let s = Scenario::new(vec![rule]);
    let run = s.env.triad(&s.repo, &["models", "check", "model-a"]);
    run.ok();
    for (what, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        if let Some(c) = text.chars().find(|c| obeyed(*c)) {
            panic!(
                "models check's {what} printed U+{:04X} raw:\n{text}",
                c as u32
            );
        }
    }
    assert!(run.stdout.contains("<U+202E>txt.exe"), "{}", run.stdout);
}
