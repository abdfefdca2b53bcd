//! A whole-file answer that leaves out definitions the file has, read as an edit of the
//! definitions it writes.
//!
//! Small models asked for a whole file often write only what they add: the new function, or
//! the test class with just the new method. Taken as written, that deletes the rest of the
//! file. Read by definitions instead (tree-sitter outlines of the file and of the answer),
//! each definition the answer writes replaces the one of the same name, or is added after
//! the file's last definition; a class or impl the answer writes with only some of its
//! methods has those methods replaced or added inside the existing one; imports the file
//! lacks are added after its imports. Nothing the answer leaves out is deleted. The result
//! must parse no worse than the file did, or there is no merge.

use crate::code::{new_syntax_issues, outline, Lang, Symbol};

/// A partial answer merged into the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// The file after the merge.
    pub text: String,
    /// Definitions the answer left out, kept from the file.
    pub kept: Vec<String>,
}

/// One change to the old file's lines: replace `[start, end)` (0-based) by `lines`; an
/// insertion has `start == end`.
struct Splice {
    start: usize,
    end: usize,
    lines: Vec<String>,
}

/// Merges `answer`, a whole-file answer for a file whose text was `old`, by definitions.
/// `None` when the answer defines nothing (a placeholder is not an edit), or when the
/// merge would not parse as well as `old` did.
pub fn merge_partial(lang: Lang, old: &str, answer: &str) -> Option<Merged> {
    let old_syms = outline(lang, old);
    let new_syms = outline(lang, answer);
    let new_top = top_level(&new_syms);
    if new_top.is_empty() {
        return None;
    }
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = answer.lines().collect();
    let old_top = top_level(&old_syms);
    let text_of = |s: &Symbol| -> Vec<String> {
        new_lines[s.start_line as usize - 1..(s.end_line as usize).min(new_lines.len())]
            .iter()
            .map(|l| l.to_string())
            .collect()
    };
    let after_last = old_top
        .last()
        .map_or(old_lines.len(), |s| s.end_line as usize);
    let mut splices = Vec::new();
    let mut appended: Vec<String> = Vec::new();
    for n in &new_top {
        let Some(o) = old_top
            .iter()
            .find(|o| o.name == n.name && o.kind == n.kind)
        else {
            appended.push(String::new());
            appended.push(String::new());
            appended.extend(text_of(n));
            continue;
        };
        let new_children = children(&new_syms, n);
        let old_children = children(&old_syms, o);
        let whole = old_children
            .iter()
            .all(|c| new_children.iter().any(|k| k.name == c.name));
        if new_children.is_empty() || whole {
            splices.push(Splice {
                start: o.start_line as usize - 1,
                end: o.end_line as usize,
                lines: text_of(n),
            });
            continue;
        }
        // A container written with only some of its members: those members, in place.
        let mut added = Vec::new();
        for c in &new_children {
            match old_children.iter().find(|k| k.name == c.name) {
                Some(k) => splices.push(Splice {
                    start: k.start_line as usize - 1,
                    end: k.end_line as usize,
                    lines: text_of(c),
                }),
                None => {
                    added.push(String::new());
                    added.extend(text_of(c));
                }
            }
        }
        if !added.is_empty() {
            let last = old_children.last().map_or(o.end_line, |k| k.end_line) as usize;
            splices.push(Splice {
                start: last,
                end: last,
                lines: added,
            });
        }
    }
    if !appended.is_empty() {
        splices.push(Splice {
            start: after_last,
            end: after_last,
            lines: appended,
        });
    }
    let imports = missing_imports(lang, &old_lines, &new_lines, &new_syms);
    if !imports.is_empty() {
        let at = old_lines
            .iter()
            .rposition(|l| is_import(lang, l))
            .map_or(0, |i| i + 1);
        splices.push(Splice {
            start: at,
            end: at,
            lines: imports,
        });
    }
    // From the bottom up, so every splice's lines are still where the outline found them.
    splices.sort_by_key(|s| std::cmp::Reverse((s.start, s.end)));
    let mut lines: Vec<String> = old_lines.iter().map(|l| l.to_string()).collect();
    for s in splices {
        lines.splice(s.start..s.end, s.lines);
    }
    let mut text = lines.join("\n");
    text.push('\n');
    if !new_syntax_issues(lang, Some(old), &text).is_empty() {
        return None;
    }
    let kept = old_top
        .iter()
        .filter(|o| !new_top.iter().any(|n| n.name == o.name && n.kind == o.kind))
        .map(|o| o.name.clone())
        .collect();
    Some(Merged { text, kept })
}

/// The definitions no other definition contains.
fn top_level(syms: &[Symbol]) -> Vec<Symbol> {
    syms.iter()
        .filter(|s| !syms.iter().any(|o| contains(o, s)))
        .cloned()
        .collect()
}

/// The definitions directly inside `parent`.
fn children(syms: &[Symbol], parent: &Symbol) -> Vec<Symbol> {
    let inside: Vec<&Symbol> = syms.iter().filter(|s| contains(parent, s)).collect();
    inside
        .iter()
        .filter(|s| !inside.iter().any(|o| contains(o, s)))
        .map(|s| (*s).clone())
        .collect()
}

/// Whether `outer` strictly contains `inner`.
fn contains(outer: &Symbol, inner: &Symbol) -> bool {
    outer != inner
        && outer.start_line <= inner.start_line
        && inner.end_line <= outer.end_line
        && (outer.start_line, outer.end_line) != (inner.start_line, inner.end_line)
}

fn is_import(lang: Lang, line: &str) -> bool {
    match lang {
        Lang::Python => line.starts_with("import ") || line.starts_with("from "),
        Lang::Rust => line.starts_with("use "),
    }
}

/// Top-level import lines of the answer (outside its definitions) that the file lacks.
fn missing_imports(lang: Lang, old: &[&str], new: &[&str], new_syms: &[Symbol]) -> Vec<String> {
    let inside = |i: usize| {
        new_syms
            .iter()
            .any(|s| (s.start_line as usize..=s.end_line as usize).contains(&(i + 1)))
    };
    new.iter()
        .enumerate()
        .filter(|(i, l)| is_import(lang, l) && !inside(*i) && !old.contains(l))
        .map(|(_, l)| l.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &str = "\"\"\"Stats.\"\"\"\n\n\ndef word_count(text):\n    return len(text.split())\n\n\ndef line_count(text):\n    return len(text.splitlines())\n";

    const TESTS: &str = "import unittest\n\nfrom textstats import line_count, word_count\n\n\nclass TextStatsTest(unittest.TestCase):\n    def test_word_count(self):\n        self.assertEqual(word_count(\"a b\"), 2)\n\n    def test_line_count(self):\n        self.assertEqual(line_count(\"\"), 0)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";

    #[test]
    fn a_new_function_alone_is_added_after_the_last_definition() {
        let answer = "def char_count(text):\n    return sum(1 for c in text if not c.isspace())\n";
        let m = merge_partial(Lang::Python, STATS, answer).unwrap();
        assert_eq!(m.kept, ["word_count", "line_count"]);
        assert!(m.text.starts_with(STATS), "{}", m.text);
        assert!(
            m.text.ends_with(
                "\n\n\ndef char_count(text):\n    return sum(1 for c in text if not c.isspace())\n"
            ),
            "{}",
            m.text
        );
    }

    #[test]
    fn a_class_with_one_new_method_gets_it_and_keeps_the_rest_and_the_imports() {
        let answer = "import unittest\n\nfrom textstats import char_count\n\n\nclass TextStatsTest(unittest.TestCase):\n    def test_char_count(self):\n        self.assertEqual(char_count(\"a b\"), 2)\n";
        let m = merge_partial(Lang::Python, TESTS, answer).unwrap();
        assert!(m.kept.is_empty(), "{:?}", m.kept);
        let want = "import unittest\n\nfrom textstats import line_count, word_count\nfrom textstats import char_count\n\n\nclass TextStatsTest(unittest.TestCase):\n    def test_word_count(self):\n        self.assertEqual(word_count(\"a b\"), 2)\n\n    def test_line_count(self):\n        self.assertEqual(line_count(\"\"), 0)\n\n    def test_char_count(self):\n        self.assertEqual(char_count(\"a b\"), 2)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";
        assert_eq!(m.text, want);
    }

    #[test]
    fn a_rewritten_function_replaces_its_namesake_in_place() {
        let answer =
            "def word_count(text):\n    \"\"\"Words.\"\"\"\n    return len(text.split())\n";
        let m = merge_partial(Lang::Python, STATS, answer).unwrap();
        assert!(m.text.contains("    \"\"\"Words.\"\"\"\n"), "{}", m.text);
        assert_eq!(m.text.matches("def word_count").count(), 1);
        assert!(m.text.contains("def line_count"), "{}", m.text);
    }

    #[test]
    fn a_placeholder_or_a_broken_answer_is_no_merge() {
        assert_eq!(merge_partial(Lang::Python, STATS, "obj['path']\n"), None);
        assert_eq!(
            merge_partial(Lang::Python, STATS, "def char_count(text:\n    return (\n"),
            None
        );
    }

    #[test]
    fn rust_items_merge_the_same_way() {
        let old = "pub struct S;\n\nimpl S {\n    pub fn a(&self) -> u8 {\n        1\n    }\n}\n\npub fn top() {}\n";
        let answer = "impl S {\n    pub fn b(&self) -> u8 {\n        2\n    }\n}\n";
        let m = merge_partial(Lang::Rust, old, answer).unwrap();
        assert!(m.text.contains("pub fn a(&self)"), "{}", m.text);
        assert!(m.text.contains("pub fn b(&self)"), "{}", m.text);
        assert!(m.text.contains("pub fn top()"), "{}", m.text);
        assert_eq!(m.kept, ["S", "top"]);
    }
}
