"""add-longest-word: the first longest word, or "", and a test calls it."""
import pathlib
import sys

tree = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(tree))
from textstats import longest_word  # noqa: E402

assert longest_word("a bbb cc") == "bbb" and longest_word("ab cd") == "ab"
assert longest_word("") == "" and longest_word("  x  ") == "x"
assert "longest_word(" in (tree / "tests" / "test_textstats.py").read_text()
