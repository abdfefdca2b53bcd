//! The tests of the `params` rule, through every rule at once as a change meets them.

use super::super::testing::*;

const BASE: &str = "import pytest\nfrom calc import add\n\n\n@pytest.mark.parametrize(\"a,b,expected\", [\n    (2, 3, 5),\n    (0, 0, 0),\n])\ndef test_add(a, b, expected):\n    assert add(a, b) == expected\n";

#[test]
fn a_rewritten_case_is_found_with_both_rows() {
    let after = BASE.replace("(2, 3, 5)", "(2, 3, -1)");
    let (path, line, reason) = one(&[change("tests/test_calc.py", Some(BASE), Some(&after))]);
    assert_eq!((path.as_str(), line), ("tests/test_calc.py", 6));
    assert_eq!(
        reason,
        "the change rewrites the case `(2, 3, 5)` of the test `test_add` that tests/test_calc.py:9 had to `(2, 3, -1)`: a test must not be changed to agree with the code"
    );
}

#[test]
fn removed_and_marked_cases_are_found() {
    let removed = BASE.replace("    (2, 3, 5),\n", "");
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(BASE), Some(&removed))]);
    assert_eq!(line, 5);
    assert!(reason.contains("removes the case `(2, 3, 5)`"), "{reason}");
    let marked = BASE.replace(
        "(2, 3, 5),",
        "pytest.param(2, 3, 5, marks=pytest.mark.xfail),",
    );
    let (_, line, reason) = one(&[change("tests/test_calc.py", Some(BASE), Some(&marked))]);
    assert_eq!(line, 6);
    assert!(
        reason.contains("marks the case `pytest.param(2, 3, 5, marks=pytest.mark.xfail)`"),
        "{reason}"
    );
    let dropped = BASE.replace(
        "@pytest.mark.parametrize(\"a,b,expected\", [\n    (2, 3, 5),\n    (0, 0, 0),\n])\n",
        "@pytest.mark.parametrize(\"x\", [1])\n",
    );
    let all = found(&[change("tests/test_calc.py", Some(BASE), Some(&dropped))]);
    assert!(
        all.iter()
            .any(|(_, _, r)| r
                .contains("drops the parametrize table `a, b, expected` (2 case(s))")),
        "{all:?}"
    );
}

#[test]
fn a_column_added_to_a_table_keeps_its_cases() {
    let wider = BASE
        .replace("\"a,b,expected\"", "\"a,b,expected,sign\"")
        .replace("(2, 3, 5)", "(2, 3, 5, 1)")
        .replace("(0, 0, 0)", "(0, 0, 0, 0)")
        .replace("(a, b, expected)", "(a, b, expected, sign)");
    assert!(found(&[change("tests/test_calc.py", Some(BASE), Some(&wider))]).is_empty());
    let (_, line, _) = one(&[change(
        "tests/test_calc.py",
        Some(BASE),
        Some(&wider.replace("(2, 3, 5, 1)", "(2, 3, 6, 1)")),
    )]);
    assert_eq!(line, 6);
}

#[test]
fn reordered_respelled_or_extended_tables_are_no_finding() {
    let after = "import pytest\nfrom calc import add\n\nCASES = [(0, 0, 0), (2, 3, FIVE)]\nFIVE = 5\n\n@pytest.mark.parametrize(['a', 'b', 'expected'], CASES + [])\ndef test_add(a, b, expected):\n    assert add(a, b) == expected\n";
    // A computed table is not compared.
    assert!(found(&[change("tests/test_calc.py", Some(BASE), Some(after))]).is_empty());
    let constant = after.replace("CASES + []", "CASES");
    assert!(found(&[change("tests/test_calc.py", Some(BASE), Some(&constant))]).is_empty());
    let more = BASE.replace(
        "    (0, 0, 0),\n",
        "    (0, 0, 0),\n    pytest.param(1, 1, 2, id='ones'),\n",
    );
    assert!(found(&[change("tests/test_calc.py", Some(BASE), Some(&more))]).is_empty());
    // A constant that changes value is a rewrite.
    let five = constant.replace("FIVE = 5", "FIVE = -1");
    let (_, line, _) = one(&[change("tests/test_calc.py", Some(BASE), Some(&five))]);
    assert_eq!(line, 4);
}
