//! Stubs: the function an assertion calls, replaced inside the tests, so the assertion
//! checks the stub instead of the code.
//!
//! `def add(a, b): return 5` under `from calc import add`, `calc.add = lambda a, b: 5`,
//! `monkeypatch.setattr(calc, "add", …)`, `mock.patch("calc.add", return_value=5)`, or a
//! Rust `fn add` in the test module that shadows the `add` of `use super::*`: each keeps
//! every assertion written and makes it pass whatever the code does. Mocking is a normal
//! tool, so a replacement is a finding only when it replaces what an assertion itself
//! calls (its computed side: `add` in `assert add(2, 3) == 5`), read from the syntax tree:
//!
//! - a bare name rebound (`def`, `=`) that the file imports, or that the base's assertions
//!   called without the base's file defining it, matches the calls through that name;
//! - an attribute replaced (`X.f = …`, `setattr`/`monkeypatch.setattr(X, "f", …)`,
//!   `patch.object(X, "f")`) where `X` is an imported module or class, or a patch target
//!   string (`"calc.add"`), matches the calls of that function of that module (`add`
//!   imported from `calc`, or `calc.add`); a patch with `wraps=` still runs the code and
//!   is none;
//! - in Rust, a non-test `fn` of a test module (or test file) whose name its assertions
//!   call, that the same file's code outside the tests defines or that the base's tests
//!   called without defining.
//!
//! A replacement inside one test counts for that test's assertions only; one at module
//! level, in a fixture or helper, or in a `conftest.py` (for the changed test files below
//! it) counts for all. A replacement the base already had, by meaning, is no finding. A
//! test file new in the change is held to the same rules: they need an import or a call
//! to tell what the code under test is, so a helper the new tests define for themselves
//! is never taken for a stub.

use std::collections::HashSet;

use super::tree::File;
use crate::code::lang::Lang;
use crate::code::Finding;
use python::{python, Read};
use stub::{replaced, Call};

mod python;
mod rust;
mod stub;

/// Finds the replacements the change adds for functions the tests' assertions call.
pub(super) fn check(files: &[File<'_>], out: &mut Vec<Finding>) {
    let reads: Vec<(Option<Read>, Option<Read>)> = files
        .iter()
        .map(|f| {
            if f.lang != Lang::Python {
                return (None, None);
            }
            let before = f
                .before
                .as_ref()
                .map(|s| python(f.path, s, &HashSet::new()));
            let foreign = before
                .as_ref()
                .map(|b| b.foreign.clone())
                .unwrap_or_default();
            (
                before,
                f.after.as_ref().map(|s| python(f.path, s, &foreign)),
            )
        })
        .collect();
    for (f, (before, after)) in files.iter().zip(&reads) {
        if f.lang == Lang::Rust {
            rust::rust(f, out);
            continue;
        }
        let Some(after) = after else {
            continue;
        };
        let had: Vec<&str> = before
            .iter()
            .flat_map(|b| b.stubs.iter().map(|s| s.key.as_str()))
            .collect();
        // A conftest.py replaces for the changed test files below it.
        let conftest = super::runner::is_conftest(f.path);
        let dir = f.path.rsplit_once('/').map_or("", |(d, _)| d);
        let calls: Vec<&Call> = if conftest {
            files
                .iter()
                .zip(&reads)
                .filter(|(g, _)| {
                    g.lang == Lang::Python
                        && !super::runner::is_conftest(g.path)
                        && (dir.is_empty() || g.path.starts_with(&format!("{dir}/")))
                })
                .flat_map(|(_, r)| r.1.iter().flat_map(|a| a.calls.iter()))
                .collect()
        } else {
            after.calls.iter().collect()
        };
        for stub in after
            .stubs
            .iter()
            .filter(|s| !had.contains(&s.key.as_str()))
        {
            let hit = calls.iter().find(|c| {
                c.replaced_by(&stub.target)
                    && stub
                        .scope
                        .is_none_or(|(from, to)| (from..=to).contains(&c.line))
            });
            if let Some(call) = hit {
                out.push(replaced(f.path, stub, call));
            }
        }
    }
}
