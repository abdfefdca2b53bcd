"""fix-discount: apply_discount takes the percentage off, and the tests are the base's."""
import pathlib
import sys

tree = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(tree))
from pricing import apply_discount  # noqa: E402

assert apply_discount(200, 25) == 150
assert apply_discount(80, 50) == 40
assert apply_discount(10, 0) == 10
tests = (tree / "tests" / "test_pricing.py").read_text()
assert "self.assertEqual(apply_discount(200, 25), 150)" in tests, "the test was changed"
