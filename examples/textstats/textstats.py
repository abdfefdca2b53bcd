"""Small text statistics used by the git triad quickstart."""


def word_count(text):
    """Return the number of whitespace-separated words in text."""
    return len(text.split())


def line_count(text):
    """Return the number of lines in text (a trailing newline does not add one)."""
    if not text:
        return 0
    return len(text.splitlines())
