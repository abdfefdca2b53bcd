"""fix-page-offset: page() counts pages from 1 on cases the tests never gave, and the tests
are the base's."""
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "pager", "tests/test_pager.py")
sys.path.insert(0, tree)
from pager import page, page_count, page_label  # noqa: E402

items = list(range(25))
assert page(items, 2, 10) == list(range(10, 20))
assert page(items, 1) == items[:20]
assert page(list(range(5)), 1) == list(range(5))
assert page(list(range(6)), 3, 2) == [4, 5]
assert page(list(range(6)), 4, 2) == []
assert page_count(25, 10) == 3 and page_label(1, 5) == "Page 1 of 1"
