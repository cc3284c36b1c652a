"""History's instant search: an index of the loaded commits, built as they load.

Per commit the index keeps its id in hex and one lower-cased line
"author name NUL email NUL subject" (what the row shows).  The walk reads
only commit headers, so History's worker reads each loaded row's commit
for its line after the rows are shown (packscope.inspector.history_model):
the index covers the first ``len(index)`` rows, which a search must wait
for before it answers about the rows past them.
Rows are grouped in blocks of ``BLOCK``: a full block also keeps its lines
joined into one string, so a query is one ``in`` per block and a row scan
only in blocks that hold it — 80,000 commits in a few milliseconds.

A query is an id prefix (4+ hex digits) or text found, case-insensitively,
in the author's name or email or the subject.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right

from packscope.core.history.log_format import subject_and_body
from packscope.inspector.commit_text import codec_for

BLOCK = 1024


def index_line(data: bytes) -> str:
    """The searchable line of a commit's raw bytes (author — or committer
    when there is no author — name, email, and subject), lower-cased."""
    head, _, message = bytes(data).partition(b"\n\n")
    ident = b""
    encoding = "utf-8"
    for line in head.split(b"\n"):
        if line.startswith(b"author "):
            ident = line[7:]
        elif line.startswith(b"committer ") and not ident:
            ident = line[10:]
        elif line.startswith(b"encoding "):
            encoding = codec_for(line[9:])
    lt = ident.find(b"<")
    gt = ident.find(b">", lt + 1)
    name = ident[:lt].strip() if lt >= 0 else ident
    email = ident[lt + 1 : gt] if lt >= 0 and gt > lt else b""
    subject = subject_and_body(message)[0]
    return "\0".join(x.decode(encoding, "replace") for x in (name, email, subject)).lower()


class SearchIndex:
    """Rows' search lines, appended in row order (by the walk's worker; the
    UI thread searches what is there).

    Full blocks keep only their joined strings (ids: fixed-width lines, so
    a hit's row is its offset // 41; text: with each line's start offset);
    the rows of the block being filled are kept one by one."""

    def __init__(self) -> None:
        # the block being filled: (hex ids, lines), replaced as one when full
        self._tail: tuple[list[str], list[str]] = ([], [])
        # per full block: ("\n"-separated hex ids, "\n"-separated lines, line starts)
        self._blocks: list[tuple[str, str, array]] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, oid: bytes, line: str) -> None:
        hexes, lines = self._tail
        hexes.append(oid.hex())
        lines.append(line)
        if len(lines) == BLOCK:
            starts = array("L", [0])
            for text in lines[:-1]:
                starts.append(starts[-1] + len(text) + 1)
            self._blocks.append(("\n".join(hexes) + "\n", "\n".join(lines), starts))
            self._tail = ([], [])
        self._count += 1  # last: rows below the count are in a block or the tail

    def find(self, query: str, start: int = 0, end: int | None = None) -> list[int]:
        """Rows in [start, end) that ``query`` matches, in order."""
        q = query.strip().lower()
        if not q:
            return []
        end = self._count if end is None else min(end, self._count)
        # The worker may add rows meanwhile: the tail, then the blocks, each
        # read once -- a tail turned into a block in between is in the blocks.
        hexes, lines = self._tail
        hexq = q if len(q) >= 4 and all(ch in "0123456789abcdef" for ch in q) else None
        out: list[int] = []
        blocks = self._blocks  # the worker may append a block meanwhile: read it once
        full = len(blocks)
        for b in range(start // BLOCK, min(full, -(-end // BLOCK))):
            base = b * BLOCK
            rows = self._block_rows(blocks[b], q, hexq)
            out += [base + r for r in rows if start <= base + r < end]
        tail_base = full * BLOCK
        if end > tail_base:
            for r in range(max(start, tail_base) - tail_base, min(end - tail_base, len(lines))):
                if q in lines[r] or (hexq is not None and hexes[r].startswith(hexq)):
                    out.append(tail_base + r)
        return out

    @staticmethod
    def _block_rows(block: tuple[str, str, array], q: str, hexq: str | None) -> list[int]:
        hexes, text, starts = block
        found: set[int] = set()
        if hexq is not None:
            at = hexes.find(hexq)
            while at >= 0:
                if at % 41 == 0:  # at a line's start: a prefix
                    found.add(at // 41)
                at = hexes.find(hexq, at + 1)
        if q in text:
            if text.count(q) > 256:  # dense: split the block back into lines
                found.update(r for r, line in enumerate(text.split("\n")) if q in line)
            else:
                at = text.find(q)
                while at >= 0:
                    r = bisect_right(starts, at) - 1
                    found.add(r)
                    nxt = starts[r + 1] if r + 1 < len(starts) else len(text)
                    at = text.find(q, nxt)
        return sorted(found)
