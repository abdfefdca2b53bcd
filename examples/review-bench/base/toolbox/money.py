"""Amounts of money as whole cents, read from and written as decimal text."""


def to_cents(amount: str) -> int:
    """The cents of a decimal amount, not negative, with at most two decimals.

    >>> to_cents("12.50")
    1250
    >>> to_cents("7.5")
    750
    """
    whole, _, fraction = amount.strip().partition(".")
    if len(fraction) > 2:
        raise ValueError("more than two decimals: %r" % amount)
    return int(whole) * 100 + int(fraction.ljust(2, "0"))


def format_cents(cents: int) -> str:
    """`cents` (not negative) written as a decimal amount with two decimals.

    >>> format_cents(1250)
    '12.50'
    >>> format_cents(5)
    '0.05'
    """
    return "%d.%02d" % divmod(cents, 100)


def split_bill(cents, people):
    """`cents` shared between `people` as evenly as whole cents allow; when it does not
    divide, the first ones pay a cent more.

    >>> split_bill(1000, 3)
    [334, 333, 333]
    """
    share, left = divmod(cents, people)
    return [share + 1 if i < left else share for i in range(people)]
