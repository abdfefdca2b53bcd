//! A new user's first minutes, with the real binary, the real `git`, `man` and bash (issue
//! #45 point 5): `git triad --help` with no man page installed, completion through git's own
//! bash completion, dates and config keys checked, `--format json` on every report.

use std::path::{Path, PathBuf};

use crate::common::{self, Run, TestEnv};

/// A fresh install: the binary alone in `<root>/prefix/bin` (a hard link, else a copy), no
/// man page anywhere near it, and that directory first on PATH, as `cargo install` leaves
/// `~/.cargo/bin`.
fn fresh_install(env: &TestEnv) -> PathBuf {
    let bin = env.root().join("prefix").join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let exe = bin.join("git-triad");
    if std::fs::hard_link(common::bin(), &exe).is_err() {
        std::fs::copy(common::bin(), &exe).unwrap();
    }
    assert!(!env.root().join("prefix/share").exists());
    bin
}

/// `git <args>` in `dir` with `bin` first on PATH (and nothing else of the test's build).
fn git_with(env: &TestEnv, bin: &Path, dir: &Path, args: &[&str]) -> Run {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = env
        .command("git", dir)
        .env("PATH", path)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .env_remove("MANPATH")
        .args(args)
        .output()
        .expect("run git");
    Run {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn have(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn git_triad_help_opens_the_man_page_without_man_install() {
    assert!(
        have("man"),
        "this test needs `man` (man-db), which `git triad --help` runs through git"
    );
    let env = TestEnv::new();
    let bin = fresh_install(&env);
    let dir = env.repo("proj", &[("README", "hi\n")]);
    // A first command (any: here the short help) puts the pages where man looks for a
    // binary on PATH; nobody ran `git triad man --install`.
    git_with(&env, &bin, &dir, &["triad", "-h"]).ok();
    assert!(env
        .root()
        .join("prefix/share/man/man1/git-triad-run.1")
        .is_file());
    let help = git_with(&env, &bin, &dir, &["triad", "--help"]);
    help.ok();
    assert!(help.stdout.contains("NAME"), "{}", help.all());
    assert!(help.stdout.contains("several AI models"), "{}", help.all());
    // git passes `--help` after a subcommand on to git triad, whose clap prints it.
    let run = git_with(&env, &bin, &dir, &["triad", "run", "--help"]);
    assert!(run.ok().stdout.contains("--workflow"), "{}", run.all());
}

/// Where git's own bash completion is on this machine (the git package's, or the contrib
/// copy of a git built from source).
fn git_completion_script() -> Option<PathBuf> {
    [
        "/usr/share/bash-completion/completions/git",
        "/usr/local/share/bash-completion/completions/git",
        "/etc/bash_completion.d/git",
        "/usr/share/git-core/contrib/completion/git-completion.bash",
        "/usr/local/share/git-core/contrib/completion/git-completion.bash",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

/// What bash completes for `line` (a trailing space completes a new word) through git's
/// completion, with git triad's installed script loaded as a user's shell loads it:
/// through bash-completion's loader when bash-completion is installed, else sourced.
fn complete(env: &TestEnv, bin: &Path, git_script: &Path, line: &str) -> Vec<String> {
    let loader = Path::new("/usr/share/bash-completion/bash_completion");
    let setup = if loader.is_file() {
        format!("source {}", loader.display())
    } else {
        format!(
            "source {}\nsource \"$HOME/.local/share/bash-completion/completions/git-triad\"",
            git_script.display()
        )
    };
    let script = format!(
        r#"{setup}
COMP_LINE='{line}'
COMP_POINT=${{#COMP_LINE}}
read -ra COMP_WORDS <<<"$COMP_LINE"
[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMPREPLY=()
__git_wrap__git_main
printf '%s\n' "${{COMPREPLY[@]}}"
"#
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = env
        .command("bash", env.root())
        .env("PATH", path)
        .args(["--norc", "--noprofile", "-c", &script])
        .output()
        .expect("run bash");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let mut words: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect();
    words.sort();
    words
}

#[test]
fn completion_installs_into_a_fresh_home_and_works_through_git() {
    let Some(git_script) = git_completion_script() else {
        panic!("this test needs git's bash completion script (git-completion.bash), which `git triad <TAB>` goes through");
    };
    let env = TestEnv::new();
    let bin = fresh_install(&env);
    assert!(!env.home().join(".local").exists(), "a fresh home");
    let installed = env.triad(env.root(), &["completions", "bash", "--install"]);
    let file = env
        .home()
        .join(".local/share/bash-completion/completions/git-triad");
    assert!(installed.ok().stdout.contains(file.to_str().unwrap()));
    let script = std::fs::read_to_string(&file).unwrap();
    assert!(
        script.contains("_git_triad()"),
        "git's completion calls _git_triad"
    );

    let subcommands = complete(&env, &bin, &git_script, "git triad re");
    assert_eq!(subcommands, ["reconcile", "resume", "review"]);
    let flags = complete(&env, &bin, &git_script, "git triad run --wor");
    assert_eq!(flags, ["--workflow"]);
    // git's own options before the command, and a nested subcommand.
    let nested = complete(&env, &bin, &git_script, "git -C . triad task ");
    for sub in ["answer", "defer", "list", "new", "show"] {
        assert!(nested.contains(&sub.to_string()), "{nested:?}");
    }
    let format = complete(&env, &bin, &git_script, "git triad log --f");
    assert_eq!(format, ["--format"]);
}

#[test]
fn a_revisit_date_the_calendar_does_not_have_is_refused() {
    let env = TestEnv::new();
    let dir = env.repo("proj", &[("README", "hi\n")]);
    env.triad(&dir, &["task", "new", "later", "--title", "Later"])
        .ok();
    let defer = |date: &str| {
        let args = [
            "task",
            "defer",
            "later",
            "--reason",
            "r",
            "--revisit-at",
            date,
        ];
        env.triad(&dir, &args)
    };
    for (date, why) in [
        ("2099-13-45", "there is no month 13"),
        ("2099-02-30", "2099-02 has no day 30"),
        ("2099-09-01T25:00:00Z", "is not an RFC 3339 time"),
    ] {
        let r = defer(date);
        r.expect_code(2);
        assert!(r.stderr.contains(why), "{date}: {}", r.stderr);
        assert!(r.stderr.contains("hint: use YYYY-MM-DD"), "{}", r.stderr);
    }
    let shown = env.triad(&dir, &["task", "show", "later", "--json"]);
    assert!(!shown.ok().stdout.contains("DEFERRED"), "{}", shown.stdout);
    defer("2096-02-29").ok();
}

#[test]
fn config_show_of_a_key_that_does_not_exist_is_an_error() {
    let env = TestEnv::new();
    let dir = env.root();
    let r = env.triad(dir, &["config", "show", "nonexistent.key"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("`nonexistent.key` is not a configuration key"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("`arbiter`"), "{}", r.stderr);
    // Below a value, nothing is a key either.
    env.triad(dir, &["config", "show", "arbiter.mode.x"])
        .expect_code(2);
    // A known key, set or not, is shown or said to be unset.
    let set = env.triad(dir, &["config", "show", "arbiter.mode"]);
    assert!(set.ok().stdout.contains("arbiter.mode = \"bookend\""));
    let unset = env.triad(dir, &["config", "show", "providers.my-server"]);
    assert!(
        unset
            .ok()
            .stdout
            .contains("# providers.my-server is not set"),
        "{}",
        unset.stdout
    );
}

#[test]
fn every_report_takes_format_json_and_log_shows_each_run_as_it_ended() {
    use git_triad::testkit::fake_llm::Reply;
    // One approved run, then one whose implementer's provider fails after the architect
    // answered (a run that built something is kept, failed).
    let mut rules = crate::pipeline::happy_rules();
    rules[0] = crate::pipeline::stage(
        "architect",
        vec![Reply::text(crate::pipeline::architect_answer())],
    )
    .repeat_last(true);
    rules[1] = crate::pipeline::stage(
        "implement",
        vec![
            Reply::text(crate::pipeline::implement_answer()),
            Reply::status(500),
        ],
    )
    .repeat_last(true);
    let s = crate::pipeline::Scenario::new(rules);
    let approved = s
        .env
        .triad(&s.repo, &["run", "--task", "add-sub", "--format", "json"]);
    let approved: serde_json::Value = serde_json::from_str(&approved.ok().stdout).unwrap();
    assert_eq!(approved["status"], "approved");
    let failed = s
        .env
        .triad(&s.repo, &["run", "--task", "add-sub", "--json"]);
    let failed: serde_json::Value = serde_json::from_str(&failed.expect_code(1).stdout).unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["final_verdict"], serde_json::Value::Null, "{failed}");

    let list = s.env.triad(&s.repo, &["log"]);
    let lines: Vec<&str> = list.ok().stdout.lines().collect();
    assert!(
        lines[0].starts_with("RUN") && lines[0].ends_with("VERDICT"),
        "{lines:?}"
    );
    let row = |id: &serde_json::Value| {
        *lines
            .iter()
            .find(|l| l.starts_with(id.as_str().unwrap()))
            .unwrap()
    };
    assert!(row(&approved["run"]).ends_with("APPROVE"), "{lines:?}");
    let failed_row = row(&failed["run"]);
    assert!(
        failed_row.contains("failed") && failed_row.ends_with('-'),
        "{failed_row}"
    );

    for args in [
        &["log", "--format", "json"][..],
        &["task", "list", "--format", "json"],
        &["task", "show", "add-sub", "--format", "json"],
        &["usage", "--format", "json"],
        &["models", "list", "--no-probe", "--format", "json"],
        &["session", "list", "--format", "json"],
        &["chamber", "stats", "--format", "json"],
        &["chamber", "list", "--format", "json"],
        &["review", "HEAD", "--no-model", "--format", "json"],
    ] {
        let r = s.env.triad(&s.repo, args);
        assert!(r.code == 0, "{args:?}: {}", r.all());
        serde_json::from_str::<serde_json::Value>(&r.stdout)
            .unwrap_or_else(|e| panic!("{args:?} is not JSON ({e}): {}", r.stdout));
    }
}
