//! Python probes: statements with `assert`, judged here from values the code under review
//! computed in another process.
//!
//! Three parties, two processes in the box and git triad: the planner
//! (`config/probe_planner.py`) reads the probe and never imports the code under review: it
//! says which statements run, which expressions are evaluated, and reads the literal values
//! the probe expects. The subject (`config/probe_runner.py`) imports the code and evaluates
//! what it is asked, answering plain values: it never sees an expected value, compares
//! nothing and has no verdict to give. git triad compares, outside both ([`super::value`]).
//! Code that walks the subject's frames to its channel can answer for its own evaluations
//! (as returning a value would), never learn what the probe expects or say "passed".
//!
//! A failure counts only when a value computed by changed code is in it: the failing
//! comparison's value came from a call whose function lines the change added or modified
//! (traced in function frames only: the `def` lines run at import are not running the
//! function), or names a changed function, or a name a statement set from one.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use super::result::{ChangedLines, ProbeOutcome, ProbeResult};
use super::sandbox::{quote, Sandbox};
use super::settings::ProbeSettings;
use super::value::Value;
use crate::bounded::clip;
use crate::code::test_path;
use crate::git::export::{read_inside, write_inside};

/// The subject, compiled in.
const RUNNER: &str = include_str!("../../config/probe_runner.py");

/// The planner, compiled in.
const PLANNER: &str = include_str!("../../config/probe_planner.py");

/// The plain-data reader the subject and the behaviour runner share, compiled in.
pub(super) const PLAIN: &str = include_str!("../../config/triad_plain.py");

/// What a failure must involve to be about the change under review.
pub(super) struct About<'a> {
    /// The lines the change added or modified.
    pub changed: &'a ChangedLines,
    /// The functions whose definitions hold such a line.
    pub functions: &'a BTreeSet<String>,
}

/// Runs one Python probe about `path` in `sb`; with `about`, a failure counts only when a
/// value changed code computed is in it ([`ProbeOutcome::Irrelevant`] otherwise).
pub(super) fn run(
    sb: &Sandbox,
    settings: &ProbeSettings,
    path: &str,
    code: &str,
    about: Option<&About<'_>>,
) -> ProbeResult {
    let scratch = sb.scratch();
    let n = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
    let plan = match plan(sb, settings, code, n) {
        Ok(p) => p,
        Err(r) => return *r,
    };
    let mut ops: Vec<Json> = Vec::new();
    let module = module_of(path).filter(|_| !test_path(path));
    if let Some(m) = &module {
        ops.push(serde_json::json!({ "import": m }));
    }
    let imports = ops.len();
    let steps = plan
        .iter()
        .map(|s| Step::read(s, &mut ops))
        .collect::<Vec<_>>();
    let nonce = format!("{:032x}", rand::random::<u128>());
    let (ops_file, nonce_file, frames_file) = (
        format!("ops_{n}.json"),
        format!("nonce_{n}"),
        format!("answers_{n}"),
    );
    let written = write_inside(&scratch, "probe_runner.py", RUNNER.as_bytes())
        .and_then(|()| write_inside(&scratch, "triad_plain.py", PLAIN.as_bytes()))
        .and_then(|()| write_inside(&scratch, &ops_file, Json::Array(ops).to_string().as_bytes()))
        .and_then(|()| write_inside(&scratch, &nonce_file, nonce.as_bytes()));
    if let Err(e) = written {
        return ProbeResult::broken(format!("the probe could not be written: {e}"));
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&scratch.join("probe_runner.py").display().to_string()),
        quote(&scratch.join(&ops_file).display().to_string()),
        quote(&scratch.join(&nonce_file).display().to_string()),
        quote(&scratch.join(&frames_file).display().to_string()),
    );
    let outcome = sb.command(
        settings,
        &sb.root(),
        &command,
        settings.timeout,
        &python_env(sb),
    );
    if outcome.refused() {
        return ProbeResult::unprobed(format!("not run: {}", outcome.tail));
    }
    if outcome.timed_out {
        return ProbeResult::broken(format!(
            "cut off: the probe did not finish in {} s",
            settings.timeout.as_secs()
        ));
    }
    let answers = match answers(
        &read_inside(&scratch, &frames_file).unwrap_or_default(),
        &nonce,
    ) {
        Ok(a) => a,
        Err(why) => return ProbeResult::broken(why),
    };
    let ended = outcome
        .exit_code
        .map_or("killed".to_string(), |c| format!("exit {c}"));
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
        answers: &answers,
        about,
        imports,
        ended: &ended,
        tail: &outcome.tail,
        tainted: BTreeSet::new(),
        rebound,
    };
    judge.decide(&steps, module.as_deref())
}

/// The environment of the probe's processes: the tree (and its `src/`) importable.
fn python_env(sb: &Sandbox) -> Vec<(String, String)> {
    let root = sb.root();
    let mut paths = vec![root.display().to_string()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src").display().to_string());
    }
    [
        ("PYTHONPATH", paths.join(":")),
        ("PYTHONDONTWRITEBYTECODE", "1".to_string()),
        ("PYTHONIOENCODING", "utf-8".to_string()),
    ]
    .map(|(k, v)| (k.to_string(), v))
    .to_vec()
}

/// The probe's steps as the planner read them (in the box, without the code under
/// review); the probe's text is gone from the scratch directory before the subject starts.
fn plan(
    sb: &Sandbox,
    settings: &ProbeSettings,
    code: &str,
    n: usize,
) -> Result<Vec<Json>, Box<ProbeResult>> {
    let scratch = sb.scratch();
    let nonce = format!("{:032x}", rand::random::<u128>());
    let (probe, nonce_file, frames) = (
        format!("probe_{n}.py"),
        format!("plan_nonce_{n}"),
        format!("plan_{n}"),
    );
    let written = write_inside(&scratch, "probe_planner.py", PLANNER.as_bytes())
        .and_then(|()| write_inside(&scratch, "triad_plain.py", PLAIN.as_bytes()))
        .and_then(|()| write_inside(&scratch, &probe, code.as_bytes()))
        .and_then(|()| write_inside(&scratch, &nonce_file, nonce.as_bytes()));
    if let Err(e) = written {
        return Err(Box::new(ProbeResult::broken(format!(
            "the probe could not be written: {e}"
        ))));
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&scratch.join("probe_planner.py").display().to_string()),
        quote(&scratch.join(&nonce_file).display().to_string()),
        quote(&scratch.join(&frames).display().to_string()),
        quote(&scratch.join(&probe).display().to_string()),
    );
    let out = sb.command(settings, &scratch, &command, settings.timeout, &[]);
    let read = read_inside(&scratch, &frames).unwrap_or_default();
    for gone in [&probe, &frames, &nonce_file] {
        let _ = std::fs::remove_file(scratch.join(gone));
    }
    if out.refused() {
        return Err(Box::new(ProbeResult::unprobed(format!(
            "not run: {}",
            out.tail
        ))));
    }
    let text = String::from_utf8_lossy(&read);
    let frame = text
        .lines()
        .find_map(|l| l.strip_prefix(nonce.as_str())?.strip_prefix(' '))
        .and_then(|f| serde_json::from_str::<Json>(f).ok());
    match frame {
        Some(f) if f["broken"].is_string() => Err(Box::new(ProbeResult::broken(
            f["broken"].as_str().unwrap_or("broken").to_string(),
        ))),
        Some(f) => Ok(f["steps"].as_array().cloned().unwrap_or_default()),
        None => Err(Box::new(ProbeResult::broken(format!(
            "the probe could not be read: {}",
            clip(out.tail.trim(), 300)
        )))),
    }
}

/// The subject's answers marked with `nonce`, one per operation in order; a second answer
/// to one operation, or one out of order, is the code under review writing into the
/// channel.
fn answers(written: &[u8], nonce: &str) -> Result<Vec<Json>, String> {
    let mut found = Vec::new();
    for frame in String::from_utf8_lossy(written)
        .lines()
        .filter_map(|l| l.strip_prefix(nonce)?.strip_prefix(' '))
        .filter_map(|f| serde_json::from_str::<Json>(f).ok())
    {
        if frame["k"].as_u64() != Some(found.len() as u64) {
            return Err(
                "the probe's answers are not one per question in order: the code under review wrote into its channel".into(),
            );
        }
        found.push(frame);
    }
    Ok(found)
}

/// An expression of the probe: a literal the planner read, or code the subject evaluated
/// (operation `op`).
#[derive(Debug)]
enum Expr {
    Lit(Value),
    Code {
        op: usize,
        text: String,
        uses: Vec<String>,
    },
}

/// A condition of an assertion.
#[derive(Debug)]
enum Cond {
    And(Vec<Cond>),
    Or(Vec<Cond>),
    Not(Box<Cond>),
    Cmp(Expr, String, Expr),
    Truth(Expr),
}

/// A top-level statement of the probe.
#[derive(Debug)]
enum Step {
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
    fn read(j: &Json, ops: &mut Vec<Json>) -> Step {
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
