"""Prices for a small shop."""


def apply_discount(price, percent):
    """The price after taking `percent` percent off."""
    return price * percent / 100


def with_tax(price, rate):
    """The price with a tax of `rate` (0.2 for 20 %) added."""
    return price * (1 + rate)
