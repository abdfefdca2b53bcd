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

mod calls;
mod inputs;

use std::collections::BTreeSet;

use git2::{Repository, Tree};
use serde::{Deserialize, Serialize};

use super::intent::Intent;
use super::python::module_of;
use super::result::ChangedLines;
use super::settings::ProbeSettings;
use crate::code::{outline, test_path, Finding, Lang, Symbol};
use crate::git::TreeFiles;
use calls::{raised_on_purpose, regressed, run, Call};
use inputs::inputs;
pub use inputs::InputSource;

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
}
