//! Reading `run.json` of every format: format 1 (the first release) is upgraded to the
//! current shape as JSON before it is typed, so old runs keep showing in `log` and resuming.

use serde_json::{json, Value};

use super::{RunState, RunStatus, RECORD_VERSION};

/// Parses a stored `run.json`, upgrading older formats.
pub fn read(bytes: &[u8]) -> Result<RunState, String> {
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    match value.get("v").and_then(Value::as_u64) {
        Some(1) => from_v1(&mut value),
        Some(v) if v == u64::from(RECORD_VERSION) => {}
        Some(v) => {
            return Err(format!(
                "it is format {v}, newer than this build reads ({RECORD_VERSION}); update git triad"
            ))
        }
        None => return Err("it has no format version".into()),
    }
    serde_json::from_value(value).map_err(|e| e.to_string())
}

/// `cost_usd` + `tokens: [in, out]` (+ `latency_ms`) → one `spend` object.
fn spend_of(obj: &mut serde_json::Map<String, Value>) {
    let tokens = obj.remove("tokens").unwrap_or(json!([0, 0]));
    let spend = json!({
        "cost_usd": obj.remove("cost_usd").and_then(|v| v.as_f64()).unwrap_or(0.0),
        "input_tokens": tokens.get(0).and_then(Value::as_u64).unwrap_or(0),
        "output_tokens": tokens.get(1).and_then(Value::as_u64).unwrap_or(0),
        "latency_ms": obj.remove("latency_ms").and_then(|v| v.as_u64()).unwrap_or(0),
    });
    obj.insert("spend".into(), spend);
}

/// Format 1 → 2: spend objects, the stop message as a legacy reason, a summary that does not
/// read as one dropped (as format 1's reconciliation did), `outcome` folded into the message.
fn from_v1(value: &mut Value) {
    let Some(obj) = value.as_object_mut() else {
        return;
    };
    obj.insert("v".into(), json!(RECORD_VERSION));
    spend_of(obj);
    if let Some(Value::Array(stages)) = obj.get_mut("stages") {
        for attempt in stages
            .iter_mut()
            .filter_map(|s| s.get_mut("attempts").and_then(Value::as_array_mut))
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            spend_of(attempt);
        }
    }
    let message = obj.remove("message").unwrap_or_default();
    let running = obj.get("status").and_then(Value::as_str) == Some(RunStatus::Running.as_str());
    let stop = match message.as_str() {
        Some(m) if !running && !m.is_empty() => json!({"reason": "legacy", "message": m}),
        _ => Value::Null,
    };
    obj.insert("stop".into(), stop);
    obj.remove("outcome");
    let summary = obj.remove("implementation_summary").unwrap_or(Value::Null);
    let typed = serde_json::from_value::<crate::pipeline::reconcile::ImplementationSummary>(
        summary.clone(),
    )
    .map_or(Value::Null, |_| summary);
    obj.insert("implementation_summary".into(), typed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::record::{AttemptResult, StopReason};

    #[test]
    fn runs_recorded_by_the_first_release_still_read() {
        let approved = read(include_bytes!(
            "../../../tests/fixtures/v1/run-approved.json"
        ))
        .expect("format 1 run.json reads");
        assert_eq!(approved.v(), RECORD_VERSION);
        assert_eq!(approved.status(), RunStatus::Flagged);
        assert_eq!(approved.stages().len(), 4);
        let architect = &approved.stages()[0];
        assert_eq!(architect.attempts[0].result, AttemptResult::Rejected);
        assert_eq!(architect.attempts[1].result, AttemptResult::Accepted);
        assert!(architect.attempts[0].spend.cost_usd > 0.0);
        assert!(approved.spend().input_tokens > 0 && approved.spend().output_tokens > 0);
        assert!(approved.implementation_summary().is_some());
        assert!(approved.tip().oid().is_ok());
        assert!(
            approved.routing().is_none(),
            "a run from before routing routed nothing"
        );
        assert!(matches!(
            approved.stop_reason(),
            Some(StopReason::Legacy { ref message }) if message.contains("final verdict")
        ));

        let halted = read(include_bytes!("../../../tests/fixtures/v1/run-halted.json"))
            .expect("format 1 halted run.json reads");
        assert_eq!(halted.status(), RunStatus::Halted);
        let Some(StopReason::Legacy { message }) = halted.stop_reason() else {
            panic!("{:?}", halted.stop_reason())
        };
        assert!(message.contains("halted the pipeline at the verify stage"));
    }

    #[test]
    fn a_newer_format_is_refused_with_the_reason() {
        let e = read(br#"{"v": 99}"#).unwrap_err();
        assert!(e.contains("newer than this build reads"), "{e}");
    }
}
