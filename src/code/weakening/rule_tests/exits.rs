//! The tests of the `exits` rule, through every rule at once as a change meets them.

use super::super::testing::*;

const PY: &str = "from calc import add\n\n\ndef test_add():\n    total = add(2, 3)\n    assert total == 5\n    assert add(0, 0) == 0\n";

#[test]
fn an_early_return_before_assertions_is_found() {
    for (exit, shown) in [
        ("    return\n", "`return`"),
        ("    if True:\n        return\n", "`if True: return`"),
        ("    with ctx():\n        return None\n", "`return None`"),
    ] {
        let after = PY.replace("    assert total", &format!("{exit}    assert total"));
        let (path, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&after))]);
        assert_eq!(path, "tests/test_calc.py");
        assert!(line == 6 || line == 7, "{line}: {reason}");
        assert!(reason.contains(shown), "{reason}");
        assert!(
            reason.contains("the assertion `assert total == 5`")
                && reason.contains("it and 1 more assertion(s) no longer run"),
            "{reason}"
        );
    }
}

#[test]
fn an_assertion_under_a_false_condition_is_found() {
    let after = PY.replace(
        "    assert add(0, 0) == 0\n",
        "    if False:\n        assert add(0, 0) == 0\n",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(PY), Some(&after))]);
    assert_eq!(line, 7);
    assert!(reason.ends_with("it no longer runs"), "{reason}");
}

#[test]
fn exits_the_base_had_or_that_end_nothing_are_no_finding() {
    // A return at the end, and a return in a branch that may not run.
    let end = format!("{PY}    return\n");
    assert!(found(&[change("tests/test_calc.py", Some(PY), Some(&end))]).is_empty());
    let guarded = PY.replace(
        "    assert total",
        "    if total is None:\n        return\n    assert total",
    );
    assert!(found(&[change("tests/test_calc.py", Some(PY), Some(&guarded))]).is_empty());
    // The base already returned early; an assertion added after it is not new dead code of a base assertion.
    let early = PY.replace("    assert total", "    return\n    assert total");
    let reformatted = early.replace("assert total == 5", "assert total ==  5  # same");
    assert!(found(&[change(
        "tests/test_calc.py",
        Some(&early),
        Some(&reformatted)
    )])
    .is_empty());
}

#[test]
fn rust_returns_are_found() {
    let base = "#[test]\nfn adds() {\n    let n = add(2, 3);\n    assert_eq!(n, 5);\n}\n";
    for exit in [
        "    return;\n",
        "    if true { return; }\n",
        "    if !false {\n        return\n    } else {\n        return\n    }\n",
    ] {
        let after = base.replace("    assert_eq!", &format!("{exit}    assert_eq!"));
        let (_, line, reason) = one(&[change("tests/calc.rs", Some(base), Some(&after))]);
        assert_eq!(line, 4, "{reason}");
        assert!(
            reason.contains("`assert_eq!(n, 5);`") || reason.contains("`assert_eq!(n, 5)`"),
            "{reason}"
        );
    }
    let branch = base.replace(
        "    assert_eq!",
        "    if n == 0 { return; }\n    assert_eq!",
    );
    assert!(found(&[change("tests/calc.rs", Some(base), Some(&branch))]).is_empty());
}
