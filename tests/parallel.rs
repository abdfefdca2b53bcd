//! Parallel exploration (`git triad run --workflow parallel`, seed 001 §5.2) over real HTTP
//! and real git: the fan-out onto one branch per candidate, the cross-review and vote (never
//! for oneself), the majority and the tiebreaker, the synthesis on top of the winner, the
//! normal Verify after it, a degraded panel, and `git triad log`.
//!
//! Candidates, in `--candidates` order and so labelled A, B, C: model-a, model-c, model-d.
//! model-a is also the verifier; model-b is the arbiter and, as nobody named one, the
//! tiebreaker.

use git_triad::testkit::fake_llm::{Reply, Rule};
use serde_json::{json, Value};

use crate::pipeline::{
    answer, arbiter, issue, log_with, message_kinds, on, panel_scenario as scenario, review,
    run_json, run_record as record, stage, verify_answer, Scenario,
};

const CANDIDATES: &str = "model-a,model-c,model-d";

/// Candidate `tag`'s solution: calc.py gains a `sub` that says who wrote it.
fn solution(tag: &str) -> String {
    answer(
        &format!("calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"sub by {tag}\"\"\"\n    return a - b\n>>>>>>> REPLACE\n"),
        &format!("sub() by {tag}"),
    )
}

/// `model`'s rule for the candidate's request (`build-<model>`), answering `replies`.
fn candidate(model: &str, replies: Vec<Reply>) -> Rule {
    on(model, &format!("build-{model}"), "ROLE: candidate", replies)
}

/// A cross-review: ratings of the letters in `rated`, and a vote.
fn ballot(rated: &[&str], vote: &str) -> Reply {
    let ratings: Vec<Value> = rated
        .iter()
        .map(|l| json!({"candidate": l, "score": 7, "reason": format!("{l} is sound")}))
        .collect();
    Reply::json(json!({"ratings": ratings, "vote": vote, "reason": format!("{vote} is best")}))
}

/// Each candidate's solution and its ballots (A = model-a, B = model-c, C = model-d), the
/// verify stage and its review, and `more`.
fn rules(votes: [Vec<Reply>; 3], more: Vec<Rule>) -> Vec<Rule> {
    let mut r = vec![
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ];
    let [a, c, d] = votes;
    for (model, votes) in [("model-a", a), ("model-c", c), ("model-d", d)] {
        r.push(candidate(model, vec![Reply::text(solution(model))]));
        if !votes.is_empty() {
            r.push(on(
                model,
                &format!("review-{model}"),
                "ROLE: cross-reviewer",
                votes,
            ));
        }
    }
    r.extend(more);
    r
}

fn run(s: &Scenario, extra: &[&str]) -> crate::common::Run {
    let mut args = vec![
        "run",
        "--task",
        "add-sub",
        "--workflow",
        "parallel",
        "--json",
    ];
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

fn synthesis(model: &str, blocks: &str) -> Rule {
    on(
        model,
        "synthesis",
        "ROLE: synthesizer",
        vec![Reply::text(answer(
            blocks,
            "took the test from candidate C",
        ))],
    )
}

const TEST_BLOCK: &str = "tests/test_calc.py\n<<<<<<< SEARCH\n=======\nfrom calc import sub\n\n\ndef test_sub():\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n";

#[test]
fn candidates_build_alone_the_majority_wins_and_the_winner_synthesizes_before_verify() {
    let s = scenario(rules(
        [
            // model-a votes for itself first: refused, asked once more.
            vec![ballot(&["B", "C"], "A"), ballot(&["B", "C"], "B")],
            vec![ballot(&["A", "C"], "C")],
            vec![ballot(&["A", "B"], "B")],
        ],
        vec![synthesis("model-c", TEST_BLOCK)],
    ));
    let r = run(&s, &["--candidates", CANDIDATES]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["parallel"]["winner"], "model-c", "{out}");
    assert_eq!(out["parallel"]["won_by"], "majority");
    assert_eq!(out["parallel"]["degraded"], false);
    let rec = record(&s, &out);
    let p = &rec["parallel"];

    // Fan-out: one identical request each, none showing another's work.
    let asked: Vec<String> = ["model-a", "model-c", "model-d"]
        .iter()
        .map(|m| {
            let req = s.requests_for(&format!("build-{m}"));
            assert_eq!(req.len(), 1, "{m}");
            req[0]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["role"] == "user")
                .unwrap()["content"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(asked[0], asked[1]);
    assert_eq!(asked[1], asked[2]);
    assert!(!asked[0].contains("sub by"), "{}", asked[0]);

    // Each candidate's solution on its own branch, from the base, as it wrote it.
    let base = s.git(&["rev-parse", "main"]);
    for (c, model) in p["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .zip(["model-a", "model-c", "model-d"])
    {
        let branch = c["branch"].as_str().unwrap();
        assert_eq!(
            branch,
            format!("{}-{model}", out["branch"].as_str().unwrap())
        );
        let calc = s.git(&["show", &format!("{branch}:calc.py")]);
        assert!(
            calc.contains(&format!("sub by {model}")),
            "{branch}: {calc}"
        );
        assert_eq!(s.git(&["rev-parse", &format!("{branch}^")]), base);
        assert_eq!(
            s.git(&["rev-parse", branch]).trim(),
            c["commit"].as_str().unwrap()
        );
    }

    // No self-vote counted: model-a's own ballot was refused and it was asked again.
    let reviews = p["reviews"].as_array().unwrap();
    let of = |m: &str| reviews.iter().find(|r| r["reviewer"] == m).unwrap();
    assert_eq!(of("model-a")["vote"], "model-c");
    assert!(of("model-a")["refused"][0]
        .as_str()
        .unwrap()
        .contains("its own solution"));
    let again = s.requests_for("review-model-a");
    assert_eq!(again.len(), 2);
    assert!(again[1]
        .to_string()
        .contains("YOUR PREVIOUS BALLOT WAS REFUSED"));
    for r in reviews {
        assert_ne!(r["vote"], r["reviewer"], "{r}");
        assert!(r["ratings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|x| x["candidate"] != r["reviewer"]));
    }
    assert_eq!(
        p["winner"]["votes"],
        json!([["model-a", 0], ["model-c", 2], ["model-d", 1]])
    );

    // The synthesis is on top of the winner's commit; verify came after it.
    let winner_commit = p["candidates"][1]["commit"].as_str().unwrap();
    let synth = p["synthesis"]["commit"].as_str().unwrap();
    assert_eq!(
        s.git(&["rev-parse", &format!("{synth}^")]).trim(),
        winner_commit
    );
    let shown = s.requests_for("synthesis")[0].to_string();
    assert!(
        shown.contains("sub by model-d") && shown.contains("sub by model-a"),
        "{shown}"
    );
    let branch = out["branch"].as_str().unwrap();
    assert_eq!(s.git(&["rev-parse", &format!("{branch}^")]).trim(), synth);
    assert!(s
        .git(&["show", &format!("{branch}:tests/test_calc.py")])
        .contains("test_sub"));
    assert_eq!(s.requests_for("verify").len(), 1);
    // The losers stay reachable.
    for c in &p["candidates"].as_array().unwrap()[..] {
        s.git(&["cat-file", "-e", c["commit"].as_str().unwrap()]);
    }
    let kinds = message_kinds(&rec);
    assert_eq!(
        kinds.iter().filter(|k| **k == "vote").count(),
        3,
        "{kinds:?}"
    );
    assert!(kinds.iter().any(|k| k == "objection") && kinds.iter().any(|k| k == "implementation"));

    // `log` tells the story, in text and markdown.
    let (_, md) = log_with(
        &s,
        &out,
        &[
            "parallel exploration:",
            "all 3 candidates built a solution",
            "candidate B by model-c: branch",
            "review by model-a",
            "ballot refused: it voted for its own solution (candidate A)",
            "votes for B (model-c): B is best",
            "rates C (model-d) 7/10: C is sound",
            "winner: model-c (majority; votes: model-a 0, model-c 2, model-d 1)",
            "synthesis by model-c (commit",
        ],
    );
    assert!(md.contains("### Parallel exploration"), "{md}");
    assert!(md.contains("- winner: model-c (majority"), "{md}");
}

#[test]
fn a_tie_goes_to_the_tiebreaker_and_a_second_self_vote_is_discarded() {
    let s = scenario(rules(
        [
            vec![ballot(&["B", "C"], "B")],
            vec![ballot(&["A", "C"], "C")],
            vec![ballot(&["A", "B"], "C"), ballot(&["A", "B"], "C")],
        ],
        vec![
            on(
                "model-b",
                "tiebreaker",
                "choose the best solution among the tied ones",
                vec![Reply::json(
                    json!({"winner": "C", "justification": "C handles the edge cases"}),
                )],
            ),
            // The winner takes nothing: its own solution goes on as it is.
            on(
                "model-d",
                "synthesis",
                "ROLE: synthesizer",
                vec![Reply::text(answer("", "nothing to take"))],
            ),
        ],
    ));
    let r = run(&s, &["--candidates", CANDIDATES, "--arbiter", "off"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    let p = &record(&s, &out)["parallel"];
    let d = p["reviews"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["reviewer"] == "model-d")
        .unwrap();
    assert_eq!(d["vote"], Value::Null, "{d}");
    assert_eq!(d["refused"].as_array().unwrap().len(), 2);
    assert_eq!(s.requests_for("review-model-d").len(), 2);
    assert_eq!(p["winner"]["model"], "model-d", "{p}");
    assert_eq!(p["winner"]["by"], "tiebreaker");
    assert_eq!(p["winner"]["justification"], "C handles the edge cases");
    // The tiebreaker saw only the tied candidates (B and C), not A.
    let asked = s.requests_for("tiebreaker")[0].to_string();
    assert!(asked.contains("sub by model-c") && asked.contains("sub by model-d"));
    assert!(!asked.contains("sub by model-a"), "{asked}");
    // No synthesis commit: the run's tip is the winner's own commit.
    assert_eq!(p["synthesis"]["commit"], Value::Null);
    // (The verify stage's commit is on top.)
    let tip = s.git(&[
        "rev-parse",
        &format!("{}^", out["branch"].as_str().unwrap()),
    ]);
    assert_eq!(tip.trim(), p["candidates"][2]["commit"].as_str().unwrap());
    let text = s
        .env
        .triad(&s.repo, &["log", out["run"].as_str().unwrap()])
        .ok()
        .stdout
        .clone();
    assert!(text.contains("ballot discarded"), "{text}");
    assert!(
        text.contains("tiebreaker's justification: C handles the edge cases"),
        "{text}"
    );
    // `log --format json` carries the judges' reasons: the tiebreaker's and each vote's.
    let logged = s.env.triad(
        &s.repo,
        &["log", out["run"].as_str().unwrap(), "--format", "json"],
    );
    let p = &run_json(&logged.ok().stdout)["parallel"];
    assert_eq!(p["justification"], "C handles the edge cases", "{p}");
    assert!(p["reviews"][0]["reason"].is_string(), "{p}");
    assert!(p["reviews"][0]["ratings"][0]["reason"].is_string(), "{p}");
}

#[test]
fn a_candidate_that_is_down_degrades_the_panel_and_says_so() {
    let mut rs = rules(
        [vec![ballot(&["B"], "B")], vec![ballot(&["A"], "A")], vec![]],
        vec![
            on(
                "model-b",
                "tiebreaker",
                "choose the best solution among the tied ones",
                vec![Reply::json(
                    json!({"winner": "A", "justification": "simpler"}),
                )],
            ),
            synthesis("model-a", TEST_BLOCK),
        ],
    );
    // model-d is down.
    rs.retain(|r| r.name.as_deref() != Some("build-model-d"));
    rs.insert(
        0,
        on(
            "model-d",
            "down",
            "ROLE: candidate",
            vec![Reply::status(400)],
        ),
    );
    let s = scenario(rs);
    let r = run(&s, &["--candidates", CANDIDATES, "--arbiter", "off"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["parallel"]["degraded"], true, "{out}");
    assert_eq!(out["parallel"]["present"], json!(["model-a", "model-c"]));
    assert!(s.requests_for("review-model-d").is_empty());
    let summary = s
        .env
        .triad(&s.repo, &["log", out["run"].as_str().unwrap()])
        .ok()
        .stdout
        .clone();
    assert!(
        summary.contains("DEGRADED: 2 of 3 candidates built a solution"),
        "{summary}"
    );
    assert!(
        summary.contains("candidate C by model-d: absent"),
        "{summary}"
    );
}

#[test]
fn an_implementer_role_of_one_model_is_joined_by_the_profile_s_other_models() {
    // The implementer role lists model-a only; the arbiter role's model-b joins it, so a
    // parallel exploration has two candidates without --candidates.
    let s = scenario(vec![
        on(
            "model-a",
            "build-a",
            "ROLE: candidate",
            vec![Reply::text(solution("model-a"))],
        ),
        on(
            "model-b",
            "build-b",
            "ROLE: candidate",
            vec![Reply::text(solution("model-b"))],
        ),
    ]);
    let _ = run(&s, &[]);
    assert_eq!(s.requests_for("build-a").len(), 1);
    assert_eq!(
        s.requests_for("build-b").len(),
        1,
        "model-b built a candidate"
    );
}

#[test]
fn fewer_than_two_candidates_is_a_clear_stop() {
    // One distinct model: refused before any call, with a hint.
    let s = scenario(vec![]);
    let r = run(&s, &["--candidates", "model-a"]);
    r.expect_code(2);
    assert!(
        r.stderr.contains("at least two different candidate models"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--candidates"), "{}", r.stderr);
    assert!(s.server.requests().is_empty());

    // Two asked, one down: the one working solution goes on, degraded, at most FLAG, the
    // missing candidate and why on the record; not a vote, and not a halt.
    let s = scenario(
        vec![
            vec![on(
                "model-a",
                "build-a",
                "ROLE: candidate",
                vec![Reply::text(solution("model-a"))],
            )],
            down_then_verified("model-c"),
        ]
        .into_iter()
        .flatten()
        .collect(),
    );
    let r = run(&s, &["--candidates", "model-a,model-c"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "flagged", "{out}\n{}", r.stderr);
    assert_eq!(out["final_verdict"], "FLAG", "{out}");
    let p = &out["parallel"];
    assert_eq!(p["degraded"], true, "{p}");
    assert_eq!(p["won_by"], "alone", "{p}");
    assert_eq!(p["winner"], "model-a", "{p}");
    assert_eq!(p["absent"][0]["model"], "model-c", "{p}");
    assert!(
        p["absent"][0]["why"]
            .as_str()
            .unwrap()
            .starts_with("could not answer"),
        "{p}"
    );
    // Nobody voted: there was nothing to choose between.
    assert!(s.server.requests().iter().all(|q| !q
        .json
        .as_ref()
        .is_some_and(|j| j.to_string().contains("ROLE: cross-reviewer"))));
    // The solution is the run's result.
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("sub by model-a"));
    let text = s.env.triad(&s.repo, &["log", out["run"].as_str().unwrap()]);
    assert!(
        text.ok()
            .stdout
            .contains("DEGRADED: 1 of 2 candidates built a solution"),
        "{}",
        text.stdout
    );
}

/// Candidate `tag`'s solution that does not parse: `def sub(a, b)` has lost its colon.
fn broken(tag: &str) -> String {
    solution(tag).replace("def sub(a, b):", "def sub(a, b)")
}

/// Two candidates can each vote only for the other, and the arbiter role's model is one of
/// them, so no model can break the tie: the solutions' own checks choose, then the ratings
/// each got (here both parse; model-b rates A higher than model-a rates B), never a forced
/// tie; model-b's unusable first answer was asked again, as a stage's would be.
#[test]
fn two_candidates_without_a_tiebreaker_are_chosen_by_evidence_after_a_retry() {
    let rated = |letter: &str, score: u8| {
        Reply::json(
            json!({"ratings": [{"candidate": letter, "score": score, "reason": "read it"}],
            "vote": letter, "reason": "the other one"}),
        )
    };
    let s = scenario(vec![
        candidate("model-a", vec![Reply::text(solution("model-a"))]),
        candidate(
            "model-b",
            vec![
                Reply::text("Here is sub(), as you asked."),
                Reply::text(solution("model-b")),
            ],
        ),
        on(
            "model-a",
            "review-model-a",
            "ROLE: cross-reviewer",
            vec![rated("B", 5)],
        ),
        on(
            "model-b",
            "review-model-b",
            "ROLE: cross-reviewer",
            vec![rated("A", 9)],
        ),
        synthesis("model-a", TEST_BLOCK),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ]);
    let r = run(&s, &["--candidates", "model-a,model-b"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}\n{}", r.stderr);
    assert_eq!(out["parallel"]["winner"], "model-a", "{out}");
    assert_eq!(out["parallel"]["won_by"], "evidence", "{out}");
    let retried = s.requests_for("build-model-b");
    assert_eq!(retried.len(), 2, "the unusable answer is asked again");
    assert!(
        retried[1]
            .to_string()
            .contains("YOUR PREVIOUS ANSWER COULD NOT BE USED"),
        "{}",
        retried[1]
    );
    assert_eq!(s.requests_for("build-model-a").len(), 1);
    assert!(
        r.stderr.contains("attempt 1 of 3 could not be used"),
        "{}",
        r.stderr
    );
    let rec = record(&s, &out);
    let why = rec["parallel"]["winner"]["justification"].as_str().unwrap();
    assert!(
        why.contains("the others rated it higher")
            && why.contains(
                "candidate A (model-a): 0 critical and 0 warning finding(s), rated 9.0/10"
            ),
        "{why}"
    );
    log_with(&s, &out, &["winner: model-a (evidence"]);
}

/// Of two candidates, one solution does not parse: the other wins because the facts leave
/// only it, whatever the votes, and the record says so rather than calling it a majority.
#[test]
fn the_only_solution_the_facts_leave_wins_by_evidence_not_by_a_vote() {
    let voted = |letter: &str| {
        Reply::json(
            json!({"ratings": [{"candidate": letter, "score": 7, "reason": "read it"}],
            "vote": letter, "reason": "the other one"}),
        )
    };
    let s = scenario(vec![
        candidate("model-a", vec![Reply::text(solution("model-a"))]),
        candidate("model-b", vec![Reply::text(broken("model-b"))]),
        on(
            "model-a",
            "review-model-a",
            "ROLE: cross-reviewer",
            vec![voted("B")],
        ),
        on(
            "model-b",
            "review-model-b",
            "ROLE: cross-reviewer",
            vec![voted("A")],
        ),
        synthesis("model-a", ""),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ]);
    let r = run(&s, &["--candidates", "model-a,model-b"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["parallel"]["winner"], "model-a", "{out}\n{}", r.stderr);
    assert_eq!(out["parallel"]["won_by"], "evidence", "{out}");
    let rec = record(&s, &out);
    let why = rec["parallel"]["winner"]["justification"].as_str().unwrap();
    assert!(
        why.starts_with("the only solution the facts do not reject (model-b: syntax_error"),
        "{why}"
    );
}

/// The tournament's judge (model-b) reviewing candidate `model`'s solution.
fn judge(model: &str, answer: Value) -> Rule {
    on(
        "model-b",
        &format!("judge-{model}"),
        &format!("sub by {model}"),
        vec![Reply::json(answer)],
    )
}

/// The verify stage and its review, then each candidate's solution (`broken` for model-a
/// when asked), then `judges`.
fn tournament_rules(broken_a: bool, judges: Vec<Rule>) -> Vec<Rule> {
    let mut r = vec![
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ];
    for model in ["model-a", "model-c", "model-d"] {
        let built = if broken_a && model == "model-a" {
            broken(model)
        } else {
            solution(model)
        };
        r.push(candidate(model, vec![Reply::text(built)]));
    }
    r.extend(judges);
    r
}

#[test]
fn a_tournament_reviews_every_candidate_by_the_evidence_and_the_best_review_goes_on() {
    let mut unsure = review("APPROVE", json!([]));
    unsure["confidence"] = json!(0.6);
    let s = scenario(tournament_rules(
        true,
        vec![
            // The judge approves the broken solution; the syntax evidence overrules it.
            judge("model-a", review("APPROVE", json!([]))),
            judge("model-c", unsure),
            judge("model-d", review("APPROVE", json!([]))),
        ],
    ));
    let r = s.run(&["--workflow", "tournament", "--candidates", CANDIDATES]);
    let out = run_json(&r.ok().stdout);
    let p = &record(&s, &out)["parallel"];
    assert_eq!(p["judges"], json!(["model-b"]), "{p:#}");
    let verdicts: Vec<(&str, &str)> = p["judgments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["candidate"].as_str().unwrap(),
                j["verdict"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("model-a", "REJECT"),
            ("model-c", "APPROVE"),
            ("model-d", "APPROVE")
        ],
        "{p:#}"
    );
    // Two APPROVEs: the more confident review wins.
    assert_eq!(p["winner"]["model"], "model-d", "{p:#}");
    assert_eq!(p["winner"]["by"], "arbiter");
    assert!(
        p["winner"]["justification"]
            .as_str()
            .unwrap()
            .contains("model-a: REJECT"),
        "{p:#}"
    );
    // Nobody voted; the winner went on to Verify as it was built; every loser keeps its
    // branch.
    assert!(s
        .server
        .requests()
        .iter()
        .all(|q| !q.body.contains("ROLE: cross-reviewer")));
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("sub by model-d"));
    for loser in ["model-a", "model-c"] {
        let calc = s.git(&["show", &format!("{branch}-{loser}:calc.py")]);
        assert!(calc.contains(&format!("sub by {loser}")), "{calc}");
    }
    assert_eq!(out["stages"][1]["model"], "model-d", "{out:#}");
    log_with(&s, &out, &["tournament: candidate model-d won (arbiter)"]);
}

#[test]
fn a_tournament_with_no_acceptable_candidate_stops_and_keeps_every_branch() {
    let wrong = || review("REJECT", json!([issue("sub is wrong", "def sub(a, b):")]));
    let s = scenario(tournament_rules(
        false,
        vec![
            judge("model-a", wrong()),
            judge("model-c", wrong()),
            judge(
                "model-d",
                review("HALT", json!([issue("wrong task", "def sub(a, b):")])),
            ),
        ],
    ));
    let r = s.run(&["--workflow", "tournament", "--candidates", CANDIDATES]);
    let out = run_json(&r.expect_code(3).stdout);
    assert_eq!(out["status"], "halted", "{out:#}");
    assert!(
        r.stdout.contains("accepted no candidate") && r.stdout.contains("model-d: HALT"),
        "{}",
        r.stdout
    );
    assert!(s.requests_for("verify").is_empty(), "nothing went on");
    let branch = out["branch"].as_str().unwrap();
    for model in ["model-a", "model-c", "model-d"] {
        s.git(&["rev-parse", "--verify", &format!("{branch}-{model}")]);
    }
}

#[test]
fn a_tournament_needs_a_judge_that_is_none_of_the_candidates() {
    let s = scenario(tournament_rules(false, vec![]));
    let r = s.run(&[
        "--workflow",
        "tournament",
        "--candidates",
        "model-a,model-b",
    ]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("no arbiter model is outside the tournament's candidates"),
        "{}",
        r.stderr
    );
    assert!(s.server.requests().is_empty());
}

#[test]
fn tournament_routing_sets_the_best_measured_implementers_against_each_other() {
    use git_triad::config::Role;
    use git_triad::routing::TASK_SET_VERSION;
    let mut rules = vec![
        stage("verify", vec![Reply::text(verify_answer())]),
        // model-b judges every candidate (and the verify stage): it approves them all alike.
        on(
            "model-b",
            "judge",
            "STAGE REVIEWED",
            vec![Reply::json(review("APPROVE", json!([])))],
        ),
    ];
    for model in ["model-a", "model-c", "model-d"] {
        rules.push(candidate(model, vec![Reply::text(solution(model))]));
    }
    let s = scenario(rules);
    crate::routing::measured(
        &s,
        &[
            ("model-a", Role::Implementer, 0.5, 0.001, TASK_SET_VERSION),
            ("model-c", Role::Implementer, 0.9, 0.002, TASK_SET_VERSION),
            ("model-d", Role::Implementer, 0.7, 0.002, TASK_SET_VERSION),
        ],
    );
    // The candidates come from the implementer role's own models.
    let r = s.run(&[
        "-c",
        r#"roles.implementer.models=["model-a", "model-c", "model-d"]"#,
        "--routing",
        "tournament",
    ]);
    let out = run_json(&r.ok().stdout);
    let rec = record(&s, &out);
    let p = &rec["parallel"];
    assert_eq!(
        p["models"],
        json!(["model-c", "model-d", "model-a"]),
        "the best measured first: {p:#}"
    );
    assert_eq!(p["judges"], json!(["model-b"]));
    assert_eq!(p["judgments"].as_array().unwrap().len(), 3);
    // Equal reviews: the best measured candidate, listed first, wins.
    assert_eq!(p["winner"]["model"], "model-c", "{p:#}");
    assert_eq!(rec["routing"]["mode"], "tournament");
    assert!(
        r.stderr
            .contains("implementer -> model-c: tournament: model-c has the best score"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_candidate_whose_code_does_not_parse_cannot_win_and_the_reviewers_are_told_why() {
    // model-c's solution does not parse; two of three vote for it anyway.
    let broken = answer(
        "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b:\n    return a - b\n>>>>>>> REPLACE\n",
        "sub() by model-c",
    );
    let mut r = rules(
        [
            vec![ballot(&["B", "C"], "B")],
            vec![ballot(&["A", "C"], "A")],
            vec![ballot(&["A", "B"], "B")],
        ],
        vec![synthesis("model-a", "")],
    );
    let build_c = r
        .iter()
        .position(|rule| rule.name.as_deref() == Some("build-model-c"))
        .unwrap();
    r[build_c] = candidate("model-c", vec![Reply::text(broken)]);
    let s = scenario(r);
    let run = run(&s, &["--candidates", CANDIDATES]);
    let out = run_json(&run.ok().stdout);
    assert_eq!(
        out["parallel"]["winner"], "model-a",
        "{out}\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("model-c cannot win: syntax_error at calc.py:"),
        "{}",
        run.stderr
    );
    // The cross-reviewers saw the tools' findings beside the diff.
    let shown = s.requests_for("review-model-a")[0].to_string();
    assert!(
        shown.contains("deterministic findings (established by tools)"),
        "{shown}"
    );
    assert!(shown.contains("syntax_error"), "{shown}");
}

#[test]
fn a_whole_file_candidate_on_a_grammar_server_is_held_to_the_answer_format() {
    // Held to nothing, the local models answered a candidate's request with the metadata
    // alone, three times each, and no parallel run on them ever had two solutions: a
    // candidate is given the grammar a building stage is given, and a diff model none.
    let whole = "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n```\n\n```json\n{\"summary\": \"sub\", \"outcome\": \"APPROVE\"}\n```\n";
    let s = scenario(vec![
        candidate("model-a", vec![Reply::text(solution("model-a"))]),
        candidate("model-w", vec![Reply::text(whole.to_string())]),
    ]);
    s.env.write_user_config(&format!(
        "{}{}\n[models.model-w]\nprovider = \"fake-openai\"\ncontext_window = 32000\nmax_output_tokens = 4000\nprice_in = 0.0\nprice_out = 0.0\ncapabilities = [\"gbnf\"]\nedit_format = \"whole\"\n",
        crate::common::fake_user_config(&s.server.base_url()),
        crate::pipeline::MODEL_D
    ));
    let r = run(&s, &["--candidates", "model-a,model-w"]);
    let w = s.requests_for("build-model-w");
    assert!(!w.is_empty(), "model-w was never asked: {}", r.stderr);
    let grammar = w[0]["grammar"].as_str().unwrap_or_default();
    assert!(
        grammar.contains("\"calc.py\"") && grammar.contains("meta ::="),
        "the whole-file candidate's request has no grammar of its files: {}",
        w[0]
    );
    let system = w[0]["messages"][0]["content"].as_str().unwrap_or_default();
    assert!(system.contains("path/to/file.py\n```python"), "{system}");
    let a = s.requests_for("build-model-a");
    assert!(
        !a.is_empty() && a[0].get("grammar").is_none(),
        "a diff model is held to no grammar: {}",
        a[0]
    );
}

#[test]
fn what_a_workflow_cannot_honour_is_refused_before_any_call_never_dropped() {
    let s = Scenario::new(vec![]);
    let triad = |args: &[&str]| {
        let mut all = vec!["run", "--task", "add-sub"];
        all.extend_from_slice(args);
        s.env.triad(&s.repo, &all)
    };
    // The consensus sends the refactor stage back; a workflow that chooses its solution by
    // vote or by review has none to send back.
    for workflow in ["parallel", "tournament"] {
        let r = triad(&[
            "--workflow",
            workflow,
            "--candidates",
            "model-a,model-c",
            "--consensus",
        ]);
        r.expect_code(2);
        assert!(
            r.stderr.contains(&format!(
                "--consensus cannot be used with --workflow {workflow}"
            )) && r.stderr.contains("hint: drop --consensus"),
            "{workflow}: {}",
            r.stderr
        );
    }
    // Candidates name a panel; a sequential run has none.
    let r = triad(&["--candidates", "model-a,model-c"]);
    r.expect_code(2);
    assert!(
        r.stderr
            .contains("--candidates names the models of a panel (--workflow parallel, debate or tournament); --workflow sequential has none")
            && r.stderr.contains("hint: add --workflow parallel, debate or tournament"),
        "{}",
        r.stderr
    );
    assert!(s.server.requests().is_empty(), "no model was asked");
}

#[test]
fn a_candidate_writing_whole_files_is_capped_to_the_task_and_a_cut_answer_is_asked_again_shorter() {
    // model-w writes whole files; its first answer runs to the output limit without a
    // complete file, its second is the solution. model-a is down, so model-w goes on alone.
    let cut = Reply {
        body: Some(json!({
            "id": "chatcmpl-cut", "object": "chat.completion", "created": 1_700_000_000u64,
            "model": "model-w",
            "choices": [{"index": 0, "finish_reason": "length", "logprobs": null,
                "message": {"role": "assistant", "refusal": null,
                    "content": "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    # again and again"}}],
            "usage": {"prompt_tokens": 900, "completion_tokens": 1000, "total_tokens": 1900},
        })),
        ..Reply::text("")
    };
    let whole = "calc.py\n```python\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"sub by model-w\"\"\"\n    return a - b\n```\n\n```json\n{\"summary\": \"sub\", \"outcome\": \"APPROVE\"}\n```\n";
    let mut rules = vec![candidate(
        "model-w",
        vec![cut, Reply::text(whole.to_string())],
    )];
    rules.extend(down_then_verified("model-a"));
    let s = scenario(rules);
    s.env.write_user_config(&format!(
        "{}\n[models.model-w]\nprovider = \"fake-openai\"\ncontext_window = 32000\nmax_output_tokens = 8192\nprice_in = 0.0\nprice_out = 0.0\nedit_format = \"whole\"\n",
        crate::common::fake_user_config(&s.server.base_url()),
    ));
    let r = run(&s, &["--candidates", "model-a,model-w"]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "flagged", "{out}\n{}", r.stderr);
    let asked = s.requests_for("build-model-w");
    assert_eq!(asked.len(), 2, "the cut answer is asked again");
    let cap = asked[0]["max_tokens"]
        .as_u64()
        .or_else(|| asked[0]["max_completion_tokens"].as_u64())
        .unwrap_or_else(|| panic!("no output cap in {}", asked[0]));
    assert!(
        cap < 2048,
        "a one-function task's candidate may write {cap} tokens"
    );
    let again = asked[1].to_string();
    assert!(
        again.contains("cut at the output limit") && again.contains("Write less"),
        "{again}"
    );
    let branch = out["branch"].as_str().unwrap();
    assert!(s
        .git(&["show", &format!("{branch}:calc.py")])
        .contains("sub by model-w"));
}

/// `model` down as a candidate, and the verify stage and its review that follow whatever
/// goes on.
fn down_then_verified(model: &str) -> Vec<Rule> {
    vec![
        on(model, "down", "ROLE: candidate", vec![Reply::status(400)]),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
    ]
}
