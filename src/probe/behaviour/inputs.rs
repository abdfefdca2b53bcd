//! The inputs a behaviour diff tries on a function: what the repository already says about
//! it (its known calls with literal arguments, its docstring examples), the TaskSpec's
//! examples, and made-up values of the kinds its parameters take.

use serde::{Deserialize, Serialize};

use crate::code::{
    example_calls, literal_calls, literal_kind, required_params, test_path, Lang, ValueKind,
};
use crate::git::TreeFiles;

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

    /// Whether it was made up (what a record leaves unsaid).
    pub(super) fn is_made_up(&self) -> bool {
        *self == InputSource::MadeUp
    }
}

/// Most calls tried per function.
const MAX_CALLS: usize = 40;

/// Most files read for a function's calls.
const MAX_FILES: usize = 400;

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
pub(super) fn inputs(
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
