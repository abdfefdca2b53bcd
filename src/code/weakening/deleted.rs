//! Deleted and rewritten tests: the test functions and assertions the base had that a change
//! removes, and the expected values it changes, compared by meaning over every test file of
//! the change together (see `assertions.rs` for how tests are read).

use std::collections::HashMap;

use super::super::assertions::*;
use super::super::lang::{self, Lang};
use super::super::{ChangedFile, Finding};

/// How a change weakens the tests the base had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Weakened {
    /// A test function of the base is gone from every test file of the change.
    DeletedTest {
        /// The file it was in.
        path: String,
        /// Its name.
        name: String,
        /// Its line in the base.
        line: u32,
    },
    /// An assertion of the base is gone (and its call is asserted nowhere else).
    DeletedAssertion {
        /// The file it was in.
        path: String,
        /// Its text in the base.
        text: String,
        /// Its line in the base.
        line: u32,
    },
    /// An equality assertion now expects another value of the same call.
    ChangedExpected {
        /// The file it is in now.
        path: String,
        /// The call asserted.
        call: String,
        /// The base's expected value.
        old: String,
        /// The new expected value.
        new: String,
        /// The assertion's text in the base.
        was: String,
        /// The constants the new expected value reads (`` `EXPECTED` = -1 (line 3) ``).
        via: Vec<String>,
        /// Its line in the new file.
        line: u32,
    },
}

impl Weakened {
    /// The deterministic finding.
    pub fn finding(&self) -> Finding {
        let (path, line, reason) = match self {
            Weakened::DeletedTest { path, name, line } => (
                path,
                *line,
                format!("the change deletes the test `{name}` that {path}:{line} had"),
            ),
            Weakened::DeletedAssertion { path, text, line } => (
                path,
                *line,
                format!("the change deletes the assertion `{text}` that {path}:{line} had"),
            ),
            Weakened::ChangedExpected {
                path,
                call,
                old,
                new,
                was,
                via,
                line,
            } => {
                let through = if via.is_empty() {
                    String::new()
                } else {
                    format!(", read from {}", via.join(", "))
                };
                (
                    path,
                    *line,
                    format!(
                        "the change rewrites the expected value of `{call}` from {old} to {new}{through} (the base had `{was}`): a test must not be changed to agree with the code"
                    ),
                )
            }
        };
        weakened_finding(path, line, reason)
    }
}

/// A critical [`WEAKENED_TEST`] finding at `path:line`, the one shape of every way a change
/// weakens the tests: the verdict's floor and the building stages' feedback count them
/// all alike.
pub(crate) fn weakened_finding(path: &str, line: u32, reason: String) -> Finding {
    Finding {
        kind: WEAKENED_TEST.into(),
        category: "logic".into(),
        severity: "critical".into(),
        path: path.to_string(),
        line,
        end_line: line,
        symbol: None,
        import: None,
        reason,
    }
}

/// How `changes` weaken the tests their base had: deleted test functions, deleted
/// assertions and rewritten expected values, over every test of the change together (an
/// assertion moved from one test file to another is neither deleted nor rewritten). Tests
/// are the test files ([`test_path`]) and, in Rust, `#[test]` functions anywhere (unit
/// tests live beside the code); a Python `assert` outside a test file is a runtime check,
/// not a test.
pub fn weakened(changes: &[ChangedFile]) -> Vec<Weakened> {
    struct Side {
        tests: Vec<(String, TestFn)>,
        /// Each assertion with its file and the test it is in.
        asserts: Vec<(String, Assertion, Option<String>)>,
    }
    let read = |pick: &dyn Fn(&ChangedFile) -> Option<&String>| {
        let mut side = Side {
            tests: Vec::new(),
            asserts: Vec::new(),
        };
        for c in changes {
            let (Some(lang), Some(text)) = (Lang::from_path(&c.path), pick(c)) else {
                continue;
            };
            let whole = test_path(&c.path);
            if !whole && lang != Lang::Rust {
                continue;
            }
            let Some(tree) = lang::parse(lang, text) else {
                continue;
            };
            let root = tree.root_node();
            let tests: Vec<TestFn> = test_nodes(lang, root, text)
                .into_iter()
                .filter_map(|node| test_fn(node, text))
                .collect();
            for a in read_assertions(lang, root, text) {
                let test = tests
                    .iter()
                    .rfind(|t| (t.line..=t.end_line).contains(&a.line))
                    .map(|t| t.name.clone());
                if whole || test.is_some() {
                    side.asserts.push((c.path.clone(), a, test));
                }
            }
            for t in tests {
                side.tests.push((c.path.clone(), t));
            }
        }
        side
    };
    let before = read(&|c| c.before.as_ref());
    let after = read(&|c| c.after.as_ref());
    let mut out = Vec::new();
    for (path, t) in &before.tests {
        if !after.tests.iter().any(|(_, n)| n.name == t.name) {
            out.push(Weakened::DeletedTest {
                path: path.clone(),
                name: t.name.clone(),
                line: t.line,
            });
        }
    }
    // A multiset of what the new side asserts, so one kept copy answers one old copy.
    let mut kept: HashMap<String, usize> = HashMap::new();
    for (_, a, _) in &after.asserts {
        *kept.entry(a.key()).or_default() += 1;
    }
    let mut gone = Vec::new();
    for (path, a, test) in &before.asserts {
        match kept.get_mut(&a.key()) {
            Some(n) if *n > 0 => *n -= 1,
            _ => gone.push((path, a, test)),
        }
    }
    let mut answered: Vec<usize> = Vec::new();
    for (path, a, test) in gone {
        // Inside a deleted test, the test's deletion says it already.
        let in_deleted = before
            .tests
            .iter()
            .filter(|(p, _)| p == path)
            .find(|(_, t)| (t.line..=t.end_line).contains(&a.line))
            .is_some_and(|(_, t)| !after.tests.iter().any(|(_, n)| n.name == t.name));
        if in_deleted {
            continue;
        }
        // The rewrite is in the same test: a call asserted in another test with
        // another value is that test's own assertion. Each new assertion answers one
        // lost one while others are left.
        let candidates: Vec<usize> = a
            .call
            .as_ref()
            .map(|call| {
                (0..after.asserts.len())
                    .filter(|i| {
                        let (_, b, in_test) = &after.asserts[*i];
                        b.call.as_deref().map(norm) == Some(norm(call))
                            && b.expected.as_deref().map(norm) != a.expected.as_deref().map(norm)
                            && (test.is_none() || in_test == test)
                    })
                    .collect()
            })
            .unwrap_or_default();
        let pick = candidates
            .iter()
            .find(|i| !answered.contains(*i))
            .or(candidates.first())
            .copied();
        if let Some(i) = pick {
            answered.push(i);
        }
        match pick.map(|i| &after.asserts[i]) {
            Some((new_path, b, _)) => out.push(Weakened::ChangedExpected {
                path: new_path.clone(),
                call: a.call.clone().unwrap_or_default(),
                old: a.expected.clone().unwrap_or_default(),
                new: b.expected.clone().unwrap_or_default(),
                was: a.text.clone(),
                via: b.constants.clone(),
                line: b.line,
            }),
            None => out.push(Weakened::DeletedAssertion {
                path: path.clone(),
                text: a.text.clone(),
                line: a.line,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, before: &str, after: &str) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            before: Some(before.into()),
            after: Some(after.into()),
        }
    }

    const PY_BASE: &str = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n";

    #[test]
    fn a_rewritten_expected_value_is_found_with_its_old_value() {
        let after = PY_BASE.replace("add(2, 3), 5)", "add(2, 3), -1)");
        let w = weakened(&[change("tests/test_calc.py", PY_BASE, &after)]);
        assert_eq!(w.len(), 1, "{w:?}");
        let f = w[0].finding();
        assert_eq!(f.kind, WEAKENED_TEST);
        assert_eq!(f.line, 6);
        assert!(
            f.reason.contains("`add(2, 3)` from 5 to -1"),
            "{}",
            f.reason
        );
        assert!(
            f.reason.contains("self.assertEqual(add(2, 3), 5)"),
            "{}",
            f.reason
        );
    }

    #[test]
    fn deleted_tests_and_assertions_are_found() {
        let after = "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        pass\n";
        let w = weakened(&[change("tests/test_calc.py", PY_BASE, after)]);
        assert_eq!(
            w,
            vec![
                Weakened::DeletedTest {
                    path: "tests/test_calc.py".into(),
                    name: "test_zero".into(),
                    line: 8
                },
                Weakened::DeletedAssertion {
                    path: "tests/test_calc.py".into(),
                    text: "self.assertEqual(add(2, 3), 5)".into(),
                    line: 6
                },
            ]
        );
    }

    #[test]
    fn style_changes_moves_and_additions_are_no_finding() {
        // Another style, the value first, another file, reformatted, and a new test.
        let after = "from calc import add\n\ndef test_add():\n    assert 5 == add(2,3)\n\ndef test_zero():\n    assert add( 0, 0 ) == 0\n\ndef test_more():\n    assert add(1, 1) == 2\n";
        let changes = [
            change("tests/test_calc.py", PY_BASE, "# moved\n"),
            ChangedFile {
                path: "tests/test_more.py".into(),
                before: None,
                after: Some(after.into()),
            },
        ];
        assert_eq!(weakened(&changes), vec![]);
        // Code files are not tests.
        let code = change(
            "calc.py",
            "def f(x):\n    assert x == 1\n",
            "def f(x):\n    assert x == 2\n",
        );
        assert_eq!(weakened(&[code]), vec![]);
    }

    #[test]
    fn a_rewrite_is_looked_for_in_the_same_test() {
        let base = "def test_a():\n    lines = run('a')\n    assert lines == 'a'\n\ndef test_b():\n    lines = run('b')\n    assert lines == 'b'\n";
        let after = "def test_b():\n    lines = run('b')\n    assert lines == 'b'\n";
        let w = weakened(&[change("tests/test_run.py", base, after)]);
        assert!(
            matches!(&w[..], [Weakened::DeletedTest { .. }]),
            "test_a's assertion goes with it, it is not rewritten into test_b's: {w:?}"
        );
        let emptied = base.replace("    assert lines == 'a'\n", "    pass\n");
        let w = weakened(&[change("tests/test_run.py", base, &emptied)]);
        assert!(
            matches!(&w[..], [Weakened::DeletedAssertion { line: 3, .. }]),
            "{w:?}"
        );
    }

    #[test]
    fn rust_assertions_and_tests_are_read() {
        let base = "#[cfg(test)]\nmod tests {\n    use super::*;\n    #[test]\n    fn adds() {\n        assert_eq!(add(2, 3), 5);\n        assert!(add(1, 1) > 0);\n    }\n    #[tokio::test]\n    async fn later() {}\n}\n";
        let tests = test_functions(Lang::Rust, base);
        assert_eq!(
            tests.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["adds", "later"]
        );
        let a = assertions(Lang::Rust, base);
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].call.as_deref(), Some("add(2, 3)"));
        assert_eq!(a[0].expected.as_deref(), Some("5"));
        let after = base.replace("add(2, 3), 5)", "add(2, 3), -1)");
        let w = weakened(&[change("tests/calc.rs", base, &after)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { old, new, .. }] if old == "5" && new == "-1"),
            "{w:?}"
        );
    }

    #[test]
    fn an_expected_value_moved_into_a_constant_is_read_as_its_value() {
        let base = "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n";
        // The expected value moved into a constant that holds another value.
        let moved = "from calc import add\n\nEXPECTED = -1\n\ndef test_add():\n    assert add(2, 3) == EXPECTED\n";
        let w = weakened(&[change("tests/test_calc.py", base, moved)]);
        let f = match &w[..] {
            [one @ Weakened::ChangedExpected { .. }] => one.finding(),
            _ => panic!("{w:?}"),
        };
        assert_eq!(f.line, 6);
        assert!(
            f.reason
                .contains("from 5 to -1, read from `EXPECTED` = -1 (line 3)"),
            "{}",
            f.reason
        );
        // Control: a constant (or a local) that holds the value the base asserted.
        let same = moved.replace("EXPECTED = -1", "EXPECTED = 5");
        assert_eq!(
            weakened(&[change("tests/test_calc.py", base, &same)]),
            vec![]
        );
        let local = "from calc import add\n\ndef test_add():\n    expected = 5\n    assert add(2, 3) == expected\n";
        assert_eq!(
            weakened(&[change("tests/test_calc.py", base, local)]),
            vec![]
        );
        // The assertion is untouched and the constant it reads is edited.
        let edited = local.replace("expected = 5", "expected = 6");
        let w = weakened(&[change("tests/test_calc.py", local, &edited)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { old, new, .. }] if old == "5" && new == "6"),
            "{w:?}"
        );
    }

    #[test]
    fn rust_constants_resolve_and_callees_are_read() {
        let base = "#[test]\nfn adds() {\n    assert_eq!(calc::add(2, 3), 5);\n}\n";
        let after = "const WANT: i32 = 5;\n#[test]\nfn adds() {\n    assert_eq!(WANT, calc::add(2, 3));\n}\n";
        assert_eq!(weakened(&[change("tests/calc.rs", base, after)]), vec![]);
        let a = assertions(Lang::Rust, after);
        assert_eq!(a[0].callees, ["calc::add"]);
        assert_eq!(a[0].call.as_deref(), Some("calc::add(2, 3)"));
        let wrong = after.replace("= 5;", "= -1;");
        let w = weakened(&[change("tests/calc.rs", base, &wrong)]);
        assert!(
            matches!(&w[..], [Weakened::ChangedExpected { new, line: 4, .. }] if new == "-1"),
            "{w:?}"
        );
        let py = assertions(
            Lang::Python,
            "def test_a(self):\n    self.assertTrue(is_prime(mod.seven()))\n",
        );
        assert_eq!(py[0].callees, ["is_prime", "mod.seven"]);
    }
}
