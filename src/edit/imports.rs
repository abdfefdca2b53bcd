//! A whole-file answer that drops an import its file still uses keeps the import.
//!
//! Small models asked to import one more name often rewrite the import line instead of
//! extending it (`from textstats import line_count, word_count` becomes
//! `from textstats import char_count, word_count`), and every use of the dropped name then
//! fails. A name the file still uses, that nothing in it defines or imports any more, was
//! never meant to go: it is added back to the answer's import from the same module, or on a
//! line of its own after the answer's imports. Python only: there, a dropped import is a
//! `NameError` no check sees before the code runs.

use crate::code::{outline, Lang};

/// One `import …` or `from M import …` line, read simply: one line, no parentheses, no
/// continuation.
struct ImportLine {
    /// `Some(M)` for `from M import …`; `None` for `import …`.
    from: Option<String>,
    /// The names the line binds (the `as` name when there is one).
    bound: Vec<String>,
    /// The imported items as written (`a`, `b as c`).
    items: Vec<String>,
}

fn read_import(line: &str) -> Option<ImportLine> {
    if line.contains(['(', ')', '\\', ';', '#']) {
        return None;
    }
    let (from, list) = if let Some(rest) = line.strip_prefix("from ") {
        let (module, list) = rest.split_once(" import ")?;
        (Some(module.trim().to_string()), list)
    } else {
        (None, line.strip_prefix("import ")?)
    };
    let items: Vec<String> = list.split(',').map(|i| i.trim().to_string()).collect();
    if items.iter().any(|i| i.is_empty() || i == "*") {
        return None;
    }
    let bound = items
        .iter()
        .map(|i| match i.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_string(),
            // `import a.b` binds `a`.
            None => i.split('.').next().unwrap_or(i).to_string(),
        })
        .collect();
    Some(ImportLine { from, bound, items })
}

/// Whether `word` appears in `text` as a whole identifier.
fn uses(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let ident = |c: char| c.is_alphanumeric() || c == '_';
        !text[..at].chars().next_back().is_some_and(ident)
            && !text[at + word.len()..].chars().next().is_some_and(ident)
    })
}

/// A Python file read for its imports: its lines, its top-level import lines (by index), the
/// rest of its text, and the names its definitions bind.
struct PyFile {
    lines: Vec<String>,
    imports: Vec<(usize, ImportLine)>,
    body: String,
    defined: Vec<String>,
}

impl PyFile {
    fn read(text: &str) -> PyFile {
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let imports: Vec<(usize, ImportLine)> = lines
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.starts_with([' ', '\t']))
            .filter_map(|(i, l)| read_import(l).map(|r| (i, r)))
            .collect();
        let body = lines
            .iter()
            .enumerate()
            .filter(|(i, _)| !imports.iter().any(|(j, _)| j == i))
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let defined = outline(Lang::Python, text)
            .into_iter()
            .map(|s| s.name)
            .collect();
        PyFile {
            lines,
            imports,
            body,
            defined,
        }
    }

    /// Whether the file uses `name` outside its imports, and neither an import nor a
    /// definition of it binds it.
    fn uses_unbound(&self, name: &str) -> bool {
        !self
            .imports
            .iter()
            .any(|(_, n)| n.bound.iter().any(|b| b == name))
            && !self.defined.iter().any(|d| d == name)
            && uses(&self.body, name)
    }

    /// The text, with the trailing newline `like` has.
    fn text(&self, like: &str) -> String {
        let mut text = self.lines.join("\n");
        if like.ends_with('\n') {
            text.push('\n');
        }
        text
    }
}

/// `answer` (a whole-file answer for a file whose text was `old`) with the imports it
/// dropped but still uses put back, and the names put back; `None` when there are none.
pub fn keep_used_imports(lang: Lang, old: &str, answer: &str) -> Option<(String, Vec<String>)> {
    if lang != Lang::Python {
        return None;
    }
    let mut file = PyFile::read(answer);
    let mut restored = Vec::new();
    let mut added: Vec<String> = Vec::new();
    let top = |l: &&str| !l.starts_with([' ', '\t']);
    for old_line in old.lines().filter(top).filter_map(read_import) {
        for (name, item) in old_line.bound.iter().zip(&old_line.items) {
            if !file.uses_unbound(name) {
                continue;
            }
            // Back into the answer's import from the same module, else a line of its own.
            let same = file
                .imports
                .iter()
                .find(|(_, n)| n.from.is_some() && n.from == old_line.from)
                .map(|(i, _)| *i);
            match (same, &old_line.from) {
                (Some(i), Some(_)) => file.lines[i].push_str(&format!(", {item}")),
                (_, Some(module)) => added.push(format!("from {module} import {item}")),
                (_, None) => added.push(format!("import {item}")),
            }
            restored.push(name.clone());
        }
    }
    if restored.is_empty() {
        return None;
    }
    let at = file.imports.last().map_or(0, |(i, _)| i + 1);
    file.lines.splice(at..at, added);
    Some((file.text(answer), restored))
}

/// `answer` (a whole Python file) with the names it uses but never binds added to its
/// `from M import …` line, where module `M` (its text read by `module`, given `M`) defines
/// them at its top level; and the names added. A new test that calls the new function
/// without importing it is the commonest NameError of small models; nothing else is guessed:
/// no module the file does not already import from, no name the file assigns.
pub fn complete_from_imports(
    lang: Lang,
    answer: &str,
    module: &dyn Fn(&str) -> Option<String>,
) -> Option<(String, Vec<String>)> {
    if lang != Lang::Python {
        return None;
    }
    let mut file = PyFile::read(answer);
    let assigned = |name: &str| {
        file.body.lines().any(|l| {
            let l = l.trim_start();
            l.strip_prefix(name).is_some_and(|rest| {
                rest.trim_start().starts_with('=') && !rest.trim_start().starts_with("==")
            })
        })
    };
    let mut added: Vec<(usize, String)> = Vec::new();
    for (i, line) in &file.imports {
        let Some(m) = &line.from else { continue };
        let Some(text) = module(m) else { continue };
        for sym in outline(lang, &text) {
            let name = sym.name;
            let top = sym.kind == "function" || sym.kind == "class";
            let new = !added.iter().any(|(_, a)| *a == name);
            if top && new && file.uses_unbound(&name) && !assigned(&name) {
                added.push((*i, name));
            }
        }
    }
    if added.is_empty() {
        return None;
    }
    for (i, name) in &added {
        file.lines[*i].push_str(&format!(", {name}"));
    }
    let names = added.into_iter().map(|(_, n)| n).collect();
    Some((file.text(answer), names))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "import unittest\n\nfrom textstats import line_count, word_count\n\n\nclass T(unittest.TestCase):\n    def test_w(self):\n        self.assertEqual(word_count(\"a\"), 1)\n\n    def test_l(self):\n        self.assertEqual(line_count(\"\"), 0)\n";

    #[test]
    fn a_rewritten_import_line_gets_back_the_name_the_file_still_uses() {
        let answer = OLD.replace("line_count, word_count", "char_count, word_count");
        let (text, restored) = keep_used_imports(Lang::Python, OLD, &answer).unwrap();
        assert_eq!(restored, ["line_count"]);
        assert!(
            text.contains("from textstats import char_count, word_count, line_count\n"),
            "{text}"
        );
        assert!(text.ends_with("0)\n"), "{text}");
    }

    #[test]
    fn a_dropped_import_line_comes_back_after_the_answers_imports() {
        let answer = OLD.replace("from textstats import line_count, word_count\n", "");
        let (text, restored) = keep_used_imports(Lang::Python, OLD, &answer).unwrap();
        assert_eq!(restored, ["line_count", "word_count"]);
        assert!(
            text.starts_with(
                "import unittest\nfrom textstats import line_count\nfrom textstats import word_count\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn an_import_no_longer_used_or_now_defined_stays_dropped() {
        // The test of line_count went too: its import is not needed.
        let answer = "import unittest\n\nfrom textstats import word_count\n\n\nclass T(unittest.TestCase):\n    def test_w(self):\n        self.assertEqual(word_count(\"a\"), 1)\n";
        assert_eq!(keep_used_imports(Lang::Python, OLD, answer), None);
        // Defined in the file now.
        let answer = format!("{answer}\n\ndef line_count(t):\n    return 0\n\nline_count('')\n");
        assert_eq!(keep_used_imports(Lang::Python, OLD, &answer), None);
        // A name only inside a longer identifier is not a use.
        let answer = "from textstats import word_count\n\nword_count(my_line_count)\n";
        assert_eq!(keep_used_imports(Lang::Python, OLD, answer), None);
        assert_eq!(keep_used_imports(Lang::Rust, "use a::b;\n", "b();\n"), None);
    }

    #[test]
    fn a_used_name_the_imported_module_defines_joins_its_import() {
        let textstats = "def word_count(t):\n    return 1\n\n\ndef char_count(t):\n    return 2\n\n\ndef unused(t):\n    return 3\n";
        let module = |m: &str| (m == "textstats").then(|| textstats.to_string());
        let answer = "import unittest\n\nfrom textstats import word_count\n\n\nclass T(unittest.TestCase):\n    def test_c(self):\n        self.assertEqual(char_count(\"a b  c\"), 3)\n";
        let (text, added) = complete_from_imports(Lang::Python, answer, &module).unwrap();
        assert_eq!(added, ["char_count"]);
        assert!(
            text.contains("from textstats import word_count, char_count\n"),
            "{text}"
        );
        // Bound already, defined or assigned here, or from a module the file does not import:
        // nothing to add.
        assert_eq!(complete_from_imports(Lang::Python, &text, &module), None);
        let local = format!("{answer}\n\ndef char_count(t):\n    return 0\n");
        assert_eq!(complete_from_imports(Lang::Python, &local, &module), None);
        let assigned = answer.replace("    def test_c", "    char_count = len\n\n    def test_c");
        assert_eq!(
            complete_from_imports(Lang::Python, &assigned, &module),
            None
        );
        let elsewhere = answer.replace("from textstats", "from other");
        assert_eq!(
            complete_from_imports(Lang::Python, &elsewhere, &module),
            None
        );
    }
}
