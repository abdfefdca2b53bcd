"""Durations written for people: 3725 seconds is "1:02:05"."""


def format_duration(seconds: int) -> str:
    """`seconds` (a whole number, not negative) as hours:minutes:seconds.

    >>> format_duration(3725)
    '1:02:05'
    >>> format_duration(59)
    '0:00:59'
    """
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return "%d:%02d:%02d" % (hours, minutes, secs)


def parse_duration(text):
    """The seconds of "h:mm:ss" or "mm:ss" text: the inverse of format_duration.

    >>> parse_duration("1:02:05")
    3725
    """
    total = 0
    for part in text.split(":"):
        total = total * 60 + int(part)
    return total
