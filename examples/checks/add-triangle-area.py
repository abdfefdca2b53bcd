"""add-triangle-area: importable from the package, right, and tested."""
import pathlib
import sys

tree = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(tree))
from geometry import rect_area, triangle_area  # noqa: E402

assert triangle_area(4, 3) == 6
assert triangle_area(5, 2) == 5
assert rect_area(2, 3) == 6
assert "triangle_area(" in (tree / "tests" / "test_shapes.py").read_text()
