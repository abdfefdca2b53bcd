//! Writing then reading a line is the identity, on every kind of line, on the lines earlier
//! releases wrote, and on the forms git triad no longer writes but still reads.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::arbiter::ArbiterReview;

/// The lines the first release wrote: two runs' notes, one approved, one halted then
/// overridden.
const FIXTURES: [&str; 2] = [
    include_str!("../../../tests/fixtures/v1/notes.jsonl"),
    include_str!("../../../tests/fixtures/v1/notes-halted.jsonl"),
];

/// Field `key` of a stored line, read into its typed form (test data, so a panic names it).
fn field<T: DeserializeOwned>(line: &Value, key: &str) -> T {
    serde_json::from_value(line.get(key).cloned().unwrap_or(Value::Null))
        .unwrap_or_else(|e| panic!("{key} of {line}: {e}"))
}

/// The head and record a writer fills in to write `line` again, from its typed parts.
fn parts(line: &Value) -> (Head, Record) {
    let head = Head {
        ts: field(line, "ts"),
        commit: field(line, "commit"),
        patch_id: field(line, "patch_id"),
        change_patch_id: field(line, "change_patch_id"),
    };
    let record = match line["kind"].as_str() {
        Some("review") => Record::Review(Box::new(ReviewRecord {
            run: field(line, "run"),
            task: field(line, "task"),
            attempt: field(line, "attempt"),
            stage_reviewed: field(line, "stage_reviewed"),
            chamber: field(line, "chamber"),
            review: ArbiterReview::deserialize(line).unwrap(),
        })),
        Some("reconciliation") => Record::Reconciliation(Box::new(ReconciliationRecord {
            run: field(line, "run"),
            task: field(line, "task"),
            stage: field(line, "stage"),
            verdict: field(line, "verdict"),
            model_verdict: field(line, "model_verdict"),
            floor: field(line, "floor"),
            arbiter_model: field(line, "arbiter_model"),
            reviewed_model: field(line, "reviewed_model"),
            confidence: field(line, "confidence"),
            reasoning: field(line, "reasoning"),
            checks: field(line, "checks"),
            requirements: field(line, "requirements"),
            rewind_to: field(line, "rewind_to"),
            gaps: field(line, "gaps"),
            facts: field(line, "facts"),
            issues: field(line, "issues"),
            token_cost: field(line, "token_cost"),
        })),
        Some("override") => Record::Override(OverrideRecord {
            verdict: field(line, "verdict"),
            overrides: field(line, "overrides"),
            answers: field(line, "answers"),
            reason: field(line, "reason"),
            who: field(line, "who"),
        }),
        other => panic!("a fixture line of kind {other:?}"),
    };
    (head, record)
}

/// The kind of a line, telling a run's stop mark from a stage's review.
fn kind(line: &NoteLine) -> &'static str {
    match line {
        NoteLine::Verdict(v) if v.kind == VerdictKind::Review => {
            match v.record.value["stage_reviewed"].as_str() {
                Some("run") => "stop-mark",
                _ => "review",
            }
        }
        NoteLine::Verdict(_) => "reconciliation",
        NoteLine::Override(_) => "override",
        NoteLine::Invalid(_) => "invalid",
    }
}

#[test]
fn every_kind_written_then_read_is_the_same_line_and_the_same_bytes() {
    let mut kinds = std::collections::BTreeSet::new();
    for raw in FIXTURES.iter().flat_map(|t| t.lines()) {
        // Parse, then write: the bytes an earlier release stored.
        let read = NoteLine::parse(raw).unwrap_or_else(|e| panic!("{e}"));
        let stored = read.stored().unwrap();
        assert_eq!(stored.text(), raw, "parse then write changed the line");
        // Write from the typed record, then read: the same line, and the same bytes again.
        let (head, record) = parts(&stored.value);
        let written = NoteLine::written(&head, &record).unwrap();
        assert_eq!(written, read, "writing the same record made another line");
        let text = written.stored().unwrap().text();
        assert_eq!(text, raw, "the writer's bytes differ from the stored ones");
        assert_eq!(NoteLine::parse(&text).unwrap(), written);
        assert_eq!(written.id(), read.id());
        if let (NoteLine::Verdict(w), Record::Review(r)) = (&written, &record) {
            assert_eq!(w.review().as_ref(), Some(&r.review), "the review read back");
        }
        kinds.insert(kind(&read));
    }
    assert_eq!(
        kinds.into_iter().collect::<Vec<_>>(),
        ["override", "reconciliation", "review", "stop-mark"]
    );
}

#[test]
fn lines_this_build_writes_read_back_with_their_decision_fields() {
    let head = Head {
        ts: "2026-11-23T06:41:29.153Z".into(),
        commit: "9fb0b315cebcd5af70926bdfe86d8d449e865bfa".into(),
        patch_id: None,
        change_patch_id: Some("8081ec80f858e6424e36ddaa80f3d757a58c7a81".into()),
    };
    let answered = "0123456789abcdef0123456789abcdef01234567".to_string();
    let record = Record::Override(OverrideRecord {
        verdict: Verdict::Approve,
        overrides: Verdict::Halt,
        answers: Some(vec![answered.clone()]),
        reason: "checked \u{1b}[31m by hand\nline two".into(),
        who: "Ann <ann@example.com>".into(),
    });
    let line = NoteLine::written(&head, &record).unwrap();
    let NoteLine::Override(o) = &line else {
        panic!("{line:?}")
    };
    assert_eq!(o.verdict, Verdict::Approve);
    assert_eq!(o.ts, head.ts);
    assert_eq!(o.answers, Answers::Named(vec![answered]));
    assert_eq!(line.patch_ids(), [head.change_patch_id.as_deref().unwrap()]);
    assert_eq!(o.record.value["patch_id"], Value::Null, "written as null");
    let text = o.record.text();
    assert!(!text.contains('\n') && !text.contains('\u{1b}'), "{text}");
    assert_eq!(NoteLine::parse(&text).unwrap(), line);
    assert_eq!(
        NoteLine::parse(&text).unwrap().stored().unwrap().text(),
        text
    );
}

#[test]
fn the_forms_earlier_releases_and_hand_edits_left_still_read() {
    // An override from before line ids: it names only the verdict it cleared.
    let old = NoteLine::parse(r#"{"v":1,"kind":"override","ts":"t","verdict":"FLAG","overrides":"HALT","reason":"r","who":"w"}"#).unwrap();
    assert!(matches!(&old, NoteLine::Override(o) if o.answers == Answers::Unnamed(Verdict::Halt)));
    // One naming lines by the "<ts> <kind> <verdict>" key written before ids.
    let keyed = NoteLine::parse(
        r#"{"v":1,"kind":"override","ts":"t2","verdict":"APPROVE","answers":["t review HALT"]}"#,
    )
    .unwrap();
    assert!(
        matches!(&keyed, NoteLine::Override(o) if o.answers == Answers::Named(vec!["t review HALT".into()]))
    );
    // Verdict words in any case, a byte order mark, one record spread over lines, no ts.
    let spread = "\u{feff}{\n  \"v\": 1,\n  \"kind\": \"reconciliation\",\n  \"verdict\": \"Flag\",\n  \"model_verdict\": \"approve\"\n}";
    let NoteLine::Verdict(v) = NoteLine::parse(spread).unwrap() else {
        panic!("not a verdict line")
    };
    assert_eq!(
        (v.kind, v.verdict, v.ts.as_str()),
        (VerdictKind::Reconciliation, Verdict::Flag, "")
    );
    assert_eq!(
        v.record.text(),
        r#"{"kind":"reconciliation","model_verdict":"APPROVE","v":1,"verdict":"FLAG"}"#,
        "read with its verdict words canonical"
    );
    assert_eq!(v.review(), None);
    // A copy of a line on another commit is the same record, under the same id.
    let line = FIXTURES[0].lines().next().unwrap();
    let copy = reattached(&serde_json::from_str(line).unwrap(), "abc");
    let copy = NoteLine::parse(&crate::notes::canonical_json(&copy)).unwrap();
    assert_eq!(copy.id(), NoteLine::parse(line).unwrap().id());
    assert_eq!(copy.stored().unwrap().reattached_from(), Some("abc"));
}

#[test]
fn text_that_is_not_one_valid_line_is_refused_with_what_is_wrong() {
    let refused = |text: &str| NoteLine::parse(text).expect_err(text);
    let strict = [
        "{\"v\":1,\"kind\":\"review\",\"verdict\":\"\u{ff28}\u{ff21}\u{ff2c}\u{ff34}\"}",
        "{\"v\":1,\"kind\":\"review\",\"verdict\":\"HA\u{200d}LT\"}",
        "{\"v\":1,\"kind\":\"review\",\"verdict\":\"HA\u{fffd}T\"}",
        r#"{"v":1,"kind":"review","verdict":" HALT"}"#,
        r#"{"v":1,"kind":"override","verdict":"APPROVE","overrides":"halted"}"#,
        "verdict: HALT",
    ];
    for text in strict {
        let bad = refused(text);
        assert!(bad.fails_closed(), "{text}: {bad}");
    }
    // A line that says two things blocks on the worse of them, whatever the policy says.
    let twice = refused(r#"{"v":1,"kind":"review","verdict":"APPROVE","verdict":"HALT"}"#);
    assert_eq!(twice.problem, Problem::RepeatedKey("verdict".into()));
    assert_eq!(twice.mentions, [Verdict::Approve, Verdict::Halt]);
    let bad = refused(r#"{"v":"1","kind":"review","verdict":"HALT"}"#);
    assert_eq!(bad.problem, Problem::Version("\"1\"".into()));
    assert_eq!(bad.mentions, [Verdict::Halt]);
    assert_eq!(refused("  \n").problem, Problem::Records(0));
    let two = "{\"v\":1,\"kind\":\"review\",\"verdict\":\"HALT\"}\nnot json";
    assert_eq!(refused(two).problem, Problem::Records(2));
    // What a writer builds goes through the same rules.
    let no_kind = serde_json::json!({"v": 1, "verdict": "HALT"});
    assert_eq!(
        NoteLine::of_value(no_kind).unwrap_err().problem,
        Problem::NoKind
    );
}
