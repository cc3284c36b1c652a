"""Snapshots that survive another git or zlib: the bytes those decide are
masked in the rendered SVG before it is compared (and stored).

What git and zlib decide on the snapshot screens, and nothing else: pack
names (the pack's checksum, so its compressed bytes), byte sizes and pack
offsets.  Each is replaced, inside the SVG's text runs, by a fixed token:
``pack-‹name›``, ``‹size›``, ``@‹offset›``.  A size's padding goes into its
token too, so a size of another width in a right-aligned column compares
equal; the column's own width (the next run's position) is the UI's.
Everything else — words, ids of commits, trees and blobs (fixed by the
fixtures' dates), layout, colours — is still compared, so a real change
to a screen still fails its snapshot.

The fixtures keep what masking cannot: the order of packs (mtimes set by
content, sizes far apart) and what a truncated pack loses (cut at an
object's start) — tests/test_ui_snapshots.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# One run of text in Textual's SVG export: <text …>content</text>.
_TEXT_RUN = re.compile(r"(<text\b[^>]*>)([^<]*)(</text>)")
_NBSP = "&#160;"

_MASKS: tuple[tuple[re.Pattern[str], str], ...] = (
    # pack names, whole or shortened ("pack-75a3…"), with or without .pack/.idx
    (re.compile(r"pack-[0-9a-f]{4,}…?"), "pack-‹name›"),
    # byte sizes as packscope writes them: "12.4 KiB", "825 B", "8492 bytes", "0B"
    (re.compile(r"\s*\b\d[\d.,]*\s?(?:B|KiB|MiB|GiB|TiB|bytes)\b"), " ‹size›"),
    # a pack offset: "@12", "@1,234", "offset 1234"
    (re.compile(r"@\d(?:[\d,]*\d)?"), "@‹offset›"),  # (cut at the edge: "@4,9")
    (re.compile(r"\boffset \d(?:[\d,]*\d)?"), "offset ‹offset›"),
)


def mask_text(text: str) -> str:
    """``text`` (one run's plain text) with pack names, sizes and offsets masked."""
    for pattern, token in _MASKS:
        text = pattern.sub(token, text)
    return text


def mask_svg(svg: str) -> str:
    """A Textual SVG screenshot with git's and zlib's bytes masked in every text run."""

    def run(m: re.Match[str]) -> str:
        plain = m.group(2).replace(_NBSP, "\xa0")
        return m.group(1) + mask_text(plain).replace("\xa0", _NBSP).replace(" ", _NBSP) + m.group(3)

    return _TEXT_RUN.sub(run, svg)


def masked_snap_compare(snap_compare: Callable, monkeypatch) -> Callable:
    """pytest-textual-snapshot's ``snap_compare``, comparing (and storing)
    masked SVGs: the plugin takes the screenshot with
    ``textual._doc.take_svg_screenshot``, wrapped here."""
    import textual._doc

    take = textual._doc.take_svg_screenshot

    def take_masked(*args, **kwargs) -> str:
        return mask_svg(take(*args, **kwargs))

    monkeypatch.setattr(textual._doc, "take_svg_screenshot", take_masked)
    return snap_compare
