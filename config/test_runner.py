"""git triad's test runner, for a tree whose Python tests git triad runs when no verify command
is configured and pytest is not installed: every test_*.py / *_test.py file is imported, and
its unittest TestCases and its plain test_* functions (pytest's style, without fixtures) are
run one by one.

    python3 test_runner.py

One line a test, as unittest's -v prints them: `path::name ... ok`, `... FAIL: why`,
`... ERROR: why`; exit 1 when one failed.
"""

import importlib.util
import inspect
import os
import sys
import traceback
import unittest

SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox"}


def test_files(root):
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
                yield os.path.relpath(os.path.join(here, name), root)


def why(error):
    last = traceback.format_exception_only(type(error), error)[-1].strip()
    return last.splitlines()[0][:200]


def main():
    root = os.getcwd()
    sys.path[:0] = [root] + ([os.path.join(root, "src")] if os.path.isdir(os.path.join(root, "src")) else [])
    failed = 0
    for path in test_files(root):
        name = path[:-3].replace(os.sep, ".")
        try:
            spec = importlib.util.spec_from_file_location(name, os.path.join(root, path))
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except BaseException as e:
            print("%s ... ERROR: %s" % (path, why(e)))
            failed += 1
            continue
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        for case in _cases(suite):
            result = unittest.TestResult()
            case.run(result)
            test = "%s::%s.%s" % (path, type(case).__name__, case._testMethodName)
            if result.failures or result.errors:
                kind = "FAIL" if result.failures else "ERROR"
                print("%s ... %s" % (test, kind))
                failed += 1
            elif result.skipped:
                print("%s ... skipped" % test)
            else:
                print("%s ... ok" % test)
        for attr, value in sorted(vars(module).items()):
            if not attr.startswith("test") or not inspect.isfunction(value):
                continue
            if value.__module__ != module.__name__:
                continue
            params = [p for p in inspect.signature(value).parameters.values() if p.default is p.empty]
            if params:
                continue
            try:
                value()
                print("%s::%s ... ok" % (path, attr))
            except BaseException as e:
                kind = "FAIL" if isinstance(e, AssertionError) else "ERROR"
                print("%s::%s ... %s" % (path, attr, kind))
                failed += 1
    sys.stdout.flush()
    sys.exit(1 if failed else 0)


def _cases(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _cases(t)
        else:
            yield t


if __name__ == "__main__":
    main()
