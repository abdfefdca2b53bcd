"""add-char-count: char_count counts non-whitespace characters, and a test calls it."""
import pathlib
import sys

tree = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(tree))
from textstats import char_count  # noqa: E402

assert char_count("a b") == 2 and char_count("") == 0 and char_count(" a\tb\nc ") == 3
assert "char_count(" in (tree / "tests" / "test_textstats.py").read_text()
