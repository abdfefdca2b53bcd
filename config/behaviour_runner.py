"""git triad's behaviour runner: calls functions of the tree it runs in on given inputs and
reports what each call returned or raised, as plain data, for git triad to compare with the
same calls on another tree (the base of a change).

    python3 behaviour_runner.py CALLS.json NONCE_FILE FRAMES_FILE

CALLS.json is a list of {"module": M, "function": F, "args": [SOURCE, ...]}; each argument
is a Python literal (read with ast.literal_eval, never evaluated). Each call gets a few
seconds (SIGALRM). Frames (JSON after "<nonce> ") go to FRAMES_FILE, opened before any code
of the tree is imported:
  {"i": I, "value": V, "ms": T}          the call returned V (see triad_plain.py) in T ms
  {"i": I, "raised": "TypeError"}        the call raised (the type's name only)
  {"i": I, "missing": "why"}             the function could not be found or called
  {"kind": "done"}
"""

import ast
import importlib
import json
import os
import signal
import sys
import time

from triad_plain import plain

SECONDS = 3


class TooLong(BaseException):
    """A call that did not return in time."""


def main():
    calls_path, nonce_path, frames_path = sys.argv[1:4]
    with open(nonce_path, encoding="ascii") as f:
        nonce = f.read().strip()
    os.unlink(nonce_path)
    channel = open(frames_path, "a", encoding="utf-8")

    def emit(**frame):
        channel.write(nonce + " " + json.dumps(frame) + "\n")
        channel.flush()

    with open(calls_path, encoding="utf-8") as f:
        calls = json.load(f)

    def alarm(signum, frame):
        raise TooLong()

    signal.signal(signal.SIGALRM, alarm)
    modules = {}
    # A function that hung twice is not called again: each hang costs the whole limit, and
    # two already show what a third would.
    hung = {}
    for i, call in enumerate(calls):
        key = (call["module"], call["function"])
        if hung.get(key, 0) >= 2:
            emit(i=i, missing="not called: it did not return twice already")
            continue
        try:
            args = [ast.literal_eval(a) for a in call["args"]]
        except (ValueError, SyntaxError) as e:
            emit(i=i, missing="an argument is not a literal: %s" % type(e).__name__)
            continue
        name = call["module"]
        try:
            if name not in modules:
                modules[name] = importlib.import_module(name)
            function = getattr(modules[name], call["function"])
        except BaseException as e:
            emit(i=i, missing="%s.%s cannot be loaded: %s" % (name, call["function"], type(e).__name__))
            continue
        signal.alarm(SECONDS)
        started = time.monotonic()
        try:
            value = function(*args)
            signal.alarm(0)
            ms = int((time.monotonic() - started) * 1000)
            emit(i=i, value=plain(value), ms=ms)
        except TooLong:
            hung[key] = hung.get(key, 0) + 1
            emit(i=i, raised="did not return in %d s" % SECONDS)
        except BaseException as e:
            signal.alarm(0)
            emit(i=i, raised=type(e).__name__)
    emit(kind="done")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
