"""fix-slug-separator: hyphens by default, any given separator still honoured, and the tests
are the base's."""
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "slugs", "tests/test_slugs.py")
sys.path.insert(0, tree)
from slugs import slugify, unique_slug  # noqa: E402

assert slugify("A  b, C!") == "a-b-c"
assert slugify("x y", sep=".") == "x.y" and slugify("x y", "+") == "x+y"
assert slugify("alpha beta gamma", max_length=11) == "alpha-beta"
assert slugify("") == ""
assert unique_slug("New post", {"new-post", "new-post-2"}) == "new-post-3"
assert unique_slug("New post", set()) == "new-post"
