"""fix-hours: hours are read, nothing else new is, and the tests are the base's."""
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "durations", "tests/test_durations.py")
sys.path.insert(0, tree)
from durations import format_duration, parse_duration  # noqa: E402

assert parse_duration("2h") == 7200
assert parse_duration("1h1m1s") == 3661
assert parse_duration("10m") == 600 and parse_duration("7s") == 7
for bad in ["3d", "1H", "h", "1h30"]:
    try:
        parse_duration(bad)
    except ValueError:
        pass
    else:
        raise AssertionError("%r was accepted" % bad)
for seconds in [3600, 7322, 86399, 90000]:
    assert parse_duration(format_duration(seconds)) == seconds
