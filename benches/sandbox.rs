//! What the box costs a verify command: a Python test run of about 300 ms, in the box (every
//! layer this machine gives: Landlock, user/PID/network/mount namespaces, limits) against
//! the same command run bare (git triad's scrubbed environment only), in the same scratch
//! copy of a repository's tree. Runs alternate, [`RUNS`] each; the medians are compared.
//!
//! Also shown, not judged: the whole verify path as a run takes it (a scratch copy of the
//! commit with a repository of its own, then the box) against what it replaced (a linked
//! `git worktree add`, the bare command, `git worktree remove`).
//!
//! Target: box / bare ≤ [`MAX_RATIO`]. Run with `cargo bench --bench sandbox`; exits 1 when
//! the target is missed.
//!
//! As a plain user, where the bench runs as root: `cargo bench --bench sandbox -- --as-uid
//! 65534` re-runs this binary under `setpriv --reuid=65534 --regid=65534 --clear-groups`,
//! with a home of that user's and `PATH=/usr/local/bin:/usr/bin:/bin` (root's own toolchain
//! directories are not that user's to read). Users do not run git triad as root, and the
//! box is set up differently for them (its id maps written from a dumpable child, totals
//! by `RLIMIT_NPROC` in its own user namespace and watched memory instead of a control
//! group).
//!
//! Measured on the shared 2-core development machine, three runs each, box / bare: as root
//! 0.999, 1.011, 1.092 (median 1.01); as uid 65534 1.058, 1.061, 1.062 (median 1.06).
//! The test writes its file in the working copy it runs in, never in a directory shared
//! between users, so a run as root leaves nothing that stops a run as another uid.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use git_triad::git::export::{run_boxed, ExportKind, ExportedTree};
use git_triad::sandbox::{self, Job, Policy};
use support::ms;

const RUNS: usize = 9;
const MAX_RATIO: f64 = 1.10;
const COMMAND: &str = "python3 -m unittest -q test_work";

/// A test module whose one test computes for about 300 ms and writes and reads a file in
/// its working copy.
const TEST: &str = r#"import unittest


class Work(unittest.TestCase):
    def test_work(self):
        total = sum(i * i for i in range(2_500_000))
        path = 'work.txt'
        with open(path, 'w') as f:
            f.write(str(total) * 1000)
        with open(path) as f:
            self.assertTrue(f.read().startswith(str(total)))


if __name__ == '__main__':
    unittest.main()
"#;

fn main() {
    if let Some(uid) = as_uid() {
        std::process::exit(rerun_as(uid));
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("test_work.py"), TEST).unwrap();
    git(&dir, &["init", "-q"]);
    git(&dir, &["add", "."]);
    git(
        &dir,
        &[
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "commit",
            "-qm",
            "work",
        ],
    );
    let repo = git2::Repository::open(&dir).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let copy = ExportedTree::new(&repo, &tree, ExportKind::Files).unwrap();
    let root = copy.root();
    let policy = Policy::default();
    let job = Job::new(COMMAND, &root, Duration::from_secs(120));

    let first = sandbox::run(&job, &policy, &|_| {});
    assert_eq!(first.exit_code, Some(0), "{}", first.tail);
    println!(
        "box layers: {}",
        first
            .layers
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    );
    let mut boxed = Vec::new();
    let mut bare = Vec::new();
    let mut path_new = Vec::new();
    let mut path_old = Vec::new();
    for i in 1..=RUNS {
        let b = timed(|| {
            let out = sandbox::run(&job, &policy, &|_| {});
            assert_eq!(out.exit_code, Some(0), "{}", out.tail);
        });
        let n = timed(|| {
            let out = sandbox::run_bare(&job);
            assert_eq!(out.exit_code, Some(0), "{}", out.tail);
        });
        let new = timed(|| {
            let (_, out) = run_boxed(&repo, &tree, COMMAND, Duration::from_secs(120), 10, &policy);
            assert_eq!(out.exit_code, Some(0), "{}", out.tail);
        });
        let old = timed(|| worktree_bare(&dir));
        println!(
            "run {i}/{RUNS}: box {:>6.0} ms, bare {:>6.0} ms; verify path: copy+box {:>6.0} ms, worktree+bare {:>6.0} ms",
            ms(b),
            ms(n),
            ms(new),
            ms(old)
        );
        boxed.push(b);
        bare.push(n);
        path_new.push(new);
        path_old.push(old);
    }
    let (b, n, new, old) = (
        median(boxed),
        median(bare),
        median(path_new),
        median(path_old),
    );
    println!();
    println!("a verify command of about 300 ms (median of {RUNS} alternating runs)");
    println!("  {:<44}{:>7.0} ms", "in the box", ms(b));
    println!("  {:<44}{:>7.0} ms", "bare", ms(n));
    println!(
        "  {:<44}{:>7.0} ms",
        "verify path: scratch copy + git + box",
        ms(new)
    );
    println!(
        "  {:<44}{:>7.0} ms",
        "verify path before: git worktree + bare",
        ms(old)
    );
    println!(
        "  {:<44}{:>10.3}",
        "verify path, new / before (not judged)",
        new.as_secs_f64() / old.as_secs_f64()
    );
    support::verdict(
        "ratio box / bare",
        b.as_secs_f64() / n.as_secs_f64(),
        MAX_RATIO,
    );
}

/// The uid `--as-uid N` asks the bench to run as, when it runs as root (as anyone else it
/// already is a plain user, and says so).
fn as_uid() -> Option<u32> {
    let args: Vec<String> = std::env::args().collect();
    let at = args.iter().position(|a| a == "--as-uid")?;
    let uid = args
        .get(at + 1)
        .and_then(|u| u.parse().ok())
        .unwrap_or_else(|| panic!("--as-uid takes a numeric uid"));
    // SAFETY: geteuid(2) reads nothing of ours.
    let me = unsafe { libc::geteuid() };
    if me != 0 {
        println!("the bench runs as uid {me} already: --as-uid {uid} is not needed");
        return None;
    }
    Some(uid)
}

/// Runs this bench again as `uid` (its gid the same) with a home of its own; its exit code.
fn rerun_as(uid: u32) -> i32 {
    let home = tempfile::Builder::new()
        .prefix("triad-bench-home-")
        .tempdir()
        .unwrap();
    let owned = Command::new("chown")
        .arg(format!("{uid}:{uid}"))
        .arg(home.path())
        .status()
        .is_ok_and(|s| s.success());
    assert!(owned, "cannot give {} to uid {uid}", home.path().display());
    println!("running the bench as uid {uid} (setpriv)");
    let status = Command::new("setpriv")
        .args([
            &format!("--reuid={uid}"),
            &format!("--regid={uid}"),
            "--clear-groups",
            "--",
        ])
        .arg(std::env::current_exe().unwrap())
        .env_clear()
        .env("HOME", home.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C")
        .status()
        .unwrap_or_else(|e| panic!("cannot run setpriv to drop to uid {uid}: {e}"));
    status.code().unwrap_or(1)
}

/// What a verify command cost before the box: a linked worktree at HEAD, the command bare,
/// the worktree removed.
fn worktree_bare(repo: &Path) {
    let wt = repo.parent().unwrap().join("wt");
    git(
        repo,
        &[
            "worktree",
            "add",
            "--detach",
            "--quiet",
            wt.to_str().unwrap(),
            "HEAD",
        ],
    );
    let out = sandbox::run_bare(&Job::new(COMMAND, &wt, Duration::from_secs(120)));
    assert_eq!(out.exit_code, Some(0), "{}", out.tail);
    git(
        repo,
        &["worktree", "remove", "--force", wt.to_str().unwrap()],
    );
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .status()
        .unwrap()
        .success();
    assert!(ok, "git {args:?}");
}

fn timed(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}
