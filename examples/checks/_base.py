"""What the hidden checks of the bug-fix tasks share: the base's tests must be kept, and a
Rust crate is checked by a test file the models never saw."""

import os
import pathlib
import subprocess

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent


def assertions_kept(tree, example, path):
    """Fails unless every assertion line of `path` in the example as written is still in the
    tree's copy (a fix may add tests, not change the ones that failed)."""
    base = (EXAMPLES / example / path).read_text().splitlines()
    now = {line.strip() for line in (pathlib.Path(tree) / path).read_text().splitlines()}
    lost = [line.strip() for line in base if "assert" in line and line.strip() not in now]
    assert not lost, "the tests were changed: %s" % lost


def cargo_hidden_test(tree, name, source):
    """Writes `source` as tests/<name>.rs in the tree and runs it alone under cargo test;
    returns the exit code."""
    tree = pathlib.Path(tree)
    (tree / "tests").mkdir(exist_ok=True)
    (tree / "tests" / (name + ".rs")).write_text(source)
    env = dict(os.environ, CARGO_TARGET_DIR=str(tree / "target-hidden"))
    run = subprocess.run(
        ["cargo", "test", "--offline", "-q", "--test", name],
        cwd=tree, env=env, capture_output=True, timeout=600,
    )
    return run.returncode
