//! The built-in task set of `git triad bench` and its grading: every task proves itself,
//! and answers are graded by facts (hidden tests, files changed, lines anchored).

use std::collections::BTreeMap;

use git_triad::arbiter::review::{finish, Checks, Probes};
use git_triad::arbiter::{ArbiterAnswer, Category, IssueAnswer, Severity, Verdict};
use git_triad::bench::grade::{grade_build, grade_review, run_hidden, Workspace};
use git_triad::bench::stage_for;
use git_triad::config::{EditFormat, LoadOptions, LoadedConfig};
use git_triad::model::ChatRequest;
use git_triad::pipeline::context::{file_char_budget, stage_request, OutlineCache, StageContext};
use git_triad::privacy::Privacy;
use git_triad::routing::tasks::{self, BuildTask, CaseClass, ReviewCase, TaskSet};
use git_triad::routing::TASK_SET_VERSION;
use git_triad::sandbox::Policy;

fn no_privacy() -> Privacy {
    Privacy::new(vec![])
}

fn build_task(id: &str) -> BuildTask {
    TaskSet::standard()
        .build
        .into_iter()
        .find(|t| t.id == id)
        .unwrap()
}

/// The request `model` is sent for `task`'s stage on the task's starting files, as a run
/// and the bench send it.
fn first_request(loaded: &LoadedConfig, model: &str, task: &BuildTask) -> ChatRequest {
    let ws = Workspace::for_build(task).unwrap();
    let files = ws.files().unwrap();
    let outlines = OutlineCache::default();
    let privacy = no_privacy();
    let budget = file_char_budget(&loaded.config, model);
    stage_request(
        &loaded.config,
        None,
        model,
        &StageContext::new(
            stage_for(task.role),
            &task.spec,
            &files,
            budget,
            &outlines,
            &privacy,
        ),
    )
}

fn review_case(id: &str) -> ReviewCase {
    TaskSet::standard()
        .review
        .into_iter()
        .find(|c| c.id == id)
        .unwrap()
}

#[test]
fn every_build_task_fails_as_given_and_passes_with_its_reference() {
    let set = TaskSet::standard();
    assert!(set.build.len() >= 6, "{} build tasks", set.build.len());
    for task in &set.build {
        let ws = Workspace::for_build(task).unwrap();
        assert!(
            run_hidden(ws.dir(), &task.hidden, &Policy::default())
                .unwrap()
                .is_some(),
            "{}: the hidden tests pass on the starting files, so they prove nothing",
            task.id
        );
        for format in [EditFormat::Whole, EditFormat::Diff] {
            let ws = Workspace::for_build(task).unwrap();
            let answer = task.reference_answer(format);
            let g = grade_build(
                &ws,
                task,
                &answer,
                format == EditFormat::Whole,
                &no_privacy(),
                &Policy::default(),
            )
            .unwrap();
            assert!(g.passed, "{} ({format:?}): {}", task.id, g.detail);
            assert_eq!(g.detail, "passed");
        }
    }
}

#[test]
fn every_review_case_proves_its_bug_or_its_cleanness() {
    let set = TaskSet::standard();
    let bugs = set
        .review
        .iter()
        .filter(|c| c.class != CaseClass::Clean)
        .count();
    assert!(bugs >= 5 && set.review.len() - bugs >= 3, "{bugs} bugs");
    for case in &set.review {
        let check = BTreeMap::from([("check.py".to_string(), case.check.clone())]);
        let ws = Workspace::for_review(case).unwrap();
        let on_change = run_hidden(ws.dir(), &check, &Policy::default()).unwrap();
        if case.class == CaseClass::Clean {
            assert_eq!(
                on_change, None,
                "{}: the clean change fails its check",
                case.id
            );
            assert!(case.bug.is_none() && case.fixed.is_empty(), "{}", case.id);
            continue;
        }
        assert!(
            on_change.is_some(),
            "{}: its check passes on the bug",
            case.id
        );
        let bug = case.bug.as_ref().unwrap();
        assert_eq!(
            case.change[&bug.path].matches(&bug.quote).count(),
            1,
            "{}: the bug's quote must occur exactly once",
            case.id
        );
        let fixed = ReviewCase {
            change: case.fixed.clone(),
            ..case.clone()
        };
        let fixed_ws = Workspace::for_review(&fixed).unwrap();
        assert_eq!(
            run_hidden(fixed_ws.dir(), &check, &Policy::default()).unwrap(),
            None,
            "{}: the fixed version fails the check",
            case.id
        );
        // The arbiter is shown the buggy line, numbered as in a run.
        let (first, _) = case.bug_lines().unwrap();
        let shown = ws.prepared(&no_privacy()).unwrap().gathered.diff_text;
        let line = bug.quote.lines().next().unwrap();
        assert!(
            shown.contains(&format!("{first:>5} + {line}")),
            "{}: line {first} not in\n{shown}",
            case.id
        );
    }
}

#[test]
fn the_task_set_version_moves_with_its_content() {
    // FNV-1a over every task file: editing a task without bumping the version would let old
    // measurements pass as measurements of the new tasks.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, text) in tasks::sources() {
        for b in name.bytes().chain(text.bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    assert_eq!(
        (TASK_SET_VERSION, format!("{h:016x}")),
        (3, "004adbb3523b6242".to_string()),
        "a built-in task changed: bump TASK_SET_VERSION (older measurements become stale) and pin the new hash here"
    );
}

#[test]
fn task_sets_are_chosen_by_name_or_ids() {
    let quick = TaskSet::select("quick").unwrap();
    let mut roles: Vec<_> = quick.build.iter().map(|t| t.role).collect();
    roles.dedup();
    assert_eq!(roles.len(), quick.build.len(), "one build task per role");
    assert_eq!(roles.len(), 3);
    assert_eq!(quick.review.len(), 2);
    assert!(quick.review.iter().any(|c| c.class == CaseClass::Clean));
    let two = TaskSet::select("impl-roman, clean-chunks").unwrap();
    assert_eq!(two.ids(), ["impl-roman", "clean-chunks"]);
    assert_eq!(two.name, "impl-roman,clean-chunks");
    let err = TaskSet::select("impl-roman,nope").unwrap_err();
    assert!(err.contains("`nope`"), "{err}");
}

fn grade(task: &BuildTask, answer: &str) -> git_triad::bench::grade::BuildOutcome {
    let ws = Workspace::for_build(task).unwrap();
    grade_build(&ws, task, answer, false, &no_privacy(), &Policy::default()).unwrap()
}

#[test]
fn a_build_answer_fails_on_the_first_fact_that_does_not_hold() {
    let task = build_task("impl-slugify");
    let mut files = task.reference.clone();
    files.insert("README.md".into(), "# blogkit, improved\n".into());
    let g = grade(&task, &task.answer_writing(&files, EditFormat::Diff));
    assert!(g.edits_applied && !g.scope_ok && !g.passed, "{g:?}");
    assert!(g.detail.contains("changed README.md"), "{}", g.detail);

    let wrong = BTreeMap::from([(
        "text.py".to_string(),
        "def slugify(title, max_length=50):\n    return title.lower()\n".to_string(),
    )]);
    let g = grade(&task, &task.answer_writing(&wrong, EditFormat::Diff));
    assert!(g.scope_ok && !g.tests_passed && !g.passed, "{g:?}");
    assert!(
        g.detail
            .starts_with("hidden tests failed: test_hidden.py exited with 1"),
        "{}",
        g.detail
    );

    let g = grade(&task, "I would implement it with a regular expression.");
    assert!(!g.answer_read && !g.passed);
    assert!(g.detail.contains("metadata block"), "{}", g.detail);

    let stale =
        "text.py\n<<<<<<< SEARCH\n    return None\n=======\n    return ''\n>>>>>>> REPLACE\n";
    let g = grade(
        &task,
        &format!("{stale}\n```json\n{{\"summary\": \"x\", \"outcome\": \"APPROVE\"}}\n```\n"),
    );
    assert!(g.answer_read && !g.edits_applied, "{g:?}");
    assert!(g.detail.contains("did not apply"), "{}", g.detail);

    let outside = BTreeMap::from([("setup.py".to_string(), "print('hi')\n".to_string())]);
    let g = grade(&task, &task.answer_writing(&outside, EditFormat::Diff));
    assert!(
        !g.edits_applied,
        "an edit outside the task's scope applied: {g:?}"
    );
}

fn answer(verdict: Verdict, issues: Vec<IssueAnswer>) -> ArbiterAnswer {
    ArbiterAnswer {
        verdict,
        confidence: 0.9,
        reasoning: "read it".into(),
        issues,
        alternatives: vec![],
    }
}

fn issue(path: &str, quote: &str, severity: Severity) -> IssueAnswer {
    IssueAnswer {
        severity,
        category: Category::Logic,
        path: path.into(),
        start_line: 1,
        end_line: 1,
        quote: quote.into(),
        description: "wrong".into(),
        suggestion: "fix".into(),
        evidence: "read".into(),
        probe: String::new(),
    }
}

/// A review of `case` finished as a run finishes one (issues re-anchored by their quotes).
fn reviewed(case: &ReviewCase, a: ArbiterAnswer) -> git_triad::bench::grade::ReviewOutcome {
    let mut files = case.base.clone();
    files.extend(case.change.clone());
    let read = |p: &str| files.get(p).cloned();
    // Derived as before probes existed: these cases are about anchoring and grading.
    let checks = Checks {
        read: &read,
        findings: &[],
        verify: None,
        requirement_ids: &[],
        probes: Probes::Ignored,
        behaviour: None,
    };
    let r = finish("implement", "x", "y", a, &checks, 0.0);
    grade_review(case, Ok(&r))
}

#[test]
fn a_review_catches_a_bug_only_with_an_issue_on_its_lines() {
    let case = review_case("bug-page-offset");
    let quote = case.bug.as_ref().unwrap().quote.clone();
    let caught = reviewed(
        &case,
        answer(
            Verdict::Reject,
            vec![issue("pager.py", &quote, Severity::Critical)],
        ),
    );
    assert!(caught.caught, "{caught:?}");

    let elsewhere = "    return items[start:start + size]";
    let missed = reviewed(
        &case,
        answer(
            Verdict::Reject,
            vec![issue("pager.py", elsewhere, Severity::Critical)],
        ),
    );
    assert!(
        !missed.caught && missed.detail.starts_with("missed"),
        "{missed:?}"
    );

    let invented = reviewed(
        &case,
        answer(
            Verdict::Reject,
            vec![issue(
                "pager.py",
                "start = page * size - 1",
                Severity::Critical,
            )],
        ),
    );
    assert!(
        !invented.caught,
        "an issue whose quote is not in the file anchors nowhere: {invented:?}"
    );

    let approved = reviewed(
        &case,
        answer(
            Verdict::Approve,
            vec![issue("pager.py", &quote, Severity::Suggestion)],
        ),
    );
    assert!(!approved.caught, "{approved:?}");

    let clean = review_case("clean-clamp");
    let rejected = reviewed(
        &clean,
        answer(
            Verdict::Reject,
            vec![issue(
                "numeric.py",
                "    return max(low, min(value, high))",
                Severity::Critical,
            )],
        ),
    );
    assert!(
        rejected.false_positive && !rejected.flagged_clean,
        "{rejected:?}"
    );
    let ok = reviewed(&clean, answer(Verdict::Approve, vec![]));
    assert!(
        !ok.false_positive && ok.verdict == Some(Verdict::Approve),
        "{ok:?}"
    );
    let unusable = grade_review(&clean, Err("not JSON"));
    assert_eq!(unusable.verdict, None);
}

#[test]
fn a_grammar_bound_local_model_may_write_every_file_a_task_must_change() {
    // The local models write whole files under a grammar that lists the files they may write:
    // a task whose files to change were not among them could not be passed by them at all.
    let loaded = LoadedConfig::load(&LoadOptions {
        user_file: Some("/nonexistent/config.toml".into()),
        ..LoadOptions::default()
    })
    .unwrap();
    let model = "local-qwen-coder";
    for task in TaskSet::standard().build {
        let req = first_request(&loaded, model, &task);
        let grammar = req.grammar.expect("a gbnf model gets a grammar");
        for path in &task.must_change {
            assert!(
                grammar.contains(&format!("\"{path}\"")),
                "{}: the grammar does not let {model} write {path}:\n{grammar}",
                task.id
            );
        }
    }
}

#[test]
fn a_stage_request_shows_its_answer_example_and_files_in_the_tasks_language() {
    // A small model copies the answer example's language: a Rust file answered in a Python
    // fence came back with its `//!` line turned into `# ...`. Every built-in task, for a
    // whole-file model and a SEARCH/REPLACE one, gets the example of its own language.
    let loaded = LoadedConfig::load(&LoadOptions {
        user_file: Some("/nonexistent/config.toml".into()),
        ..LoadOptions::default()
    })
    .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for model in ["local-qwen-coder", "gpt-5"] {
        for task in TaskSet::standard().build {
            let req = first_request(&loaded, model, &task);
            let ws = Workspace::for_build(&task).unwrap();
            let files = ws.files().unwrap();
            let system = req.system.clone().unwrap_or_default();
            let rust = task.must_change.iter().any(|p| p.ends_with(".rs"));
            let (ext, other) = if rust { (".rs", ".py") } else { (".py", ".rs") };
            assert!(
                system.contains(&format!("path/to/file{ext}\n"))
                    && !system.contains(&format!("path/to/file{other}"))
                    && !system.contains("{{"),
                "{} ({model}): the answer example is not a {ext} file:\n{system}",
                task.id
            );
            let user = &req.messages.last().unwrap().content;
            let fence = if rust { "```rust\n" } else { "```python\n" };
            for path in &task.must_change {
                if files.text(path).is_some() {
                    assert!(
                        user.contains(&format!("\n{path}\n{fence}")),
                        "{}: {path} is not shown in a {fence} fence:\n{user}",
                        task.id
                    );
                }
            }
            seen.insert(ext);
        }
    }
    assert_eq!(seen.len(), 2, "the built-in tasks hold both languages");
}
