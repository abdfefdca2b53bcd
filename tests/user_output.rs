//! Snapshots of what users read: help, errors with their hints and exit codes, run reports
//! and progress, `log`, `review` and `config show --origin`; and the helpers with which the
//! other suites snapshot the commands they set up (`task`, `usage`, `reconcile`, `chamber`,
//! `session`, `models list`, `local status`, `override`).
//!
//! Each snapshot is one command's transcript (`$ command`, `exit: N`, stdout, stderr) after
//! [`Normalizer`](crate::common::Normalizer) replaced what varies between runs (temp paths,
//! run ids, object ids, times, durations, the fake server's address). The `.snap` files
//! live in `tests/snapshots/` and are committed: a changed message, hint or layout fails
//! here with a diff; short ones are inline (`insta::assert_snapshot!(text, @"...")`). After
//! an intended change, regenerate with
//! `INSTA_UPDATE=always cargo test --test runner <module>::` (inline snapshots are then left
//! as `tests/.<module>.rs.pending-snap` for `cargo insta accept`), or `cargo insta review`,
//! and read the new files before committing them.

use std::path::Path;

use clap::CommandFactory;
use git_triad::testkit::fake_llm::{FakeServer, Rule, Usage};
use serde_json::json;

use crate::common::{Normalizer, Run, TestEnv};
use crate::pipeline::{arbiter, happy_rules, issue, reject_once_rules, review, Scenario};
use crate::review::{repo_with_bad_import, scripted_review};

/// Asserts the snapshot `tests/snapshots/<name>.snap` equals `text`.
#[track_caller]
pub fn check(name: &str, text: &str) {
    insta::with_settings!({
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// `git triad <args>` as a user would type it, quoting what needs quotes.
pub fn command_line(args: &[&str]) -> String {
    let mut line = String::from("git triad");
    for a in args {
        line.push(' ');
        if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "\"'$`\\".contains(c)) {
            line.push('\'');
            line.push_str(&a.replace('\'', "'\\''"));
            line.push('\'');
        } else {
            line.push_str(a);
        }
    }
    line
}

/// The transcript of `run` (of `git triad <args>`), normalized for `env` as it is now (its
/// repositories' object ids included) and, with a `server`, its address as `[SERVER]`.
fn shown(env: &TestEnv, server: Option<&FakeServer>, run: &Run, args: &[&str]) -> String {
    let mut norm = env.normalizer();
    if let Some(server) = server {
        norm = norm.literal(server.base_url(), "[SERVER]");
    }
    run.transcript(&command_line(args), &norm)
}

/// Runs `git triad <args>` in `cwd` and returns its normalized transcript.
pub fn transcript(env: &TestEnv, server: Option<&FakeServer>, cwd: &Path, args: &[&str]) -> String {
    let run = env.triad(cwd, args);
    shown(env, server, &run, args)
}

/// A plain directory (not a repository) inside the environment's temp root.
fn plain_dir(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every scripted reply reports fixed token counts: the default estimate follows the
/// request's length, which carries paths and timings, and would make costs drift.
pub(crate) fn pinned_usage(mut rules: Vec<Rule>) -> Vec<Rule> {
    for rule in &mut rules {
        for reply in &mut rule.responses {
            reply.usage.get_or_insert(Usage {
                input_tokens: 1200,
                output_tokens: 300,
            });
        }
    }
    rules
}

// ---------------------------------------------------------------------------------------
// Help
// ---------------------------------------------------------------------------------------

/// The paths of every visible subcommand, nested ones included (`["task", "new"]`, ...).
fn command_paths(cmd: &clap::Command, prefix: &[String], out: &mut Vec<Vec<String>>) {
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(sub.get_name().to_string());
        out.push(path.clone());
        command_paths(sub, &path, out);
    }
}

#[test]
fn help_of_every_command() {
    let env = TestEnv::new();
    let dir = plain_dir(&env);
    let mut paths = vec![Vec::new()];
    command_paths(&git_triad::cli::Cli::command(), &[], &mut paths);
    // The commands the help must cover; a new one is picked up by itself.
    for needed in [
        "run",
        "resume",
        "review",
        "log",
        "task new",
        "task answer",
        "init",
        "notes push",
        "config show",
        "models check",
        "local start",
        "override",
        "show",
        "reconcile",
        "completions",
        "man",
    ] {
        assert!(
            paths.iter().any(|p| p.join(" ") == needed),
            "`{needed}` is not a visible command: {paths:?}"
        );
    }
    for path in paths {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let name = if path.is_empty() {
            "help-git-triad".to_string()
        } else {
            format!("help-{}", path.join("-"))
        };
        let run = env.triad(&dir, &args);
        run.ok();
        check(&name, &shown(&env, None, &run, &args));
    }
}

// ---------------------------------------------------------------------------------------
// Errors: message, hints, exit code
// ---------------------------------------------------------------------------------------

#[test]
fn error_outside_a_repository() {
    let env = TestEnv::new();
    let dir = plain_dir(&env);
    check(
        "error-outside-repository",
        &transcript(&env, None, &dir, &["run", "--task", "add-sub"]),
    );
}

#[test]
fn error_unknown_task() {
    let s = Scenario::new(happy_rules());
    check(
        "error-unknown-task-run",
        &transcript(&s.env, Some(&s.server), &s.repo, &["run", "--task", "nope"]),
    );
    check(
        "error-unknown-task-show",
        &transcript(&s.env, Some(&s.server), &s.repo, &["task", "show", "nope"]),
    );
    assert!(s.server.requests().is_empty());
}

#[test]
fn error_uncommitted_task_spec() {
    let s = Scenario::new(happy_rules());
    s.env.write_files(
        &s.repo,
        &[(".triad/tasks/add-sub.toml", "title = \"changed\"\n")],
    );
    check(
        "error-uncommitted-task-spec-modified",
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &["run", "--task", "add-sub"],
        ),
    );
    s.env
        .write_files(&s.repo, &[(".triad/tasks/new-one.toml", "title = \"x\"\n")]);
    check(
        "error-uncommitted-task-spec-untracked",
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &["run", "--task", "new-one"],
        ),
    );
    assert!(s.server.requests().is_empty());
}

#[test]
fn error_cross_model_violation() {
    let s = Scenario::new(happy_rules());
    check(
        "error-cross-model-arbiter",
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &["run", "--task", "add-sub", "--arbiter-model", "model-a"],
        ),
    );
    check(
        "error-cross-model-refactor",
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &[
                "run",
                "--task",
                "add-sub",
                "--arbiter",
                "full",
                "--arbiter-refactor",
                "model-a",
            ],
        ),
    );
    assert!(s.server.requests().is_empty());
}

#[test]
fn error_unknown_model() {
    let env = TestEnv::new();
    let dir = plain_dir(&env);
    check(
        "error-unknown-model-in-role",
        &transcript(
            &env,
            None,
            &dir,
            &[
                "-c",
                "roles.architect.models=nope-model-9",
                "config",
                "show",
            ],
        ),
    );
    check(
        "error-unknown-model-check",
        &transcript(&env, None, &dir, &["models", "check", "nope-model-9"]),
    );
}

#[test]
fn error_bad_config_override() {
    let env = TestEnv::new();
    let dir = plain_dir(&env);
    check(
        "error-override-unknown-key",
        &transcript(
            &env,
            None,
            &dir,
            &["-c", "arbiter.mood=x", "config", "show"],
        ),
    );
    check(
        "error-override-without-value",
        &transcript(&env, None, &dir, &["-c", "arbiter.mode", "config", "show"]),
    );
    check(
        "error-override-bad-value",
        &transcript(
            &env,
            None,
            &dir,
            &["-c", "arbiter.mode=sometimes", "config", "show"],
        ),
    );
}

#[test]
fn error_untrusted_committed_config() {
    let env = TestEnv::new();
    let repo = env.repo(
        "evil",
        &[(
            ".triad/config.toml",
            "[providers.openai]\nbase_url = \"http://evil.example\"\n",
        )],
    );
    check(
        "error-untrusted-committed-config",
        &transcript(&env, None, &repo, &["config", "show"]),
    );
}

#[test]
fn error_resume_unknown_run() {
    let s = Scenario::new(happy_rules());
    check(
        "error-resume-unknown-run",
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &["resume", "20990101-000000-beef"],
        ),
    );
}

// ---------------------------------------------------------------------------------------
// A run's report and progress, and `log`
// ---------------------------------------------------------------------------------------

/// Runs the scenario's task in plain text, then `log`, `log <run>` and
/// `log <run> --format markdown`, snapshotting each as `<prefix>-...`.
fn run_and_log(s: &Scenario, prefix: &str, want_exit: i32) {
    let args = ["run", "--task", "add-sub"];
    let run = s.env.triad(&s.repo, &args);
    run.expect_code(want_exit);
    check(
        &format!("{prefix}-run"),
        &shown(&s.env, Some(&s.server), &run, &args),
    );
    let list = s.env.triad(&s.repo, &["log", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(list.ok().stdout.trim()).unwrap();
    let id = runs[0]["run"]
        .as_str()
        .expect("the run is listed")
        .to_string();
    check(
        &format!("{prefix}-log-list"),
        &transcript(&s.env, Some(&s.server), &s.repo, &["log"]),
    );
    check(
        &format!("{prefix}-log-show"),
        &transcript(&s.env, Some(&s.server), &s.repo, &["log", &id]),
    );
    check(
        &format!("{prefix}-log-show-markdown"),
        &transcript(
            &s.env,
            Some(&s.server),
            &s.repo,
            &["log", &id, "--format", "markdown"],
        ),
    );
}

#[test]
fn an_approved_run_its_report_and_log() {
    let s = Scenario::new(pinned_usage(happy_rules()));
    run_and_log(&s, "approved", 0);
}

#[test]
fn a_rejected_then_approved_then_halted_run_its_report_and_log() {
    let mut rules = reject_once_rules();
    rules[5] = arbiter(
        "verify",
        vec![review(
            "HALT",
            json!([issue("sub is unsafe for floats", "return a - b")]),
        )],
    );
    let s = Scenario::new(pinned_usage(rules));
    run_and_log(&s, "halted", 3);
}

// ---------------------------------------------------------------------------------------
// review
// ---------------------------------------------------------------------------------------

/// A repository whose last commit adds an import of a module that does not exist
/// (`requets`) and a syntax error, as tests/review.rs sets it up.

#[test]
fn review_without_a_model() {
    let env = TestEnv::new();
    let repo = repo_with_bad_import(&env);
    check(
        "review-no-model",
        &transcript(&env, None, &repo, &["review", "--no-model"]),
    );
}

#[test]
fn review_with_the_scripted_arbiter() {
    let (server, env, repo) = scripted_review(pinned_usage);
    check(
        "review-arbiter",
        &transcript(&env, Some(&server), &repo, &["review"]),
    );
    assert_eq!(server.requests().len(), 1);
}

/// What a reviewer sees in `git log` on a reviewed commit after `git triad init`: one line
/// per verdict (verdict, stage or review, arbiter, the issues that count and where the
/// first is), not the JSON tools read (`git log --notes=triad`).
#[test]
fn git_log_on_a_reviewed_commit_after_init() {
    let (server, env, repo) = scripted_review(pinned_usage);
    env.triad(&repo, &["init", "--no-trust"]).ok();
    let review = env.triad(&repo, &["review", "HEAD", "--note"]);
    assert!(
        review.stderr.is_empty() || !review.stderr.contains("error"),
        "{}",
        review.stderr
    );
    let log = env.git(&repo, &["log", "-1"]);
    log.ok();
    check(
        "git-log-after-init",
        &log.transcript("git log -1", &env.normalizer()),
    );
    assert_eq!(server.requests().len(), 1);
}

// ---------------------------------------------------------------------------------------
// Machine-readable output: `--json` and `--format json`
// ---------------------------------------------------------------------------------------

/// Runs `git triad <args>` in `cwd`, which must exit `code`, and returns its standard output
/// as [`json_shown`] does, normalized as the transcripts are.
pub fn json_transcript(
    env: &TestEnv,
    server: Option<&FakeServer>,
    cwd: &Path,
    args: &[&str],
    code: i32,
) -> String {
    let run = env.triad(cwd, args);
    run.expect_code(code);
    let mut norm = env.normalizer();
    if let Some(server) = server {
        norm = norm.literal(server.base_url(), "[SERVER]");
    }
    json_shown(&run, args, &norm)
}

/// The standard output of `run` (of `git triad <args>`), a JSON document, pretty-printed
/// under the command line and exit status, normalized by `norm`.
pub fn json_shown(run: &Run, args: &[&str], norm: &Normalizer) -> String {
    let value: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}):\n{}", run.stdout));
    norm.apply(&format!(
        "$ {}\nexit: {}\n{}\n",
        command_line(args),
        run.code,
        serde_json::to_string_pretty(&value).unwrap()
    ))
}

/// [`json_transcript`] of a command in the scenario's repository.
fn json_of(s: &Scenario, args: &[&str], code: i32) -> String {
    json_transcript(&s.env, Some(&s.server), &s.repo, args, code)
}

#[test]
fn json_and_text_of_run_log_show_and_task_list() {
    let s = Scenario::new(pinned_usage(happy_rules()));
    let run = json_of(&s, &["run", "--task", "add-sub", "--json"], 0);
    check("json-run", &run);
    let list = s.env.triad(&s.repo, &["log", "--format", "json"]);
    let runs: serde_json::Value = serde_json::from_str(list.ok().stdout.trim()).unwrap();
    let id = runs[0]["run"].as_str().unwrap().to_string();
    check(
        "json-log-list",
        &json_of(&s, &["log", "--format", "json"], 0),
    );
    check(
        "json-log-show",
        &json_of(&s, &["log", &id, "--format", "json"], 0),
    );
    let tip = format!("triad/add-sub/{id}");
    check(
        "show-text",
        &transcript(&s.env, Some(&s.server), &s.repo, &["show", &tip]),
    );
    check("json-show", &json_of(&s, &["show", &tip, "--json"], 0));
    check(
        "task-list-text",
        &transcript(&s.env, Some(&s.server), &s.repo, &["task", "list"]),
    );
    check(
        "json-task-list",
        &json_of(&s, &["task", "list", "--json"], 0),
    );
}

#[test]
fn review_as_json() {
    let (server, env, repo) = scripted_review(pinned_usage);
    let run = env.triad(&repo, &["review", "--format", "json"]);
    let value: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON ({e}):\n{}", run.stdout));
    let norm = env.normalizer().literal(server.base_url(), "[SERVER]");
    check(
        "json-review",
        &norm.apply(&format!(
            "$ git triad review --format json\nexit: {}\n{}\n",
            run.code,
            serde_json::to_string_pretty(&value).unwrap()
        )),
    );
}
