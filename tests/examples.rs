//! The example repositories `scripts/bench-local` and the quickstart run (`examples/`): every
//! TaskSpec reads, every task has a hidden check kept outside every example repository, and a
//! Python task's check fails on its example as written (a check that passes on the base
//! measures nothing). The Rust tasks' checks build with cargo and are proven by hand, except
//! those of the six bug fixes written before any tuning (issue 42): each of those is proven
//! here end to end, verify command and hidden check, at its base and with its one-line fix.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use git_triad::task::TaskSpec;

use crate::common::copy_dir;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Every example task: (its repository's folder, its id).
fn tasks() -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let mut repos: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join(".triad/tasks").is_dir())
        .collect();
    repos.sort();
    for repo in repos {
        let mut files: Vec<PathBuf> = std::fs::read_dir(repo.join(".triad/tasks"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            let slug = file.file_stem().unwrap().to_str().unwrap().to_string();
            let text = std::fs::read_to_string(&file).unwrap();
            let spec = TaskSpec::parse(&text, &file.display().to_string(), &slug)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                spec.verify.is_some(),
                "{} has no verify command",
                file.display()
            );
            found.push((repo.clone(), slug));
        }
    }
    found
}

#[test]
fn every_example_task_reads_and_has_a_hidden_check_outside_its_repository() {
    let tasks = tasks();
    assert!(tasks.len() >= 18, "{tasks:?}");
    for (repo, slug) in &tasks {
        let check = examples().join("checks").join(format!("{slug}.py"));
        assert!(
            check.is_file(),
            "{slug} has no hidden check at {}",
            check.display()
        );
        assert!(
            !repo.join("checks").exists() && !repo.join(format!("{slug}.py")).exists(),
            "a check of {slug} is inside {}",
            repo.display()
        );
    }
}

#[test]
fn a_python_tasks_hidden_check_fails_on_its_example_as_written() {
    for (repo, slug) in tasks()
        .iter()
        .filter(|(r, _)| !r.join("Cargo.toml").exists())
    {
        let check = examples().join("checks").join(format!("{slug}.py"));
        let out = Command::new("python3")
            .arg(&check)
            .arg(repo)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        assert!(
            !out.status.success(),
            "the hidden check of {slug} passes on the base: it measures nothing"
        );
    }
}

#[test]
fn a_python_bug_fixs_hidden_check_passes_on_the_one_line_fix() {
    let fixes = [
        (
            "pricing",
            "fix-discount",
            "pricing.py",
            "return price * percent / 100",
            "return price - price * percent / 100",
        ),
        (
            "pager",
            "fix-page-offset",
            "pager.py",
            "start = number * size",
            "start = (number - 1) * size",
        ),
        (
            "slugs",
            "fix-slug-separator",
            "slugs.py",
            "sep=\"_\"",
            "sep=\"-\"",
        ),
        (
            "durations",
            "fix-hours",
            "durations.py",
            "{\"m\": 60, \"s\": 1}",
            "{\"h\": 3600, \"m\": 60, \"s\": 1}",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    for (example, slug, file, bug, fix) in fixes {
        let tree = tmp.path().join(example);
        copy_dir(&examples().join(example), &tree);
        let text = std::fs::read_to_string(tree.join(file)).unwrap();
        assert_eq!(text.matches(bug).count(), 1, "{example}/{file}");
        std::fs::write(tree.join(file), text.replace(bug, fix)).unwrap();
        let check = examples().join("checks").join(format!("{slug}.py"));
        let out = Command::new("python3")
            .arg(&check)
            .arg(&tree)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "the hidden check of {slug} fails on its fix: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A bug fix written, and committed, before anything was tuned on it (issue 42).
struct Untuned {
    /// Its example repository under `examples/`.
    example: &'static str,
    /// Its task id (`.triad/tasks/<task>.toml`, `examples/checks/<task>.py`).
    task: &'static str,
    /// The file of the bug.
    file: &'static str,
    /// The bug, as the example has it (exactly once).
    bug: &'static str,
    /// Its one-line fix: kept here, never in the example repository.
    fix: &'static str,
    /// What the verify command's output says at the base, naming the failure the task is
    /// about; `None` for the hang, whose command never ends.
    base_says: Option<&'static str>,
}

const UNTUNED: [Untuned; 6] = [
    Untuned {
        example: "timetable",
        task: "fix-next-departure",
        file: "timetable.py",
        bug: "            lo = mid\n",
        fix: "            lo = mid + 1\n",
        base_says: None,
    },
    Untuned {
        example: "contacts",
        task: "fix-initials",
        file: "src/lib.rs",
        bug: ".map(|word| &word[..1])",
        fix: ".filter_map(|word| word.chars().next())",
        base_says: Some("is not a char boundary"),
    },
    Untuned {
        example: "calendar",
        task: "fix-leap-years",
        file: "src/lib.rs",
        bug: "(year % 100 != 0 && year % 400 == 0)",
        fix: "(year % 100 != 0 || year % 400 == 0)",
        base_says: Some("assertion failed: is_leap(2024)"),
    },
    Untuned {
        example: "sheets",
        task: "fix-column-names",
        file: "src/lib.rs",
        bug: "rest /= 26;",
        fix: "rest = (rest - 1) / 26;",
        base_says: Some("left: \"AZ\""),
    },
    Untuned {
        example: "colours",
        task: "fix-short-hex",
        file: "colours.py",
        bug: "    digits = text[1:] if text.startswith(\"#\") else \"\"\n",
        fix: "    digits = text[1:] if text.startswith(\"#\") else \"\"\n    digits = \"\".join(c * 2 for c in digits) if len(digits) == 3 else digits\n",
        base_says: Some("not a hex colour: '#fff'"),
    },
    Untuned {
        example: "leaderboard",
        task: "fix-top-scores",
        file: "leaderboard.py",
        bug: "    scores.sort(key=lambda entry: entry[1], reverse=True)\n",
        fix: "    scores = sorted(scores, key=lambda entry: entry[1], reverse=True)\n",
        base_says: Some("FAIL: test_top_leaves_the_scores_alone"),
    },
];

/// How a command ended: its exit status, or `None` when it was still running after `limit`
/// and its whole process group was killed (a cargo test's test binary included); and what
/// it wrote, stdout then stderr.
fn run_limited(mut cmd: Command, limit: Duration) -> (Option<ExitStatus>, String) {
    let out = tempfile::tempfile().unwrap();
    let err = tempfile::tempfile().unwrap();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out.try_clone().unwrap())
        .stderr(err.try_clone().unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() >= limit {
            // SAFETY: kill(2) on the process group this test started, nothing else.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let read = |mut f: std::fs::File| {
        use std::io::{Read, Seek};
        let mut text = String::new();
        f.rewind().unwrap();
        f.read_to_string(&mut text).unwrap();
        text
    };
    (status, read(out) + &read(err))
}

/// The task's committed TaskSpec: its verify command and timeout.
fn verify_of(u: &Untuned) -> (String, Duration) {
    let file = examples()
        .join(u.example)
        .join(".triad/tasks")
        .join(format!("{}.toml", u.task));
    let spec = TaskSpec::parse(
        &std::fs::read_to_string(&file).unwrap(),
        &file.display().to_string(),
        u.task,
    )
    .unwrap();
    let verify = spec.verify.expect("a verify command");
    (
        verify.command,
        Duration::from_secs(verify.timeout_secs.expect("a timeout")),
    )
}

/// Runs the task's verify command in `tree` as a shell command, killed after `limit`; a
/// cargo build goes to the tree's own target folder, whatever the environment says.
fn run_verify(u: &Untuned, tree: &Path, limit: Duration) -> (Option<ExitStatus>, String) {
    let (command, _) = verify_of(u);
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(tree)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("CARGO_TARGET_DIR", tree.join("target"));
    run_limited(cmd, limit)
}

/// Runs the task's hidden check on `tree`, as `scripts/bench-local` does.
fn run_check(u: &Untuned, tree: &Path) -> (Option<ExitStatus>, String) {
    let mut cmd = Command::new("python3");
    cmd.arg(examples().join("checks").join(format!("{}.py", u.task)))
        .arg(tree)
        .env("PYTHONDONTWRITEBYTECODE", "1");
    run_limited(cmd, Duration::from_secs(600))
}

/// Copies the task's example into `dir`/`name`, with its bug or with its one-line fix.
fn tree_of(u: &Untuned, dir: &Path, fixed: bool) -> PathBuf {
    let tree = dir.join(format!("{}-{}", u.task, if fixed { "fix" } else { "base" }));
    copy_dir(&examples().join(u.example), &tree);
    let text = std::fs::read_to_string(tree.join(u.file)).unwrap();
    assert_eq!(text.matches(u.bug).count(), 1, "{}/{}", u.example, u.file);
    if fixed {
        std::fs::write(tree.join(u.file), text.replace(u.bug, u.fix)).unwrap();
    }
    tree
}

/// The verify command fails at the base (saying what the task is about) and passes with the
/// fix; the hidden check fails at the base and passes with the fix.
fn proves_itself(u: &Untuned) {
    let tmp = tempfile::tempdir().unwrap();
    let (_, timeout) = verify_of(u);
    let base = tree_of(u, tmp.path(), false);
    let (status, out) = run_verify(u, &base, timeout);
    let status = status.unwrap_or_else(|| panic!("{}: the verify command timed out", u.task));
    assert!(!status.success(), "{}: passes at the base:\n{out}", u.task);
    let says = u.base_says.unwrap();
    assert!(out.contains(says), "{}: not `{says}`:\n{out}", u.task);
    the_check_fails_at_the_base_and_the_fix_passes(u, &base, tmp.path(), timeout);
}

fn the_check_fails_at_the_base_and_the_fix_passes(
    u: &Untuned,
    base: &Path,
    dir: &Path,
    timeout: Duration,
) {
    let (status, out) = run_check(u, base);
    assert!(
        !status.unwrap().success(),
        "{}: the hidden check passes at the base: it measures nothing\n{out}",
        u.task
    );
    let fixed = tree_of(u, dir, true);
    let (status, out) = run_verify(u, &fixed, timeout);
    assert!(
        status.is_some_and(|s| s.success()),
        "{}: the verify command fails on the fix ({status:?}):\n{out}",
        u.task
    );
    let (status, out) = run_check(u, &fixed);
    assert!(
        status.unwrap().success(),
        "{}: the hidden check fails on the fix:\n{out}",
        u.task
    );
}

fn untuned(task: &str) -> &'static Untuned {
    UNTUNED.iter().find(|u| u.task == task).unwrap()
}

#[test]
fn an_untuned_hang_is_killed_at_its_base_and_returns_with_its_one_line_fix() {
    let u = untuned("fix-next-departure");
    let (_, timeout) = verify_of(u);
    assert!(
        timeout <= Duration::from_secs(30),
        "a hang must be cheap: {timeout:?}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let base = tree_of(u, tmp.path(), false);
    // Our own short limit: a command that ended within it, pass or fail, is not a hang.
    let (status, out) = run_verify(u, &base, Duration::from_secs(5));
    assert_eq!(status, None, "the base's tests ended:\n{out}");
    the_check_fails_at_the_base_and_the_fix_passes(u, &base, tmp.path(), timeout);
}

#[test]
fn an_untuned_python_bug_fails_at_its_base_and_its_one_line_fix_passes_its_hidden_check() {
    for task in ["fix-short-hex", "fix-top-scores"] {
        proves_itself(untuned(task));
    }
}

#[test]
fn an_untuned_rust_bug_fails_under_cargo_at_its_base_and_its_one_line_fix_passes_its_hidden_check()
{
    for task in ["fix-initials", "fix-leap-years", "fix-column-names"] {
        proves_itself(untuned(task));
    }
}

#[test]
fn bench_local_runs_every_untuned_task() {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench-local"))
            .unwrap();
    for u in &UNTUNED {
        let spec = format!("{}:{}", u.example, u.task);
        assert_eq!(
            script.matches(&spec).count(),
            2,
            "{spec}: once in the header, once in the task list"
        );
    }
}
