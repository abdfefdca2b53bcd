//! Python probes: statements with `assert`, run by the embedded subject
//! (`config/probe_runner.py`), which reports what the code computed as framed lines; the
//! outcome is decided here, outside the process the code under review ran in.
//!
//! What the subject cannot decide, it cannot forge: a module that writes a result file and
//! exits leaves no `done` frame; a value whose `__eq__` is always true reaches this side as
//! an object of an unknown type, equal to nothing ([`super::value`]). Frames carry a nonce
//! the subject read and deleted before importing the code, so a line the code prints is not
//! taken for one.

use serde_json::Value as Json;

use super::sandbox::{quote, Sandbox};
use super::value::Value;
use super::{ChangedLines, ProbeOutcome, ProbeResult, ProbeSettings};
use crate::bounded::clip;
use crate::code::test_path;

/// The subject, compiled in.
const RUNNER: &str = include_str!("../../config/probe_runner.py");

/// The plain-data reader the subject and the behaviour runner share, compiled in.
pub(super) const PLAIN: &str = include_str!("../../config/triad_plain.py");

/// Runs one Python probe about `path` in `sb`; with `changed`, a failure counts only when the
/// probe ran a line the change added or modified ([`ProbeOutcome::Irrelevant`] otherwise).
pub(super) fn run(
    sb: &Sandbox,
    settings: &ProbeSettings,
    path: &str,
    code: &str,
    changed: Option<&ChangedLines>,
) -> ProbeResult {
    let scratch = sb.scratch();
    let n = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
    let probe = scratch.join(format!("probe_{n}.py"));
    let runner = scratch.join("probe_runner.py");
    let nonce_file = scratch.join(format!("nonce_{n}"));
    let frames_file = scratch.join(format!("frames_{n}"));
    let nonce = format!("{:032x}", rand::random::<u128>());
    let written = std::fs::write(&runner, RUNNER)
        .and_then(|()| std::fs::write(scratch.join("triad_plain.py"), PLAIN))
        .and_then(|()| std::fs::write(&probe, code))
        .and_then(|()| std::fs::write(&nonce_file, &nonce));
    if let Err(e) = written {
        return ProbeResult::broken(format!("the probe could not be written: {e}"));
    }
    let root = sb.root();
    let mut paths = vec![root.clone()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src"));
    }
    let pythonpath = paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(":");
    let module = module_of(path).filter(|_| !test_path(path));
    let command = format!(
        "{} {} {} {} {} {}",
        quote(&settings.python),
        quote(&runner.display().to_string()),
        quote(&probe.display().to_string()),
        quote(&nonce_file.display().to_string()),
        quote(&frames_file.display().to_string()),
        module.as_deref().map(quote).unwrap_or_default(),
    );
    let env = [
        ("PYTHONPATH", pythonpath.as_str()),
        ("PYTHONDONTWRITEBYTECODE", "1"),
        ("PYTHONIOENCODING", "utf-8"),
    ]
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let outcome = sb.command(settings, &root, &command, settings.timeout, &env);
    if outcome.refused() {
        return ProbeResult::unprobed(format!("not run: {}", outcome.tail));
    }
    let written = std::fs::read(&frames_file).unwrap_or_default();
    let frames = frames(&String::from_utf8_lossy(&written), &nonce);
    if outcome.timed_out {
        return ProbeResult::broken(format!(
            "cut off: the probe did not finish in {} s",
            settings.timeout.as_secs()
        ));
    }
    let ended = outcome
        .exit_code
        .map_or("killed".to_string(), |c| format!("exit {c}"));
    decide(&frames, changed, &ended, &outcome.tail)
}

/// The frames of the subject's output marked with `nonce`, in order.
fn frames(output: &str, nonce: &str) -> Vec<Json> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix(nonce)?.strip_prefix(' '))
        .filter_map(|f| serde_json::from_str(f).ok())
        .collect()
}

/// The lines of `frame` (`[[path, line], …]`) that `changed` holds.
fn touches(frame: &Json, changed: &ChangedLines) -> bool {
    frame["lines"].as_array().is_some_and(|lines| {
        lines.iter().any(|l| {
            let (Some(path), Some(line)) = (l[0].as_str(), l[1].as_u64()) else {
                return false;
            };
            changed
                .get(path)
                .is_some_and(|set| u32::try_from(line).is_ok_and(|n| set.contains(&n)))
        })
    })
}

/// The outcome the frames show. A failure (an assertion that does not hold, the tree's code
/// raising) is `confirmed` when the probe is about the change (with `changed`: the failing
/// statement ran a changed line, or it compares a value earlier statements computed with
/// one), else `irrelevant`; a probe whose process ended without saying it was done is
/// `broken`, unless it ended importing the code under review.
fn decide(frames: &[Json], changed: Option<&ChangedLines>, ended: &str, tail: &str) -> ProbeResult {
    let mut ran_changed = false;
    let mut importing: Option<String> = None;
    let failure = |frame: &Json, mut result: ProbeResult, ran_changed: bool| {
        let Some(changed) = changed else {
            return result;
        };
        let computed = frame["calls"].as_bool().unwrap_or(true);
        let here = touches(frame, changed);
        if !(here || (!computed && ran_changed)) {
            result.outcome = ProbeOutcome::Irrelevant;
            result.detail = format!(
                "irrelevant: it fails without running a line the change added or modified ({})",
                result.detail
            );
        }
        result
    };
    for frame in frames {
        let text = frame["text"].as_str().unwrap_or("the assertion");
        match frame["kind"].as_str().unwrap_or_default() {
            "importing" => importing = frame["module"].as_str().map(str::to_string),
            "ready" => importing = None,
            "statement" => ran_changed |= changed.is_some_and(|c| touches(frame, c)),
            "compare" => {
                let (left, right) = (
                    Value::from_json(&frame["left"]),
                    Value::from_json(&frame["right"]),
                );
                let op = frame["op"].as_str().unwrap_or("==");
                match holds(op, &left, &right) {
                    Some(true) => {
                        ran_changed |= changed.is_some_and(|c| touches(frame, c));
                        continue;
                    }
                    Some(false) => {
                        let swapped = frame["swapped"].as_bool().unwrap_or(false);
                        let (actual, expected) = if swapped {
                            (&right, &left)
                        } else {
                            (&left, &right)
                        };
                        let call = frame["call"].as_str().unwrap_or(text).to_string();
                        let shown = |v: &Value| clip(&v.render(), 300);
                        let detail = if op == "==" {
                            format!(
                                "{call} returns {}, expected {}",
                                shown(actual),
                                shown(expected)
                            )
                        } else {
                            format!("`{text}` is false: {call} is {}", shown(actual))
                        };
                        let expected_shown = if op == "==" {
                            shown(expected)
                        } else {
                            format!("{op} {}", shown(expected))
                        };
                        let result = ProbeResult {
                            outcome: ProbeOutcome::Confirmed,
                            detail,
                            call: Some(call),
                            expected: Some(expected_shown),
                            actual: Some(shown(actual)),
                            base: None,
                        };
                        return failure(frame, result, ran_changed);
                    }
                    None => {
                        return ProbeResult::broken(format!(
                            "`{text}` cannot be decided outside the code's process: {} {op} {} (only plain data is compared)",
                            clip(&left.render(), 200),
                            clip(&right.render(), 200)
                        ))
                    }
                }
            }
            "truth" => {
                let value = Value::from_json(&frame["value"]);
                match value.truthy() {
                    Some(true) => {
                        ran_changed |= changed.is_some_and(|c| touches(frame, c));
                        continue;
                    }
                    Some(false) => {
                        let result = ProbeResult {
                            outcome: ProbeOutcome::Confirmed,
                            detail: format!("`{text}` is false"),
                            call: Some(text.to_string()),
                            expected: Some("true".into()),
                            actual: Some(clip(&value.render(), 300)),
                            base: None,
                        };
                        return failure(frame, result, ran_changed);
                    }
                    None => {
                        return ProbeResult::broken(format!(
                            "`{text}` is {}: its own truth value would decide, and the code under review is not asked",
                            clip(&value.render(), 200)
                        ))
                    }
                }
            }
            "raised" => {
                let error = frame["error"].as_str().unwrap_or("an error");
                return match frame["at"].as_str() {
                    Some(at) => {
                        let result = ProbeResult {
                            outcome: ProbeOutcome::Confirmed,
                            detail: format!("`{text}` raises {error} (at {at})"),
                            call: Some(text.to_string()),
                            expected: None,
                            actual: Some(format!("raises {error}")),
                            base: None,
                        };
                        // An import of the code under review that fails is the tree's.
                        if frame["n"].as_i64() == Some(-1) {
                            result
                        } else {
                            failure(frame, result, ran_changed)
                        }
                    }
                    None => ProbeResult::broken(format!("the probe itself fails: {error}")),
                };
            }
            "broken" => {
                return ProbeResult::broken(frame["detail"].as_str().unwrap_or("broken"));
            }
            "done" => {
                return ProbeResult {
                    outcome: ProbeOutcome::Refuted,
                    detail: "the probe passes: every assertion holds".into(),
                    call: None,
                    expected: None,
                    actual: None,
                    base: None,
                }
            }
            _ => {}
        }
    }
    let tail = clip(tail.trim(), 300);
    match importing {
        Some(module) => ProbeResult {
            outcome: ProbeOutcome::Confirmed,
            detail: format!("importing {module} ends the probe's process ({ended}): {tail}"),
            call: Some(format!("import {module}")),
            expected: None,
            actual: Some(format!("the process ends ({ended})")),
            base: None,
        },
        None => ProbeResult::broken(format!(
            "the probe's process ended before it said it was done ({ended}): {tail}"
        )),
    }
}

/// Whether `left op right` holds for plain data; `None` where only a method of a value
/// could say.
fn holds(op: &str, left: &Value, right: &Value) -> Option<bool> {
    use std::cmp::Ordering::*;
    Some(match op {
        "==" => left.equals(right),
        "!=" => left.plain() && right.plain() && !left.equals(right),
        "<" => left.order(right)? == Less,
        "<=" => left.order(right)? != Greater,
        ">" => left.order(right)? == Greater,
        ">=" => left.order(right)? != Less,
        // `is` between plain values: only the singletons say anything.
        "is" => match (left, right) {
            (Value::None, Value::None) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::None | Value::Bool(_), _) | (_, Value::None | Value::Bool(_)) => false,
            _ => return None,
        },
        "is not" => !holds("is", left, right)?,
        "in" => left.within(right)?,
        "not in" => !left.within(right)?,
        _ => return None,
    })
}

/// The import name of a Python file (`pkg/util.py` → `pkg.util`, `src/pkg/__init__.py` →
/// `pkg`), or `None` when its path cannot be one.
pub fn module_of(path: &str) -> Option<String> {
    let stem = path
        .strip_suffix(".py")
        .or_else(|| path.strip_suffix(".pyi"))?;
    let stem = stem.strip_prefix("src/").unwrap_or(stem);
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let parts: Vec<&str> = stem.split('/').collect();
    let valid = parts.iter().all(|p| {
        !p.is_empty()
            && p.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !p.starts_with(|c: char| c.is_ascii_digit())
    });
    valid.then(|| parts.join("."))
}
