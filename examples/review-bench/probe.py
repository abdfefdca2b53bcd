"""What every function of the review bench's project does on inputs of our own: `python3
probe.py TREE` prints, as JSON, each call and its outcome in the project at TREE ("returns
<repr>", "raises <exception type>" or "does not return" after half a second of CPU time).

These inputs are the bench's own and are never shown to a model: they are how the corpus
proves itself (tests/review_bench.rs), not what a review is given. Every input is a normal
one, inside what the function's docstring and annotations allow, but for one that its
docstring says is refused (an amount with three decimals)."""
import importlib
import json
import signal
import sys

sys.path.insert(0, sys.argv[1])
sys.setrecursionlimit(1000)

CALLS = {
    "toolbox.text.truncate": [
        ("hello world", 8), ("short", 10), ("hello", 5), ("hello!", 5), ("abc", 3), ("", 4),
        ("a longer sentence here", 12),
    ],
    "toolbox.text.count_occurrences": [
        ("the cat and the hat", "the"), ("banana", "an"), ("aaaa", "aa"), ("", "x"),
        ("abc", "d"), ("abcabc", "abc"),
    ],
    "toolbox.text.word_frequencies": [
        ("The cat saw the dog",), ("",), ("a a A",), ("one",), ("  spaced   out  ",),
    ],
    "toolbox.lists.flatten": [
        ([1, [2, [3, 4]], 5],), ([],), ([[]],), ([[1], [2, 3]],), ([1, 2, 3],), (["a", ["b"]],),
    ],
    "toolbox.lists.chunk": [
        ([1, 2, 3, 4], 2), ([1, 2, 3, 4, 5], 2), ([], 3), ([1, 2], 3), (list(range(7)), 3),
        ([1], 1),
    ],
    "toolbox.lists.unique": [([3, 1, 3, 2, 1],), ([],), (["a", "a", "b"],)],
    "toolbox.stats.clamp": [
        (15, 0, 10), (-3, 0, 10), (7, 0, 10), (0, 0, 10), (10, 0, 10), (2.5, 1.0, 2.0),
    ],
    "toolbox.stats.median": [
        ([3, 1, 2],), ([1, 2, 3, 4],), ([5],), ([2, 1],), ([1.5, 0.5, 2.5, 3.5],), ([7, 7, 1],),
    ],
    "toolbox.stats.percent_change": [
        (80, 100), (100, 80), (50, 75), (10.0, 12.5), (3, 3), (200, 250),
    ],
    "toolbox.money.to_cents": [
        ("12.50",), ("7.5",), ("12",), ("0.05",), (" 3.1 ",), ("100",), ("1.234",),
    ],
    "toolbox.money.format_cents": [(1250,), (5,), (0,), (99999,)],
    "toolbox.money.split_bill": [(1000, 3), (10, 4), (0, 2), (9, 3)],
    "toolbox.timefmt.format_duration": [(3725,), (59,), (0,), (3600,), (86399,), (61,), (7322,)],
    "toolbox.timefmt.parse_duration": [("1:02:05",), ("05:00",), ("0:00:59",), ("59",)],
}


class DoesNotReturn(BaseException):
    """Raised in a call that used its half second of CPU time."""


def stop(signum, frame):
    raise DoesNotReturn()


signal.signal(signal.SIGVTALRM, stop)
outcomes = {}
for name, calls in CALLS.items():
    module, _, function = name.rpartition(".")
    f = getattr(importlib.import_module(module), function)
    for args in calls:
        call = "%s(%s)" % (name, ", ".join(map(repr, args)))
        signal.setitimer(signal.ITIMER_VIRTUAL, 0.5)
        try:
            outcome = "returns %r" % (f(*args),)
        except DoesNotReturn:
            outcome = "does not return"
        except Exception as e:  # noqa: BLE001 - any exception is an outcome to compare
            outcome = "raises %s" % type(e).__name__
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        outcomes[call] = outcome
json.dump(outcomes, sys.stdout, indent=1, ensure_ascii=False)
print()
