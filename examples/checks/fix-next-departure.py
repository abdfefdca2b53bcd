"""fix-next-departure: next_departure returns, and returns the first departure at or after
the time, at every minute of the day on timetables the tests never gave (empty, one bus,
two buses at the same time, a whole day); the tests are the base's. A call still looping
fails the check after 2 seconds of CPU time (some 20 times what the whole check takes on a
right fix, and unmoved by how busy the machine is) instead of hanging it."""
import signal
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "timetable", "tests/test_timetable.py")
sys.path.insert(0, tree)
from timetable import clock, minutes, next_departure, wait  # noqa: E402


def hung(signum, frame):
    raise AssertionError("a call has not returned after 2 seconds of CPU time")


signal.signal(signal.SIGVTALRM, hung)
signal.setitimer(signal.ITIMER_VIRTUAL, 2)

tables = [
    [],
    ["12:00"],
    ["08:00", "08:00", "09:10"],
    ["00:00", "23:59"],
    [clock(m) for m in range(5 * 60, 24 * 60, 20)],
]
for table in tables:
    times = [minutes(t) for t in table]
    for now in range(0, 24 * 60):
        want = next((t for t, m in zip(table, times) if m >= now), None)
        got = next_departure(table, clock(now))
        assert got == want, "next_departure(%r, %r) is %r, not %r" % (table, clock(now), got, want)
        assert wait(table, clock(now)) == (None if want is None else minutes(want) - now)
signal.setitimer(signal.ITIMER_VIRTUAL, 0)
