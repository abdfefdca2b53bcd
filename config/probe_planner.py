"""git triad's probe planner: reads probes (never runs them, never imports the code under
review) and writes what each asks, for git triad to judge outside the process that runs
the code.

    python3 probe_planner.py NONCE_FILE FRAMES_FILE PROBE.py ...

For each probe, one frame (JSON after "<nonce> ", in order) on FRAMES_FILE:
  {"broken": WHY}
  {"steps": [STEP, ...]}
STEP:
  {"exec": SOURCE, "text": T, "sets": [NAME, ...], "uses": [NAME, ...]}
  {"assert": NODE, "text": T}
NODE:
  {"and": [NODE, ...]} | {"or": [NODE, ...]} | {"not": NODE}
  {"cmp": [EXPR, OP, EXPR], "text": T}
  {"truth": EXPR}
EXPR:
  {"lit": V}                                   a literal, read here (V as triad_plain.py)
  {"code": SOURCE, "text": T, "uses": [NAME, ...]}   evaluated by the subject
Expected values that are literals never reach the subject; git triad compares.
"""

import ast
import json
import os
import sys

from triad_plain import plain

OPS = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}


def names(node):
    return sorted({n.id for n in ast.walk(node) if isinstance(n, ast.Name)} |
                  {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)})


def assigned(node):
    found = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(n.id)
        elif isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)):
            found.add(n.attr)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                found.add((a.asname or a.name).split(".")[0])
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(n.name)
    return sorted(found)


def expr(source, node):
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        text = ast.get_source_segment(source, node) or "an expression"
        return {"code": text, "text": text, "uses": names(node)}
    return {"lit": plain(value)}


def condition(source, node):
    text = ast.get_source_segment(source, node) or "the assertion"
    if isinstance(node, ast.BoolOp):
        kind = "and" if isinstance(node.op, ast.And) else "or"
        return {kind: [condition(source, v) for v in node.values]}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return {"not": condition(source, node.operand)}
    if isinstance(node, ast.Compare) and type(node.ops[0]) in OPS:
        # A chain `a < b < c` is `a < b and b < c`, each side evaluated once here.
        sides = [node.left] + list(node.comparators)
        parts = []
        for i, op in enumerate(node.ops):
            if type(op) not in OPS:
                return {"truth": expr(source, node)}
            parts.append({"cmp": [expr(source, sides[i]), OPS[type(op)], expr(source, sides[i + 1])],
                          "text": text})
        return parts[0] if len(parts) == 1 else {"and": parts}
    return {"truth": expr(source, node)}


def plan(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        return {"broken": "the probe does not parse: %s (line %s)" % (e.msg, e.lineno)}
    except (ValueError, MemoryError, RecursionError) as e:
        return {"broken": "the probe does not parse: %s" % type(e).__name__}
    if not any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
        return {"broken": "the probe asserts nothing"}
    steps = []
    for stmt in tree.body:
        text = (ast.get_source_segment(source, stmt) or "a statement").splitlines()[0]
        if isinstance(stmt, ast.Assert):
            steps.append({"assert": condition(source, stmt.test),
                          "text": ast.get_source_segment(source, stmt.test) or text})
        else:
            steps.append({"exec": ast.get_source_segment(source, stmt) or "", "text": text,
                          "sets": assigned(stmt), "uses": names(stmt)})
    return {"steps": steps}


def main():
    nonce_path, frames_path = sys.argv[1:3]
    with open(nonce_path, encoding="ascii") as f:
        nonce = f.read().strip()
    os.unlink(nonce_path)
    with open(frames_path, "a", encoding="utf-8") as out:
        for path in sys.argv[3:]:
            try:
                frame = plan(path)
            except RecursionError:
                frame = {"broken": "the probe is nested too deeply to read"}
            out.write(nonce + " " + json.dumps(frame) + "\n")


if __name__ == "__main__":
    main()
