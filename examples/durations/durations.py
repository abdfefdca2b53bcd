"""Durations written the short way: "1h30m", "45s", "2m5s"."""

import re

UNITS = {"m": 60, "s": 1}


def parse_duration(text):
    """The seconds in a duration such as "1h30m" or "90s": numbers, each followed by its unit,
    h (hours), m (minutes) or s (seconds). Raises ValueError on anything else."""
    parts = re.findall(r"(\d+)([a-z])", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError("not a duration: %r" % text)
    total = 0
    for number, unit in parts:
        if unit not in UNITS:
            raise ValueError("unknown unit %r in %r" % (unit, text))
        total += int(number) * UNITS[unit]
    return total


def format_duration(seconds):
    """The shortest way to write `seconds` as a duration: 5400 gives "1h30m", 0 gives "0s"."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join("%d%s" % (n, u) for n, u in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"
