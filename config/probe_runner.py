"""git triad's probe runner: runs one probe against the code under review and writes what it
showed, as one JSON object, to the file named by its second argument.

    python3 probe_runner.py PROBE.py RESULT.json [MODULE ...]

The working directory is the reviewed tree; every MODULE is star-imported first, so a probe
can call the code under review by name. Each top-level `assert` is evaluated part by part, so
a failing comparison reports the call, the expected value and the actual one. Outcomes:

- confirmed: an assertion fails, or the code under review raises (its frame is in the tree);
- refuted:   every assertion holds (the claimed defect does not happen);
- broken:    the probe itself does not run (syntax, a name the code never had, an error in
             the probe's own lines), or asserts nothing.
"""

import ast
import json
import operator
import os
import sys
import traceback

ROOT = os.path.realpath(os.getcwd())
OPS = {
    ast.Eq: (operator.eq, "=="),
    ast.NotEq: (operator.ne, "!="),
    ast.Lt: (operator.lt, "<"),
    ast.LtE: (operator.le, "<="),
    ast.Gt: (operator.gt, ">"),
    ast.GtE: (operator.ge, ">="),
    ast.Is: (operator.is_, "is"),
    ast.IsNot: (operator.is_not, "is not"),
    ast.In: (lambda a, b: a in b, "in"),
    ast.NotIn: (lambda a, b: a not in b, "not in"),
}


def shown(value):
    """A value as the record shows it: its repr, bounded."""
    try:
        text = repr(value)
    except BaseException as e:  # a hostile __repr__
        text = "<unprintable %s: %s>" % (type(value).__name__, type(e).__name__)
    return text if len(text) <= 300 else text[:300] + "..."


def emit(result_path, outcome, detail, call=None, expected=None, actual=None):
    """Writes the result and ends the process (no atexit hook of the probe's runs)."""
    with open(result_path, "w", encoding="utf-8") as f:
        json.dump(
            {
                "outcome": outcome,
                "detail": detail[:1000],
                "call": call,
                "expected": expected,
                "actual": actual,
            },
            f,
        )
    sys.stdout.flush()
    os._exit(0)


def in_tree(filename, probe_path):
    """Whether a traceback frame is code of the reviewed tree (not the probe, not this file)."""
    path = os.path.realpath(filename)
    if path in (probe_path, os.path.realpath(__file__)):
        return False
    return path.startswith(ROOT + os.sep)


def classify(error, probe_path, what):
    """What an exception shows: a defect of the code under review when it was raised in the
    tree's code, else a probe that does not run."""
    described = ("%s: %s" % (type(error).__name__, error)).replace(ROOT + os.sep, "")
    frames = [f for f in traceback.extract_tb(error.__traceback__) if in_tree(f.filename, probe_path)]
    if frames:
        last = frames[-1]
        where = os.path.relpath(os.path.realpath(last.filename), ROOT)
        return (
            "confirmed",
            "`%s` raises %s (at %s:%d)" % (what, described, where, last.lineno),
            what,
            None,
            "raises " + described,
        )
    if isinstance(error, AssertionError):
        return ("confirmed", "an assertion fails: %s" % (str(error) or what), what, None, None)
    return ("broken", "the probe itself fails: %s" % described, None, None, None)


def evaluate(node, namespace, probe_path):
    """Evaluates one expression node of the probe in its namespace."""
    code = compile(ast.Expression(body=node), probe_path, "eval")
    return eval(code, namespace)


def check(stmt, source, namespace, probe_path):
    """Runs one top-level assert; returns the result tuple when it fails or breaks."""
    test = stmt.test
    whole = ast.get_source_segment(source, test) or "the assertion"
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in OPS:
        left, right = test.left, test.comparators[0]
        # `2 == f(x)`: the call is the side that is not a literal.
        if isinstance(left, ast.Constant) and not isinstance(right, ast.Constant):
            call_node, value_node, swapped = right, left, True
        else:
            call_node, value_node, swapped = left, right, False
        call = ast.get_source_segment(source, call_node) or whole
        try:
            actual = evaluate(call_node, namespace, probe_path)
        except BaseException as e:
            return classify(e, probe_path, call)
        try:
            expected = evaluate(value_node, namespace, probe_path)
        except BaseException as e:
            return ("broken", "the probe's expected value does not evaluate: %s: %s" % (type(e).__name__, e), None, None, None)
        fn, symbol = OPS[type(test.ops[0])]
        try:
            holds = fn(expected, actual) if swapped else fn(actual, expected)
        except BaseException as e:
            return classify(e, probe_path, whole)
        if holds:
            return None
        if symbol == "==":
            detail = "%s returns %s, expected %s" % (call, shown(actual), shown(expected))
            wanted = shown(expected)
        else:
            detail = "`%s` is false: %s is %s" % (whole, call, shown(actual))
            wanted = "%s %s" % (symbol, shown(expected))
        return ("confirmed", detail, call, wanted, shown(actual))
    try:
        value = evaluate(test, namespace, probe_path)
    except BaseException as e:
        return classify(e, probe_path, whole)
    if value:
        return None
    return ("confirmed", "`%s` is false" % whole, whole, "true", shown(value))


def main():
    sys.path.insert(0, ROOT)
    probe_path = os.path.realpath(sys.argv[1])
    result_path = sys.argv[2]
    modules = [m for m in sys.argv[3:] if m]
    with open(probe_path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=probe_path)
    except SyntaxError as e:
        emit(result_path, "broken", "the probe does not parse: %s (line %s)" % (e.msg, e.lineno))
    if not any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
        emit(result_path, "broken", "the probe asserts nothing")
    namespace = {"__name__": "__triad_probe__", "__builtins__": __builtins__}
    for module in modules:
        try:
            exec("import %s" % module, namespace)
            exec("from %s import *" % module, namespace)
        except BaseException as e:
            emit(result_path, "broken", "the module under review does not import: %s: %s" % (type(e).__name__, e))
    for stmt in tree.body:
        if isinstance(stmt, ast.Assert):
            failed = check(stmt, source, namespace, probe_path)
            if failed:
                emit(result_path, *failed)
            continue
        what = ast.get_source_segment(source, stmt) or "a statement"
        code = compile(ast.Module(body=[stmt], type_ignores=[]), probe_path, "exec")
        try:
            exec(code, namespace)
        except BaseException as e:
            emit(result_path, *classify(e, probe_path, what.splitlines()[0]))
    emit(result_path, "refuted", "the probe passes: every assertion holds")


if __name__ == "__main__":
    main()
