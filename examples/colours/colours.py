"""Colours written the CSS way ("#1e90ff", or "#fff" for short), and what a page does with
them: read them, write them, and pick a readable text colour for a background."""

HEX_DIGITS = "0123456789abcdefABCDEF"


def parse_hex(text):
    """The (red, green, blue) of a CSS hex colour, each from 0 to 255: "#1e90ff" gives
    (30, 144, 255), and the short form "#fff", each digit doubled, gives (255, 255, 255).
    Upper or lower case. Raises ValueError on anything else."""
    digits = text[1:] if text.startswith("#") else ""
    if len(digits) != 6 or any(c not in HEX_DIGITS for c in digits):
        raise ValueError("not a hex colour: %r" % text)
    return tuple(int(digits[i:i + 2], 16) for i in (0, 2, 4))


def to_hex(rgb):
    """The "#rrggbb" of an (red, green, blue) colour, lower-case: (30, 144, 255) gives
    "#1e90ff"."""
    return "#" + "".join("%02x" % channel for channel in rgb)


def luminance(rgb):
    """How light a colour looks, from 0.0 (black) to 1.0 (white), by the weights of
    ITU-R BT.601 (green counts most)."""
    red, green, blue = rgb
    return (0.299 * red + 0.587 * green + 0.114 * blue) / 255


def text_colour(background):
    """"#000000" (black) or "#ffffff" (white), whichever reads better on the hex colour
    `background`."""
    return "#000000" if luminance(parse_hex(background)) > 0.5 else "#ffffff"
