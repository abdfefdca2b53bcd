//! Debate (`git triad run --workflow debate`, seed 001 §5.3) and the formatter (seed 001 §9)
//! over real HTTP and real git: position papers written together, rebuttals that see the
//! others' papers, final arguments, the tiebreaker's judgment naming the winning position,
//! the architect building that position, a degraded debate, too few debaters, `log`, a
//! kill in the middle of the debate; and the formatter's own commit before Verify.
//!
//! Debaters, in `--candidates` order and so positions A, B (, C): model-c, model-d
//! (, model-a). model-a holds every stage; model-b is the arbiter and, as nobody named one,
//! the judge.

use git_triad::testkit::fake_llm::{Reply, Rule};
use serde_json::{json, Value};

use crate::pipeline::{
    happy_rules, log_with, message_kinds, on, panel_scenario as scenario, run_json,
    run_record as record, Scenario,
};

fn paper(model: &str) -> Reply {
    Reply::json(json!({
        "approach": format!("approach of {model}"),
        "position": format!("design by {model}: a sub() next to add()"),
        "tradeoffs": [format!("{model} gains simplicity"), format!("{model} costs a test")],
    }))
}

fn rebuttal(against: &str) -> Reply {
    Reply::json(json!({
        "rebuttals": [{"position": against, "argument": format!("{against} ignores negative numbers")}],
        "concessions": [format!("{against} is short")],
    }))
}

fn final_argument(model: &str) -> Reply {
    Reply::json(json!({
        "approach": format!("final approach of {model}"),
        "position": format!("final design by {model}"),
        "tradeoffs": ["keeps one module"],
        "changed": ["handles negative numbers"],
    }))
}

/// The rules of debater `model` (position `own`), rebutting `other`.
fn debater(model: &str, other: &str) -> Vec<Rule> {
    vec![
        on(
            model,
            &format!("paper-{model}"),
            "Write your position paper",
            vec![paper(model)],
        ),
        on(
            model,
            &format!("rebuttal-{model}"),
            "Write your rebuttal",
            vec![rebuttal(other)],
        ),
        on(
            model,
            &format!("final-{model}"),
            "Write your final argument",
            vec![final_argument(model)],
        ),
    ]
}

fn judgment(winner: &str) -> Rule {
    on(
        "model-b",
        "judge",
        "which position should the architect build",
        vec![Reply::json(json!({
            "winner": winner,
            "justification": format!("position {winner} handles negative numbers"),
            "decision": "build sub(a, b) returning a - b, with a test",
        }))],
    )
}

/// The debate of model-c (A) and model-d (B), judged for `winner`, then the happy pipeline.
fn debate_rules(winner: &str) -> Vec<Rule> {
    let mut r = debater("model-c", "B");
    r.extend(debater("model-d", "A"));
    r.push(judgment(winner));
    r.extend(happy_rules());
    r
}

fn run(s: &Scenario, extra: &[&str]) -> crate::common::Run {
    let mut args = vec!["run", "--task", "add-sub", "--workflow", "debate", "--json"];
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

fn user_message(req: &Value) -> String {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn papers_rebuttals_finals_and_judgment_hand_the_winning_position_to_the_architect() {
    let s = scenario(debate_rules("B"));
    let r = run(&s, &["--candidates", "model-c,model-d"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["debate"]["winner"], "model-d", "{out}");
    assert_eq!(out["debate"]["position"], "B");
    assert_eq!(out["debate"]["degraded"], false);
    assert_eq!(out["debate"]["tiebreaker"], "model-b");

    // Papers are written alone: neither sees the other's.
    let c_paper = user_message(&s.requests_for("paper-model-c")[0]);
    assert!(!c_paper.contains("design by model-d"), "{c_paper}");
    assert!(c_paper.contains("you argue position A"), "{c_paper}");
    // Rebuttals see the other's paper; finals see what was said against them.
    let c_rebuttal = user_message(&s.requests_for("rebuttal-model-c")[0]);
    assert!(c_rebuttal.contains("design by model-d"), "{c_rebuttal}");
    assert!(c_rebuttal.contains("### position B\n"), "{c_rebuttal}");
    let c_final = user_message(&s.requests_for("final-model-c")[0]);
    assert!(
        c_final.contains("- B: A ignores negative numbers"),
        "{c_final}"
    );
    // The judge sees every position, rebuttal and final argument, by letter.
    let judged = user_message(&s.requests_for("judge")[0]);
    for needle in [
        "## POSITION A",
        "## POSITION B",
        "final design by model-c",
        "final design by model-d",
        "B ignores negative numbers",
        "Choose one of A, B",
    ] {
        assert!(judged.contains(needle), "missing {needle:?} in {judged}");
    }
    // Each phase was asked once per debater.
    for rule in ["paper", "rebuttal", "final"] {
        for m in ["model-c", "model-d"] {
            assert_eq!(
                s.requests_for(&format!("{rule}-{m}")).len(),
                1,
                "{rule}-{m}"
            );
        }
    }

    // The architect builds the winning position, told why it won.
    let arch = user_message(&s.requests_for("architect")[0]);
    for needle in [
        "THE DEBATE'S DECISION",
        "chose position B",
        "final design by model-d",
        "position B handles negative numbers",
        "build sub(a, b) returning a - b",
    ] {
        assert!(arch.contains(needle), "missing {needle:?} in {arch}");
    }
    assert!(!arch.contains("final design by model-c"), "{arch}");
    // Then the usual stages, each a commit.
    for st in out["stages"].as_array().unwrap() {
        assert!(st["commit"].is_string(), "{st}");
    }

    // The record keeps who argued what, with cost and latency per call.
    let rec = record(&s, &out);
    let d = &rec["debate"];
    assert_eq!(d["models"], json!(["model-c", "model-d"]));
    for (x, model) in d["debaters"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["model-c", "model-d"])
    {
        assert_eq!(x["model"], model);
        for phase in ["paper", "rebuttal", "final_argument"] {
            assert!(x[phase]["spend"]["latency_ms"].is_u64(), "{x}");
            assert!(x[phase]["spend"]["cost_usd"].as_f64().unwrap() > 0.0, "{x}");
        }
        assert_eq!(
            x["paper"]["tradeoffs"][0],
            format!("{model} gains simplicity")
        );
    }
    assert_eq!(
        d["debaters"][0]["rebuttal"]["against"][0]["model"],
        "model-d"
    );
    assert_eq!(d["judgment"]["winner"], "model-d");
    assert_eq!(d["judgment"]["model"], "model-b");
    // `log --format json` carries the judge's reasons, not only who won.
    let logged = s.env.triad(
        &s.repo,
        &["log", out["run"].as_str().unwrap(), "--format", "json"],
    );
    let logged: Value = serde_json::from_str(&logged.ok().stdout).unwrap();
    assert_eq!(
        logged["debate"]["justification"], "position B handles negative numbers",
        "{logged}"
    );
    assert!(logged["debate"]["decision"]
        .as_str()
        .unwrap()
        .contains("build sub(a, b)"));
    assert_eq!(d["phase_ms"].as_array().unwrap().len(), 3);
    assert_eq!(d["done"], true);
    let kinds = message_kinds(&rec);
    assert!(
        kinds.iter().filter(|k| **k == "proposal").count() >= 4,
        "{kinds:?}"
    );
    assert!(
        kinds.iter().any(|k| k == "objection") && kinds.iter().any(|k| k == "consensus"),
        "{kinds:?}"
    );

    // `log` shows the debate and the judgment, in text and markdown.
    let (_, md) = log_with(
        &s,
        &out,
        &[
            "debate:",
            "all 2 debaters argued; judge: model-b",
            "position A argued by model-c",
            "position paper [$",
            "approach of model-c — design by model-c",
            "trade-offs: model-c gains simplicity; model-c costs a test",
            "against B (model-d): B ignores negative numbers",
            "final argument [$",
            "changed: handles negative numbers",
            "judgment by model-b: position B (model-d) wins",
            "justification: position B handles negative numbers",
            "decision: build sub(a, b) returning a - b, with a test",
        ],
    );
    assert!(md.contains("### Debate"), "{md}");
    assert!(
        md.contains("- judgment by model-b: position B (model-d) wins"),
        "{md}"
    );
    assert!(md.contains("  - justification: position B handles"), "{md}");
}

#[test]
fn a_debater_that_is_down_degrades_the_debate_and_says_so() {
    let mut rules = debate_rules("A");
    rules.insert(
        0,
        on(
            "model-a",
            "down",
            "Write your position paper",
            vec![Reply::status(400)],
        ),
    );
    let s = scenario(rules);
    let r = run(&s, &["--candidates", "model-c,model-d,model-a"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["debate"]["degraded"], true, "{out}");
    assert_eq!(out["debate"]["standing"], json!(["model-c", "model-d"]));
    assert_eq!(out["debate"]["winner"], "model-c");
    // model-a left at the papers: it was never asked to rebut.
    assert_eq!(s.requests_for("down").len(), 1);
    let judged = user_message(&s.requests_for("judge")[0]);
    assert!(
        judged.contains("(its debater dropped out at the position paper: it cannot win)"),
        "{judged}"
    );
    assert!(judged.contains("Choose one of A, B "), "{judged}");
    let arch = user_message(&s.requests_for("architect")[0]);
    assert!(
        arch.contains("(2 of 3 asked took part to the end)"),
        "{arch}"
    );
    let id = out["run"].as_str().unwrap();
    let text = s.env.triad(&s.repo, &["log", id]).ok().stdout.clone();
    assert!(
        text.contains("DEGRADED: 2 of 3 debaters argued to the end"),
        "{text}"
    );
    assert!(text.contains("dropped out at the position paper"), "{text}");
    assert!(text.contains("wins among 2 of 3 debaters"), "{text}");
    let printed = &r.stderr;
    assert!(
        printed.contains("[debate] model-a could not write its position paper"),
        "{printed}"
    );
}

#[test]
fn fewer_than_two_debaters_stops_for_the_user_with_a_clear_reason() {
    // One distinct model: refused before any call.
    let s = scenario(vec![]);
    let r = run(&s, &["--candidates", "model-c"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("--workflow debate needs at least two different candidate models"),
        "{}",
        r.stderr
    );
    assert!(s.server.requests().is_empty());

    // Two asked, one down: the run waits on the user, nothing is built.
    let mut rules = debate_rules("A");
    rules.insert(
        0,
        on(
            "model-d",
            "down",
            "Write your position paper",
            vec![Reply::status(400)],
        ),
    );
    let s = scenario(rules);
    let r = run(&s, &["--candidates", "model-c,model-d"]);
    let out = run_json(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    assert_eq!(out["stop"]["reason"], "debate", "{out}");
    let msg = out["message"].as_str().unwrap();
    assert!(
        msg.contains("1 of 2 debaters can still argue, and a debate needs two")
            && msg.contains("model-d: dropped out at the position paper"),
        "{msg}"
    );
    assert!(s.requests_for("rebuttal-model-c").is_empty());
    assert!(s.requests_for("judge").is_empty());
    assert!(s.requests_for("architect").is_empty());
    assert!(
        out["hints"].to_string().contains("--candidates"),
        "{}",
        out["hints"]
    );
}

#[test]
fn a_run_killed_in_the_middle_of_the_debate_resumes_without_paying_twice() {
    let mut rules = debate_rules("B");
    let i = rules
        .iter()
        .position(|r| r.name.as_deref() == Some("rebuttal-model-d"))
        .unwrap();
    let stalled = rules[i].responses[0].clone().delay_ms(120_000);
    rules[i].responses.insert(0, stalled);
    let s = scenario(rules);
    let mut child = s
        .env
        .command(crate::common::bin(), &s.repo)
        .args([
            "run",
            "--task",
            "add-sub",
            "--workflow",
            "debate",
            "--candidates",
            "model-c,model-d",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while s.requests_for("rebuttal-model-d").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no rebuttal was asked"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let list: Value = serde_json::from_str(
        s.env
            .triad(&s.repo, &["log", "--format", "json"])
            .ok()
            .stdout
            .trim(),
    )
    .unwrap();
    let id = list[0]["run"].as_str().unwrap().to_string();
    let r = s.env.triad(&s.repo, &["resume", &id, "--json"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["debate"]["winner"], "model-d");
    // The papers were recorded before the kill: not asked again.
    assert_eq!(s.requests_for("paper-model-c").len(), 1);
    assert_eq!(s.requests_for("paper-model-d").len(), 1);
    // The interrupted phase was held again, once.
    assert_eq!(s.requests_for("rebuttal-model-d").len(), 2);
    assert_eq!(s.requests_for("final-model-d").len(), 1);
    assert_eq!(s.requests_for("judge").len(), 1);
}

// ---------------------------------------------------------------------------------------
// The formatter
// ---------------------------------------------------------------------------------------

/// The happy sequential run with `format.command` set to `command` in the user's config.
fn formatted(command: &str) -> (Scenario, Value) {
    let s = Scenario::new(happy_rules());
    let config = std::fs::read_to_string(s.env.user_config()).unwrap();
    s.env.write_user_config(&format!(
        "{config}\n[format]\ncommand = {}\ntimeout_secs = 30\n",
        toml_string(command)
    ));
    let r = s.run(&[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    (s, out)
}

fn toml_string(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

#[test]
fn a_formatter_that_changes_a_file_makes_its_own_commit_before_verify() {
    // It changes a file of the run and one the run did not touch (left out).
    let (s, out) = formatted("printf '# formatted\\n' >> calc.py && printf 'x\\n' >> .gitignore");
    let rec = record(&s, &out);
    let f = &rec["format"][0];
    let commit = f["commit"].as_str().expect("a formatter commit");
    let refactor = out["stages"][2]["commit"].as_str().unwrap();
    let verify = out["stages"][3]["commit"].as_str().unwrap();
    assert_eq!(f["input"], refactor);
    // Refactor → format → verify, on the branch.
    assert_eq!(
        s.git(&["rev-parse", &format!("{commit}^")]).trim(),
        refactor
    );
    assert_eq!(s.git(&["rev-parse", &format!("{verify}^")]).trim(), commit);
    let message = s.git(&["log", "-1", "--format=%B", commit]);
    assert!(message.starts_with("triad(format): `printf"), "{message}");
    assert!(message.contains("not a model's"), "{message}");
    assert!(message.contains(&format!("Triad-Run: {}", out["run"].as_str().unwrap())));
    let author = s.git(&["log", "-1", "--format=%an <%ae> / %cn", commit]);
    let stage_author = s.git(&["log", "-1", "--format=%an <%ae> / %cn", refactor]);
    assert_eq!(author, stage_author);
    let files = s.git(&["show", "--name-only", "--format=", commit]);
    assert_eq!(files.trim(), "calc.py", "{files}");
    assert!(s
        .git(&["show", &format!("{commit}:calc.py")])
        .ends_with("# formatted\n"));
    assert_eq!(f["left_out"], json!([".gitignore"]));
    // The verifier was told, and `log` shows it.
    let verify_req = s.requests_for("verify")[0].to_string();
    assert!(verify_req.contains("## Formatter (a fact)"), "{verify_req}");
    let text = s
        .env
        .triad(&s.repo, &["log", out["run"].as_str().unwrap()])
        .ok()
        .stdout
        .clone();
    assert!(text.contains("formatter:"), "{text}");
    assert!(text.contains("(exit 0,"), "{text}");
    assert!(text.contains("formatted calc.py"), "{text}");
    assert_eq!(out["format"]["commit"], commit);
}

#[test]
fn a_formatter_that_changes_nothing_or_fails_makes_no_commit() {
    let (s, out) = formatted("true");
    let rec = record(&s, &out);
    assert_eq!(rec["format"][0]["commit"], Value::Null);
    assert!(rec["format"][0]["detail"]
        .as_str()
        .unwrap()
        .contains("changed none of the run's files"));
    let refactor = out["stages"][2]["commit"].as_str().unwrap();
    let verify = out["stages"][3]["commit"].as_str().unwrap();
    assert_eq!(
        s.git(&["rev-parse", &format!("{verify}^")]).trim(),
        refactor
    );

    // A failing formatter is recorded; its half-done work is not committed.
    let (s, out) = formatted("printf 'half' >> calc.py; echo boom >&2; exit 3");
    let rec = record(&s, &out);
    let f = &rec["format"][0];
    assert_eq!(f["commit"], Value::Null);
    assert_eq!(f["outcome"]["exit_code"], 3);
    assert!(f["detail"].as_str().unwrap().contains("exited 3"), "{f}");
    let verify = out["stages"][3]["commit"].as_str().unwrap();
    assert!(!s
        .git(&["show", &format!("{verify}:calc.py")])
        .contains("half"));
    let text = s
        .env
        .triad(&s.repo, &["log", out["run"].as_str().unwrap()])
        .ok()
        .stdout
        .clone();
    assert!(text.contains("output: boom"), "{text}");
}

#[test]
fn a_committed_config_cannot_set_the_formatter() {
    let s = Scenario::new(happy_rules());
    s.env.write_files(
        &s.repo,
        &[(
            ".triad/config.toml",
            "[format]\ncommand = \"touch PWNED\"\n",
        )],
    );
    s.env.commit_all(&s.repo, "repo config");
    let r = s.run(&[]);
    r.expect_code(2);
    assert!(r.stderr.contains("format.command"), "{}", r.stderr);
    assert!(s.server.requests().is_empty());
    assert!(!s.repo.join("PWNED").exists());
}
