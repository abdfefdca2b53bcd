//! Where Python code calls a function with literal arguments, and what the function takes:
//! the inputs a behaviour diff tries (the tests' calls, docstring examples) and the shape of
//! the ones it makes up.

use tree_sitter::Node;

use super::lang::{self, Lang};

/// Node kinds a literal argument may be made of.
const LITERAL: &[&str] = &[
    "integer",
    "float",
    "string",
    "string_start",
    "string_content",
    "string_end",
    "escape_sequence",
    "true",
    "false",
    "none",
    "list",
    "tuple",
    "dictionary",
    "set",
    "pair",
    "unary_operator",
    "parenthesized_expression",
    "-",
    "+",
    ",",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ":",
    "comment",
];

/// Every call of `function` in `source` (by its name, or as an attribute `x.function`)
/// whose arguments are all positional literals, as the source text of each argument; at most
/// `limit` calls, in order.
pub fn literal_calls(source: &str, function: &str, limit: usize) -> Vec<Vec<String>> {
    let Some(tree) = lang::parse(Lang::Python, source) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if found.len() >= limit {
            break;
        }
        if node.kind() == "call" {
            if let Some(args) = literal_args(node, source, function) {
                found.push(args);
            }
        }
        let mut cursor = node.walk();
        // Reversed so the stack pops them in source order.
        let children: Vec<Node> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    found
}

/// The literal positional arguments of `call` when it calls `function`.
fn literal_args(call: Node<'_>, source: &str, function: &str) -> Option<Vec<String>> {
    let callee = call.child_by_field_name("function")?;
    let name = match callee.kind() {
        "identifier" => callee.utf8_text(source.as_bytes()).ok()?,
        "attribute" => callee
            .child_by_field_name("attribute")?
            .utf8_text(source.as_bytes())
            .ok()?,
        _ => return None,
    };
    if name != function {
        return None;
    }
    let args = call.child_by_field_name("arguments")?;
    if args.kind() != "argument_list" {
        return None;
    }
    let mut cursor = args.walk();
    let mut out = Vec::new();
    for arg in args.named_children(&mut cursor) {
        if arg.kind() == "comment" {
            continue;
        }
        if !literal(arg) {
            return None;
        }
        out.push(arg.utf8_text(source.as_bytes()).ok()?.to_string());
    }
    Some(out)
}

/// Whether `node` is made of literals only (no name, call, f-string or operator but a sign).
fn literal(node: Node<'_>) -> bool {
    if !LITERAL.contains(&node.kind()) {
        return false;
    }
    if node.kind() == "string" {
        let mut cursor = node.walk();
        return !node
            .children(&mut cursor)
            .any(|c| c.kind() == "interpolation");
    }
    let mut cursor = node.walk();
    let all = node.children(&mut cursor).all(literal);
    all
}

/// The calls of `function` shown as docstring or doctest examples in `source` (`>>>`
/// lines), with literal arguments only.
pub fn example_calls(source: &str, function: &str, limit: usize) -> Vec<Vec<String>> {
    let lines: String = source
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(">>> "))
        .map(|l| format!("{l}\n"))
        .collect();
    literal_calls(&lines, function, limit)
}

/// The kind of value a Python literal is, or a parameter's annotation allows: what a
/// behaviour diff's made-up inputs are drawn from, so that a function is called only with
/// what it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueKind {
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `str`.
    Str,
    /// `bool`.
    Bool,
    /// `list` (and the sequence and iterable protocols).
    List,
    /// `tuple`.
    Tuple,
    /// `dict` (and mappings).
    Dict,
    /// `None`.
    None,
}

/// The kind of the Python literal `text` (`None` when it is not one of a known kind).
pub fn literal_kind(text: &str) -> Option<ValueKind> {
    let t = text.trim().trim_start_matches(['-', '+']).trim_start();
    let first = t.chars().next()?;
    Some(match first {
        '0'..='9' | '.' => {
            let numeric = !t.starts_with("0x") && !t.starts_with("0o") && !t.starts_with("0b");
            if numeric && (t.contains('.') || t.contains(['e', 'E'])) {
                ValueKind::Float
            } else {
                ValueKind::Int
            }
        }
        '\'' | '"' => ValueKind::Str,
        'r' | 'R' | 'u' | 'U' | 'f' | 'F' if t[1..].starts_with(['\'', '"']) => ValueKind::Str,
        '[' => ValueKind::List,
        '(' => ValueKind::Tuple,
        '{' => ValueKind::Dict,
        _ => match t {
            "None" => ValueKind::None,
            "True" | "False" => ValueKind::Bool,
            _ => return None,
        },
    })
}

/// The kinds of value an annotation allows: `None` when it says nothing a literal could be
/// checked against (`Any`, `object`, a type variable written as a bare name is still a
/// class), an empty list when it names a type no literal has (a class of the program).
fn annotation_kinds(annotation: &str) -> Option<Vec<ValueKind>> {
    let a = annotation.trim().trim_matches(['"', '\'']).trim();
    // A union (`int | None`, `Optional[int]`, `Union[int, str]`): every member's kinds.
    let members: Vec<&str> = if let Some(inner) = a
        .strip_prefix("Optional[")
        .or_else(|| a.strip_prefix("typing.Optional["))
        .and_then(|r| r.strip_suffix(']'))
    {
        vec![inner, "None"]
    } else if let Some(inner) = a
        .strip_prefix("Union[")
        .or_else(|| a.strip_prefix("typing.Union["))
        .and_then(|r| r.strip_suffix(']'))
    {
        split_top(inner, ',')
    } else {
        split_top(a, '|')
    };
    if members.len() > 1 {
        let mut all = Vec::new();
        for m in members {
            all.extend(annotation_kinds(m)?);
        }
        all.sort();
        all.dedup();
        return Some(all);
    }
    let head = a.split('[').next().unwrap_or(a).trim();
    let head = head.rsplit('.').next().unwrap_or(head);
    Some(match head {
        "Any" | "object" => return None,
        "int" => vec![ValueKind::Int],
        // The numeric tower: an int is a float, as type checkers take it.
        "float" | "complex" | "Number" | "Real" => vec![ValueKind::Int, ValueKind::Float],
        "str" => vec![ValueKind::Str],
        "bool" => vec![ValueKind::Bool],
        "list" | "List" | "Sequence" | "MutableSequence" | "Iterable" | "Collection"
        | "Iterator" => vec![ValueKind::List],
        "tuple" | "Tuple" => vec![ValueKind::Tuple],
        "dict" | "Dict" | "Mapping" | "MutableMapping" => vec![ValueKind::Dict],
        "None" | "NoneType" => vec![ValueKind::None],
        _ => Vec::new(),
    })
}

/// `text` split at `sep` where no bracket is open.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(text[from..i].trim());
                from = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(text[from..].trim());
    parts
}

/// One positional parameter a function needs (it has no default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// The kinds its annotation allows: `None` when it has none (or one that allows
    /// anything), empty when it names a type no literal has.
    pub kinds: Option<Vec<ValueKind>>,
}

/// The positional parameters the top-level function `function` of `source` needs (those
/// without a default), with what their annotations allow; `None` when it is not defined
/// there, or takes `*args`, `**kwargs` or keyword-only parameters.
pub fn required_params(source: &str, function: &str) -> Option<Vec<Param>> {
    let tree = lang::parse(Lang::Python, source)?;
    let root = tree.root_node();
    let mut cursor = root.walk();
    let def = root.named_children(&mut cursor).find_map(|n| {
        let def = match n.kind() {
            "function_definition" => n,
            "decorated_definition" => n.child_by_field_name("definition")?,
            _ => return None,
        };
        let name = def
            .child_by_field_name("name")?
            .utf8_text(source.as_bytes())
            .ok()?;
        (name == function).then_some(def)
    })?;
    let params = def.child_by_field_name("parameters")?;
    let text = |n: Node<'_>| n.utf8_text(source.as_bytes()).ok().map(str::to_string);
    let mut cursor = params.walk();
    let mut found = Vec::new();
    for p in params.named_children(&mut cursor) {
        match p.kind() {
            "identifier" => found.push(Param {
                name: text(p)?,
                kinds: None,
            }),
            "typed_parameter" => {
                let name = p.named_child(0).and_then(text)?;
                let kinds = p
                    .child_by_field_name("type")
                    .and_then(text)
                    .and_then(|a| annotation_kinds(&a));
                found.push(Param { name, kinds });
            }
            "default_parameter" | "typed_default_parameter" => {}
            _ => return None,
        }
    }
    // A method's receiver is not an input.
    if found
        .first()
        .is_some_and(|p| p.name == "self" || p.name == "cls")
    {
        found.remove(0);
    }
    Some(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_literal_calls_of_a_function_are_found_and_the_rest_left_out() {
        let src = "from calc import add\nimport calc\n\ndef test_add():\n    assert add(2, 3) == 5\n    assert calc.add(-1, [1, 2]) == 0\n    assert add(x, 3) == 1\n    assert add(f'{x}', 1) == 1\n    assert add(b=2) == 1\n    assert other(1, 2) == 3\n    add('a b', None)\n";
        let calls = literal_calls(src, "add", 10);
        assert_eq!(
            calls,
            vec![
                vec!["2".to_string(), "3".into()],
                vec!["-1".to_string(), "[1, 2]".into()],
                vec!["'a b'".to_string(), "None".into()],
            ]
        );
        let doc =
            "def mean(xs):\n    \"\"\"The mean.\n\n    >>> mean([1, 2, 3])\n    2.0\n    \"\"\"\n";
        assert_eq!(
            example_calls(doc, "mean", 5),
            vec![vec!["[1, 2, 3]".to_string()]]
        );
    }

    #[test]
    fn required_parameters_are_counted_without_defaults() {
        let src = "def f(a, b: int, c=1, *, d=2):\n    pass\n\n\ndef g(*args):\n    pass\n";
        assert_eq!(required_params(src, "f"), None, "a keyword-only marker");
        let src = "def f(a, b: int, c=1):\n    pass\n";
        let n = |src: &str, f: &str| required_params(src, f).map(|p| p.len());
        assert_eq!(n(src, "f"), Some(2));
        assert_eq!(n("def g(*args):\n    pass\n", "g"), None);
        assert_eq!(n("x = 1\n", "f"), None);
    }

    #[test]
    fn annotations_say_which_literals_a_parameter_takes() {
        use ValueKind::*;
        let src = "def f(a, b: int, c: Optional[str], d: float | None, e: list[int], g: Point, h: Any, i: 'Sequence[str]'):\n    pass\n";
        let kinds: Vec<Option<Vec<ValueKind>>> = required_params(src, "f")
            .unwrap()
            .into_iter()
            .map(|p| p.kinds)
            .collect();
        assert_eq!(
            kinds,
            vec![
                Option::None,
                Some(vec![Int]),
                Some(vec![Str, None]),
                Some(vec![Int, Float, None]),
                Some(vec![List]),
                Some(vec![]),
                Option::None,
                Some(vec![List]),
            ]
        );
        let method = "def m(self, n: int):\n    pass\n";
        assert_eq!(required_params(method, "m").unwrap().len(), 1);
        for (text, kind) in [
            ("-1", Some(Int)),
            ("2.5", Some(Float)),
            ("1e3", Some(Float)),
            ("0x1f", Some(Int)),
            ("'a'", Some(Str)),
            ("r\"a\"", Some(Str)),
            ("[1]", Some(List)),
            ("(1, 2)", Some(Tuple)),
            ("{}", Some(Dict)),
            ("None", Some(None)),
            ("True", Some(Bool)),
            ("x", Option::None),
        ] {
            assert_eq!(literal_kind(text), kind, "{text}");
        }
    }
}
