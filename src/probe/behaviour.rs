//! Behaviour diffs: the Python functions a change touches, called on the base and on the new
//! tree with the same inputs, and the inputs whose results differ.
//!
//! A review reads a diff; a one-line bug in a tested, documented function reads like a
//! cleanup. Running the function on both sides shows it: "`mean([1, 2])`: before 1.5, now
//! 1.0". The inputs are what the repository already says about the function (its tests'
//! calls and its docstring's `>>>` examples, with literal arguments), the TaskSpec's
//! examples, and a few made-up values of the kinds the function takes (its annotations, else
//! the kinds its known calls pass). Each call runs in the box with a few seconds of its own;
//! the results are read as plain data and compared outside the process ([`super::value`]),
//! so a refactor that changes behaviour is a fact, and a rename is none.
//!
//! The differences are facts with floors ([`BehaviourDiff::findings`]): a call that returned
//! at the base and now raises (an error the new code does not raise on purpose) or never
//! returns is a regression, at least REJECT as a regressed test is; any difference in a
//! change that says behaviour stays ([`Intent`]) is at least FLAG, and REJECT when the input
//! is one a docstring or the TaskSpec documents. An input the base rejects with a type error
//! is outside what the function takes, and what it does there is no difference.

use std::collections::BTreeSet;

use git2::{Repository, Tree};
use serde::{Deserialize, Serialize};

use super::python::PLAIN;
use super::sandbox::{quote, Sandbox};
use super::value::Value;
use super::{module_of, ChangedLines, ProbeSettings};
use crate::bounded::clip;
use crate::code::{
    example_calls, literal_calls, literal_kind, outline, required_params, test_path, Finding, Lang,
    Symbol, ValueKind,
};
use crate::git::TreeFiles;

/// The runner, compiled in.
const RUNNER: &str = include_str!("../../config/behaviour_runner.py");

/// Most calls tried per function.
const MAX_CALLS: usize = 40;

/// Most files read for a function's calls.
const MAX_FILES: usize = 400;

/// A call that did not return within the runner's limit counts as one that never returns
/// only when the base returned it within this many milliseconds: a call that was slow at
/// the base may only be slower on a busy machine.
const QUICK_MS: u64 = 1000;

/// Values made up for a parameter of each kind when nothing else says what it takes: small
/// values and the edges where a one-line change shows.
fn made_up(kind: ValueKind) -> &'static [&'static str] {
    match kind {
        ValueKind::Int => &["0", "1", "-1", "2", "7"],
        ValueKind::Float => &["0.5", "-1.5", "2.0"],
        ValueKind::Str => &["''", "'a b'"],
        ValueKind::Bool => &["True", "False"],
        ValueKind::List => &["[]", "[1, 2, 3]"],
        ValueKind::Tuple => &["()", "(1, 2)"],
        ValueKind::Dict => &["{}"],
        ValueKind::None => &["None"],
    }
}

/// The kinds made up for a parameter nothing describes.
const ANY: &[ValueKind] = &[
    ValueKind::Int,
    ValueKind::Str,
    ValueKind::List,
    ValueKind::None,
];

/// Where an input of a behaviour diff came from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputSource {
    /// A call in the repository's code or tests, with literal arguments.
    Test,
    /// A `>>>` example in the function's docstring.
    Docstring,
    /// An example of the TaskSpec.
    Task,
    /// Made up from what the function takes.
    #[default]
    MadeUp,
}

impl InputSource {
    /// Whether the input is one whose result someone wrote down (a docstring example, a
    /// TaskSpec example): a changed result there contradicts the documentation.
    pub fn documented(self) -> bool {
        matches!(self, InputSource::Docstring | InputSource::Task)
    }

    fn is_made_up(&self) -> bool {
        *self == InputSource::MadeUp
    }
}

/// One input whose result differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The call (`mean([1, 2])`).
    pub call: String,
    /// What it returned (or raised) on the base.
    pub before: String,
    /// What it returns (or raises) now.
    pub after: String,
    /// It returned at the base and now raises an error the new code does not raise on
    /// purpose, or never returns.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub regression: bool,
    /// Where the input came from.
    #[serde(default, skip_serializing_if = "InputSource::is_made_up")]
    pub input: InputSource,
    /// The file of the function, from the repository's root (empty in older records).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// The function's first line in the new tree (0: unknown).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub line: u32,
    /// Its last line.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub end_line: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What calling the changed functions on both trees showed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BehaviourDiff {
    /// The functions compared (`calc.py:mean`).
    pub functions: Vec<String>,
    /// How many calls gave a result on both trees.
    pub compared: usize,
    /// The calls whose results differ.
    pub differences: Vec<Difference>,
}

/// The finding kind of a change that alters what a function no requirement names does: a
/// bug fix that adds a check, an error or a new default to a neighbour of the function it
/// was asked to fix changes that neighbour's callers too, and no test need notice.
pub const UNASKED_CHANGE: &str = "unasked_behaviour_change";

/// The finding kind of a call that returned at the base and now raises or never returns: a
/// crash or a hang the change brought, whatever its message says (at least REJECT).
pub const BEHAVIOUR_REGRESSION: &str = "behaviour_regression";

/// The finding kind of a change that says behaviour stays (a refactor, a rename, a
/// simplification) while its functions give other results: at least FLAG, REJECT where the
/// changed result is one a docstring or the TaskSpec documents.
pub const BEHAVIOUR_CHANGED: &str = "behaviour_changed";

/// What a change says it does to behaviour, as far as its behaviour diff is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Intent {
    /// It says behaviour stays, and where it says so (`the commit message says
    /// "refactor"`, `the refactor stage`); `None` when it does not.
    pub keeps: Option<String>,
    /// The functions its requirements name: a difference elsewhere is unasked. Empty when
    /// none are named.
    pub named: Vec<String>,
}

/// Words with which a commit message or a task says the code's behaviour stays as it is.
const KEEPING: &[&str] = &[
    "refactor",
    "simplif",
    "rename",
    "clean up",
    "cleanup",
    "clean-up",
    "tidy",
    "restructur",
    "reorganis",
    "reorganiz",
    "extract",
    "inline",
    "dedup",
    "readab",
    "reformat",
    "no functional change",
    "no behaviour change",
    "no behavior change",
    "non-functional",
];

/// Words with which a text says it changes what the code does; beside them, a keeping word
/// describes how, not a promise that nothing changes ("simplify the parser and fix …").
const CHANGING: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "fixing",
    "bug",
    "bugs",
    "bugfix",
    "add",
    "adds",
    "added",
    "adding",
    "feat",
    "feature",
    "features",
    "support",
    "supports",
    "handle",
    "handles",
    "handled",
    "handling",
    "correct",
    "corrects",
    "corrected",
    "implement",
    "implements",
    "implemented",
    "allow",
    "allows",
    "allowed",
    "reject",
    "rejects",
    "rejected",
    "change behaviour",
    "change behavior",
    "changes behaviour",
    "changes behavior",
];

/// Where `text` (a commit message, a task's title and description) says behaviour stays:
/// the keeping word it uses, unless it also says it changes something. Conventional commit
/// types that promise no change in behaviour (`refactor:`, `style:`, `perf:`) count too.
pub fn keeps_behaviour(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    let first = lower.lines().next().unwrap_or_default().trim();
    let conventional = ["refactor", "style", "perf"].into_iter().find(|t| {
        first
            .strip_prefix(t)
            .is_some_and(|r| r.starts_with(':') || r.starts_with('(') || r.starts_with("!:"))
    });
    if let Some(t) = conventional {
        return Some(format!("\"{t}:\""));
    }
    let in_word = |c: char| c.is_alphanumeric() || c == '_';
    let starts_word = |at: usize| !lower[..at].chars().next_back().is_some_and(in_word);
    let whole = |w: &str| {
        lower.match_indices(w).any(|(at, _)| {
            starts_word(at) && !lower[at + w.len()..].chars().next().is_some_and(in_word)
        })
    };
    if CHANGING.iter().any(|w| whole(w)) {
        return None;
    }
    // A keeping word may be a stem (`simplif`: simplify, simplified): shown whole.
    KEEPING.iter().find_map(|w| {
        let (at, _) = lower.match_indices(w).find(|(at, _)| starts_word(*at))?;
        let rest = &lower[at + w.len()..];
        let tail = rest
            .find(|c: char| !c.is_alphanumeric())
            .unwrap_or(rest.len());
        Some(format!("\"{}\"", &lower[at..at + w.len() + tail]))
    })
}

impl Difference {
    /// The name of the function the call calls (`mean` for `mean([1, 2])`).
    pub fn function(&self) -> &str {
        self.call.split('(').next().unwrap_or_default().trim()
    }

    /// The one-line fact: the call, before and after.
    pub fn shown(&self) -> String {
        format!(
            "`{}`: before {}, now {}",
            self.call, self.before, self.after
        )
    }
}

impl BehaviourDiff {
    /// The part of the diff about functions not in `named` (bare function names): what a
    /// change did beyond what it was asked to.
    pub fn outside(&self, named: &[String]) -> BehaviourDiff {
        let asked = |f: &str| named.iter().any(|n| n == f);
        BehaviourDiff {
            functions: self
                .functions
                .iter()
                .filter(|f| !asked(f.rsplit(':').next().unwrap_or(f)))
                .cloned()
                .collect(),
            compared: self.compared,
            differences: self
                .differences
                .iter()
                .filter(|d| !asked(d.function()))
                .cloned()
                .collect(),
        }
    }

    /// The finding for what this diff shows outside `named` (the functions the requirements
    /// name): `None` when no requirement names a function, or nothing else gives other
    /// results.
    pub fn unasked(&self, named: &[String]) -> Option<Finding> {
        if named.is_empty() {
            return None;
        }
        let out = self.outside(named);
        let d = out.differences.first()?;
        Some(finding(
            UNASKED_CHANGE,
            "warning",
            d,
            format!(
                "it changes what {} does, which no requirement names: {} input(s) give other results ({}: before {}, now {})",
                d.function(),
                out.differences.len(),
                d.call,
                d.before,
                d.after
            ),
        ))
    }

    /// The facts this diff establishes for a change that says `intent`: a finding per
    /// function with a regression (critical), per function whose results changed where the
    /// change says behaviour stays (critical on a documented input, else a warning), and
    /// otherwise the change to functions no requirement names ([`Self::unasked`]).
    pub fn findings(&self, intent: &Intent) -> Vec<Finding> {
        let mut found = Vec::new();
        let mut functions: Vec<(&str, &str)> = Vec::new();
        for d in &self.differences {
            if !functions.contains(&(d.path.as_str(), d.function())) {
                functions.push((d.path.as_str(), d.function()));
            }
        }
        for (path, name) in functions {
            let of: Vec<&Difference> = self
                .differences
                .iter()
                .filter(|d| d.path == path && d.function() == name)
                .collect();
            let more = |n: usize| match n {
                0 | 1 => String::new(),
                n => format!(" ({} more input(s) differ)", n - 1),
            };
            let regressions: Vec<&&Difference> = of.iter().filter(|d| d.regression).collect();
            if let Some(d) = regressions.first() {
                found.push(finding(
                    BEHAVIOUR_REGRESSION,
                    "critical",
                    d,
                    format!(
                        "{name} regressed: `{}` returned {} at the base and now {}{}",
                        d.call,
                        d.before,
                        if d.after.starts_with("raises") {
                            d.after.clone()
                        } else {
                            format!("gives {}", d.after)
                        },
                        more(regressions.len())
                    ),
                ));
            }
            let Some(why) = &intent.keeps else {
                continue;
            };
            let changed: Vec<&&Difference> = of.iter().filter(|d| !d.regression).collect();
            let Some(first) = changed
                .iter()
                .find(|d| d.input.documented())
                .or(changed.first())
            else {
                continue;
            };
            let documented = first.input.documented();
            found.push(finding(
                BEHAVIOUR_CHANGED,
                if documented { "critical" } else { "warning" },
                first,
                format!(
                    "{why} says behaviour stays, but {name} gives other results: {}{}{}",
                    first.shown(),
                    if documented {
                        match first.input {
                            InputSource::Task => " (a TaskSpec example)",
                            _ => " (its docstring's example)",
                        }
                    } else {
                        ""
                    },
                    more(changed.len())
                ),
            ));
        }
        if intent.keeps.is_none() {
            found.extend(self.unasked(&intent.named));
        }
        found
    }

    /// The diff as a fact for a model, or `None` when no function was compared. Each
    /// difference is labelled (`B1`) so a reviewer can cite it instead of quoting code.
    pub fn render(&self) -> Option<String> {
        if self.functions.is_empty() {
            return None;
        }
        let mut s = String::from("## Behaviour diff (a fact: the changed functions, run on the base and on the change)\n");
        if self.differences.is_empty() {
            s.push_str(&format!(
                "{} give the same results on all {} inputs tried.\n",
                self.functions.join(", "),
                self.compared
            ));
        } else {
            s.push_str("These inputs give different results now (cite a label, e.g. `B1`, in an issue about it):\n");
            for (i, d) in self.differences.iter().enumerate() {
                s.push_str(&format!(
                    "- B{}: {}{}\n",
                    i + 1,
                    d.shown(),
                    if d.regression { " (a regression)" } else { "" }
                ));
            }
        }
        Some(s)
    }

    /// The difference an issue's `text` cites by label (`B2`), if any.
    pub fn cited(&self, text: &str) -> Option<&Difference> {
        text.split(|c: char| !c.is_ascii_alphanumeric())
            .filter_map(|w| w.strip_prefix('B')?.parse::<usize>().ok())
            .find_map(|n| self.differences.get(n.checked_sub(1)?))
    }
}

/// A finding of `kind` about the function `d` calls.
fn finding(kind: &str, severity: &str, d: &Difference, reason: String) -> Finding {
    Finding {
        kind: kind.into(),
        category: "logic".into(),
        severity: severity.into(),
        path: d.path.clone(),
        line: d.line,
        end_line: d.end_line,
        symbol: (d.line > 0).then(|| Symbol {
            kind: "function".into(),
            name: d.function().to_string(),
            start_line: d.line,
            end_line: d.end_line,
        }),
        import: None,
        reason,
    }
}

/// A call to make on both trees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Call {
    module: String,
    function: String,
    args: Vec<String>,
    /// Where the input came from (not sent to the runner).
    #[serde(skip)]
    input: InputSource,
    /// The function's file and lines in the new tree (not sent to the runner).
    #[serde(skip)]
    at: (String, u32, u32),
}

impl Call {
    fn shown(&self) -> String {
        format!("{}({})", self.function, self.args.join(", "))
    }
}

/// What one call gave on one tree.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    /// It returned this value, in this many milliseconds.
    Value(Value, u64),
    /// It raised an exception of this type.
    Raised(String),
    /// It did not return within the runner's limit.
    Hung(String),
}

impl Got {
    fn shown(&self) -> String {
        match self {
            Got::Value(v, _) => clip(&v.render(), 200),
            Got::Raised(e) => format!("raises {e}"),
            Got::Hung(why) => format!("raises {why}"),
        }
    }

    fn same(&self, other: &Got) -> bool {
        match (self, other) {
            // Equal as data, or shown alike (`nan`, an object of one type on both sides).
            (Got::Value(a, _), Got::Value(b, _)) => a.equals(b) || a.render() == b.render(),
            (Got::Raised(a), Got::Raised(b)) => a == b,
            (Got::Hung(_), Got::Hung(_)) => true,
            _ => false,
        }
    }

    /// Whether the base's answer says the input is not one the function takes: it
    /// rejected the argument's type (`TypeError`; for a made-up input also an
    /// `AttributeError`, a method the value's type lacks).
    fn rejects_type(&self, input: InputSource) -> bool {
        matches!(self, Got::Raised(e) if e == "TypeError"
            || (input == InputSource::MadeUp && e == "AttributeError"))
    }
}

/// Whether `after` on a call that gave `before` at the base is a regression: it returned
/// (quickly) and now never returns, or now raises an error the changed code does not raise
/// on purpose (`deliberate`: the exception types raised in its changed lines or its own
/// body).
fn regressed(before: &Got, after: &Got, deliberate: &[String]) -> bool {
    match (before, after) {
        (Got::Value(_, ms), Got::Hung(_)) => *ms < QUICK_MS,
        (Got::Value(..), Got::Raised(e)) => !deliberate.iter().any(|d| d == e),
        _ => false,
    }
}

/// The exception types `source` raises on purpose in `lines` (1-based): the last name of
/// each `raise X` / `raise X(...)`, and `AssertionError` for an `assert`.
fn raised_on_purpose(source: &str, lines: impl Fn(u32) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (i, line) in source.lines().enumerate() {
        if !lines(i as u32 + 1) {
            continue;
        }
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("raise ") {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            if let Some(last) = name.rsplit('.').next().filter(|n| !n.is_empty()) {
                found.push(last.to_string());
            }
        } else if t.starts_with("assert ") || t.starts_with("assert(") {
            found.push("AssertionError".into());
        }
    }
    found
}

/// Calls the Python functions of `new` that `changed` touches (and `base` defines too) on
/// both trees, with their inputs (`examples`: the TaskSpec's calls, source text), in the box
/// `settings` says. Returns an empty diff when there is nothing to compare; the error is a
/// sentence for the record.
pub fn behaviour_diff(
    repo: &Repository,
    base: &Tree<'_>,
    new: &Tree<'_>,
    changed: &ChangedLines,
    examples: &[String],
    settings: &ProbeSettings,
) -> Result<BehaviourDiff, String> {
    let (before, after) = (
        TreeFiles::new(repo, base.clone()),
        TreeFiles::new(repo, new.clone()),
    );
    let mut calls = Vec::new();
    let mut functions = Vec::new();
    let mut deliberate: Vec<(String, Vec<String>)> = Vec::new();
    for (path, lines) in changed {
        if Lang::from_path(path) != Some(Lang::Python) || test_path(path) {
            continue;
        }
        let (Some(module), Some(old_text), Some(new_text)) =
            (module_of(path), before.text(path), after.text(path))
        else {
            continue;
        };
        let in_base: BTreeSet<String> = outline(Lang::Python, &old_text)
            .into_iter()
            .filter(|s| s.kind == "function")
            .map(|s| s.name)
            .collect();
        for f in outline(Lang::Python, &new_text) {
            let touched = lines
                .iter()
                .any(|l| (f.start_line..=f.end_line).contains(l));
            if f.kind != "function" || !touched || !in_base.contains(&f.name) {
                continue;
            }
            let inputs = inputs(&after, &before, &new_text, &old_text, &f.name, examples);
            if inputs.is_empty() {
                continue;
            }
            let own = f.start_line..=f.end_line;
            deliberate.push((
                format!("{path}:{}", f.name),
                raised_on_purpose(&new_text, |l| lines.contains(&l) || own.contains(&l)),
            ));
            functions.push(format!("{path}:{}", f.name));
            calls.extend(inputs.into_iter().map(|(args, input)| Call {
                module: module.clone(),
                function: f.name.clone(),
                args,
                input,
                at: (path.clone(), f.start_line, f.end_line),
            }));
        }
    }
    if calls.is_empty() {
        return Ok(BehaviourDiff::default());
    }
    let old = run(repo, base, &calls, settings)?;
    let now = run(repo, new, &calls, settings)?;
    let mut diff = BehaviourDiff {
        functions,
        ..BehaviourDiff::default()
    };
    for (i, call) in calls.iter().enumerate() {
        let (Some(Some(a)), Some(Some(b))) = (old.get(i), now.get(i)) else {
            continue;
        };
        // An input the base refuses by its type is not one the function takes.
        if a.rejects_type(call.input) {
            continue;
        }
        diff.compared += 1;
        if !a.same(b) {
            let key = format!("{}:{}", call.at.0, call.function);
            let on_purpose = deliberate
                .iter()
                .find(|(k, _)| *k == key)
                .map_or(&[][..], |(_, d)| d.as_slice());
            diff.differences.push(Difference {
                call: call.shown(),
                before: a.shown(),
                after: b.shown(),
                regression: regressed(a, b, on_purpose),
                input: call.input,
                path: call.at.0.clone(),
                line: call.at.1,
                end_line: call.at.2,
            });
        }
    }
    Ok(diff)
}

/// The kinds of value each of `function`'s required parameters takes: its annotation's,
/// else those of the literal arguments its known calls (`known`) pass at that position,
/// else any (`None`: the parameters are not known).
fn domains(source: &str, function: &str, known: &[Vec<String>]) -> Option<Vec<Vec<ValueKind>>> {
    let params = required_params(source, function)?;
    Some(
        params
            .iter()
            .enumerate()
            .map(|(i, p)| match &p.kinds {
                Some(kinds) => kinds.clone(),
                None => {
                    let mut seen: Vec<ValueKind> = known
                        .iter()
                        .filter(|args| args.len() == params.len())
                        .filter_map(|args| literal_kind(&args[i]))
                        .collect();
                    seen.sort();
                    seen.dedup();
                    if seen.is_empty() {
                        ANY.to_vec()
                    } else {
                        seen
                    }
                }
            })
            .collect(),
    )
}

/// The inputs to try on `function`, each with where it came from: the literal calls of it in
/// the tree's Python files (test files first, both sides), its docstring examples, the
/// TaskSpec's examples that call it, and made-up values of the kinds it takes; distinct, at
/// most [`MAX_CALLS`]. `source` and `base_source` are the function's file on each side.
fn inputs(
    after: &TreeFiles<'_>,
    before: &TreeFiles<'_>,
    source: &str,
    base_source: &str,
    function: &str,
    examples: &[String],
) -> Vec<(Vec<String>, InputSource)> {
    let mut found: Vec<(Vec<String>, InputSource)> = Vec::new();
    let add =
        |args: Vec<String>, from: InputSource, found: &mut Vec<(Vec<String>, InputSource)>| {
            if found.len() >= MAX_CALLS {
                return;
            }
            match found.iter_mut().find(|(a, _)| *a == args) {
                // Written down is the stronger claim: a docstring example that a test calls too
                // is a documented input.
                Some((_, seen)) if from.documented() && !seen.documented() => *seen = from,
                Some(_) => {}
                None => found.push((args, from)),
            }
        };
    for files in [after, before] {
        let mut paths: Vec<String> = files
            .paths()
            .into_iter()
            .filter(|p| Lang::from_path(p) == Some(Lang::Python))
            .take(MAX_FILES)
            .collect();
        paths.sort_by_key(|p| !test_path(p));
        for p in paths {
            if let Some(text) = files.text(&p).filter(|t| t.contains(function)) {
                for args in literal_calls(&text, function, MAX_CALLS) {
                    add(args, InputSource::Test, &mut found);
                }
            }
        }
    }
    // The base's docstring documents what the function did; the new one what it does.
    for text in [base_source, source] {
        for args in example_calls(text, function, MAX_CALLS) {
            add(args, InputSource::Docstring, &mut found);
        }
    }
    for e in examples {
        for args in literal_calls(e, function, 1) {
            add(args, InputSource::Task, &mut found);
        }
    }
    let known: Vec<Vec<String>> = found.iter().map(|(a, _)| a.clone()).collect();
    let Some(domains) = domains(source, function, &known) else {
        return found;
    };
    // A few values of each parameter's kinds: more for one parameter, fewer for three.
    let per = match domains.len() {
        1 => 10,
        2 => 4,
        3 => 2,
        _ => return found,
    };
    let values: Vec<Vec<&str>> = domains
        .iter()
        .map(|kinds| {
            let mut v: Vec<&str> = Vec::new();
            // Round robin over the kinds, so each kind gets its edges in.
            let lists: Vec<&[&str]> = kinds.iter().map(|k| made_up(*k)).collect();
            let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
            for i in 0..longest {
                for l in &lists {
                    if let Some(x) = l.get(i) {
                        v.push(x);
                    }
                }
            }
            v.truncate(per);
            v
        })
        .collect();
    let mut combos: Vec<Vec<String>> = vec![Vec::new()];
    for vs in &values {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vs.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((*v).to_string());
                    c
                })
            })
            .collect();
    }
    for args in combos {
        add(args, InputSource::MadeUp, &mut found);
    }
    found
}

/// Runs `calls` on a scratch copy of `tree` in the box: what each gave, by index (`None`:
/// it could not be called there).
fn run(
    repo: &Repository,
    tree: &Tree<'_>,
    calls: &[Call],
    settings: &ProbeSettings,
) -> Result<Vec<Option<Got>>, String> {
    let sb = Sandbox::export(repo, tree)?;
    let scratch = sb.scratch();
    let runner = scratch.join("behaviour_runner.py");
    let calls_file = scratch.join("calls.json");
    let nonce_file = scratch.join("nonce");
    let frames_file = scratch.join("frames");
    let nonce = format!("{:032x}", rand::random::<u128>());
    let json = serde_json::to_string(calls).map_err(|e| e.to_string())?;
    std::fs::write(&runner, RUNNER)
        .and_then(|()| std::fs::write(scratch.join("triad_plain.py"), PLAIN))
        .and_then(|()| std::fs::write(&calls_file, json))
        .and_then(|()| std::fs::write(&nonce_file, &nonce))
        .map_err(|e| format!("the behaviour runner could not be written: {e}"))?;
    let root = sb.root();
    let mut paths = vec![root.display().to_string()];
    if root.join("src").is_dir() && !root.join("src").join("__init__.py").is_file() {
        paths.push(root.join("src").display().to_string());
    }
    let command = format!(
        "{} {} {} {} {}",
        quote(&settings.python),
        quote(&runner.display().to_string()),
        quote(&calls_file.display().to_string()),
        quote(&nonce_file.display().to_string()),
        quote(&frames_file.display().to_string()),
    );
    let env = [
        ("PYTHONPATH", paths.join(":")),
        ("PYTHONDONTWRITEBYTECODE", "1".into()),
        ("PYTHONIOENCODING", "utf-8".into()),
    ]
    .map(|(k, v)| (k.to_string(), v));
    let timeout = settings
        .timeout
        .max(std::time::Duration::from_secs(4 * calls.len() as u64 + 10));
    let out = sb.command(settings, &root, &command, timeout, &env);
    if out.refused() {
        return Err(out.tail);
    }
    let written = std::fs::read(&frames_file).unwrap_or_default();
    let mut got: Vec<Option<Got>> = vec![None; calls.len()];
    for frame in String::from_utf8_lossy(&written)
        .lines()
        .filter_map(|l| l.strip_prefix(nonce.as_str())?.strip_prefix(' '))
        .filter_map(|f| serde_json::from_str::<serde_json::Value>(f).ok())
    {
        let Some(i) = frame["i"].as_u64().and_then(|i| usize::try_from(i).ok()) else {
            continue;
        };
        let Some(slot) = got.get_mut(i) else {
            continue;
        };
        if frame.get("value").is_some() {
            let ms = frame["ms"].as_u64().unwrap_or(0);
            *slot = Some(Got::Value(Value::from_json(&frame["value"]), ms));
        } else if let Some(e) = frame["raised"].as_str() {
            *slot = Some(if e.starts_with("did not return") {
                Got::Hung(e.to_string())
            } else {
                Got::Raised(e.to_string())
            });
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff() -> BehaviourDiff {
        let d = |call: &str| Difference {
            call: call.into(),
            before: "1".into(),
            after: "2".into(),
            regression: false,
            input: InputSource::MadeUp,
            path: "pager.py".into(),
            line: 3,
            end_line: 9,
        };
        BehaviourDiff {
            functions: vec!["pager.py:page".into(), "pager.py:page_label".into()],
            compared: 12,
            differences: vec![d("page([1, 2], 1, 1)"), d("page_label(7, 5)")],
        }
    }

    #[test]
    fn outside_keeps_only_the_functions_no_requirement_names() {
        let out = diff().outside(&["page".into()]);
        assert_eq!(out.functions, ["pager.py:page_label"]);
        assert_eq!(out.differences.len(), 1);
        assert_eq!(out.differences[0].function(), "page_label");
        // A name is matched whole: `page` does not cover `page_label`.
        assert!(diff()
            .outside(&["page_label".into(), "page".into()])
            .differences
            .is_empty());
        assert_eq!(diff().outside(&[]).differences.len(), 2);
        let f = diff().unasked(&["page".into()]).unwrap();
        assert_eq!(f.kind, UNASKED_CHANGE);
        assert!(
            f.reason.starts_with("it changes what page_label does"),
            "{}",
            f.reason
        );
        // Without named functions there is no "asked" to go beyond.
        assert!(diff().unasked(&[]).is_none());
    }

    #[test]
    fn a_message_says_behaviour_stays_with_its_own_words_unless_it_changes_something() {
        for (text, said) in [
            ("simplify the loop", Some("\"simplify\"")),
            ("Refactor: split parse()", Some("\"refactor:\"")),
            ("refactor(parser): inline helper", Some("\"refactor:\"")),
            ("Tidy up stats.py", Some("\"tidy\"")),
            ("rename total to acc", Some("\"rename\"")),
            (
                "Cleaned up the code, no functional change",
                Some("\"no functional change\""),
            ),
            ("Simplify the parser and fix the off-by-one", None),
            ("add support for hours", None),
            ("update mean", None),
            ("prefix_simplify", None),
        ] {
            assert_eq!(keeps_behaviour(text).as_deref(), said, "{text}");
        }
    }

    fn differ(call: &str, input: InputSource, regression: bool) -> Difference {
        Difference {
            call: call.into(),
            before: "7".into(),
            after: if regression {
                "raises RecursionError".into()
            } else {
                "8".into()
            },
            regression,
            input,
            path: "calc.py".into(),
            line: 4,
            end_line: 12,
        }
    }

    #[test]
    fn differences_are_facts_with_floors_by_what_the_change_says() {
        let keeps = Intent {
            keeps: Some("the commit message's \"simplify\"".into()),
            named: Vec::new(),
        };
        let changes = Intent::default();
        let one = |ds: Vec<Difference>| BehaviourDiff {
            functions: vec!["calc.py:total".into()],
            compared: 10,
            differences: ds,
        };
        // A regression is critical whatever the change says, anchored to its function.
        let d = one(vec![differ("total(3)", InputSource::MadeUp, true)]);
        for intent in [&keeps, &changes] {
            let f = d.findings(intent);
            assert_eq!(f.len(), 1, "{f:?}");
            assert_eq!(
                (f[0].kind.as_str(), f[0].severity.as_str()),
                (BEHAVIOUR_REGRESSION, "critical")
            );
            assert_eq!(
                (f[0].path.as_str(), f[0].line, f[0].end_line),
                ("calc.py", 4, 12)
            );
            assert_eq!(f[0].symbol.as_ref().unwrap().name, "total");
            assert!(
                f[0].reason
                    .contains("`total(3)` returned 7 at the base and now raises RecursionError"),
                "{}",
                f[0].reason
            );
        }
        // Another result where the change says behaviour stays: a warning on a made-up
        // input, critical on a documented one; nothing where the change means to change.
        let made = one(vec![differ("total(3)", InputSource::MadeUp, false)]);
        let f = made.findings(&keeps);
        assert_eq!(
            (f[0].kind.as_str(), f[0].severity.as_str()),
            (BEHAVIOUR_CHANGED, "warning")
        );
        assert!(made.findings(&changes).is_empty());
        let doc = one(vec![
            differ("total(3)", InputSource::MadeUp, false),
            differ("total(4)", InputSource::Docstring, false),
        ]);
        let f = doc.findings(&keeps);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, "critical");
        assert!(
            f[0].reason.contains("`total(4)`") && f[0].reason.contains("docstring"),
            "{}",
            f[0].reason
        );
        // A label cites a difference.
        assert_eq!(doc.cited("see B2 above").unwrap().call, "total(4)");
        assert!(doc.cited("B3, B0, AB1").is_none());
        assert!(doc
            .render()
            .unwrap()
            .contains("- B2: `total(4)`: before 7, now 8"));
    }

    #[test]
    fn a_regression_is_a_return_that_now_crashes_by_accident_or_hangs() {
        let value = |ms| Got::Value(Value::Int("7".into()), ms);
        let hung = Got::Hung("did not return in 3 s".into());
        assert!(regressed(&value(2), &hung, &[]));
        // Slow at the base: slower now may be the machine.
        assert!(!regressed(&value(2500), &hung, &[]));
        let raised = Got::Raised("ValueError".into());
        assert!(regressed(&value(2), &raised, &[]));
        assert!(!regressed(&value(2), &raised, &["ValueError".into()]));
        assert!(!regressed(&raised, &value(2), &[]));
        assert!(!regressed(&Got::Raised("KeyError".into()), &raised, &[]));
        let src = "def f(x):\n    if x < 0:\n        raise errors.ValueError('no')\n    assert x\n    raise KeyError\n";
        assert_eq!(
            raised_on_purpose(src, |l| l <= 4),
            ["ValueError", "AssertionError"]
        );
        // What the base refuses by type is outside the function's domain.
        assert!(Got::Raised("TypeError".into()).rejects_type(InputSource::Test));
        assert!(Got::Raised("AttributeError".into()).rejects_type(InputSource::MadeUp));
        assert!(!Got::Raised("AttributeError".into()).rejects_type(InputSource::Docstring));
    }
}
