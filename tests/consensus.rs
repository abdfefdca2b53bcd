//! The consensus stage of `git triad run --consensus` over real HTTP and real git: each
//! branch of the seed's decision tree, the round cap, the tiebreaker, the groupthink FLAG
//! and the deadlock that goes to the user.
//!
//! The panel: model-a holds architect (and verifier), model-c implementer, model-d
//! refactorer; model-b is the arbiter and, as nobody named one, the tiebreaker.

use git_triad::testkit::fake_llm::{Reply, Rule};
use serde_json::{json, Value};

use crate::pipeline::{
    arbiter, architect_answer, implement_answer, log_with, on, panel_scenario as scenario,
    refactor_answer, review, run_json, run_record as record, stage, verify_answer, Scenario,
};

/// What every deliberation request of an agent says (ballot, rebuttal, paper).
const ASKED: &str = "QUESTION: Should the refactored result proceed";

fn ballot(choice: &str) -> Reply {
    let objections = if choice == "approve" {
        json!([])
    } else {
        json!([{"text": "sub() accepts strings", "evidence": "calc.py:7"}])
    };
    Reply::json(
        json!({"choice": choice, "rationale": format!("I say {choice}"),
        "confidence": 0.8, "objections": objections,
        "amendments": if choice == "amend" { json!(["reject non-numbers in sub()"]) } else { json!([]) }}),
    )
}

/// The pipeline's stages and reviews, plus each voter's ballots in order.
fn rules(a: Vec<Reply>, c: Vec<Reply>, d: Vec<Reply>, more: Vec<Rule>) -> Vec<Rule> {
    let mut r = vec![
        stage("architect", vec![Reply::text(architect_answer())]),
        on(
            "model-c",
            "implement",
            "ROLE: implementer",
            vec![Reply::text(implement_answer())],
        ),
        on(
            "model-d",
            "refactor",
            "ROLE: refactorer",
            vec![Reply::text(refactor_answer())],
        ),
        stage("verify", vec![Reply::text(verify_answer())]),
        arbiter("architect", vec![review("APPROVE", json!([]))]),
        arbiter("verify", vec![review("APPROVE", json!([]))]),
        on(
            "model-b",
            "observer",
            "ROLE: observer",
            vec![Reply::json(
                json!({"verdict": "APPROVE", "reasoning": "the decision follows the evidence"}),
            )],
        ),
    ];
    for (model, name, replies) in [
        ("model-a", "vote-a", a),
        ("model-c", "vote-c", c),
        ("model-d", "vote-d", d),
    ] {
        if !replies.is_empty() {
            r.push(on(model, name, ASKED, replies));
        }
    }
    r.extend(more);
    r
}

fn run(s: &Scenario, extra: &[&str]) -> crate::common::Run {
    let mut args = vec![
        "-c",
        "roles.implementer.models=[\"model-c\"]",
        "-c",
        "roles.refactorer.models=[\"model-d\"]",
        "run",
        "--task",
        "add-sub",
        "--consensus",
        "--json",
    ];
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

fn tiebreaker(name: &str, needle: &str, replies: Vec<Value>) -> Rule {
    on(
        "model-b",
        name,
        needle,
        replies.into_iter().map(Reply::json).collect(),
    )
}

#[test]
fn all_agree_proceeds_to_verify_at_once() {
    let s = scenario(rules(
        vec![ballot("approve")],
        vec![ballot("approve")],
        vec![ballot("approve")],
        vec![],
    ));
    let r = run(&s, &[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let rec = record(&s, &out);
    let d = &rec["consensus"]["current"];
    assert_eq!(d["decision"]["choice"], "approve", "{d}");
    assert_eq!(d["decision"]["by"], "unanimous");
    assert_eq!(d["voters"].as_array().unwrap().len(), 3);
    assert_eq!(d["tiebreaker"], "model-b");
    assert_eq!(rec["consensus"]["observation"]["verdict"], "APPROVE");
    // Round 1 is blind: no voter saw another's ballot.
    for rule in ["vote-a", "vote-c", "vote-d"] {
        let asked = s.requests_for(rule);
        assert_eq!(asked.len(), 1, "{rule}");
        assert!(!asked[0].to_string().contains("I say approve"));
    }
    // Verify ran after the consensus.
    assert_eq!(s.requests_for("verify").len(), 1);
    let kinds: Vec<&str> = rec["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "vote").count(),
        3,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"consensus") && kinds.contains(&"review"));
    assert!(
        r.stderr
            .contains("[consensus] decided: approve (unanimous)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_majority_wins_over_an_unconvincing_rebuttal_and_the_dissent_is_kept() {
    let s = scenario(rules(
        vec![ballot("approve")],
        vec![
            ballot("reject"),
            Reply::json(json!({"argument": "strings slip through", "evidence": "calc.py:7"})),
        ],
        vec![ballot("approve")],
        vec![tiebreaker(
            "ruling",
            "ROLE: tiebreaker",
            vec![json!({"compelling": false, "justification": "duck typing is the house style"})],
        )],
    ));
    let out = run_json(&run(&s, &[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let d = &record(&s, &out)["consensus"]["current"];
    assert_eq!(d["decision"]["by"], "majority", "{d}");
    assert_eq!(d["decision"]["dissent"][0]["voter"], "model-c");
    assert_eq!(
        d["rounds"][0]["rebuttals"][0]["argument"],
        "strings slip through"
    );
    assert_eq!(d["rounds"][0]["ruling"]["compelling"], false);
    // The dissenter was asked twice (ballot, rebuttal); the tiebreaker judged once.
    assert_eq!(s.requests_for("vote-c").len(), 2);
    assert_eq!(s.requests_for("ruling").len(), 1);
    assert!(s.requests_for("ruling")[0]
        .to_string()
        .contains("strings slip through"));
}

/// The dissenter's rebuttal call fails (no valid answer): the panel goes on without it, but its vote stands,
/// so the decision is the majority's with the dissent kept, never "unanimous".
#[test]
fn a_dissenter_whose_rebuttal_fails_leaves_a_majority_not_a_unanimous_decision() {
    let s = scenario(rules(
        vec![ballot("approve")],
        vec![ballot("amend"), Reply::text("I would rather not say.")],
        vec![ballot("approve")],
        vec![],
    ));
    let r = run(&s, &[]);
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let d = &record(&s, &out)["consensus"]["current"];
    assert_eq!(d["decision"]["by"], "majority", "{d}");
    assert_eq!(d["decision"]["dissent"][0]["voter"], "model-c");
    assert_eq!(d["absent"][0][0], "model-c", "{d}");
    assert!(!r.stderr.contains("unanimous"), "{}", r.stderr);
}

#[test]
fn a_compelling_rebuttal_orders_a_revote_that_sees_the_first_round() {
    let s = scenario(rules(
        vec![ballot("approve"), ballot("approve")],
        vec![
            ballot("reject"),
            Reply::json(json!({"argument": "strings slip through", "evidence": "calc.py:7"})),
            ballot("approve"),
        ],
        vec![ballot("approve"), ballot("approve")],
        vec![tiebreaker(
            "ruling",
            "ROLE: tiebreaker",
            vec![json!({"compelling": true, "justification": "a real gap"})],
        )],
    ));
    let out = run_json(&run(&s, &[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let d = &record(&s, &out)["consensus"]["current"];
    assert_eq!(d["rounds"].as_array().unwrap().len(), 2, "{d}");
    assert_eq!(d["decision"]["by"], "unanimous");
    let second = s.requests_for("vote-a")[1].to_string();
    assert!(second.contains("EARLIER ROUNDS") && second.contains("strings slip through"));
    // `log` tells the deliberation, in text and markdown.
    let (_, md) = log_with(
        &s,
        &out,
        &[
            "consensus:",
            "model-c (implementer) votes reject",
            "objection: sub() accepts strings [calc.py:7]",
            "rebuttal by model-c: strings slip through",
            "tiebreaker: compelling: vote again — a real gap",
            "decision: approve (unanimous, 2 round(s))",
            "observed by model-b: APPROVE",
        ],
    );
    assert!(md.contains("### Consensus"), "{md}");
    assert!(md.contains("**Deliberation 1** — panel: model-a (architect), model-c (implementer), model-d (refactorer); tiebreaker: model-b"), "{md}");
    assert!(md.contains("- round 2"), "{md}");
}

#[test]
fn after_three_rounds_the_tiebreaker_decides_alone() {
    // Each round a new dissenter with a compelling rebuttal.
    let rebut = || Reply::json(json!({"argument": "still wrong", "evidence": "calc.py"}));
    let s = scenario(rules(
        vec![
            ballot("approve"),
            ballot("reject"),
            rebut(),
            ballot("approve"),
        ],
        vec![
            ballot("reject"),
            rebut(),
            ballot("approve"),
            ballot("approve"),
        ],
        vec![
            ballot("approve"),
            ballot("approve"),
            ballot("reject"),
            rebut(),
        ],
        vec![
            tiebreaker(
                "ruling",
                "ROLE: tiebreaker\nYou did not vote. Judge",
                vec![json!({"compelling": true, "justification": "vote again"})],
            ),
            tiebreaker(
                "alone",
                "Decide alone",
                vec![json!({"choice": "approve", "justification": "the objections cancel out"})],
            ),
        ],
    ));
    let out = run_json(&run(&s, &[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let d = &record(&s, &out)["consensus"]["current"];
    assert_eq!(d["rounds"].as_array().unwrap().len(), 3, "{d}");
    assert_eq!(d["decision"]["by"], "unilateral");
    assert_eq!(d["decision"]["justification"], "the objections cancel out");
    assert_eq!(s.requests_for("ruling").len(), 3);
    assert_eq!(s.requests_for("alone").len(), 1);
}

#[test]
fn no_majority_takes_papers_and_an_amendment_sends_refactor_back() {
    let paper = |choice: &str| {
        Reply::json(
            json!({"choice": choice, "position": format!("paper for {choice}"),
            "tradeoffs": ["more code"], "amendments": if choice == "amend" { json!(["reject non-numbers in sub()"]) } else { json!([]) }}),
        )
    };
    let mut extra = vec![tiebreaker(
        "select",
        "Select the winning position paper",
        vec![
            json!({"winner": 2, "justification": "the amendment closes the gap without a redesign"}),
        ],
    )];
    // The refactor stage is asked again, with the amendment.
    extra.push(on(
        "model-d",
        "refactor-again",
        "## CONSENSUS",
        vec![Reply::text(crate::pipeline::answer(
            "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    if not isinstance(a, (int, float)):\n        raise TypeError(\"a\")\n    return a - b\n>>>>>>> REPLACE\n",
            "reject non-numbers",
        ))],
    ));
    let mut all = extra;
    all.extend(rules(
        vec![ballot("approve"), paper("approve"), ballot("approve")],
        vec![ballot("amend"), paper("amend"), ballot("approve")],
        vec![ballot("reject"), paper("reject"), ballot("approve")],
        vec![],
    ));
    let s = scenario(all);
    let out = run_json(&run(&s, &[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let rec = record(&s, &out);
    let first = &rec["consensus"]["past"][0];
    assert_eq!(first["papers"].as_array().unwrap().len(), 3, "{first}");
    assert_eq!(first["decision"]["by"], "tiebreaker");
    assert_eq!(first["decision"]["choice"], "amend");
    let again = s.requests_for("refactor-again");
    assert_eq!(again.len(), 1);
    assert!(again[0].to_string().contains("reject non-numbers in sub()"));
    // The second deliberation, on the reworked result, agreed.
    assert_eq!(rec["consensus"]["current"]["decision"]["by"], "unanimous");
    let diff = s.git(&[
        "diff",
        &format!(
            "{}..{}",
            out["base"].as_str().unwrap(),
            out["branch"].as_str().unwrap()
        ),
    ]);
    assert!(diff.contains("raise TypeError"), "{diff}");
}

#[test]
fn a_unanimous_approval_over_broken_code_is_flagged_as_groupthink() {
    let mut all = vec![on(
        "model-d",
        "refactor-broken",
        "ROLE: refactorer",
        vec![Reply::text(crate::pipeline::answer(
            "tests/test_calc.py\n<<<<<<< SEARCH\n=======\ndef test_sub(:\n    assert sub(3, 1) == 2\n>>>>>>> REPLACE\n",
            "add a test",
        ))],
    )];
    all.extend(rules(
        vec![ballot("approve")],
        vec![ballot("approve")],
        vec![ballot("approve")],
        vec![],
    ));
    let s = scenario(all);
    // The verify review then floors the broken change too: the run never passes.
    let out = run_json(&run(&s, &[]).expect_code(3).stdout);
    assert_eq!(out["status"], "halted", "{out}");
    let obs = &record(&s, &out)["consensus"]["observation"];
    assert_eq!(obs["verdict"], "FLAG", "{obs}");
    assert!(obs["reasoning"]
        .as_str()
        .unwrap()
        .starts_with("groupthink by the facts"));
    assert!(obs["contradicted_by"][0]
        .as_str()
        .unwrap()
        .contains("tests/test_calc.py"));
}

#[test]
fn a_deadlock_no_tiebreaker_can_break_goes_to_the_user_with_every_proposal() {
    let paper = |c: &str| Reply::json(json!({"choice": c, "position": format!("paper {c}")}));
    let s = scenario(rules(
        vec![ballot("approve"), paper("approve")],
        vec![ballot("amend"), paper("amend")],
        vec![ballot("reject"), paper("reject")],
        vec![on(
            "model-b",
            "down",
            "ROLE: tiebreaker",
            vec![Reply::status(400)],
        )],
    ));
    let r = run(&s, &["--arbiter", "off"]);
    let out = run_json(&r.expect_code(6).stdout);
    assert_eq!(out["status"], "waiting_on_user", "{out}");
    assert_eq!(out["stop"]["reason"], "consensus", "{out}");
    assert_eq!(out["stop"]["outcome"], "deadlock");
    let proposals = out["stop"]["proposals"].as_str().unwrap();
    for p in ["paper approve", "paper amend", "paper reject"] {
        assert!(proposals.contains(p), "{proposals}");
    }
    assert!(out["hints"].to_string().contains("git triad log"), "{out}");
    // Nothing went on to verify.
    assert!(s.requests_for("verify").is_empty());
}

/// A stage answer with `blocks` whose metadata carries `suggestions`.
fn suggesting(blocks: &str, summary: &str, suggestions: Value) -> String {
    format!(
        "{blocks}\n```json\n{}\n```\n",
        json!({"summary": summary, "confidence": 0.8, "outcome": "APPROVE",
               "suggestions": suggestions, "objections": []})
    )
}

fn run_plain(s: &Scenario, extra: &[&str]) -> crate::common::Run {
    let mut args = vec![
        "-c",
        "roles.implementer.models=[\"model-c\"]",
        "-c",
        "roles.refactorer.models=[\"model-d\"]",
        "run",
        "--task",
        "add-sub",
        "--json",
    ];
    args.extend_from_slice(extra);
    s.env.triad(&s.repo, &args)
}

const SUB_SCAFFOLD: &str = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n    return a + b\n=======\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    \"\"\"Return a minus b.\"\"\"\n    raise NotImplementedError\n>>>>>>> REPLACE\n";

#[test]
fn a_rejected_suggestion_escalated_to_a_vote_is_adopted_and_reaches_the_next_stage() {
    let suggestion = json!([{"domain": "implementation", "text": "guard sub() with an isinstance check",
        "rationale": "sub() should reject non-numbers with TypeError",
        "confidence": 0.9, "code_sketch": "if not isinstance(a, (int, float)): raise TypeError", "impact_assessment": "one guard"}]);
    let mut all = vec![
        on(
            "model-a",
            "escalate",
            "author of suggestion S1",
            vec![Reply::json(
                json!({"escalate": true, "argument": "strings concatenate silently in add()"}),
            )],
        ),
        on(
            "model-a",
            "architect-suggests",
            "ROLE: architect",
            vec![Reply::text(suggesting(
                SUB_SCAFFOLD,
                "scaffold sub()",
                suggestion,
            ))],
        ),
        on(
            "model-c",
            "evaluate",
            "primary role-holder of the implementation domain",
            vec![Reply::json(
                json!({"accept": false, "reason": "duck typing is enough"}),
            )],
        ),
        tiebreaker(
            "ruling",
            "ROLE: tiebreaker",
            vec![
                json!({"compelling": false, "justification": "the guard is cheap and the risk real"}),
            ],
        ),
    ];
    let vote = "QUESTION: Should suggestion S1 be adopted";
    all.push(on("model-a", "vote-a", vote, vec![ballot("approve")]));
    all.push(on(
        "model-c",
        "vote-c",
        vote,
        vec![
            ballot("reject"),
            Reply::json(json!({"argument": "YAGNI", "evidence": ""})),
        ],
    ));
    all.push(on("model-d", "vote-d", vote, vec![ballot("approve")]));
    all.extend(rules(vec![], vec![], vec![], vec![]));
    let s = scenario(all);
    let out = run_json(&run_plain(&s, &[]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let rec = record(&s, &out);
    let s1 = &rec["suggestions"][0];
    assert_eq!(s1["id"], "S1");
    assert_eq!(s1["status"], "adopted", "{s1}");
    let steps: Vec<&str> = s1["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["status"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["rejected", "escalated", "adopted"]);
    assert_eq!(s1["vote"]["decision"]["by"], "majority");
    // The implement stage was told to apply it.
    let implement = s.requests_for("implement")[0].to_string();
    assert!(
        implement.contains("Accepted suggestions (they must be applied)"),
        "{implement}"
    );
    assert!(implement.contains("sub() should reject non-numbers"));
    // The idea itself reaches the role-holder, the voters and the later stage, not only
    // its rationale.
    for (rule, who) in [
        ("evaluate", "role-holder"),
        ("vote-d", "voter"),
        ("implement", "implement stage"),
    ] {
        let asked = s.requests_for(rule)[0].to_string();
        assert!(
            asked.contains("the idea: guard sub() with an isinstance check"),
            "the {who} was not shown the idea: {asked}"
        );
    }
    // Every step is a message of the run.
    let kinds: Vec<&str> = rec["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"proposal") && kinds.contains(&"suggestion"),
        "{kinds:?}"
    );
}

fn reconcile_rule(replies: usize) -> Rule {
    let answer = json!({"verdict": "APPROVE", "confidence": 0.8, "reasoning": "matches",
        "checks": [], "requirements": [{"id": "R1", "status": "delivered", "evidence": "calc.py:sub"}],
        "rewind_to": "refactor", "gaps": []});
    on(
        "model-b",
        "reconcile",
        "RECONCILE: does the output match",
        (0..replies).map(|_| Reply::json(answer.clone())).collect(),
    )
}

fn verify_with(applied: Value) -> Reply {
    Reply::text(format!(
        "Checked.\n```json\n{}\n```\n",
        json!({"summary": "verified", "confidence": 0.9, "outcome": "APPROVE",
               "implementation_summary": {"task_echo": "add sub", "requirements": [{"id": "R1", "evidence": "calc.py:sub"}],
               "files_created": ["tests/test_calc.py"], "files_modified": ["calc.py"], "test_coverage": ["test_sub"],
               "omissions": [], "deviations": [], "suggestions_applied": applied}})
    ))
}

fn accepted_suggestion_rules(verify: Vec<Reply>) -> Vec<Rule> {
    let suggestion = json!([{"domain": "quality", "rationale": "test sub() with negative numbers", "confidence": 0.7}]);
    let mut all = vec![
        on(
            "model-c",
            "implement-suggests",
            "ROLE: implementer",
            vec![Reply::text(suggesting(
                "calc.py\n<<<<<<< SEARCH\n    raise NotImplementedError\n=======\n    return a - b\n>>>>>>> REPLACE\n",
                "implement sub()",
                suggestion,
            ))],
        ),
        on(
            "model-d",
            "evaluate",
            "primary role-holder of the quality domain",
            vec![Reply::json(json!({"accept": true, "reason": "cheap and useful"}))],
        ),
        on("model-a", "verify-summary", "ROLE: verifier", verify),
        reconcile_rule(2),
    ];
    all.extend(rules(vec![], vec![], vec![], vec![]));
    all
}

#[test]
fn an_accepted_suggestion_the_output_drops_flags_the_reconciliation() {
    let s = scenario(accepted_suggestion_rules(vec![verify_with(json!([]))]));
    let r = run_plain(&s, &["--reconcile"]);
    // A dropped suggestion is a fact against the summary, not a failing fact of the tree:
    // the run ends FLAG, with the fact on the record, instead of halting.
    let out = run_json(&r.ok().stdout);
    assert_eq!(out["status"], "flagged", "{out}");
    let rec = record(&s, &out);
    assert_eq!(rec["suggestions"][0]["status"], "accepted");
    // The refactor stage was told; the facts, not the model, flagged the run.
    let refactor = s.requests_for("refactor")[0].to_string();
    assert!(
        refactor.contains("test sub() with negative numbers"),
        "{refactor}"
    );
    let notes = s.git(&[
        "log",
        "--notes=triad",
        "--format=%N",
        out["branch"].as_str().unwrap(),
    ]);
    assert!(
        notes.contains(
            "accepted suggestions silently dropped (neither applied nor listed as a deviation): S1"
        ),
        "{notes}"
    );
}

#[test]
fn an_accepted_suggestion_the_verifier_accounts_for_passes_reconciliation() {
    let s = scenario(accepted_suggestion_rules(vec![verify_with(json!(["S1"]))]));
    let out = run_json(&run_plain(&s, &["--reconcile"]).ok().stdout);
    assert_eq!(out["status"], "approved", "{out}");
    let verifier = s.requests_for("verify-summary")[0].to_string();
    assert!(verifier.contains("suggestions_applied"), "{verifier}");
}
