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

/// How many positional parameters the top-level function `function` of `source` needs (those
/// without a default; `None` when it is not defined there, or takes `*args` or `**kwargs`).
pub fn required_params(source: &str, function: &str) -> Option<usize> {
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
    let mut cursor = params.walk();
    let mut n = 0;
    for p in params.named_children(&mut cursor) {
        match p.kind() {
            "identifier" | "typed_parameter" => n += 1,
            "default_parameter" | "typed_default_parameter" => {}
            _ => return None,
        }
    }
    Some(n)
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
        assert_eq!(required_params(src, "f"), Some(2));
        assert_eq!(required_params("def g(*args):\n    pass\n", "g"), None);
        assert_eq!(required_params("x = 1\n", "f"), None);
    }
}
