"""fix-short-hex: the short form is read, digit by digit doubled, in either case, what was
refused before still is (four, five or seven digits, no "#", a wrong digit), six digits read
as before, and the tests are the base's."""
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "colours", "tests/test_colours.py")
sys.path.insert(0, tree)
from colours import parse_hex, text_colour, to_hex  # noqa: E402

for text, want in [
    ("#000", (0, 0, 0)), ("#ABC", (170, 187, 204)), ("#f0F", (255, 0, 255)),
    ("#123", (17, 34, 51)), ("#abcdef", (171, 205, 239)), ("#000000", (0, 0, 0)),
]:
    assert parse_hex(text) == want, "parse_hex(%r) is %r" % (text, parse_hex(text))
for short in ["#%x%x%x" % (r, g, b) for r in range(16) for g in range(0, 16, 5) for b in (0, 15)]:
    assert parse_hex(short) == parse_hex("#" + "".join(c * 2 for c in short[1:]))
assert text_colour("#fff") == "#000000" and text_colour("#00f") == "#ffffff"
assert to_hex(parse_hex("#fa0")) == "#ffaa00"
for bad in ["#", "abc", "##abc", "#ffff", "#fffff", "#fffffff", "#xyz", "#ffg", " #fff", "#fff ", "#-12"]:
    try:
        parse_hex(bad)
    except ValueError:
        pass
    else:
        raise AssertionError("%r was accepted" % bad)
