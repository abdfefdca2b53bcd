"""Lists: flattening nested ones, splitting one into chunks, dropping repeats."""


def flatten(nested):
    """The items of `nested` and of every list inside it, in order, as one flat list.

    >>> flatten([1, [2, [3, 4]], 5])
    [1, 2, 3, 4, 5]
    """
    flat = []
    for item in nested:
        if isinstance(item, list):
            flat.extend(flatten(item))
        else:
            flat.append(item)
    return flat


def chunk(items: list, size: int) -> list:
    """`items` split into lists of `size` items, in order; the last one may be shorter.

    >>> chunk([1, 2, 3, 4], 2)
    [[1, 2], [3, 4]]
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    chunks = []
    for start in range(0, len(items), size):
        chunks.append(items[start:start + size])
    return chunks


def unique(items):
    """The items of `items` without repeats, each where it first appears (they must be
    hashable).

    >>> unique([3, 1, 3, 2, 1])
    [3, 1, 2]
    """
    seen = set()
    kept = []
    for item in items:
        if item not in seen:
            seen.add(item)
            kept.append(item)
    return kept
