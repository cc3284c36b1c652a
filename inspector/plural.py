"""Counts in words: "1 pack", "3,352 packs"."""

from __future__ import annotations


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` (with thousands separators) and ``word``, plural unless n is 1."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"
