"""git triad's probe subject: runs one probe against the code under review and reports what
the code computed, never what it means.

    python3 probe_runner.py PROBE.py NONCE_FILE FRAMES_FILE [MODULE ...]

The working directory is the reviewed tree; every MODULE is star-imported first, so a probe
can call the code under review by name. The outcome (confirmed, refuted, broken, irrelevant)
is decided by git triad, outside this process: the code under review runs here and could
write anything anywhere, so this process only reports, as framed lines appended to
FRAMES_FILE, the values each assertion compared (plain data only: a foreign object is reported
by its type, never compared by its own __eq__), what each statement raised and where, and
which lines of the tree each one executed. Each frame starts with a nonce read from
NONCE_FILE, which is deleted before any code under review is imported.

Frames (JSON after "<nonce> "):
  {"kind": "importing", "module": M}
  {"kind": "ready"}
  {"kind": "compare", "n": I, "op": "==", "text": T, "call": C, "swapped": B,
   "left": V, "right": V, "lines": [[path, line], ...], "calls": B}
  {"kind": "truth", "n": I, "text": T, "value": V, "lines": [...], "calls": B}
  {"kind": "raised", "n": I, "text": T, "error": E, "at": "path:line" | null, "lines": [...]}
  {"kind": "statement", "n": I, "lines": [...]}
  {"kind": "broken", "detail": D}
  {"kind": "done"}
Values V: {"t": "none" | "bool" | "int" | "float" | "str" | "bytes" | "list" | "tuple" |
"set" | "dict" | "object" | "enum" | "opaque", ...}.
"""

import ast
import json
import os
import sys
import traceback

from triad_plain import plain

ROOT = os.path.realpath(os.getcwd())
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
MAX_LINES = 2000


def main():
    probe_path = os.path.realpath(sys.argv[1])
    nonce_path = sys.argv[2]
    frames_path = sys.argv[3]
    modules = [m for m in sys.argv[4:] if m]
    with open(nonce_path, encoding="ascii") as f:
        nonce = f.read().strip()
    os.unlink(nonce_path)
    # Opened before any code under review runs.
    channel = open(frames_path, "a", encoding="utf-8")
    getframe = sys._getframe
    settrace = sys.settrace
    realpath = os.path.realpath
    sep = os.sep
    dumps = json.dumps

    def emit(**frame):
        channel.write(nonce + " " + dumps(frame) + "\n")
        channel.flush()

    def finish(**frame):
        emit(**frame)
        sys.stdout.flush()
        os._exit(0)

    with open(probe_path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=probe_path)
    except SyntaxError as e:
        finish(kind="broken", detail="the probe does not parse: %s (line %s)" % (e.msg, e.lineno))
    if not any(isinstance(n, ast.Assert) for n in ast.walk(tree)):
        finish(kind="broken", detail="the probe asserts nothing")

    files = {}

    def in_tree(filename):
        known = files.get(filename)
        if known is None:
            path = realpath(filename)
            known = ""
            if path != probe_path and path.startswith(ROOT + sep):
                known = path[len(ROOT) + 1:]
            files[filename] = known
        return known

    class Lines:
        """The lines of the tree executed while it is installed."""

        def __init__(self):
            self.seen = set()

        def __call__(self, frame, event, arg):
            path = in_tree(frame.f_code.co_filename)
            if not path:
                return None
            if event in ("call", "line") and len(self.seen) < MAX_LINES:
                self.seen.add((path, frame.f_lineno))
            return self

        def run(self, thunk):
            settrace(self)
            try:
                return thunk()
            finally:
                settrace(None)

        def list(self):
            return sorted([p, n] for p, n in self.seen)

    namespace = {"__name__": "__triad_probe__", "__builtins__": __builtins__}
    for module in modules:
        emit(kind="importing", module=module)
        try:
            exec("import %s" % module, namespace)
            exec("from %s import *" % module, namespace)
        except BaseException as e:
            finish(kind="raised", n=-1, text="import " + module, error=described(e),
                   at=where(e, in_tree), lines=[])
    emit(kind="ready")

    def evaluate(node):
        code = compile(ast.Expression(body=node), probe_path, "eval")
        return eval(code, namespace)

    def calls(node):
        return any(isinstance(n, ast.Call) for n in ast.walk(node))

    for n, stmt in enumerate(tree.body):
        text = (ast.get_source_segment(source, stmt) or "a statement").splitlines()[0]
        lines = Lines()
        if isinstance(stmt, ast.Assert):
            test = stmt.test
            whole = ast.get_source_segment(source, test) or "the assertion"
            if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in OPS:
                left, right = test.left, test.comparators[0]
                swapped = isinstance(left, ast.Constant) and not isinstance(right, ast.Constant)
                call = right if swapped else left
                values = []
                for side in (left, right):
                    try:
                        values.append(lines.run(lambda: evaluate(side)))
                    except BaseException as e:
                        finish(kind="raised", n=n, text=ast.get_source_segment(source, side) or whole,
                               error=described(e), at=where(e, in_tree), lines=lines.list())
                emit(kind="compare", n=n, op=OPS[type(test.ops[0])], text=whole,
                     call=ast.get_source_segment(source, call) or whole, swapped=swapped,
                     left=plain(values[0]), right=plain(values[1]), lines=lines.list(),
                     calls=calls(test))
            else:
                try:
                    value = lines.run(lambda: evaluate(test))
                except BaseException as e:
                    finish(kind="raised", n=n, text=whole, error=described(e),
                           at=where(e, in_tree), lines=lines.list())
                emit(kind="truth", n=n, text=whole, value=plain(value), lines=lines.list(),
                     calls=calls(test))
            continue
        code = compile(ast.Module(body=[stmt], type_ignores=[]), probe_path, "exec")
        try:
            lines.run(lambda: exec(code, namespace))
        except BaseException as e:
            finish(kind="raised", n=n, text=text, error=described(e), at=where(e, in_tree),
                   lines=lines.list())
        emit(kind="statement", n=n, lines=lines.list())
    finish(kind="done")


def described(error):
    """`Type: message`, with the tree's root left out of paths. Never the error's own
    __str__ when its type is not a builtin exception (that would be the code's word)."""
    kind = type(error)
    name = kind.__name__
    if kind.__module__ != "builtins":
        return name
    try:
        text = str(error)
    except BaseException:
        text = ""
    return ("%s: %s" % (name, text)).replace(ROOT + os.sep, "")[:500]


def where(error, in_tree):
    """The last frame of the tree's code in the error's traceback, as `path:line`."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if in_tree(f.filename)]
    if not frames:
        return None
    return "%s:%d" % (in_tree(frames[-1].filename), frames[-1].lineno)


if __name__ == "__main__":
    main()
