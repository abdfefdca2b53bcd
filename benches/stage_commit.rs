//! Committing a stage that changes 500 files: git triad's in-memory way against the git CLI.
//!
//! A repository of [`FILES`] files (about 2 KB each, in 80 directories) gets a change that
//! modifies [`CHANGED`] of them, spread over every directory. Each run uses new content, so
//! neither side can skip writing objects that already exist.
//!
//! - (a) git triad: `git_triad::git::build_tree` on the base tree plus `git_triad::git::commit`,
//!   from file contents already in memory (that is how a stage's edits arrive), with the
//!   repository already open (the run keeps it open).
//! - (b) git CLI, in a clone: write the 500 files to the work tree, then
//!   `git add -A && git commit -q -m x`. Writing the files is part of (b)'s time because git
//!   can only commit what is on disk.
//!
//! Both sides must produce the same tree (checked every run). Setup (creating the
//! repository, the clone, preparing the contents) is not timed. Both sides mostly create small
//! files (one loose object per changed file), so the setup avoids disturbing that:
//! - each timed section starts after an untimed `sync`, or one side pays for the writeback of
//!   what the other (or the setup) just wrote (single timings swung 2-10× without it);
//! - the repository is not packed: a `git gc` seconds before the runs deletes its 2,000 loose
//!   objects, and creating files in that tree right after was 2-5× slower on ext4 (it made (a)
//!   lose 1.4× to (b); unpacked, (a) won every time);
//! - auto-gc is off in both repositories so a `git gc --auto` cannot land inside a timing
//!   (libgit2 never runs one).
//!
//! Target: median (a) ≤ median (b), over [`RUNS`] interleaved runs after a warm-up; the bench
//! exits with status 1 otherwise. Run with `cargo bench --bench stage_commit` (uses the
//! library directly, no binary); `TMPDIR=/dev/shm` takes the disk out of the comparison.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use git2::Repository;

const FILES: usize = 2000;
const CHANGED: usize = 500;
const RUNS: usize = 7;

fn main() {
    let tmp = tempfile::Builder::new()
        .prefix("triad-bench-commit-")
        .tempdir()
        .expect("tempdir");
    let origin = tmp.path().join("origin");
    let clone = tmp.path().join("clone");
    let paths: Vec<String> = (0..FILES).map(path_of).collect();
    for (i, p) in paths.iter().enumerate() {
        let file = origin.join(p);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, content(i, 0)).unwrap();
    }
    git(&origin, &["init", "-q", "-b", "main"]);
    git(&origin, &["config", "gc.auto", "0"]);
    git(&origin, &["add", "-A"]);
    git(&origin, &["commit", "-q", "-m", "base"]);
    git(tmp.path(), &["clone", "-q", "origin", "clone"]);
    git(&clone, &["config", "gc.auto", "0"]);

    let repo = Repository::open(&origin).expect("open origin");
    let base = repo.head().unwrap().peel_to_commit().unwrap();
    let base_tree = base.tree().unwrap();
    let changed: Vec<usize> = (0..FILES).step_by(FILES / CHANGED).collect();
    assert_eq!(changed.len(), CHANGED);

    let mut triad = Vec::new();
    let mut cli = Vec::new();
    // Run 0 is the warm-up; every run writes new contents (version `run + 1`).
    for run in 0..=RUNS {
        let files: BTreeMap<String, String> = changed
            .iter()
            .map(|&i| (paths[i].clone(), content(i, run + 1)))
            .collect();

        settle();
        let t = Instant::now();
        let tree = git_triad::git::build_tree(&repo, &base_tree, &files).expect("build_tree");
        git_triad::git::commit(&repo, tree, &[base.id()], "x").expect("commit");
        let a = t.elapsed();

        settle();
        let t = Instant::now();
        for (p, text) in &files {
            std::fs::write(clone.join(p), text).unwrap();
        }
        git(&clone, &["add", "-A"]);
        git(&clone, &["commit", "-q", "-m", "x"]);
        let b = t.elapsed();

        let cli_tree = git(&clone, &["rev-parse", "HEAD^{tree}"]);
        assert_eq!(
            cli_tree.trim(),
            tree.to_string(),
            "both sides commit the same tree"
        );
        println!(
            "{:<10} (a) {:>7.1} ms   (b) {:>7.1} ms",
            if run == 0 {
                "warm-up".to_string()
            } else {
                format!("run {run}/{RUNS}")
            },
            ms(a),
            ms(b)
        );
        if run > 0 {
            triad.push(a);
            cli.push(b);
        }
    }

    let (a, b) = (median(triad), median(cli));
    let ratio = a.as_secs_f64() / b.as_secs_f64();
    let pass = ratio <= 1.0;
    println!();
    println!("commit a change of {CHANGED} files in a {FILES}-file repository (median of {RUNS})");
    println!(
        "  {:<62}{:>9.1} ms",
        "(a) git triad: build_tree + commit, contents in memory",
        ms(a)
    );
    println!(
        "  {:<62}{:>9.1} ms",
        "(b) git CLI: write 500 files + git add -A + git commit",
        ms(b)
    );
    println!("  {:<62}{:>12.3}", "ratio (a) / (b)", ratio);
    println!(
        "  {:<62}{:>12}",
        "target: ratio <= 1.00",
        if pass { "PASS" } else { "FAIL" }
    );
    println!("  (git triad gets the stage's files in memory; git needs them on disk, so (b) includes writing them)");
    if !pass {
        std::process::exit(1);
    }
}

/// Flushes dirty data to disk so neither side pays for the other's (or the setup's) writeback.
fn settle() {
    let ok = Command::new("sync").status().is_ok_and(|s| s.success());
    assert!(ok, "sync failed");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// `src/d<NN>/s<N>/f<NNNN>.rs`: 20 directories of 4 subdirectories of 25 files.
fn path_of(i: usize) -> String {
    format!("src/d{:02}/s{}/f{i:04}.rs", i / 100, (i / 25) % 4)
}

/// About 2 KB of Rust; `version` changes one line in the middle.
fn content(i: usize, version: usize) -> String {
    let mut s = format!("//! File {i}.\n\n");
    for f in 0..22 {
        if f == 11 {
            s.push_str(&format!("pub const VERSION: usize = {version};\n\n"));
        }
        s.push_str(&format!(
            "pub fn f{i}_{f}(x: u64) -> u64 {{\n    let y = x.wrapping_mul({f}).rotate_left(3);\n    y ^ {i}\n}}\n\n"
        ));
    }
    s
}

/// Runs git with no user or system config; panics on failure; returns stdout.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .envs([
            ("GIT_CONFIG_GLOBAL", "/dev/null"),
            ("GIT_CONFIG_NOSYSTEM", "1"),
            ("GIT_AUTHOR_NAME", "Bench"),
            ("GIT_AUTHOR_EMAIL", "bench@example.com"),
            ("GIT_COMMITTER_NAME", "Bench"),
            ("GIT_COMMITTER_EMAIL", "bench@example.com"),
        ])
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
