//! Parsing a stage answer: SEARCH/REPLACE edit blocks and the fenced JSON metadata block.

/// One edit block as the model wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditBlock {
    /// The path as written (validated later).
    pub path: String,
    /// Text to find; empty means "create the file".
    pub search: String,
    /// Replacement text.
    pub replace: String,
    /// 1-based line of the `<<<<<<< SEARCH` marker (or of the file's fence) in the answer,
    /// for feedback.
    pub answer_line: usize,
    /// `replace` is the file's whole new content (the whole-file answer format).
    pub whole: bool,
}

#[cfg(test)]
impl EditBlock {
    /// A SEARCH/REPLACE block at answer line 1, as the tests of this module write them.
    pub(crate) fn at_line_one(path: &str, search: &str, replace: &str) -> EditBlock {
        EditBlock {
            whole: false,
            path: path.into(),
            search: search.into(),
            replace: replace.into(),
            answer_line: 1,
        }
    }
}

/// A block that could not even be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("answer line {line}: {message}")]
pub struct ParseError {
    /// 1-based line in the answer.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

fn is_search(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("<<<<<<<") && t.trim_start_matches('<').trim() == "SEARCH"
}

fn is_divider(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 7 && t.chars().all(|c| c == '=')
}

fn is_replace(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(">>>>>>>") && t.trim_start_matches('>').trim() == "REPLACE"
}

/// Cleans a file-name line: strips fences, backticks, markdown emphasis, `File:` labels.
fn clean_path(line: &str) -> String {
    let mut t = line.trim();
    for prefix in ["```", "#", "*", "File:", "file:", "Path:", "path:"] {
        t = t.trim_start_matches(prefix).trim();
    }
    t.trim_matches(|c| c == '`' || c == '*' || c == ':' || c == '"' || c == '\'')
        .trim()
        .to_string()
}

/// Whether a cleaned line names a file: no spaces, and a name with an ending (`a.py`,
/// `src/lib.rs`) or a folder (`docs/NOTES`); a sentence's last word (`Done.`) is not one.
fn looks_like_path(p: &str) -> bool {
    let ending = p.rsplit_once('.').is_some_and(|(stem, end)| {
        !stem.is_empty() && !end.is_empty() && end.chars().all(char::is_alphanumeric)
    });
    !p.contains(char::is_whitespace) && (ending || (p.contains('/') && !p.ends_with('/')))
}

/// Extracts whole-file edits: a path on a line by itself, then a fenced block with the file's
/// complete new content. Fences not preceded by a path (the JSON metadata block, examples in
/// prose) are not edits. An answer that uses SEARCH/REPLACE blocks anyway is read as such.
pub fn parse_whole_files(answer: &str) -> Result<Vec<EditBlock>, ParseError> {
    if answer.lines().any(is_search) {
        return parse_edit_blocks(answer);
    }
    let lines: Vec<&str> = answer.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if !t.starts_with("```") {
            i += 1;
            continue;
        }
        let path = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .map(clean_path)
            .unwrap_or_default();
        let Some(close) = (i + 1..lines.len()).find(|k| lines[*k].trim() == "```") else {
            return Err(ParseError {
                line: i + 1,
                message: "a code block is not closed with ```".into(),
            });
        };
        let body = lines[i + 1..close].join("\n");
        let is_metadata = metadata_json(answer).is_some_and(|m| m.trim() == body.trim());
        if looks_like_path(&path) && !is_metadata {
            let mut content = lines[i + 1..close].join("\n");
            content.push('\n');
            blocks.push(EditBlock {
                path,
                search: String::new(),
                replace: content,
                answer_line: i + 1,
                whole: true,
            });
        }
        i = close + 1;
    }
    Ok(blocks)
}

/// Extracts every edit block. Blocks are found by their markers; the file name is the nearest
/// non-empty line above `<<<<<<< SEARCH` that is not a code fence.
pub fn parse_edit_blocks(answer: &str) -> Result<Vec<EditBlock>, ParseError> {
    let lines: Vec<&str> = answer.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_search(lines[i]) {
            i += 1;
            continue;
        }
        let marker_line = i + 1;
        let mut path = String::new();
        let mut j = i;
        while j > 0 {
            j -= 1;
            let t = lines[j].trim();
            if t.is_empty() || (t.starts_with("```") && clean_path(t).is_empty()) {
                continue;
            }
            if is_replace(t) {
                break;
            }
            path = clean_path(t);
            break;
        }
        if path.is_empty() {
            return Err(ParseError {
                line: marker_line,
                message: "a SEARCH block has no file path on the line before it".into(),
            });
        }
        // Messages quote the path line, whose length the model chose.
        let shown = crate::bounded::clip(&path, crate::bounded::ITEM_BYTES);
        let mut k = i + 1;
        let mut search = Vec::new();
        while k < lines.len() && !is_divider(lines[k]) {
            if is_search(lines[k]) || is_replace(lines[k]) {
                return Err(ParseError {
                    line: k + 1,
                    message: format!("block for {shown} has no ======= line after SEARCH"),
                });
            }
            search.push(lines[k]);
            k += 1;
        }
        if k >= lines.len() {
            return Err(ParseError {
                line: marker_line,
                message: format!("block for {shown} is not closed (no =======)"),
            });
        }
        k += 1;
        let mut replace = Vec::new();
        while k < lines.len() && !is_replace(lines[k]) {
            if is_search(lines[k]) {
                return Err(ParseError {
                    line: k + 1,
                    message: format!("block for {shown} is not closed with >>>>>>> REPLACE"),
                });
            }
            replace.push(lines[k]);
            k += 1;
        }
        if k >= lines.len() {
            return Err(ParseError {
                line: marker_line,
                message: format!("block for {shown} is not closed with >>>>>>> REPLACE"),
            });
        }
        blocks.push(EditBlock {
            whole: false,
            path,
            search: join_lines(&search),
            replace: join_lines(&replace),
            answer_line: marker_line,
        });
        i = k + 1;
    }
    Ok(blocks)
}

fn join_lines(lines: &[&str]) -> String {
    if lines.is_empty() {
        String::new()
    } else {
        let mut s = lines.join("\n");
        s.push('\n');
        s
    }
}

/// The last fenced ```json block of an answer (the metadata), if any.
pub fn metadata_json(answer: &str) -> Option<&str> {
    let mut found = None;
    let mut rest = answer;
    let mut offset = 0;
    while let Some(start) = rest.find("```json") {
        let body_start = start + "```json".len();
        let Some(end) = rest[body_start..].find("```") else {
            break;
        };
        found = Some((offset + body_start, offset + body_start + end));
        offset += body_start + end + 3;
        rest = &answer[offset..];
    }
    found.map(|(s, e)| answer[s..e].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_files_are_read_by_the_path_above_their_fence() {
        let answer = "Here is the change.\n\ntextstats.py\n```python\ndef a():\n    return 1\n```\n\n**tests/test_a.py**\n```\nimport a\n```\n\nDone.\n```json\n{\"summary\": \"s\", \"outcome\": \"APPROVE\"}\n```\n";
        let blocks = parse_whole_files(answer).unwrap();
        assert_eq!(blocks.len(), 2, "{blocks:?}");
        assert_eq!(blocks[0].path, "textstats.py");
        assert_eq!(blocks[0].replace, "def a():\n    return 1\n");
        assert!(blocks[0].whole);
        assert_eq!(blocks[1].path, "tests/test_a.py");
        assert!(parse_whole_files("a.py\n```\nno end\n").is_err());
        // SEARCH/REPLACE blocks in a whole-file answer are still read as such.
        let mixed = "a.py\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n";
        assert!(!parse_whole_files(mixed).unwrap()[0].whole);
    }

    #[test]
    fn parses_blocks_with_fences_and_labels() {
        let answer = "Here:\n\n```python\nsrc/a.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n\n**new.py**\n<<<<<<< SEARCH\n=======\nprint('hi')\n>>>>>>> REPLACE\n";
        let b = parse_edit_blocks(answer).unwrap();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].path, "src/a.py");
        assert_eq!(b[0].search, "x = 1\n");
        assert_eq!(b[0].replace, "x = 2\n");
        assert_eq!(b[1].path, "new.py");
        assert_eq!(b[1].search, "");
    }

    #[test]
    fn unclosed_blocks_are_errors() {
        assert!(parse_edit_blocks("a.py\n<<<<<<< SEARCH\nx\n").is_err());
        assert!(parse_edit_blocks("a.py\n<<<<<<< SEARCH\nx\n=======\ny\n").is_err());
        assert!(parse_edit_blocks("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE").is_err());
    }

    #[test]
    fn finds_the_last_json_block() {
        let a = "```json\n{\"a\":1}\n```\ntext\n```json\n{\"b\":2}\n```";
        assert_eq!(metadata_json(a), Some("{\"b\":2}"));
        assert_eq!(metadata_json("none"), None);
    }
}
