//! A GBNF grammar of the whole-file answer format, for servers that constrain decoding to
//! one (llama.cpp): a small model then cannot answer with its metadata alone or drift out of
//! the format; what it writes is still checked like any answer.

/// The grammar of a whole-file answer: files (each its path on a line, then a fenced block
/// with its content), then the fenced JSON metadata block. The paths are `paths` (the files
/// in scope: a small model offered any path invents files); with none, any relative path
/// with a file ending. With `at_least_one`, the answer must write a file. With `opens`, the
/// metadata opens with that key, holding an object (the verifier's `implementation_summary`,
/// which small models leave out unless held to it; a key required anywhere would let the
/// model wander until it wrote one).
pub fn whole_file_answer(paths: &[String], at_least_one: bool, opens: Option<&str>) -> String {
    let mut known: Vec<String> = paths
        .iter()
        .map(|p| format!("\"{}\"", p.replace('\\', "\\\\").replace('"', "\\\"")))
        .collect();
    if known.is_empty() {
        // Any file: a relative path with a file ending (a word is not a file).
        known.push("[a-zA-Z0-9_] [a-zA-Z0-9_/-]* \".\" [a-z]+".into());
    }
    format!(
        r#"root ::= {files} meta
file ::= path "\n```" lang "\n" line* "```\n\n"
lang ::= "python" | "rust" | "toml" | "text" | ""
path ::= {paths}
line ::= [^`\n] [^\n]* "\n" | "\n"
meta ::= "```json\n{{"{first} [^`]* "}}\n```\n"
"#,
        files = match (paths.len(), at_least_one) {
            // Any file: no bound to give.
            (0, true) => "file file*".to_string(),
            (0, false) => "file*".to_string(),
            // At most one block a file: held to its known files and nothing more, a small
            // model was seen writing one of them again and again until the output limit cut
            // the answer before its metadata (a fix lost in a complete first block).
            (n, true) => format!("file{{1,{n}}}"),
            (n, false) => format!("file{{0,{n}}}"),
        },
        paths = known.join(" | "),
        first = opens.map_or(String::new(), |k| format!(
            " [ \\n]* \"\\\"{k}\\\"\" [ \\n]* \":\" [ \\n]* \"{{\""
        )),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_names_the_files_and_requires_one_when_asked() {
        let g = whole_file_answer(&["textstats.py".into(), "tests/t.py".into()], true, None);
        assert!(g.starts_with("root ::= file{1,2} meta\n"), "{g}");
        let optional = whole_file_answer(&["a.py".into()], false, None);
        assert!(
            optional.starts_with("root ::= file{0,1} meta\n"),
            "{optional}"
        );
        assert!(
            g.contains("path ::= \"textstats.py\" | \"tests/t.py\"\n"),
            "{g}"
        );
        let any = whole_file_answer(&[], false, None);
        assert!(
            any.starts_with("root ::= file* meta\n") && any.contains("[a-z]+"),
            "{any}"
        );
        assert!(
            any.contains("meta ::= \"```json\\n{\" [^`]* \"}\\n```\\n\"\n"),
            "{any}"
        );
        let verify = whole_file_answer(&[], false, Some("implementation_summary"));
        assert!(
            verify.contains(
                "meta ::= \"```json\\n{\" [ \\n]* \"\\\"implementation_summary\\\"\" [ \\n]* \":\" [ \\n]* \"{\" [^`]* \"}\\n```\\n\"\n"
            ),
            "{verify}"
        );
    }
}
