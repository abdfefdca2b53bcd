"""Plane geometry helpers."""

from .shapes import rect_area

__all__ = ["rect_area"]
