"""git triad's probe subject: imports the code under review and evaluates what it is asked,
reporting plain values; it never sees a probe's expected values, compares nothing and
decides nothing.

    python3 probe_runner.py OPS.json NONCE_FILE FRAMES_FILE

OPS.json is a list of operations, done in order (git triad wrote them from the probe; the
literal values a probe expects stay with git triad):
  {"import": M}                 star-import module M (the code under review)
  {"exec": SOURCE}              run a statement of the probe
  {"eval": SOURCE}              evaluate an expression of the probe
Each gets one answer frame (JSON after "<nonce> ", on FRAMES_FILE, opened before any code
under review runs), with its index K:
  {"k": K, "kind": "done", "lines": L}                  imported, or ran
  {"k": K, "kind": "value", "value": V, "lines": L}      evaluated (V: see triad_plain.py)
  {"k": K, "kind": "raised", "error": E, "at": "path:line" | null, "lines": L}
L lists the lines of the tree that ran inside functions ([path, line]; a module's own lines,
`def` lines run at import, are not running a function). A statement that raises ends the
run; an expression that raises does not (git triad decides whether it was needed). The code
under review runs in this process and can write anything here: git triad takes one answer
per operation, in order, and an answer is a value, never a verdict.
"""

import json
import os
import sys
import traceback

from triad_plain import plain

ROOT = os.path.realpath(os.getcwd())
MAX_LINES = 2000
# Code objects of functions (and lambdas, comprehensions) are optimized; a module's or a
# class body's are not.
CO_OPTIMIZED = 0x1


def main():
    ops_path, nonce_path, frames_path = sys.argv[1:4]
    with open(nonce_path, encoding="ascii") as f:
        nonce = f.read().strip()
    os.unlink(nonce_path)
    with open(ops_path, encoding="utf-8") as f:
        ops = json.load(f)
    # Opened before any code under review runs.
    channel = open(frames_path, "a", encoding="utf-8")
    settrace = sys.settrace
    realpath = os.path.realpath
    sep = os.sep
    dumps = json.dumps

    def answer(**frame):
        channel.write(nonce + " " + dumps(frame) + "\n")
        channel.flush()

    files = {}

    def in_tree(filename):
        known = files.get(filename)
        if known is None:
            path = realpath(filename)
            known = ""
            if not filename.startswith("<") and path.startswith(ROOT + sep):
                known = path[len(ROOT) + 1:]
            files[filename] = known
        return known

    class Lines:
        """The lines of the tree run inside functions while it is installed."""

        def __init__(self):
            self.seen = set()

        def __call__(self, frame, event, arg):
            path = in_tree(frame.f_code.co_filename)
            if not path:
                return None
            if (frame.f_code.co_flags & CO_OPTIMIZED and event in ("call", "line")
                    and len(self.seen) < MAX_LINES):
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
    for k, op in enumerate(ops):
        lines = Lines()
        try:
            if "import" in op:
                module = op["import"]
                lines.run(lambda: exec("import %s\nfrom %s import *" % (module, module), namespace))
                answer(k=k, kind="done", lines=lines.list())
            elif "exec" in op:
                code = compile(op["exec"], "<probe>", "exec")
                lines.run(lambda: exec(code, namespace))
                answer(k=k, kind="done", lines=lines.list())
            else:
                code = compile(op["eval"], "<probe>", "eval")
                value = lines.run(lambda: eval(code, namespace))
                answer(k=k, kind="value", value=plain(value), lines=lines.list())
        except BaseException as e:
            answer(k=k, kind="raised", error=described(e), at=where(e, in_tree),
                   lines=lines.list())
            if "eval" not in op:
                break
    channel.close()
    sys.stdout.flush()
    os._exit(0)


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
