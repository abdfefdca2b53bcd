"""fix-top-scores: top leaves every list it is given as it was (board too), still returns
the n best with ties in scoring order and n past the end or 0, returns a list of its own,
and the tests are the base's."""
import random
import sys

from _base import assertions_kept

tree = sys.argv[1]
assertions_kept(tree, "leaderboard", "tests/test_leaderboard.py")
sys.path.insert(0, tree)
from leaderboard import board, latest, top  # noqa: E402

rng = random.Random(42)
for size in range(0, 12):
    for _ in range(20):
        scores = [("p%d" % i, rng.randint(0, 5)) for i in range(size)]
        before = list(scores)
        for n in (0, 1, 3, size, size + 2):
            want = [pair for _, pair in sorted(enumerate(scores), key=lambda ip: (-ip[1][1], ip[0]))][:n]
            got = top(scores, n)
            assert got == want, "top(%r, %d) is %r" % (before, n, got)
            assert scores == before, "top changed its argument"
            board(scores, n)
            assert scores == before, "board changed its argument"
scores = [("ann", 1), ("bob", 2)]
got = top(scores, 5)
got.append(("eve", 9))
assert scores == [("ann", 1), ("bob", 2)], "what top returned is the caller's own list"
assert latest(scores, 1) == [("ann", 1), ("bob", 2)][-1:]
assert top([("x", 3)]) == [("x", 3)] and top([], 3) == []
