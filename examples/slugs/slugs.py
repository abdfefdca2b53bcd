"""URL slugs for article titles."""

import re


def slugify(title, sep="_", max_length=60):
    """The title in lowercase, its words (runs of letters and digits) joined by `sep` (a
    hyphen unless told otherwise), cut to `max_length` characters with no separator at the
    end."""
    words = re.findall(r"[a-z0-9]+", title.lower())
    return sep.join(words)[:max_length].rstrip(sep)


def unique_slug(title, taken):
    """slugify(title), with -2, -3, ... appended until it is not one of `taken`."""
    base = slugify(title)
    slug, n = base, 2
    while slug in taken:
        slug = "%s-%d" % (base, n)
        n += 1
    return slug
