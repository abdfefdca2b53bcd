"""Small helpers for text, lists, numbers, money and durations."""

__version__ = "0.3.1"
