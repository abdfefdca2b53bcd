//! Runs that survive a kill at any instant, one process per run, and model mistakes that
//! become feedback instead of the end of a run.
//!
//! Every test drives the real binary against the scripted model server and checks, besides
//! its own point, that the user's tree, index, HEAD and stash were never touched.

use std::collections::BTreeMap;
use std::path::Path;

use git_triad::testkit::fake_llm::{Reply, Rule};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

use crate::common::{sleepers, TestEnv};
use crate::pipeline::{
    answer, arbiter, architect_answer, happy_rules, implement_answer, issue, refactor_answer,
    review, run_json, stage, verify_answer, Scenario,
};

/// Asserts `git fsck --full` finds nothing wrong.
#[track_caller]
fn assert_fsck_clean(env: &TestEnv, repo: &Path) {
    let fsck = env.git(repo, &["fsck", "--full", "--no-progress"]);
    fsck.ok();
    for bad in ["error", "missing", "broken", "corrupt", "bad sha1"] {
        assert!(!fsck.all().contains(bad), "git fsck: {}", fsck.all());
    }
}

/// The `run.json` of run `id` as stored in its record.
fn recorded_state(s: &Scenario, id: &str) -> Value {
    let text = s.git(&["show", &format!("refs/triad/runs/{id}:run.json")]);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("run.json does not parse ({e}): {text}"))
}

// ---------------------------------------------------------------------------------------
// 1. Paths git cannot store are feedback to the model, and the reason is shown
// ---------------------------------------------------------------------------------------

/// A scenario whose repository also has a directory `pkg/`, and a task `wide` that may
/// change any file: so that only git's own rules refuse a path.
fn wide_scenario(implement: Vec<Reply>) -> Scenario {
    let mut rules = happy_rules();
    rules[1] = stage("implement", implement);
    let s = Scenario::new(rules);
    s.env.write_files(
        &s.repo,
        &[
            ("pkg/mod.py", "VALUE = 1\n"),
            (
                ".triad/tasks/wide.toml",
                "title = \"Add subtraction\"\ndescription = \"calc.py needs a sub function.\"\n",
            ),
        ],
    );
    s.env
        .commit_all(&s.repo, "a package and a task without a scope");
    s
}

fn creating(path: &str) -> String {
    answer(
        &format!("{path}\n<<<<<<< SEARCH\n=======\nx = 1\n>>>>>>> REPLACE\n"),
        "add a helper",
    )
}

#[test]
fn paths_git_cannot_store_go_back_to_the_model_and_the_run_goes_on() {
    for (path, reason) in [
        ("GIT~1/config", "is a name for .git on macOS (HFS+) or Windows (NTFS)"),
        (".git::$INDEX_ALLOCATION/config", "is a name for .git"),
        (".g\u{200c}it/config", "is a name for .git"),
        (".git. /hooks/pre-commit", "is a name for .git"),
        ("calc.py/helper.py", "cannot be stored: `calc.py` is a file in the repository, so it cannot also be a directory"),
        ("pkg", "cannot be stored: `pkg` is a directory in the repository"),
        ("pkg/", "cannot be stored: `pkg` is a directory in the repository"),
    ] {
        let s = wide_scenario(vec![
            Reply::text(creating(path)),
            Reply::text(implement_answer()),
        ]);
        let before = crate::common::user_state(&s.env, &s.repo);
        let r = s.env.triad(&s.repo, &["run", "--task", "wide", "--json"]);
        r.ok();
        let out = run_json(&r.stdout);
        assert_eq!(out["status"], "approved", "{path}: {out}");
        // The model was told precisely what was wrong, and tried again.
        let retry = s.requests_for("implement")[1].to_string();
        assert!(retry.contains(reason), "{path}: {retry}");
        // The refused attempt is recorded with its reason, which stderr and the log show.
        let id = out["run"].as_str().unwrap();
        let state = recorded_state(&s, id);
        let first = &state["stages"][1]["attempts"][0];
        assert_eq!(first["result"], "edits_failed", "{path}: {first}");
        let detail = first["detail"].as_str().unwrap();
        assert!(detail.contains(reason), "{path}: {detail}");
        assert!(r.stderr.contains(reason), "{path}: {}", r.stderr);
        let log = s.env.triad(&s.repo, &["log", id]);
        assert!(log.ok().stdout.contains(reason), "{path}: {}", log.stdout);
        assert!(!log.stdout.contains("None of your edits were applied"), "{}", log.stdout);
        assert_eq!(crate::common::user_state(&s.env, &s.repo), before, "{path}");
        assert_fsck_clean(&s.env, &s.repo);
    }
}

#[test]
fn a_model_that_keeps_writing_a_file_over_a_directory_uses_up_its_retries() {
    let s = wide_scenario(vec![Reply::text(creating("pkg"))]);
    let r = s.env.triad(&s.repo, &["run", "--task", "wide", "--json"]);
    r.expect_code(3);
    let out = run_json(&r.stdout);
    assert_eq!(out["status"], "halted", "{out}");
    assert_eq!(
        s.requests_for("implement").len(),
        3,
        "one try and two retries"
    );
    let message = out["message"].as_str().unwrap();
    assert!(
        message.contains("failed 3 attempts") && message.contains("`pkg` is a directory"),
        "{message}"
    );
}

#[test]
fn the_reasons_a_search_block_was_refused_reach_stderr_and_the_log() {
    let wrong = answer(
        "calc.py\n<<<<<<< SEARCH\n    return a * b\n=======\n    return a - b\n>>>>>>> REPLACE\n",
        "implement sub()",
    );
    let s = wide_scenario(vec![Reply::text(wrong), Reply::text(implement_answer())]);
    let r = s.env.triad(&s.repo, &["run", "--task", "wide", "--json"]);
    r.ok();
    let id = run_json(&r.stdout)["run"].as_str().unwrap().to_string();
    let reason = "1 of 1 edit block(s) refused, so none was applied: SEARCH does not match the current file (`calc.py`, line 2)";
    assert!(r.stderr.contains(reason), "{}", r.stderr);
    let log = s.env.triad(&s.repo, &["log", &id]);
    assert!(log.ok().stdout.contains(reason), "{}", log.stdout);
}

// ---------------------------------------------------------------------------------------
// 2. One process per run
// ---------------------------------------------------------------------------------------

/// Starts `git triad <args>` in the scenario's repository without waiting for it.
fn spawn_triad(s: &Scenario, args: &[&str]) -> std::process::Child {
    s.env
        .command(crate::common::bin(), &s.repo)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits (at most a minute, polling) until `done` holds.
fn wait_until(what: &str, done: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what} never happened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The worktrees git lists for the scenario's repository.
fn worktrees(s: &Scenario) -> Vec<String> {
    s.git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

/// The scratch copies the records of the scenario's repository name (the box's working
/// directories of commands running or left by a killed run).
fn scratch_copies(s: &Scenario) -> Vec<String> {
    let records = s.repo.join(".git/triad/sandboxes");
    std::fs::read_dir(records)
        .map(|d| {
            d.flatten()
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
                .filter_map(|v| v["dir"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the box on this machine has its own PID namespace, so a command's processes die
/// with it whatever kills git triad.
fn processes_die_with_the_box() -> bool {
    git_triad::sandbox::found().namespaces & libc::CLONE_NEWPID != 0
}

/// A run killed (SIGKILL, or SIGTERM) while its verify command runs leaves nothing behind
/// once resumed: no command running, no scratch copy on disk, no record, no worktree.
#[test]
fn a_run_killed_during_its_verify_command_leaves_nothing_after_resume() {
    for (signal, seconds) in [(libc::SIGKILL, "2117"), (libc::SIGTERM, "2118")] {
        let s = Scenario::new(happy_rules());
        // The first verify command sleeps; once the marker exists, every later one passes
        // at once. The box sees the marker's directory because the user's own config lets
        // it read there (it may look, not write); nothing else outside is in its root.
        let marked = s.env.root().join("marks");
        std::fs::create_dir_all(&marked).unwrap();
        let marker = marked.join("verified-once");
        s.env.write_user_config(&format!(
            "{}\n[verify]\ncommand = \"test -f {m} || sleep {seconds}\"\ntimeout_secs = 3000\n[sandbox]\nread = [\"{d}\"]\n",
            crate::common::fake_user_config(&s.server.base_url()),
            m = marker.display(),
            d = marked.display()
        ));
        let mut run = spawn_triad(&s, &["run", "--task", "add-sub"]);
        wait_until("the verify command's start", || {
            !sleepers(seconds).is_empty()
        });
        // Its record is rewritten as the command starts: read it once it is whole.
        wait_until("the scratch copy's record", || {
            scratch_copies(&s).len() == 1
        });
        let copies = scratch_copies(&s);
        assert!(copies[0].contains("git-triad-verify-"), "{copies:?}");
        assert_eq!(
            worktrees(&s).len(),
            1,
            "no linked worktree: {:?}",
            worktrees(&s)
        );
        // SAFETY: kill(2) on the child this test spawned.
        unsafe { libc::kill(run.id() as i32, signal) };
        run.wait().unwrap();
        std::fs::write(&marker, "").unwrap();
        if signal == libc::SIGTERM || processes_die_with_the_box() {
            // Killed by the run itself, or by the box's PID namespace dying with it.
            wait_until("the sleep's end with its run", || {
                sleepers(seconds).is_empty()
            });
        }

        let id = only_run(&s).expect("the run is recorded");
        let resumed = s.env.triad(&s.repo, &["resume", &id, "--json"]);
        resumed.ok();
        assert_eq!(run_json(&resumed.stdout)["status"], "approved");
        if signal == libc::SIGKILL {
            assert!(
                resumed.stderr.contains("removed the scratch copy"),
                "{}",
                resumed.stderr
            );
        }
        assert_eq!(
            resumed.stderr.contains("left running (process group"),
            signal == libc::SIGKILL && !processes_die_with_the_box(),
            "{}",
            resumed.stderr
        );
        wait_until("the sleep's end", || sleepers(seconds).is_empty());
        assert_eq!(worktrees(&s).len(), 1, "{:?}", worktrees(&s));
        assert!(!Path::new(&copies[0]).exists(), "{}", copies[0]);
        let records = s.repo.join(".git/triad/sandboxes");
        assert_eq!(
            std::fs::read_dir(&records).map_or(0, |d| d.count()),
            0,
            "records of live copies only"
        );
    }
}

/// `git triad local stop` and `init --uninstall` clean what a killed run left too.
#[test]
fn local_stop_and_uninstall_clean_what_a_killed_run_left() {
    for (command, seconds) in [
        (&["local", "stop"][..], "2119"),
        (&["init", "--uninstall"], "2120"),
    ] {
        let s = Scenario::new(happy_rules());
        s.env.write_user_config(&format!(
            "{}\n[verify]\ncommand = \"sleep {seconds}\"\ntimeout_secs = 3000\n",
            crate::common::fake_user_config(&s.server.base_url()),
        ));
        let mut run = spawn_triad(&s, &["run", "--task", "add-sub"]);
        wait_until("the verify command's start", || {
            !sleepers(seconds).is_empty()
        });
        wait_until("the scratch copy's record", || {
            scratch_copies(&s).len() == 1
        });
        run.kill().unwrap();
        run.wait().unwrap();
        let copies = scratch_copies(&s);
        assert!(Path::new(&copies[0]).exists());
        let cleaned = s.env.triad(&s.repo, command);
        cleaned.ok();
        assert!(
            cleaned
                .all()
                .to_lowercase()
                .contains("removed the scratch copy"),
            "{command:?}: {}",
            cleaned.all()
        );
        wait_until("the sleep's end", || sleepers(seconds).is_empty());
        assert!(!Path::new(&copies[0]).exists(), "{command:?}");
        assert!(scratch_copies(&s).is_empty(), "{command:?}");
    }
}

/// Waits (at most a minute, polling) until the server has received `n` requests matching
/// `rule` (any rule for `None`).
fn wait_for_requests(s: &Scenario, rule: Option<&str>, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let seen = s
            .server
            .requests()
            .iter()
            .filter(|r| rule.is_none() || r.rule.as_deref() == rule)
            .count();
        if seen >= n {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{n} request(s) for {rule:?} never came"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The id of the only run of the scenario's repository, `None` before one is recorded.
fn only_run(s: &Scenario) -> Option<String> {
    let r = s.env.triad(&s.repo, &["log", "--format", "json"]);
    let list: Value = serde_json::from_str(r.ok().stdout.trim()).unwrap();
    let runs = list.as_array().unwrap();
    assert!(runs.len() <= 1, "{list}");
    runs.first().map(|r| r["run"].as_str().unwrap().to_string())
}

#[test]
fn a_run_in_progress_cannot_be_resumed_twice_at_once() {
    let slow = || Reply::text(implement_answer()).delay_ms(120_000);
    let mut rules = happy_rules();
    rules[1] = stage(
        "implement",
        vec![slow(), slow(), Reply::text(implement_answer())],
    );
    let s = Scenario::new(rules);
    let before = crate::common::user_state(&s.env, &s.repo);

    // The run waits on its implement call; a resume of it now is refused, naming the pid.
    let mut run = spawn_triad(&s, &["run", "--task", "add-sub"]);
    wait_for_requests(&s, Some("implement"), 1);
    let id = only_run(&s).expect("the run is recorded before its first call");
    let record = s.git(&["rev-parse", &format!("refs/triad/runs/{id}")]);
    let busy = s.env.triad(&s.repo, &["resume", &id]);
    busy.expect_code(7);
    assert!(
        busy.stderr.contains(&format!(
            "error: run {id} is being worked on by another git triad process (pid {})",
            run.id()
        )),
        "{}",
        busy.stderr
    );
    assert!(busy
        .stderr
        .contains(&format!("hint: wait for it to end; `git triad log {id}`")));
    assert!(
        busy.stderr.contains(&format!("`kill {}`", run.id())),
        "{}",
        busy.stderr
    );
    assert_eq!(
        s.server.requests().len(),
        3,
        "architect, its review, implement: nothing more"
    );
    assert_eq!(
        s.git(&["rev-parse", &format!("refs/triad/runs/{id}")]),
        record
    );

    // Killed, it holds nothing: one resume takes the run, and a second one at the same time
    // is refused in turn.
    run.kill().unwrap();
    run.wait().unwrap();
    let mut first = spawn_triad(&s, &["resume", &id]);
    wait_for_requests(&s, Some("implement"), 2);
    let second = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    second.expect_code(7);
    assert!(
        second.stderr.contains(&format!("(pid {})", first.id())),
        "{}",
        second.stderr
    );
    first.kill().unwrap();
    first.wait().unwrap();

    let done = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    done.ok();
    assert_eq!(run_json(&done.stdout)["status"], "approved");
    assert_eq!(s.requests_for("implement").len(), 3);
    assert_eq!(
        s.requests_for("architect").len(),
        1,
        "recorded work is never redone"
    );
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
    assert_fsck_clean(&s.env, &s.repo);
}

// ---------------------------------------------------------------------------------------
// 3. The branch follows the record, and is checked before any model call
// ---------------------------------------------------------------------------------------

/// A reply that keeps the client waiting far longer than any test (it is killed first).
fn stalled(reply: Reply) -> Reply {
    reply.delay_ms(120_000)
}

/// The happy bookend run, whose first request to `rule` stalls; the run is killed once that
/// request has arrived. Returns the scenario, the run id, and the user's state before.
fn killed_at(rule: &str) -> (Scenario, String, BTreeMap<String, Vec<u8>>) {
    killed_at_with(rule, |_| {})
}

/// [`killed_at`], with `setup` applied to the scenario before the run starts.
fn killed_at_with(
    rule: &str,
    setup: impl Fn(&Scenario),
) -> (Scenario, String, BTreeMap<String, Vec<u8>>) {
    let mut rules = happy_rules();
    let i = rules
        .iter()
        .position(|r| r.name.as_deref() == Some(rule))
        .unwrap();
    let first = stalled(rules[i].responses[0].clone());
    rules[i].responses.insert(0, first);
    let s = Scenario::new(rules);
    setup(&s);
    let before = crate::common::user_state(&s.env, &s.repo);
    let mut child = spawn_triad(&s, &["run", "--task", "add-sub"]);
    wait_for_requests(&s, Some(rule), 1);
    child.kill().unwrap();
    child.wait().unwrap();
    let id = only_run(&s).expect("a run is recorded before its first call");
    (s, id, before)
}

/// The scratch branch of run `id`, and where its record says the run stands.
fn branch_and_tip(s: &Scenario, id: &str) -> (String, String) {
    let state = recorded_state(s, id);
    let branch = state["branch"].as_str().unwrap().to_string();
    let tip = state["stages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find_map(|st| st["commit"].as_str())
        .unwrap_or_else(|| state["base"].as_str().unwrap())
        .to_string();
    (branch, tip)
}

/// A commit on top of `parent` with `message`, made with git's plumbing (no ref moves).
fn commit_on(s: &Scenario, parent: &str, message: &str) -> String {
    let tree = s.git(&["rev-parse", &format!("{parent}^{{tree}}")]);
    s.git(&["commit-tree", tree.trim(), "-p", parent, "-m", message])
        .trim()
        .to_string()
}

/// Resumes run `id` to its end and checks it ended approved.
#[track_caller]
fn resume_approved(s: &Scenario, id: &str) -> crate::common::Run {
    let r = s.env.triad(&s.repo, &["resume", id, "--json"]);
    r.ok();
    assert_eq!(run_json(&r.stdout)["status"], "approved", "{}", r.stderr);
    r
}

#[test]
fn a_branch_left_behind_its_record_by_a_kill_is_moved_up_before_any_call() {
    let (s, id, before) = killed_at("implement");
    let (branch, tip) = branch_and_tip(&s, &id);
    // As a kill between recording the architect's acceptance and moving the branch leaves
    // it: the record has the stage, the branch is still at the base.
    let base = recorded_state(&s, &id)["base"]
        .as_str()
        .unwrap()
        .to_string();
    s.git(&["update-ref", &format!("refs/heads/{branch}"), &base]);
    let r = resume_approved(&s, &id);
    assert!(
        r.stderr.contains(&format!(
            "moved the branch {branch} from {} (a commit of this run) to the recorded tip {}",
            &base[..10],
            &tip[..10]
        )),
        "{}",
        r.stderr
    );
    assert_eq!(s.requests_for("architect").len(), 1);
    assert_eq!(s.requests_for("arbiter-architect").len(), 1);
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
    assert_fsck_clean(&s.env, &s.repo);
}

#[test]
fn a_branch_at_an_unrecorded_stage_commit_of_this_run_is_put_back_to_the_record() {
    let (s, id, before) = killed_at("implement");
    let (branch, tip) = branch_and_tip(&s, &id);
    // What an earlier build, which moved the branch before recording, left when killed.
    let own = commit_on(
        &s,
        &tip,
        &format!("triad(implement): unrecorded\n\nTriad-Run: {id}\nTriad-Stage: implement\nTriad-Attempt: 1"),
    );
    s.git(&["update-ref", &format!("refs/heads/{branch}"), &own]);
    let r = resume_approved(&s, &id);
    assert!(
        r.stderr
            .contains(&format!("from {} (a commit of this run)", &own[..10])),
        "{}",
        r.stderr
    );
    let log = s.git(&["rev-list", &branch]);
    assert!(
        !log.contains(&own),
        "the unrecorded commit is not part of the run"
    );
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
}

#[test]
fn a_branch_someone_committed_on_is_refused_before_any_model_call() {
    let (s, id, before) = killed_at("implement");
    let (branch, tip) = branch_and_tip(&s, &id);
    let record = s.git(&["rev-parse", &format!("refs/triad/runs/{id}")]);
    let mine = commit_on(&s, &tip, "my own work on the scratch branch");
    s.git(&["update-ref", &format!("refs/heads/{branch}"), &mine]);
    let calls = s.server.requests().len();

    let r = s.env.triad(&s.repo, &["resume", &id]);
    r.expect_code(1);
    assert!(
        r.stderr.contains(&format!(
            "error: the branch {branch} points at {}, which is not a commit of this run (its record says {}): someone committed on it or moved it, and git triad does not overwrite it",
            &mine[..10],
            &tip[..10]
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(&format!("git branch -f {branch} {}", &tip[..10])),
        "{}",
        r.stderr
    );
    assert_eq!(s.server.requests().len(), calls, "no model was called");
    assert_eq!(
        s.git(&["rev-parse", &branch]).trim(),
        mine,
        "the commit is not overwritten"
    );
    assert_eq!(
        s.git(&["rev-parse", &format!("refs/triad/runs/{id}")]),
        record
    );

    // The hint works: keep the work elsewhere, put the branch back, resume.
    s.git(&["branch", "mine", &mine]);
    s.git(&["branch", "-f", &branch, &tip]);
    resume_approved(&s, &id);
    assert_eq!(s.git(&["rev-parse", "mine"]).trim(), mine);
    assert_eq!(
        crate::common::user_state(&s.env, &s.repo)["HEAD-oid"],
        before["HEAD-oid"]
    );
}

#[test]
fn a_missing_branch_and_lock_files_left_by_a_kill_are_repaired() {
    let (s, id, before) = killed_at("arbiter-architect");
    let (branch, tip) = branch_and_tip(&s, &id);
    // A kill right after the first event leaves no branch; one inside a ref update leaves
    // its lock files.
    s.git(&["update-ref", "-d", &format!("refs/heads/{branch}")]);
    let git_dir = s.repo.join(".git");
    for lock in [
        format!("refs/heads/{branch}.lock"),
        format!("logs/refs/heads/{branch}.lock"),
        format!("refs/triad/runs/{id}.lock"),
    ] {
        let path = git_dir.join(lock);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }
    let r = resume_approved(&s, &id);
    assert!(
        r.stderr.contains(&format!(
            "created the branch {branch} at the recorded tip {}",
            &tip[..10]
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("removed the lock file a killed process left on"),
        "{}",
        r.stderr
    );
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
    assert_fsck_clean(&s.env, &s.repo);
}

#[test]
fn a_run_killed_during_a_review_is_reviewed_again_without_asking_the_stage_again() {
    let (s, id, before) = killed_at("arbiter-architect");
    let state = recorded_state(&s, &id);
    let waiting = &state["under_review"]["attempt"];
    assert!(waiting["commit"].is_string(), "{state}");
    resume_approved(&s, &id);
    assert_eq!(
        s.requests_for("architect").len(),
        1,
        "the stage's answer is not paid twice"
    );
    assert_eq!(s.requests_for("arbiter-architect").len(), 2);
    let state = recorded_state(&s, &id);
    assert!(state.get("under_review").is_none(), "{state}");
    let attempts = state["stages"][0]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 1, "{state}");
    assert_eq!(attempts[0]["commit"], waiting["commit"]);
    assert_eq!(attempts[0]["verdict"], "APPROVE");
    assert_eq!(crate::common::user_state(&s.env, &s.repo), before);
}

#[test]
fn a_review_resumed_after_a_kill_keeps_every_fact_it_had() {
    // R2 names a function no stage writes: a fact of the Verify stage's review.
    let task = crate::pipeline::TASK.replace(
        "[scope]",
        "[[requirements]]\nid = \"R2\"\ntext = \"mul(a, b) returns a * b\"\nfunctions = [\"mul\"]\n\n[scope]",
    );
    let (s, id, _) = killed_at_with("arbiter-verify", |s| {
        s.env
            .write_files(&s.repo, &[(".triad/tasks/add-sub.toml", task.as_str())]);
        s.env
            .commit_all(&s.repo, "a task with a requirement no stage meets");
    });
    // The facts were recorded before the arbiter was asked.
    let state = recorded_state(&s, &id);
    let held = state["under_review"]["findings"].to_string();
    assert!(held.contains("R2") && held.contains("mul"), "{state}");
    let resumed = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    let out = run_json(&resumed.stdout);
    assert_ne!(out["status"], "approved", "{out}");
    // The arbiter approved the resumed review; the facts it had before the kill floor it.
    let verify_commit = state["under_review"]["attempt"]["commit"].as_str().unwrap();
    let note = s.git(&["notes", "--ref=triad", "show", verify_commit]);
    let line: Value = serde_json::from_str(note.lines().next().unwrap()).unwrap();
    assert_eq!(line["model_verdict"], "APPROVE", "{line}");
    assert_ne!(line["verdict"], "APPROVE", "{line}");
    assert!(
        line["floor"]["reasons"].to_string().contains("mul"),
        "{line}"
    );
}

// ---------------------------------------------------------------------------------------
// 4. Killed at random instants, a run resumes to the same end
// ---------------------------------------------------------------------------------------

/// How long every scripted reply takes, so that kills land inside calls as well as between.
const REPLY_MS: u64 = 20;

/// A full-review run with one REJECT and its retry, in which every request's answer depends
/// only on what the request says (never on how many came before): a request repeated after a
/// kill gets the answer the first one got, so every kill must lead to the same end.
fn kill_rules() -> Vec<Rule> {
    let slow = |text: String| Reply::text(text).delay_ms(REPLY_MS);
    let judge = |stage_name: &str, verdict: Value| {
        let mut rule = arbiter(stage_name, vec![]);
        rule.responses = vec![Reply::json(verdict).delay_ms(REPLY_MS)];
        rule
    };
    let draft = answer(
        "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    # DRAFT\n    return a - b\n>>>>>>> REPLACE\n",
        "implement sub()",
    );
    // The retry carries the arbiter's feedback, which names the marker; the first try does not.
    let mut retry = stage("implement", vec![slow(implement_answer())]).contains("DRAFT-MARKER");
    retry.name = Some("implement-retry".into());
    let mut reject = judge(
        "implement",
        review("REJECT", json!([issue("DRAFT-MARKER must go", "# DRAFT")])),
    )
    .contains("# DRAFT");
    reject.name = Some("arbiter-implement-draft".into());
    vec![
        stage("architect", vec![slow(architect_answer())]),
        retry,
        stage("implement", vec![slow(draft)]),
        stage("refactor", vec![slow(refactor_answer())]),
        stage("verify", vec![slow(verify_answer())]),
        reject,
        judge("architect", review("APPROVE", json!([]))),
        judge("implement", review("APPROVE", json!([]))),
        judge("refactor", review("APPROVE", json!([]))),
        judge("verify", review("APPROVE", json!([]))),
    ]
}

/// What must be the same however a run was interrupted: its status and verdicts, each
/// stage's verdict and attempts, and the tree it built.
fn outcome(s: &Scenario, id: &str) -> Value {
    let log = s.env.triad(&s.repo, &["log", id, "--format", "json"]);
    let run = run_json(&log.ok().stdout);
    let stages: Vec<Value> = run["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| json!([st["stage"], st["verdict"], st["attempts"]]))
        .collect();
    let branch = run["branch"].as_str().unwrap();
    json!({
        "status": run["status"],
        "final_verdict": run["final_verdict"],
        "stages": stages,
        "tree": s.git(&["rev-parse", &format!("{branch}^{{tree}}")]).trim(),
    })
}

/// Requests the server received, by rule.
fn requests_by_rule(s: &Scenario) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for r in s.server.requests() {
        *counts.entry(r.rule.unwrap_or_default()).or_insert(0) += 1;
    }
    counts
}

#[test]
fn a_run_killed_at_twenty_random_points_resumes_to_the_same_end() {
    let started = std::time::Instant::now();
    let run_args = ["run", "--task", "add-sub", "--arbiter", "full"];
    let baseline = Scenario::new(kill_rules());
    let r = baseline.env.triad(&baseline.repo, &run_args);
    r.ok();
    let id = only_run(&baseline).unwrap();
    let expected = outcome(&baseline, &id);
    let expected_calls = requests_by_rule(&baseline);
    let total: usize = expected_calls.values().sum();
    assert_eq!(
        expected["stages"][1],
        json!(["implement", "APPROVE", 2]),
        "{expected}"
    );
    assert_eq!(total, 10, "{expected_calls:?}");

    // Kill points: after the k-th request reached the server (k = 0: right after the start),
    // plus a random pause of up to a few reply times. Which instant that is depends on the
    // machine's speed; what the test requires does not.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x7121AD);
    for round in 0..20 {
        let k = rng.random_range(0..=total);
        let pause = rng.random_range(0..=4 * REPLY_MS);
        let s = Scenario::new(kill_rules());
        s.env
            .write_files(&s.repo, &[("notes.txt", "mine, untracked\n")]);
        let before = crate::common::user_state(&s.env, &s.repo);
        let mut child = spawn_triad(&s, &run_args);
        wait_for_requests(&s, None, k);
        std::thread::sleep(std::time::Duration::from_millis(pause));
        let _ = child.kill(); // it may have finished already: a kill after the end
        child.wait().unwrap();
        let killed_after = s.server.requests().len();

        let id = match only_run(&s) {
            Some(id) => id,
            None => {
                // Killed before the run's first event: there is no run to resume, and no
                // model was called. The user starts it again.
                assert_eq!(killed_after, 0, "round {round}: a call before the record");
                eprintln!("round {round}: killed before the run was recorded; started again");
                s.env.triad(&s.repo, &run_args).ok();
                only_run(&s).unwrap()
            }
        };
        let mut resumes = 0;
        while recorded_state(&s, &id)["status"] == "running" {
            resumes += 1;
            assert!(resumes <= 2, "round {round}: resume did not finish the run");
            let r = s.env.triad(&s.repo, &["resume", &id]);
            assert_eq!(
                r.code, 0,
                "round {round} (k {k}, +{pause} ms): {}",
                r.stderr
            );
        }
        let context = format!("round {round} (k {k}, +{pause} ms, {killed_after} calls before the kill, {resumes} resume(s))");
        eprintln!("{context}");

        assert_eq!(outcome(&s, &id), expected, "{context}");
        let state = recorded_state(&s, &id);
        assert!(state.get("under_review").is_none(), "{context}: {state}");
        // All work done, and nothing paid twice but the one call the kill interrupted.
        let calls = requests_by_rule(&s);
        let made: usize = calls.values().sum();
        assert!(
            made <= total + 1,
            "{context}: {calls:?} vs {expected_calls:?}"
        );
        for (rule, n) in &expected_calls {
            assert!(calls.get(rule).unwrap_or(&0) >= n, "{context}: {calls:?}");
        }
        assert_eq!(
            crate::common::user_state(&s.env, &s.repo),
            before,
            "{context}"
        );
        assert_fsck_clean(&s.env, &s.repo);
    }
    eprintln!("20 kills in {:.1} s", started.elapsed().as_secs_f64());
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'),
    }
}

/// Issue #38: `git triad` killed through its `git` parent kept running, and `log` showed a
/// dead run as `running`. Killed through git (SIGKILL, which git cannot pass on, and SIGHUP),
/// git triad ends with it, and `log` shows the run as interrupted, with how it goes on.
#[test]
fn a_run_killed_through_its_git_parent_ends_and_log_shows_it_interrupted() {
    for signal in [libc::SIGKILL, libc::SIGHUP] {
        let mut rules = happy_rules();
        rules[0]
            .responses
            .insert(0, stalled(Reply::text(architect_answer())));
        let s = Scenario::new(rules);
        // `git triad run`, as a user types it: git runs git-triad as its child.
        let bin_dir = crate::common::bin().parent().unwrap().to_path_buf();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut git = s
            .env
            .command("git", &s.repo)
            .env("PATH", path)
            .args(["triad", "run", "--task", "add-sub"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        wait_for_requests(&s, Some("architect"), 1);
        let children =
            std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", git.id())).unwrap();
        let triad: u32 = children
            .trim()
            .parse()
            .expect("git has one child, git-triad");
        let id = only_run(&s).expect("the run is recorded before its first call");
        let listed = s.env.triad(&s.repo, &["log"]);
        assert!(
            listed.ok().stdout.contains(&format!("{id}  running ")),
            "{}",
            listed.stdout
        );
        // SAFETY: kill(2) on the git process this test spawned.
        unsafe { libc::kill(git.id() as i32, signal) };
        git.wait().unwrap();
        wait_until("git-triad ends with its git parent", || ended(triad));
        let listed = s.env.triad(&s.repo, &["log"]);
        assert!(
            listed.ok().stdout.contains(&format!("{id}  interrupted ")),
            "{}",
            listed.stdout
        );
        let shown = s.env.triad(&s.repo, &["log", &id]);
        assert!(
            shown.ok().stdout.contains(&format!(
                "status interrupted\ninterrupted at the architect stage: the process that ran it is gone; `git triad resume {id}` continues it\n"
            )),
            "{}",
            shown.stdout
        );
        resume_approved(&s, &id);
    }
}
