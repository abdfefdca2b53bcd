//! The TaskSpec's acceptance examples, typed: a call and the value it must return.
//!
//! An example is a fact the run can check by running it, in any repository: every building
//! stage and Verify run the examples through the probe runner against their tree, and a
//! failing one is a finding with its actual value. They are written as `[[examples]]`
//! (`call`, `expect`, and `module` or `file` where the tree cannot tell which file defines
//! the function); an `acceptance` criterion written as a call and its value
//! (`"char_count('a b') == 2"`) is read as one too.

use serde::{Deserialize, Serialize};

/// One acceptance example.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// The call, as code of the file's language (`char_count('a b')`; in Rust, as a user of
    /// the crate writes it after `use the_crate::*;`).
    pub call: String,
    /// The value it must return, as code (`2`).
    pub expect: String,
    /// Python: the module that defines the function (`textstats`), when no file of the tree
    /// or more than one defines it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub module: Option<String>,
    /// The file that defines the function (`textstats.py`), likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

impl Example {
    /// The example as one line of code (`char_count('a b') == 2`).
    pub fn text(&self) -> String {
        format!("{} == {}", self.call.trim(), self.expect.trim())
    }

    /// The function called: the last segment of the callee (`textstats.char_count(…)` →
    /// `char_count`), when the call reads as one.
    pub fn function(&self) -> Option<&str> {
        let callee = self.call.trim().split('(').next()?.trim();
        let name = callee.rsplit(['.', ':']).next()?;
        let ident = !name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit());
        ident.then_some(name)
    }

    /// The module the call names (`textstats.char_count(…)` → `textstats`), if any.
    pub fn dotted_module(&self) -> Option<&str> {
        let callee = self.call.trim().split('(').next()?.trim();
        callee
            .rsplit_once('.')
            .map(|(m, _)| m)
            .filter(|m| !m.is_empty())
    }

    /// Reads an acceptance criterion written as a call and its value: `[module.]name(args)
    /// == value`, the value ending at the criterion's end or at a remark in parentheses
    /// after a space (`char_count('a  b') == 2 (runs of whitespace count for nothing)`).
    pub fn from_criterion(criterion: &str) -> Option<Example> {
        let (left, right) = criterion.split_once("==")?;
        let left = left.trim();
        if !left.ends_with(')') || !left.contains('(') {
            return None;
        }
        let right = right.trim();
        let value = right.split(" (").next().unwrap_or(right).trim();
        let value = value.trim_end_matches(['.', ';']).trim();
        if value.is_empty() {
            return None;
        }
        let ex = Example {
            call: left.to_string(),
            expect: value.to_string(),
            module: None,
            file: None,
        };
        ex.function().is_some().then_some(ex)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_written_as_a_call_and_its_value_are_examples() {
        let ex = Example::from_criterion(
            "char_count('a b  c') == 3 (runs of whitespace count for nothing)",
        )
        .unwrap();
        assert_eq!(ex.text(), "char_count('a b  c') == 3");
        assert_eq!(ex.function(), Some("char_count"));
        let ex = Example::from_criterion("textstats.longest_word('') == ''").unwrap();
        assert_eq!(ex.function(), Some("longest_word"));
        assert_eq!(ex.dotted_module(), Some("textstats"));
        let ex = Example::from_criterion("stats::mean(&[1.0, 3.0]) == 2.0").unwrap();
        assert_eq!(ex.function(), Some("mean"));
        assert_eq!(Example::from_criterion("the unit tests pass"), None);
        assert_eq!(Example::from_criterion("x == 2"), None);
        assert_eq!(Example::from_criterion("f(1) =="), None);
    }
}
