//! The pre-push gate on a big push, against git doing the bare minimum of the same work.
//!
//! Builds a repository of 10 000 commits, each with a verdict note whose lines carry the
//! commit's real patch id, as git triad writes them (`git fast-import`), then times
//! `git-triad hook pre-push` for a push of all of them as a new branch, against
//! `git rev-list <tip> --not --remotes=origin` plus `git notes --ref=triad list` (the listing
//! any gate needs before it reads a single note). The gate looks every pushed commit up by
//! its patch id (a cherry-pick of a halted commit is blocked whatever notes it carries), so
//! it needs the patch id of 10 000 commits and the patch ids of 10 000 notes: it works them
//! out once and keeps them by object id in the git dir (`gate-cache`). Fails when the gate
//! takes more than 1.0× the git baseline with that cache in place; the first push, which
//! fills it, is reported beside. Also reports what the hook adds to a push with nothing to
//! check.
//!
//! Run with `cargo bench --bench prepush` (builds the release binary it measures). Set
//! `PREPUSH_BENCH_DIR=<empty dir>` to build the repository there and keep it for profiling,
//! and `PREPUSH_TRIAD_BIN=<path>` to time another `git-triad` binary (an older build, to
//! compare).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const COMMITS: usize = 10_000;
const RUNS: usize = 9;
const MAX_RATIO: f64 = 1.0;
/// Timed runs of the first push (the cache removed before each).
const COLD_RUNS: usize = 3;

fn main() {
    let tmp = tempfile::Builder::new()
        .prefix("triad-bench-")
        .tempdir()
        .expect("tempdir");
    let root = std::env::var_os("PREPUSH_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let repo = root.join("repo");
    let bare = root.join("remote.git");
    let env = Env::new(&root);
    env.git(&root, &["init", "-q", "-b", "main", repo.to_str().unwrap()]);
    env.git(&root, &["init", "-q", "--bare", bare.to_str().unwrap()]);
    env.git(&repo, &["remote", "add", "origin", bare.to_str().unwrap()]);
    let t = Instant::now();
    build_history(&env, &repo);
    println!("built {COMMITS} noted commits in {:.1?}", t.elapsed());

    let tip = env.git(&repo, &["rev-parse", "main"]);
    let tip = tip.trim();
    let zero = "0".repeat(40);
    let url = bare.to_str().unwrap();
    let push_all = format!("refs/heads/main {tip} refs/heads/main {zero}\n");

    let cache = repo.join(".git/triad/gate-cache");
    let mut cold: Vec<Duration> = (0..COLD_RUNS)
        .map(|_| {
            let _ = std::fs::remove_file(&cache);
            env.hook(&repo, url, &push_all)
        })
        .collect();
    cold.sort();
    let cold = cold[COLD_RUNS / 2];
    let triad = median(|| env.hook(&repo, url, &push_all));
    let git = median(|| {
        let t = Instant::now();
        env.git(&repo, &["rev-list", tip, "--not", "--remotes=origin"]);
        env.git(&repo, &["notes", "--ref=triad", "list"]);
        t.elapsed()
    });
    let ratio = triad.as_secs_f64() / git.as_secs_f64();
    println!("push of {COMMITS} new commits:");
    println!(
        "  git-triad hook pre-push, first push:        {:>8.1} ms (fills the gate cache)",
        ms(cold)
    );
    println!(
        "  git-triad hook pre-push:                    {:>8.1} ms",
        ms(triad)
    );
    println!(
        "  git rev-list + git notes list:              {:>8.1} ms",
        ms(git)
    );
    println!("  ratio:                                      {ratio:>8.2} (limit {MAX_RATIO})");

    // Pushes with nothing to check: what the hook adds to them.
    let delete = format!("(delete) {zero} refs/heads/gone {tip}\n");
    let noop_delete = median(|| env.hook(&repo, url, &delete));
    env.git(&repo, &["push", "-q", "--no-verify", "origin", "main"]);
    let same = format!("refs/heads/main {tip} refs/heads/main {tip}\n");
    let noop_pushed = median(|| env.hook(&repo, url, &same));
    println!("pushes with nothing to check (time the hook adds):");
    println!(
        "  a delete only:                              {:>8.1} ms",
        ms(noop_delete)
    );
    println!(
        "  an already-pushed ref:                      {:>8.1} ms",
        ms(noop_pushed)
    );

    if ratio > MAX_RATIO {
        eprintln!("FAIL: the gate took {ratio:.2}x the git baseline (limit {MAX_RATIO})");
        std::process::exit(1);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The median of [`RUNS`] timings, after one warm-up run.
fn median(mut f: impl FnMut() -> Duration) -> Duration {
    f();
    let mut times: Vec<Duration> = (0..RUNS).map(|_| f()).collect();
    times.sort();
    times[RUNS / 2]
}

/// A hermetic environment for the commands: no user or system git config, no user triad config.
struct Env {
    home: PathBuf,
}

impl Env {
    fn new(root: &Path) -> Env {
        Env {
            home: root.to_path_buf(),
        }
    }

    fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(dir)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TRIAD_CONFIG", self.home.join("no-user-config.toml"))
            .env("GIT_AUTHOR_NAME", "Bench")
            .env("GIT_AUTHOR_EMAIL", "bench@example.com")
            .env("GIT_COMMITTER_NAME", "Bench")
            .env("GIT_COMMITTER_EMAIL", "bench@example.com");
        cmd
    }

    /// Runs git; panics on failure; returns stdout.
    fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self
            .command("git", dir)
            .args(args)
            .output()
            .expect("run git");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Times one run of the pre-push gate with `input` on stdin; it must let the push through.
    fn hook(&self, dir: &Path, url: &str, input: &str) -> Duration {
        let bin = std::env::var_os("PREPUSH_TRIAD_BIN")
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_git-triad").into());
        let t = Instant::now();
        let mut child = self
            .command(bin, dir)
            .args(["hook", "pre-push", "origin", url])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn git-triad");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let elapsed = t.elapsed();
        assert!(
            out.status.success(),
            "the gate refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        elapsed
    }
}

/// One verdict line like the pipeline writes, about 900 bytes, on `commit` whose patch id is
/// `pid`.
fn review(i: usize, verdict: &str, minute: usize, commit: &str, pid: &str) -> String {
    format!(
        concat!(
            r#"{{"alternatives":[],"arbiter_model":"model-b","attempt":1,"commit":"{c}","confidence":0.8,"#,
            r#""floor":null,"issues":[{{"anchored":true,"category":"correctness","description":"the loop "#,
            r#"bound can run past the end of the buffer when the input is empty","end_line":{e},"evidence":"","#,
            r#""path":"src/module_{m}.rs","quote":"for i in 0..=len {{","severity":"warning","start_line":{i},"#,
            r#""suggestion":"use 0..len","symbol":{{"end_line":{e},"kind":"function","name":"parse_{i}","#,
            r#""start_line":{i}}}}}],"kind":"review","model_verdict":"{v}","patch_id":"{p}","reasoning":"#,
            r#""The change does what the task asks; one bound is off by one.","reviewed_model":"model-a","#,
            r#""run":"run-{i}","stage":"implement","token_cost":2345,"ts":"2026-01-01T00:{min:02}:00.000Z","#,
            r#""v":1,"verdict":"{v}"}}"#
        ),
        i = i,
        e = i + 3,
        m = i % 50,
        v = verdict,
        min = minute,
        c = commit,
        p = pid,
    )
}

/// The note of commit `i` (`commit`, patch id `pid`): mostly APPROVE/FLAG; every tenth was
/// halted, then overridden by an override naming the HALT, so the gate must parse it and
/// find it no longer blocks. The override names it by the `"<ts> <kind> <verdict>"` key,
/// which every version of the gate reads, so older builds can be timed on the same
/// repository.
fn note(i: usize, commit: &str, pid: &str) -> String {
    if i.is_multiple_of(10) {
        let over = format!(
            r#"{{"answers":["2026-01-01T00:01:00.000Z review HALT"],"commit":"{commit}","kind":"override","overrides":"HALT","patch_id":"{pid}","reason":"checked","ts":"2026-01-01T00:59:00.000Z","v":1,"verdict":"APPROVE","who":"B <b@example.com>"}}"#
        );
        format!("{}\n{over}\n", review(i, "HALT", 1, commit, pid))
    } else {
        let v = if i.is_multiple_of(3) {
            "FLAG"
        } else {
            "APPROVE"
        };
        format!("{}\n", review(i, v, 1, commit, pid))
    }
}

fn data(s: &mut String, text: &str) {
    s.push_str(&format!("data {}\n{text}\n", text.len()));
}

/// Writes the commits with one `git fast-import` stream, then, with another, their notes
/// carrying each commit's id and stable patch id (as `git patch-id --stable` computes it).
fn build_history(env: &Env, repo: &Path) {
    let mut s = String::with_capacity(COMMITS * 200);
    for i in 1..=COMMITS {
        s.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter Bench <bench@example.com> {} +0000\n",
            1_700_000_000 + i
        ));
        data(&mut s, &format!("change {i}"));
        s.push_str(&format!("M 100644 inline src/module_{}.rs\n", i % 50));
        data(&mut s, &format!("// revision {i}\nfn parse_{i}() {{}}\n"));
    }
    fast_import(env, repo, &s);
    let commits = env.git(repo, &["rev-list", "--reverse", "main"]);
    let commits: Vec<&str> = commits.lines().collect();
    assert_eq!(commits.len(), COMMITS);
    let pids = patch_ids(env, repo, &commits);
    let mut s = String::with_capacity(COMMITS * 1200);
    s.push_str("commit refs/notes/triad\ncommitter Bench <bench@example.com> 1700000000 +0000\n");
    data(&mut s, "verdicts");
    for (i, commit) in commits.iter().enumerate() {
        let pid = &pids[*commit];
        s.push_str(&format!("N inline {commit}\n"));
        data(&mut s, &note(i + 1, commit, pid));
    }
    fast_import(env, repo, &s);
}

fn fast_import(env: &Env, repo: &Path, stream: &str) {
    let mut child = env
        .command("git", repo)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("git fast-import");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "fast-import failed");
}

/// commit → stable patch id, by `git diff-tree --stdin -p --root | git patch-id --stable`.
fn patch_ids(
    env: &Env,
    repo: &Path,
    commits: &[&str],
) -> std::collections::HashMap<String, String> {
    let input: String = commits.iter().map(|c| format!("{c}\n")).collect();
    let mut diff = env
        .command("git", repo)
        .args(["diff-tree", "--stdin", "-p", "--no-renames", "--root"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git diff-tree");
    let mut stdin = diff.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = env
        .command("git", repo)
        .args(["patch-id", "--stable"])
        .stdin(diff.stdout.take().unwrap())
        .output()
        .expect("git patch-id");
    writer.join().unwrap().unwrap();
    assert!(diff.wait().unwrap().success() && out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(pid, commit)| (commit.to_string(), pid.to_string()))
        .collect()
}
