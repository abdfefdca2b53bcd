//! Mutants: a function with one small fault put in (a comparison turned around, an
//! operator swapped, a constant moved by one), as mutation testing makes them. A test suite
//! that catches a mutant checks that part of the code; a changed suite that lets through a
//! mutant the original caught checks less than it did ([`super::weakening`]).
//!
//! Each mutant changes one token on one line of one function's body, outside strings and
//! comments, so it stays valid code in the languages read here (Python, Rust).

use crate::code::{outline, Lang};

/// One fault put into a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mutant {
    /// The file, from the repository's root.
    pub path: String,
    /// Its whole text with the fault in.
    pub text: String,
    /// What was changed, for a person (`calc.py:4 in add: '+' → '-'`).
    pub shown: String,
}

/// Operators turned into their nearest wrong neighbour, longest first so `<=` is not read
/// as `<`.
const SWAPS: &[(&str, &str)] = &[
    ("**", "*"),
    ("//", "/"),
    ("<=", "<"),
    (">=", ">"),
    ("==", "!="),
    ("!=", "=="),
    ("+=", "-="),
    ("-=", "+="),
    ("<", "<="),
    (">", ">="),
    ("+", "-"),
    ("-", "+"),
    ("*", "+"),
    ("/", "*"),
    ("%", "/"),
];

/// Words swapped with their opposite (Python and Rust spellings).
const WORDS: &[(&str, &str)] = &[
    ("and", "or"),
    ("or", "and"),
    ("True", "False"),
    ("False", "True"),
    ("true", "false"),
    ("false", "true"),
    ("&&", "||"),
    ("||", "&&"),
];

/// Up to `limit` mutants of the functions named `functions` in `text` (the file at `path`
/// in `lang`), spread over their lines: each changes one operator, word or small integer.
pub fn mutants(
    path: &str,
    text: &str,
    lang: Lang,
    functions: &[String],
    limit: usize,
) -> Vec<Mutant> {
    let kind = match lang {
        Lang::Python => "function",
        Lang::Rust => "fn",
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut all: Vec<Mutant> = Vec::new();
    for f in outline(lang, text)
        .into_iter()
        .filter(|s| (s.kind == kind || s.kind == "method") && functions.contains(&s.name))
    {
        // The body: after the definition's first line.
        for n in f.start_line + 1..=f.end_line {
            let Some(line) = lines.get(n as usize - 1) else {
                continue;
            };
            let Some((at, from, to)) = fault(line, lang) else {
                continue;
            };
            let mut changed = line.to_string();
            changed.replace_range(at..at + from.len(), &to);
            let mut out: Vec<&str> = lines.clone();
            out[n as usize - 1] = &changed;
            let mut whole = out.join("\n");
            if text.ends_with('\n') {
                whole.push('\n');
            }
            all.push(Mutant {
                path: path.to_string(),
                text: whole,
                shown: format!("{path}:{n} in {}: `{from}` → `{to}`", f.name),
            });
        }
    }
    spread(all, limit)
}

/// At most `limit` of `all`, taken evenly from first to last.
fn spread(all: Vec<Mutant>, limit: usize) -> Vec<Mutant> {
    if all.len() <= limit {
        return all;
    }
    let step = all.len() as f64 / limit as f64;
    (0..limit)
        .filter_map(|i| all.get((i as f64 * step) as usize).cloned())
        .collect()
}

/// The first fault one line of code can take: where, what, and what instead. Strings and
/// comments are left alone, as are lines that only declare (a docstring, an import).
fn fault(line: &str, lang: Lang) -> Option<(usize, String, String)> {
    let code = code_part(line, lang);
    let trimmed = code.trim_start();
    if trimmed.is_empty()
        || trimmed.starts_with("import ")
        || trimmed.starts_with("from ")
        || trimmed.starts_with("use ")
        || trimmed.starts_with('@')
        || trimmed.starts_with("#[")
    {
        return None;
    }
    let bytes = code.as_bytes();
    let word_edge =
        |i: usize| i >= bytes.len() || !(bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_');
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let before = |n: usize| n == 0 || word_edge(n - 1);
        for (from, to) in WORDS {
            let alpha = from.chars().all(char::is_alphabetic);
            if rest.starts_with(from) && (!alpha || (before(i) && word_edge(i + from.len()))) {
                return Some((i, (*from).to_string(), (*to).to_string()));
            }
        }
        for (from, to) in SWAPS {
            if rest.starts_with(from) && operator_at(&code, i, from, lang) {
                return Some((i, (*from).to_string(), (*to).to_string()));
            }
        }
        if bytes[i].is_ascii_digit() && before(i) {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let end = i + digits.len();
            let plain = end >= bytes.len()
                || !(bytes[end] == b'.'
                    || bytes[end].is_ascii_alphanumeric()
                    || bytes[end] == b'_');
            if let (true, Ok(n)) = (plain, digits.parse::<u64>()) {
                if n <= 1000 {
                    return Some((i, digits, (n + 1).to_string()));
                }
            }
            i = end;
            continue;
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// Whether `op` at `i` in `code` is a binary operator (not part of `->`, `=>`, `**`, `//`,
/// a unary sign, a Rust `&mut` or generic brackets, or an arrow).
fn operator_at(code: &str, i: usize, op: &str, lang: Lang) -> bool {
    let b = code.as_bytes();
    let prev = code[..i].trim_end().chars().next_back();
    let next = b.get(i + op.len()).copied();
    let glued = |c: Option<u8>| c.is_some_and(|c| b"=<>-+*/&|!".contains(&c));
    if glued(next) || glued(i.checked_sub(1).map(|p| b[p])) {
        return false;
    }
    // A binary operator follows a value: a name, a number, a closing bracket or quote.
    let after_value = prev.is_some_and(|c| c.is_alphanumeric() || ")]}_'\"".contains(c));
    if !after_value {
        return false;
    }
    if lang == Lang::Rust && (op == "<" || op == ">") {
        // Generics (`Vec<u8>`, `Option<T>`) read like comparisons; only spaced ones count.
        let spaced = code[..i].ends_with(' ') && code[i + op.len()..].starts_with(' ');
        return spaced;
    }
    true
}

/// The part of `line` that is code: before a comment, with string literals blanked (so an
/// operator inside a string is never changed), same length as the line's code.
fn code_part(line: &str, lang: Lang) -> String {
    let comment = match lang {
        Lang::Python => "#",
        Lang::Rust => "//",
    };
    let mut out = String::with_capacity(line.len());
    let mut quote: Option<char> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' {
                    out.push(' ');
                    if let Some((_, n)) = chars.next() {
                        out.extend(std::iter::repeat_n(' ', n.len_utf8()));
                    }
                    continue;
                }
                if c == q {
                    quote = None;
                    out.push(c);
                } else {
                    out.extend(std::iter::repeat_n(' ', c.len_utf8()));
                }
            }
            None => {
                if line[at..].starts_with(comment) {
                    break;
                }
                if c == '"' || (c == '\'' && lang == Lang::Python) {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mutant_changes_one_operator_of_a_function_s_body_and_nothing_in_strings() {
        let src = "def add(a, b):\n    \"\"\"a + b\"\"\"\n    return a + b  # sum - x\n\n\ndef label(n):\n    return \"a-b\" if n <= 1 else \"c\"\n";
        let m = mutants(
            "calc.py",
            src,
            Lang::Python,
            &["add".into(), "label".into()],
            10,
        );
        let shown: Vec<&str> = m.iter().map(|m| m.shown.as_str()).collect();
        assert_eq!(
            shown,
            [
                "calc.py:3 in add: `+` → `-`",
                "calc.py:7 in label: `<=` → `<`"
            ]
        );
        assert!(m[0].text.contains("    return a - b  # sum - x\n"));
        assert!(m[1].text.contains("return \"a-b\" if n < 1 else"));
        // Only the named functions.
        assert_eq!(
            mutants("calc.py", src, Lang::Python, &["add".into()], 10).len(),
            1
        );
    }

    #[test]
    fn constants_words_and_rust_operators_are_mutated_but_not_generics_or_arrows() {
        let src = "fn last(v: &Vec<u32>) -> Option<u32> {\n    if v.len() == 0 && true {\n        return None;\n    }\n    Some(v[v.len() - 1])\n}\n";
        let m = mutants("src/lib.rs", src, Lang::Rust, &["last".into()], 10);
        let shown: Vec<&str> = m.iter().map(|m| m.shown.as_str()).collect();
        assert_eq!(
            shown,
            [
                "src/lib.rs:2 in last: `==` → `!=`",
                "src/lib.rs:5 in last: `-` → `+`"
            ]
        );
        let py = "def f(xs):\n    return xs[0] if xs and len(xs) > 2 else -1\n";
        let m = mutants("f.py", py, Lang::Python, &["f".into()], 10);
        assert_eq!(m[0].shown, "f.py:2 in f: `0` → `1`");
        // Spread over the body when there are more than asked for.
        let long: String = (0..20).map(|i| format!("    x = x + {i}\n")).collect();
        let src = format!("def g(x):\n{long}    return x\n");
        let m = mutants("g.py", &src, Lang::Python, &["g".into()], 4);
        assert_eq!(m.len(), 4);
        assert_ne!(m[0].shown, m[1].shown);
    }
}
