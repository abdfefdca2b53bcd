//! Snapshots of what users read: help, errors with their hints and exit codes, run reports
//! and progress, `log`, `review` and `config show --origin`.
//!
//! Each snapshot is one command's transcript (`$ command`, `exit: N`, stdout, stderr) after
//! [`Normalizer`](crate::common::Normalizer) replaced what varies between runs (temp paths,
//! run ids, object ids, times, durations, the fake server's address). The `.snap` files
//! live in `tests/snapshots/` and are committed: a changed message, hint or layout fails
//! here with a diff. After an intended change, regenerate with
//! `INSTA_UPDATE=always cargo test --features test-fakes --test runner user_output`
//! (or `cargo insta review`) and read the new files before committing them.

use clap::CommandFactory;
use git_triad::testkit::fake_llm::FakeServer;

use crate::common::{Run, TestEnv};

/// Asserts the snapshot `tests/snapshots/<name>.snap` equals `text`.
#[track_caller]
fn check(name: &str, text: &str) {
    insta::with_settings!({
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// `git triad <args>` as a user would type it, quoting what needs quotes.
fn command_line(args: &[&str]) -> String {
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

/// A plain directory (not a repository) inside the environment's temp root.
fn plain_dir(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.root().join("plain");
    std::fs::create_dir_all(&dir).unwrap();
    dir
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
