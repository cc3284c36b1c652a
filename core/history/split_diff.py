"""A patch side by side: the lines of a unified diff (as
packscope.core.history.line_diff prints them) paired into rows of an old
and a new side, as a split diff view shows them.

Context lines sit on both sides with their line numbers; within a hunk a
run of removed lines and the run of added lines after it are paired row by
row (the first removed beside the first added …), the longer run's extra
lines beside nothing.  Lines outside the hunks (``diff --git``, mode and
``index`` lines, ``---``/``+++``, "Binary files … differ") and hunk
headers span both sides, as do notes (``\\ No newline at end of file``,
a cut diff's note).  Line numbers come from each ``@@ -a,b +c,d @@``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

HEADER = "header"  # a line outside the hunks, across both sides
HUNK = "hunk"  # an @@ line, across both sides
NOTE = "note"  # "\ No newline at end of file", a cut diff's note
CONTEXT = "context"  # the same line on both sides
CHANGE = "change"  # a removed line and/or an added line

_HUNK = re.compile(rb"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


class SplitRow(NamedTuple):
    kind: str
    old_no: int | None = None  # line number on the old side (None: nothing there)
    old: bytes | None = None
    new_no: int | None = None
    new: bytes | None = None
    text: bytes = b""  # the whole line, for rows across both sides


def split_rows(lines: Sequence[bytes]) -> list[SplitRow]:
    """The rows of a side-by-side view of ``lines`` (a patch's lines,
    without their newlines)."""
    rows: list[SplitRow] = []
    removed: list[tuple[int, bytes]] = []
    added: list[tuple[int, bytes]] = []
    in_hunk = False
    old_no = new_no = 0

    def flush() -> None:
        for k in range(max(len(removed), len(added))):
            o = removed[k] if k < len(removed) else (None, None)
            n = added[k] if k < len(added) else (None, None)
            rows.append(SplitRow(CHANGE, o[0], o[1], n[0], n[1]))
        removed.clear()
        added.clear()

    for line in lines:
        m = _HUNK.match(line)
        if m:
            flush()
            in_hunk = True
            old_no, new_no = int(m.group(1)), int(m.group(2))
            rows.append(SplitRow(HUNK, text=line))
            continue
        if not in_hunk:
            rows.append(SplitRow(HEADER, text=line))
            continue
        first = line[:1]
        if first == b"-":
            if added:  # a removal after additions starts a new pair of runs
                flush()
            removed.append((old_no, line[1:]))
            old_no += 1
        elif first == b"+":
            added.append((new_no, line[1:]))
            new_no += 1
        elif first == b" " or line == b"":
            flush()
            rows.append(SplitRow(CONTEXT, old_no, line[1:], new_no, line[1:]))
            old_no += 1
            new_no += 1
        else:
            flush()
            # a note, or the next file's header (a patch of several files)
            kind = NOTE if first in (b"\\", b"[") else HEADER
            if kind == HEADER:
                in_hunk = False
            rows.append(SplitRow(kind, text=line))
    flush()
    return rows
