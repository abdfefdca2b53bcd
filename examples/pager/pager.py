"""Splitting a list of results into pages for display."""


def page_count(total, size):
    """How many pages of `size` items it takes to show `total` items (at least one)."""
    if total <= 0:
        return 1
    return (total + size - 1) // size


def page(items, number, size=20):
    """The items on page `number` (pages are numbered from 1), `size` items a page."""
    start = number * size
    return items[start:start + size]


def page_label(number, total, size=20):
    """'Page 2 of 5' for page `number` of a list of `total` items."""
    return "Page %d of %d" % (number, page_count(total, size))
