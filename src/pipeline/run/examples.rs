//! The TaskSpec's acceptance examples as facts: a criterion written as a call and its value
//! (`char_count('a b') == 2`) is a case the task's tests must check, as written. A test
//! that checks other cases than the task gives can pass with a wrong function; one that
//! checks the task's own cases cannot.

use super::requirements::Unmet;
use crate::task::TaskSpec;

/// The id an acceptance gap is recorded under (it belongs to no one requirement).
pub(super) const ACCEPTANCE: &str = "acceptance";

/// One acceptance criterion written as a call and its value.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Example {
    /// The call as written, with no module path (`char_count('a b')`).
    call: String,
    /// The value as written (`2`).
    value: String,
    /// The call, normalised (see [`norm`]).
    norm_call: String,
    /// The value, normalised.
    norm_value: String,
    /// The function called.
    pub function: String,
}

impl Example {
    /// The criterion as the TaskSpec writes it, without its remark (`char_count('a b') == 2`).
    pub fn text(&self) -> String {
        format!("{} == {}", self.call, self.value)
    }

    /// The example as an assertion in the style the test file `text` already uses
    /// (`self.assertEqual(…)`, `assert_eq!(…)`, else a plain `assert … == …`).
    fn assertion(&self, text: &str) -> String {
        let (call, value) = (&self.call, &self.value);
        if text.contains("self.assertEqual(") {
            format!("self.assertEqual({call}, {value})")
        } else if text.contains("assert_eq!(") {
            format!("assert_eq!({call}, {value});")
        } else {
            format!("assert {call} == {value}")
        }
    }
}

/// Whether `c` is part of a word of code.
fn word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with the whitespace outside string literals dropped (one space kept between two
/// words) and every quote made `'`, so `f("a b", 2)` and `f('a b',2)` read the same; inside
/// a literal, nothing else changes.
fn norm(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut space = false;
    for c in text.chars() {
        if quote.is_none() && !c.is_whitespace() {
            if space && out.ends_with(word) && word(c) {
                out.push(' ');
            }
            space = false;
        }
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                    out.push('\'');
                    continue;
                }
                out.push(c);
            }
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                out.push('\'');
            }
            None if c.is_whitespace() => space = true,
            None => out.push(c),
        }
    }
    out
}

/// Reads a criterion as an example: `[module.]name(args) == value`, the value ending at
/// the criterion's end or at a remark in parentheses after a space.
fn example(criterion: &str) -> Option<Example> {
    let (left, right) = criterion.split_once("==")?;
    let left = left.trim();
    let open = left.find('(')?;
    if !left.ends_with(')') {
        return None;
    }
    let path = &left[..open];
    let function = path.rsplit('.').next().unwrap_or(path);
    let ident = !function.is_empty()
        && function.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !function.starts_with(|c: char| c.is_ascii_digit());
    if !ident {
        return None;
    }
    let right = right.trim();
    let value = right.split(" (").next().unwrap_or(right).trim();
    let value = value.trim_end_matches(['.', ';']);
    if value.is_empty() {
        return None;
    }
    let call = format!("{function}{}", &left[open..]);
    Some(Example {
        norm_call: norm(&call),
        norm_value: norm(value),
        call,
        value: value.to_string(),
        function: function.to_string(),
    })
}

/// Whether a normalised line checks `ex`: the call, with the value beside it (`f(x)==v`,
/// `assertEqual(f(x),v)`, `assert_eq!(v,f(x))`).
fn checks(line: &str, ex: &Example) -> bool {
    let ident = |c: char| word(c) || c == '.';
    line.match_indices(&ex.norm_call).any(|(at, _)| {
        let before_ok = !line[..at].ends_with(word);
        let after = line[at + ex.norm_call.len()..].trim_start_matches([')', ',', '=']);
        let follows =
            after.starts_with(&ex.norm_value) && !after[ex.norm_value.len()..].starts_with(ident);
        let before = line[..at].trim_end_matches(['(', ',', '=']);
        let precedes = before.ends_with(&ex.norm_value)
            && !before[..before.len() - ex.norm_value.len()].ends_with(ident);
        before_ok && (follows || precedes)
    })
}

/// The test file the task asks for: the first file a requirement names, in scope, whose
/// path says it holds tests. A task that asks for no tests asks for none of its examples.
fn test_file(spec: &TaskSpec) -> Option<String> {
    spec.requirements
        .iter()
        .flat_map(|r| super::checks::Claims::of(&r.text).files)
        .find(|f| spec.in_scope(f) && is_test_path(f))
}

/// Whether a path holds tests by its name (`tests/…`, `test_x.py`, `x_test.rs`).
pub(super) fn is_test_path(path: &str) -> bool {
    path.split('/')
        .any(|part| part.starts_with("test") || part.contains("_test."))
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
        .acceptance
        .iter()
        .filter_map(|c| example(c))
        .filter(|ex| named.contains(&ex.function))
        .filter(|ex| !lines.iter().any(|l| checks(l, ex)))
        .collect();
    let style = read(&file).unwrap_or_default();
    let texts: Vec<String> = missing.iter().map(Example::text).collect();
    let asserts: Vec<String> = missing.iter().map(|ex| ex.assertion(&style)).collect();
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

/// The function of the task's examples that a test `line` checks on a case the task does
/// not give (`assertEqual(longest_word('a b c'), 'c')` when the examples are others): a line
/// failing on such a case holds an expectation someone made up.
pub(super) fn foreign_case(line: &str, spec: &TaskSpec) -> Option<String> {
    let examples: Vec<Example> = spec.acceptance.iter().filter_map(|c| example(c)).collect();
    let line = norm(line);
    if examples.iter().any(|ex| checks(&line, ex)) {
        return None;
    }
    examples
        .iter()
        .find(|ex| {
            line.match_indices(&format!("{}(", ex.function))
                .any(|(at, _)| !line[..at].ends_with(word))
        })
        .map(|ex| ex.function.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_written_as_a_call_and_its_value_are_examples() {
        let ex =
            example("char_count('a b  c') == 3 (runs of whitespace count for nothing)").unwrap();
        assert_eq!(ex.text(), "char_count('a b  c') == 3");
        assert_eq!(ex.norm_call, "char_count('a b  c')");
        assert_eq!(ex.norm_value, "3");
        let ex = example("textstats.longest_word('') == ''").unwrap();
        assert_eq!(
            (ex.function.as_str(), ex.norm_call.as_str()),
            ("longest_word", "longest_word('')")
        );
        assert_eq!(example("the unit tests pass"), None);
        assert_eq!(example("x == 2"), None);
    }

    #[test]
    fn a_test_checks_an_example_in_any_common_form_and_only_its_own_case() {
        let ex = example("char_count('a b') == 2").unwrap();
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
    fn a_failing_line_on_a_case_the_task_does_not_give_is_told_apart() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             acceptance = [\"longest_word('a bbb cc') == 'bbb'\", \"longest_word('') == ''\"]\n",
            "t.toml",
            "t",
        )
        .unwrap();
        let made_up = "self.assertEqual(longest_word('a b c'), 'c')";
        assert_eq!(
            foreign_case(made_up, &spec).as_deref(),
            Some("longest_word")
        );
        let given = "self.assertEqual(longest_word('a bbb cc'), 'bbb')";
        assert_eq!(foreign_case(given, &spec), None);
        assert_eq!(
            foreign_case("self.assertEqual(word_count('a'), 1)", &spec),
            None
        );
    }

    #[test]
    fn untested_examples_are_one_gap_in_the_test_file_the_task_names() {
        let spec = TaskSpec::parse(
            "title = \"t\"\ndescription = \"d\"\n\
             acceptance = [\"char_count('a b') == 2\", \"char_count('') == 0\", \"other(1) == 2\", \"the tests pass\"]\n\
             [[requirements]]\nid = \"R1\"\ntext = \"char_count(text) counts\"\n\
             [[requirements]]\nid = \"R2\"\ntext = \"tests/test_t.py has a test for char_count\"\n",
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
