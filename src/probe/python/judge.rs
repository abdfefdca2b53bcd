//! Judging a Python probe from the subject's answers: the probe's statements as the
//! planner read them, each assertion decided here from the plain values the subject
//! computed, and a failure counted only when changed code computed a value in it.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::bounded::clip;
use crate::probe::result::{ChangedLines, ProbeOutcome, ProbeResult};
use crate::probe::value::Value;

/// What a failure must involve to be about the change under review.
pub(in crate::probe) struct About<'a> {
    /// The lines the change added or modified.
    pub changed: &'a ChangedLines,
    /// The functions whose definitions hold such a line.
    pub functions: &'a BTreeSet<String>,
}

/// What the subject's run left to judge by.
pub(super) struct Ran<'a> {
    /// Its answers, one per operation in order.
    pub answers: &'a [Json],
    /// How many of the operations import the module under review (they come first).
    pub imports: usize,
    /// How its process ended (`exit 0`, `killed`).
    pub ended: &'a str,
    /// The end of its output.
    pub tail: &'a str,
}

/// Decides the probe of `steps` from what the subject's run left (`ran`); with `about`, a
/// failure counts only when a value changed code computed is in it.
pub(super) fn decide(
    steps: &[Step],
    ran: &Ran<'_>,
    about: Option<&About<'_>>,
    module: Option<&str>,
) -> ProbeResult {
    // A name the probe binds itself (`calc.mul = lambda a, b: 0`) is the probe's, not the
    // change's: only the trace can say changed code ran through it.
    let rebound: BTreeSet<String> = steps
        .iter()
        .filter_map(|s| match s {
            Step::Exec { sets, .. } => Some(sets.iter().cloned()),
            Step::Assert { .. } => None,
        })
        .flatten()
        .collect();
    let judge = Judge {
        answers: ran.answers,
        about,
        imports: ran.imports,
        ended: ran.ended,
        tail: ran.tail,
        tainted: BTreeSet::new(),
        rebound,
    };
    judge.decide(steps, module)
}

/// An expression of the probe: a literal the planner read, or code the subject evaluated
/// (operation `op`).
#[derive(Debug)]
pub(super) enum Expr {
    Lit(Value),
    Code {
        op: usize,
        text: String,
        uses: Vec<String>,
    },
}

/// A condition of an assertion.
#[derive(Debug)]
pub(super) enum Cond {
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
    Cmp(Expr, String, Expr),
    Truth(Expr),
}

/// A top-level statement of the probe.
#[derive(Debug)]
pub(super) enum Step {
    Exec {
        op: usize,
        text: String,
        sets: Vec<String>,
        uses: Vec<String>,
    },
    Assert {
        cond: Cond,
        text: String,
    },
}

/// Strings of a JSON array.
fn strings(j: &Json) -> Vec<String> {
    j.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

impl Step {
    /// Reads a planned step, adding the subject's operations it needs to `ops`.
    pub(super) fn read(j: &Json, ops: &mut Vec<Json>) -> Step {
        if let Some(source) = j["exec"].as_str() {
            ops.push(serde_json::json!({ "exec": source }));
            return Step::Exec {
                op: ops.len() - 1,
                text: j["text"].as_str().unwrap_or(source).to_string(),
                sets: strings(&j["sets"]),
                uses: strings(&j["uses"]),
            };
        }
        Step::Assert {
            cond: Cond::read(&j["assert"], ops),
            text: j["text"].as_str().unwrap_or("the assertion").to_string(),
        }
    }
}

impl Cond {
    fn read(j: &Json, ops: &mut Vec<Json>) -> Cond {
        let list = |k: &str, ops: &mut Vec<Json>| -> Vec<Cond> {
            j[k].as_array()
                .map(|a| a.iter().map(|c| Cond::read(c, ops)).collect())
                .unwrap_or_default()
        };
        if j.get("and").is_some() {
            Cond::And(list("and", ops))
        } else if j.get("or").is_some() {
            Cond::Or(list("or", ops))
        } else if j.get("not").is_some() {
            Cond::Not(Box::new(Cond::read(&j["not"], ops)))
        } else if let Some(c) = j["cmp"].as_array() {
            let left = Expr::read(&c[0], ops);
            let right = Expr::read(&c[2], ops);
            Cond::Cmp(left, c[1].as_str().unwrap_or("==").to_string(), right)
        } else {
            Cond::Truth(Expr::read(&j["truth"], ops))
        }
    }
}

impl Expr {
    fn read(j: &Json, ops: &mut Vec<Json>) -> Expr {
        if j.get("lit").is_some() {
            return Expr::Lit(Value::from_json(&j["lit"]));
        }
        let source = j["code"].as_str().unwrap_or("None");
        ops.push(serde_json::json!({ "eval": source }));
        Expr::Code {
            op: ops.len() - 1,
            text: j["text"].as_str().unwrap_or(source).to_string(),
            uses: strings(&j["uses"]),
        }
    }
}

/// A value the judge has in hand: what it is, where it came from, and whether changed code
/// computed it.
struct Got {
    value: Value,
    text: Option<String>,
    changed: bool,
}

/// What judging a condition showed.
enum Judged {
    Holds {
        changed: bool,
    },
    Fails(Box<ProbeResult>, bool),
    /// Stops the probe with this result (a raise, a value only its own method could judge).
    Stop(Box<ProbeResult>),
}

/// Decides a probe from the subject's answers.
struct Judge<'a> {
    answers: &'a [Json],
    about: Option<&'a About<'a>>,
    imports: usize,
    ended: &'a str,
    tail: &'a str,
    /// Names statements set from values changed code computed.
    tainted: BTreeSet<String>,
    /// Names the probe binds itself.
    rebound: BTreeSet<String>,
}

impl Judge<'_> {
    fn decide(mut self, steps: &[Step], module: Option<&str>) -> ProbeResult {
        for k in 0..self.imports {
            let Some(a) = self.answers.get(k) else {
                let tail = clip(self.tail.trim(), 300);
                return ProbeResult {
                    outcome: ProbeOutcome::Confirmed,
                    detail: format!(
                        "importing {} ends the probe's process ({}): {tail}",
                        module.unwrap_or("the module"),
                        self.ended
                    ),
                    call: module.map(|m| format!("import {m}")),
                    expected: None,
                    actual: Some(format!("the process ends ({})", self.ended)),
                    base: None,
                };
            };
            if a["kind"] == "raised" {
                let error = a["error"].as_str().unwrap_or("an error");
                let at = a["at"].as_str();
                let result = ProbeResult {
                    outcome: ProbeOutcome::Confirmed,
                    detail: format!(
                        "importing {} raises {error}{}",
                        module.unwrap_or("the module"),
                        at.map(|w| format!(" (at {w})")).unwrap_or_default()
                    ),
                    call: module.map(|m| format!("import {m}")),
                    expected: None,
                    actual: Some(format!("raises {error}")),
                    base: None,
                };
                // Only a line the change wrote, raising at import, is the change's doing.
                let changed = self
                    .about
                    .is_none_or(|a| at.is_some_and(|w| at_changed(w, a.changed)));
                return if changed {
                    result
                } else {
                    ProbeResult::broken(format!(
                        "the module under review does not import here: {}",
                        result.detail
                    ))
                };
            }
        }
        for step in steps {
            match step {
                Step::Exec {
                    op,
                    text,
                    sets,
                    uses,
                } => {
                    let Some(a) = self.answers.get(*op) else {
                        return self.unanswered();
                    };
                    let changed = self.ran_changed(a) || self.names_changed(uses);
                    if a["kind"] == "raised" {
                        let r = raised(text, a);
                        return self.counted(r, changed);
                    }
                    if changed {
                        self.tainted.extend(sets.iter().cloned());
                    }
                    for name in sets.iter().filter(|_| !changed) {
                        self.tainted.remove(name);
                    }
                }
                Step::Assert { cond, text } => match self.judge(cond, text) {
                    Judged::Holds { .. } => {}
                    Judged::Fails(r, changed) => return self.counted(*r, changed),
                    Judged::Stop(r) => return *r,
                },
            }
        }
        ProbeResult {
            outcome: ProbeOutcome::Refuted,
            detail: "the probe passes: every assertion holds".into(),
            call: None,
            expected: None,
            actual: None,
            base: None,
        }
    }

    /// A failure, counted when changed code computed a value in it (always, for examples).
    /// Only a confirmation is demoted: a probe that is itself broken (a name it never
    /// defined) stays broken, whatever it ran before.
    fn counted(&self, mut r: ProbeResult, changed: bool) -> ProbeResult {
        if self.about.is_some() && !changed && r.outcome == ProbeOutcome::Confirmed {
            r.outcome = ProbeOutcome::Irrelevant;
            r.detail = format!(
                "irrelevant: no value in its failure was computed by code the change added or modified ({})",
                r.detail
            );
        }
        r
    }

    /// The subject ended before answering what was needed.
    fn unanswered(&self) -> ProbeResult {
        ProbeResult::broken(format!(
            "the probe's process ended before it answered ({}): {}",
            self.ended,
            clip(self.tail.trim(), 300)
        ))
    }

    /// Whether an answer's traced function lines hold a changed one.
    fn ran_changed(&self, a: &Json) -> bool {
        let Some(about) = self.about else { return true };
        a["lines"].as_array().is_some_and(|lines| {
            lines.iter().any(|l| {
                let (Some(path), Some(line)) = (l[0].as_str(), l[1].as_u64()) else {
                    return false;
                };
                about
                    .changed
                    .get(path)
                    .is_some_and(|set| u32::try_from(line).is_ok_and(|n| set.contains(&n)))
            })
        })
    }

    /// Whether `uses` names a changed function, or a name set from one.
    fn names_changed(&self, uses: &[String]) -> bool {
        let Some(about) = self.about else { return true };
        uses.iter().any(|u| {
            (about.functions.contains(u) && !self.rebound.contains(u)) || self.tainted.contains(u)
        })
    }

    /// The value of an expression, or the result that stops the probe.
    fn value(&self, e: &Expr) -> Result<Got, Box<ProbeResult>> {
        match e {
            Expr::Lit(v) => Ok(Got {
                value: v.clone(),
                text: None,
                changed: false,
            }),
            Expr::Code { op, text, uses } => {
                let Some(a) = self.answers.get(*op) else {
                    return Err(Box::new(self.unanswered()));
                };
                let changed = self.ran_changed(a) || self.names_changed(uses);
                if a["kind"] == "raised" {
                    return Err(Box::new(self.counted(raised(text, a), changed)));
                }
                Ok(Got {
                    value: Value::from_json(&a["value"]),
                    text: Some(text.clone()),
                    changed,
                })
            }
        }
    }

    fn judge(&self, cond: &Cond, text: &str) -> Judged {
        match cond {
            Cond::And(parts) => {
                let mut changed = false;
                for p in parts {
                    match self.judge(p, text) {
                        Judged::Holds { changed: c } => changed |= c,
                        other => return other,
                    }
                }
                Judged::Holds { changed }
            }
            Cond::Or(parts) => {
                let mut last = None;
                let mut changed = false;
                for p in parts {
                    match self.judge(p, text) {
                        h @ Judged::Holds { .. } => return h,
                        Judged::Fails(r, c) => {
                            changed |= c;
                            last = Some(r);
                        }
                        stop => return stop,
                    }
                }
                match last {
                    Some(mut r) => {
                        r.detail = format!("`{text}` is false: {}", r.detail);
                        Judged::Fails(r, changed)
                    }
                    None => Judged::Holds { changed: false },
                }
            }
            Cond::Not(inner) => match self.judge(inner, text) {
                Judged::Holds { changed } => Judged::Fails(
                    Box::new(confirmed(
                        format!("`{text}` is false"),
                        text,
                        "true",
                        "false",
                    )),
                    changed,
                ),
                Judged::Fails(_, changed) => Judged::Holds { changed },
                stop => stop,
            },
            Cond::Truth(e) => {
                let got = match self.value(e) {
                    Ok(g) => g,
                    Err(r) => return Judged::Stop(r),
                };
                match got.value.truthy() {
                    Some(true) => Judged::Holds {
                        changed: got.changed,
                    },
                    Some(false) => {
                        let shown = clip(&got.value.render(), 300);
                        let call = got.text.clone().unwrap_or_else(|| text.to_string());
                        Judged::Fails(
                            Box::new(confirmed(format!("`{text}` is false"), &call, "true", &shown)),
                            got.changed,
                        )
                    }
                    None => Judged::Stop(Box::new(ProbeResult::broken(format!(
                        "`{text}` is {}: its own truth value would decide, and the code under review is not asked",
                        clip(&got.value.render(), 200)
                    )))),
                }
            }
            Cond::Cmp(l, op, r) => {
                let (left, right) = match (self.value(l), self.value(r)) {
                    (Err(e), _) | (_, Err(e)) => return Judged::Stop(e),
                    (Ok(a), Ok(b)) => (a, b),
                };
                let changed = left.changed || right.changed;
                match holds(op, &left.value, &right.value) {
                    Some(true) => Judged::Holds { changed },
                    Some(false) => {
                        // The side the code computed is the actual value; a literal is what
                        // the probe expects.
                        let swapped = left.text.is_none() && right.text.is_some();
                        let (actual, expected) = if swapped {
                            (&right, &left)
                        } else {
                            (&left, &right)
                        };
                        let call = actual.text.clone().unwrap_or_else(|| text.to_string());
                        let shown = |v: &Value| clip(&v.render(), 300);
                        let detail = if op == "==" {
                            format!(
                                "{call} returns {}, expected {}",
                                shown(&actual.value),
                                shown(&expected.value)
                            )
                        } else {
                            format!("`{text}` is false: {call} is {}", shown(&actual.value))
                        };
                        let expected_shown = if op == "==" {
                            shown(&expected.value)
                        } else {
                            format!("{op} {}", shown(&expected.value))
                        };
                        let mut result =
                            confirmed(detail, &call, &expected_shown, &shown(&actual.value));
                        result.call = Some(call);
                        Judged::Fails(Box::new(result), changed)
                    }
                    None => Judged::Stop(Box::new(ProbeResult::broken(format!(
                        "`{text}` cannot be decided outside the code's process: {} {op} {} (only plain data is compared)",
                        clip(&left.value.render(), 200),
                        clip(&right.value.render(), 200)
                    )))),
                }
            }
        }
    }
}

/// A confirmed failure.
fn confirmed(detail: String, call: &str, expected: &str, actual: &str) -> ProbeResult {
    ProbeResult {
        outcome: ProbeOutcome::Confirmed,
        detail,
        call: Some(call.to_string()),
        expected: Some(expected.to_string()),
        actual: Some(actual.to_string()),
        base: None,
    }
}

/// The failure of `text` raising as answer `a` says.
fn raised(text: &str, a: &Json) -> ProbeResult {
    let error = a["error"].as_str().unwrap_or("an error");
    match a["at"].as_str() {
        Some(at) => ProbeResult {
            outcome: ProbeOutcome::Confirmed,
            detail: format!("`{text}` raises {error} (at {at})"),
            call: Some(text.to_string()),
            expected: None,
            actual: Some(format!("raises {error}")),
            base: None,
        },
        None => ProbeResult::broken(format!("the probe itself fails: {error}")),
    }
}

/// Whether `path:line` is a line `changed` holds.
fn at_changed(at: &str, changed: &ChangedLines) -> bool {
    at.rsplit_once(':').is_some_and(|(path, line)| {
        changed
            .get(path)
            .is_some_and(|set| line.parse().is_ok_and(|n: u32| set.contains(&n)))
    })
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
