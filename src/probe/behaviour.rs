//! Behaviour diffs: the Python functions a change touches, called on the base and on the new
//! tree with the same inputs, and the inputs whose results differ.
//!
//! A review reads a diff; a one-line bug in a tested, documented function reads like a
//! cleanup. Running the function on both sides shows it: "`mean([1, 2])`: before 1.5, now
//! 1.0". The inputs are what the repository already says about the function (its tests'
//! calls and its docstring's `>>>` examples, with literal arguments), the TaskSpec's
//! examples, and a few made-up values of the right arity. Each call runs in the box with a
//! few seconds of its own; the results are read as plain data and compared outside the
//! process ([`super::value`]), so a refactor that changes behaviour is a fact, and a rename
//! is none.

use std::collections::BTreeSet;

use git2::{Repository, Tree};
use serde::{Deserialize, Serialize};

use super::python::PLAIN;
use super::sandbox::{quote, Sandbox};
use super::value::Value;
use super::{module_of, ChangedLines, ProbeSettings};
use crate::bounded::clip;
use crate::code::{
    example_calls, literal_calls, outline, required_params, test_path, Finding, Lang,
};
use crate::git::TreeFiles;

/// The runner, compiled in.
const RUNNER: &str = include_str!("../../config/behaviour_runner.py");

/// Most calls tried per function.
const MAX_CALLS: usize = 40;

/// Most files read for a function's calls.
const MAX_FILES: usize = 400;

/// Values made up for a function's arguments when nothing else says what it takes: small
/// numbers, strings and lists, the edges where a one-line change shows.
const MADE_UP: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "7",
    "''",
    "'a b'",
    "[]",
    "[1, 2, 3]",
    "None",
];

/// One input whose result differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// The call (`mean([1, 2])`).
    pub call: String,
    /// What it returned (or raised) on the base.
    pub before: String,
    /// What it returns (or raises) now.
    pub after: String,
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

impl Difference {
    /// The name of the function the call calls (`mean` for `mean([1, 2])`).
    pub fn function(&self) -> &str {
        self.call.split('(').next().unwrap_or_default().trim()
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
        Some(Finding {
            kind: UNASKED_CHANGE.into(),
            category: "logic".into(),
            severity: "warning".into(),
            path: String::new(),
            line: 0,
            end_line: 0,
            symbol: None,
            import: None,
            reason: format!(
                "it changes what {} does, which no requirement names: {} input(s) give other results ({}: before {}, now {})",
                d.function(),
                out.differences.len(),
                d.call,
                d.before,
                d.after
            ),
        })
    }

    /// The diff as a fact for a model, or `None` when no function was compared.
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
            s.push_str("These inputs give different results now:\n");
            for d in &self.differences {
                s.push_str(&format!(
                    "- `{}`: before {}, now {}\n",
                    d.call, d.before, d.after
                ));
            }
        }
        Some(s)
    }
}

/// A call to make on both trees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
struct Call {
    module: String,
    function: String,
    args: Vec<String>,
}

impl Call {
    fn shown(&self) -> String {
        format!("{}({})", self.function, self.args.join(", "))
    }
}

/// What one call gave on one tree.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    Value(Value),
    Raised(String),
}

impl Got {
    fn shown(&self) -> String {
        match self {
            Got::Value(v) => clip(&v.render(), 200),
            Got::Raised(e) => format!("raises {e}"),
        }
    }

    fn same(&self, other: &Got) -> bool {
        match (self, other) {
            // Equal as data, or shown alike (`nan`, an object of one type on both sides).
            (Got::Value(a), Got::Value(b)) => a.equals(b) || a.render() == b.render(),
            (Got::Raised(a), Got::Raised(b)) => a == b,
            _ => false,
        }
    }
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
            let inputs = inputs(&after, &before, &new_text, &f.name, examples);
            if inputs.is_empty() {
                continue;
            }
            functions.push(format!("{path}:{}", f.name));
            calls.extend(inputs.into_iter().map(|args| Call {
                module: module.clone(),
                function: f.name.clone(),
                args,
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
        diff.compared += 1;
        if !a.same(b) {
            diff.differences.push(Difference {
                call: call.shown(),
                before: a.shown(),
                after: b.shown(),
            });
        }
    }
    Ok(diff)
}

/// The inputs to try on `function`: the literal calls of it in the tree's Python files (test
/// files first, both sides), its docstring examples, the TaskSpec's examples that call it,
/// and made-up values of its arity; distinct, at most [`MAX_CALLS`].
fn inputs(
    after: &TreeFiles<'_>,
    before: &TreeFiles<'_>,
    source: &str,
    function: &str,
    examples: &[String],
) -> Vec<Vec<String>> {
    let mut found: Vec<Vec<String>> = Vec::new();
    let add = |args: Vec<String>, found: &mut Vec<Vec<String>>| {
        if found.len() < MAX_CALLS && !found.contains(&args) {
            found.push(args);
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
                    add(args, &mut found);
                }
            }
        }
    }
    for args in example_calls(source, function, MAX_CALLS) {
        add(args, &mut found);
    }
    for e in examples {
        for args in literal_calls(e, function, 1) {
            add(args, &mut found);
        }
    }
    let arity = required_params(source, function)
        .or_else(|| found.first().map(Vec::len))
        .unwrap_or(0);
    match arity {
        1 => {
            for v in MADE_UP {
                add(vec![(*v).to_string()], &mut found);
            }
        }
        2 => {
            for a in &MADE_UP[..4] {
                for b in &MADE_UP[..4] {
                    add(vec![(*a).to_string(), (*b).to_string()], &mut found);
                }
            }
        }
        3 => {
            for a in &MADE_UP[1..3] {
                for b in &MADE_UP[1..3] {
                    for c in &MADE_UP[1..3] {
                        add(
                            vec![(*a).to_string(), (*b).to_string(), (*c).to_string()],
                            &mut found,
                        );
                    }
                }
            }
        }
        _ => {}
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
            *slot = Some(Got::Value(Value::from_json(&frame["value"])));
        } else if let Some(e) = frame["raised"].as_str() {
            *slot = Some(Got::Raised(e.to_string()));
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
}
