"""The diff screen's split view: a patch's rows side by side
(packscope.core.history.split_diff) drawn in a given width — each side half
of it, its line numbers first, lines longer than their half cut with "…"."""

from __future__ import annotations

from rich.text import Text

from packscope.core.history.split_diff import CHANGE, CONTEXT, HUNK, NOTE, split_rows
from packscope.inspector.safe_text import literal

GUTTER = " │ "
TAB_SIZE = 8


def split_texts(lines: list[bytes], width: int) -> list[Text]:
    rows = split_rows(lines)
    numbers = [n for r in rows for n in (r.old_no, r.new_no) if n is not None]
    digits = len(str(max(numbers, default=1)))
    half = (width - len(GUTTER)) // 2
    out = []
    for r in rows:
        if r.kind in (CONTEXT, CHANGE):
            t = _side(r.old_no, r.old, digits, half, "red" if r.kind == CHANGE else "")
            t.append(GUTTER, style="dim")
            t.append_text(_side(r.new_no, r.new, digits, half, "green" if r.kind == CHANGE else ""))
            out.append(t)
            continue
        text = literal(r.text, "cyan" if r.kind == HUNK else "dim" if r.kind == NOTE else "bold")
        text.truncate(width, overflow="ellipsis")
        out.append(text)
    return out


def _side(number: int | None, content: bytes | None, digits: int, half: int, style: str) -> Text:
    t = Text()
    if number is None or content is None:
        t.append(" " * half)
        return t
    t.append(str(number).rjust(digits) + " ", style="dim")
    # shown as the unified view shows it: tabs laid out as spaces, other controls escaped
    body = literal(content.decode("utf-8", "backslashreplace").expandtabs(TAB_SIZE), style)
    body.truncate(half - digits - 1, overflow="ellipsis", pad=True)
    t.append_text(body)
    return t
