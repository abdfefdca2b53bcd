//! The example repositories `scripts/bench-local` and the quickstart run (`examples/`): every
//! TaskSpec reads, every task has a hidden check kept outside every example repository, and a
//! Python task's check fails on its example as written (a check that passes on the base
//! measures nothing). The Rust tasks' checks build with cargo and are proven by hand.

use std::path::{Path, PathBuf};
use std::process::Command;

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
    assert!(tasks.len() >= 12, "{tasks:?}");
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
