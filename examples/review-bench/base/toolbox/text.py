"""Text shown to people: shortening it, counting words in it."""


def truncate(text: str, width: int) -> str:
    """`text` shortened to at most `width` characters, ending with "…" when it was cut.

    >>> truncate("hello world", 8)
    'hello w…'
    >>> truncate("short", 10)
    'short'
    """
    if len(text) <= width:
        return text
    return text[:width - 1] + "…"


def count_occurrences(text: str, word: str) -> int:
    """How many times `word` occurs in `text`, not counting overlaps.

    >>> count_occurrences("the cat and the hat", "the")
    2
    """
    if not word:
        raise ValueError("cannot count an empty word")
    count = 0
    start = text.find(word)
    while start != -1:
        count += 1
        start = text.find(word, start + len(word))
    return count


def word_frequencies(text):
    """How often each word of `text` occurs, lower-cased, in the order the words first
    appear.

    >>> word_frequencies("The cat saw the dog")
    {'the': 2, 'cat': 1, 'saw': 1, 'dog': 1}
    """
    counts = {}
    for word in text.lower().split():
        counts[word] = counts.get(word, 0) + 1
    return counts
