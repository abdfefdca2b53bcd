//! A GBNF grammar of the whole-file answer format, for servers that constrain decoding to
//! one (llama.cpp): a small model then cannot answer with its metadata alone or drift out of
//! the format; what it writes is still checked like any answer.

/// The grammar of a whole-file answer: files (each its path on a line, then a fenced block
/// with its content), then the fenced JSON metadata block. `paths` are offered first (the
/// files in scope); any other relative path is allowed too (the scope check still applies).
/// With `at_least_one`, the answer must write a file.
pub fn whole_file_answer(paths: &[String], at_least_one: bool) -> String {
    let mut known: Vec<String> = paths
        .iter()
        .map(|p| format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    // Any other file: a relative path with a file ending (a word is not a file).
    known.push("[a-zA-Z0-9_] [a-zA-Z0-9_/-]* \".\" [a-z]+".into());
    format!(
        r#"root ::= {files} meta
file ::= path "\n```" lang "\n" line* "```\n\n"
lang ::= "python" | "rust" | "toml" | "text" | ""
path ::= {paths}
line ::= [^`\n] [^\n]* "\n" | "\n"
meta ::= "```json\n{{" [^`]* "}}\n```\n"
"#,
        files = if at_least_one { "file file*" } else { "file*" },
        paths = known.join(" | "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_names_the_files_and_requires_one_when_asked() {
        let g = whole_file_answer(&["textstats.py".into(), "tests/t.py".into()], true);
        assert!(g.starts_with("root ::= file file* meta\n"), "{g}");
        assert!(
            g.contains(r#"path ::= "textstats.py" | "tests/t.py" | [a-zA-Z0-9_]"#),
            "{g}"
        );
        assert!(whole_file_answer(&[], false).starts_with("root ::= file* meta\n"));
    }
}
