//! The TaskSpec's acceptance examples in the task's tests: when the task asks for a test
//! file, each example of a function it names is a case that file must check, as written. A
//! test that checks other cases than the task gives can pass with a wrong function; one that
//! checks the task's own cases cannot. (Running the examples themselves against the code is
//! [`crate::probe::run_examples`].)

use super::requirements::{Unmet, ACCEPTANCE};
use crate::code::{norm, test_path};
use crate::task::{Example, TaskSpec};

/// The style of assertion the test file `text` already uses for `ex`
/// (`self.assertEqual(…)`, `assert_eq!(…)`, else a plain `assert … == …`).
fn assertion(ex: &Example, text: &str) -> String {
    let (call, value) = (ex.call.trim(), ex.expect.trim());
    if text.contains("self.assertEqual(") {
        format!("self.assertEqual({call}, {value})")
    } else if text.contains("assert_eq!(") {
        format!("assert_eq!({call}, {value});")
    } else {
        format!("assert {call} == {value}")
    }
}

/// Whether `c` is part of a word of code.
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The call of `ex` without a module path (`textstats.f(x)` → `f(x)`), normalised.
fn bare_call(ex: &Example) -> String {
    let call = ex.call.trim();
    let open = call.find('(').unwrap_or(call.len());
    let name = ex.function().unwrap_or(&call[..open]);
    norm(&format!("{name}{}", &call[open..]))
}

/// Whether a normalised line checks `ex`: the call, with the value beside it (`f(x)==v`,
/// `assertEqual(f(x),v)`, `assert_eq!(v,f(x))`).
fn checks(line: &str, ex: &Example) -> bool {
    let ident = |c: char| word(c) || c == '.';
    let (call, value) = (bare_call(ex), norm(ex.expect.trim()));
    line.match_indices(&call).any(|(at, _)| {
        let before_ok = !line[..at].ends_with(word);
        let after = line[at + call.len()..].trim_start_matches([')', ',', '=']);
        let follows = after.starts_with(&value) && !after[value.len()..].starts_with(ident);
        let before = line[..at].trim_end_matches(['(', ',', '=']);
        let precedes =
            before.ends_with(&value) && !before[..before.len() - value.len()].ends_with(ident);
        before_ok && (follows || precedes)
    })
}

/// The test file the task asks for: the first file a requirement is delivered in, in
/// scope, whose path says it holds tests. A task that asks for no tests asks for none of
/// its examples.
fn test_file(spec: &TaskSpec) -> Option<String> {
    spec.requirements
        .iter()
        .flat_map(|r| r.files.iter())
        .find(|f| spec.in_scope(f) && test_path(f))
        .cloned()
}

/// The acceptance examples of the functions `named` (those the requirements name as code)
/// that no test file of the tree (`tests`: their paths, `read`: their text) checks, as one
/// gap; none when the task asks for no test file or all are checked.
pub(super) fn untested(
    spec: &TaskSpec,
    named: &[String],
    tests: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Option<Unmet> {
    let file = test_file(spec)?;
    let lines: Vec<String> = tests
        .iter()
        .filter_map(|p| read(p))
        .flat_map(|t| t.lines().map(norm).collect::<Vec<_>>())
        .collect();
    let missing: Vec<Example> = spec
        .all_examples()
        .into_iter()
        .filter(|ex| ex.function().is_some_and(|f| named.iter().any(|n| n == f)))
        .filter(|ex| !lines.iter().any(|l| checks(l, ex)))
        .collect();
    let style = read(&file).unwrap_or_default();
    let texts: Vec<String> = missing.iter().map(Example::text).collect();
    let asserts: Vec<String> = missing.iter().map(|ex| assertion(ex, &style)).collect();
    (!missing.is_empty()).then(|| Unmet {
        id: ACCEPTANCE.into(),
        why: format!(
            "the tests never check the task's examples {}: assert each exactly as written, in {file}: `{}`",
            texts.join(", "),
            asserts.join("`, `")
        ),
        undefined: None,
        untouched: Some(file),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_checks_an_example_in_any_common_form_and_only_its_own_case() {
        let ex = Example::from_criterion("char_count('a b') == 2").unwrap();
        for line in [
            "        self.assertEqual(char_count(\"a b\"), 2)",
            "    assert char_count('a b') == 2",
            "    assert_eq!(char_count(\"a b\"), 2);",
            "    self.assertEqual(2, char_count('a b'))",
            "    assert textstats.char_count('a b') == 2",
        ] {
            assert!(checks(&norm(line), &ex), "{line}");
        }
        for line in [
            "        self.assertEqual(char_count(\"a  b\"), 2)",
            "        self.assertEqual(char_count(\"a b\"), 20)",
            "        self.assertEqual(my_char_count(\"a b\"), 2)",
            "        self.assertEqual(char_count(\"a b\"), 3)",
        ] {
            assert!(!checks(&norm(line), &ex), "{line}");
        }
    }

    #[test]
    fn untested_examples_are_one_gap_in_the_test_file_the_task_names() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             acceptance = [\"char_count('a b') == 2\", \"char_count('') == 0\", \"other(1) == 2\", \"the tests pass\"]\n\
             [[requirements]]\nid = \"R1\"\ntext = \"char_count(text) counts\"\nfunctions = [\"char_count\"]\n\
             [[requirements]]\nid = \"R2\"\ntext = \"a test for char_count\"\nfiles = [\"tests/test_t.py\"]\nfunctions = [\"char_count\"]\n",
            "t.toml",
            "t",
        )
        .unwrap();
        let named = vec!["char_count".to_string()];
        let tests = vec!["tests/test_t.py".to_string()];
        let with = |body: &'static str| move |_: &str| Some(body.to_string());
        let gap = untested(
            &spec,
            &named,
            &tests,
            &with("assert char_count('a b  c') == 3\n"),
        )
        .unwrap();
        assert_eq!(gap.id, ACCEPTANCE);
        assert_eq!(gap.untouched.as_deref(), Some("tests/test_t.py"));
        assert!(
            gap.why
                .contains("examples char_count('a b') == 2, char_count('') == 0: assert"),
            "{gap:?}"
        );
        // With the file also left as it was, the kept change is asked for that file once.
        let untouched = Unmet {
            id: "R2".into(),
            why: "R2 names tests/test_t.py, which the change leaves as it was".into(),
            undefined: None,
            untouched: Some("tests/test_t.py".into()),
        };
        let asked =
            super::super::requirements::unmet_feedback(&[untouched, gap], &spec, true, true);
        assert!(
            asked.contains("Write tests/test_t.py in full (only that;"),
            "{asked}"
        );
        let one = untested(
            &spec,
            &named,
            &tests,
            &with("assert char_count('a b') == 2\n"),
        )
        .unwrap();
        assert!(!one.why.contains("'a b'"), "{one:?}");
        let all = "assert char_count('a b') == 2\nassert char_count(\"\") == 0\n";
        assert_eq!(untested(&spec, &named, &tests, &with(all)), None);
        // A task that asks for no test file asks for none of its examples.
        let mut no_tests = spec.clone();
        no_tests.requirements.pop();
        assert_eq!(untested(&no_tests, &named, &tests, &with("")), None);
    }
}
