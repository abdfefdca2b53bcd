"""Summary numbers for measurements."""


def clamp(value, low, high):
    """`value` held between `low` and `high`: the nearer bound when it lies outside them.

    >>> clamp(15, 0, 10)
    10
    >>> clamp(-3, 0, 10)
    0
    >>> clamp(7, 0, 10)
    7
    """
    return max(low, min(value, high))


def median(values: list):
    """The middle value of `values` once sorted; for an even count, the mean of the two
    middle ones. Raises ValueError when there are none.

    >>> median([3, 1, 2])
    2
    """
    if not values:
        raise ValueError("median of no values")
    ordered = sorted(values)
    mid = len(values) // 2
    if len(ordered) % 2 == 0:
        return (ordered[mid - 1] + ordered[mid]) / 2
    return ordered[mid]


def percent_change(old, new):
    """The change from `old` to `new` as a percentage of `old`, rounded to two decimals.

    >>> percent_change(80, 100)
    25.0
    """
    return round((new - old) / old * 100, 2)
