"""Repository text, shown literally.

Names, messages and paths come from the repository, so they may hold Rich
markup (``[red]``), terminal control sequences, or bidi overrides that
reorder what a reader sees (the "Trojan Source" trick).  Every widget shows
them through these helpers: the result is a ``rich.text.Text`` (never parsed
as markup) in which every control, format and bidi character is spelled out
as an escape, so what is on screen is what is in the file.
"""

from __future__ import annotations

import unicodedata

from rich.text import Text

# Characters that change how the rest of a line is laid out or read.
_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def _escape_char(ch: str) -> str:
    if ch in _NAMED:
        return _NAMED[ch]
    cp = ord(ch)
    if cp < 0x100:
        return f"\\x{cp:02x}"
    if cp > 0xFFFF:
        return f"\\U{cp:08x}"
    return f"\\u{cp:04x}"


def _needs_escape(ch: str) -> bool:
    cp = ord(ch)
    if cp < 0x20 or cp == 0x7F or 0x80 <= cp < 0xA0:
        return True
    if cp in _BIDI:
        return True
    if cp < 0x300:
        return False
    # Format (zero-width, joiners), unassigned, surrogates, private use,
    # line/paragraph separators: invisible or misleading on a terminal.
    return unicodedata.category(ch) in ("Cf", "Cn", "Cs", "Co", "Zl", "Zp")


def visible(value: str | bytes, *, keep_newlines: bool = False) -> str:
    """``value`` with every control/format/bidi character written as an
    escape; bytes are decoded as UTF-8 with invalid bytes shown as ``\\xNN``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value).decode("utf-8", "backslashreplace")
    if value.isascii() and value.isprintable():
        return value  # the common case: nothing to do
    out = []
    for ch in value:
        if keep_newlines and ch == "\n":
            out.append(ch)
        elif _needs_escape(ch):
            out.append(_escape_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def literal(value: str | bytes, style: str = "") -> Text:
    """A ``Text`` that shows ``value`` exactly (one line)."""
    return Text(visible(value), style=style, end="")


def short_id(oid: bytes | str, n: int = 12) -> str:
    return (oid.hex() if isinstance(oid, (bytes, bytearray)) else oid)[:n]


def human_bytes(n: int | None) -> str:
    if n is None:
        return "–"
    size: float = n
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"
