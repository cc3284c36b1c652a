"""History's instant search: an index of the loaded commits, built as they load.

Per commit the index keeps its id in hex and one lower-cased line
"author name NUL email NUL subject" (what the row shows), read from the
commit bytes the walk itself read (no second read when the walk reads
commits; a commit-graph walk does not, then the indexer reads them).
Rows are grouped in blocks of ``BLOCK``: a full block also keeps its lines
joined into one string, so a query is one ``in`` per block and a row scan
only in blocks that hold it — 80,000 commits in a few milliseconds.

A query is an id prefix (4+ hex digits) or text found, case-insensitively,
in the author's name or email or the subject.
"""

from __future__ import annotations

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
    UI thread searches what is there)."""

    def __init__(self) -> None:
        self.hexes: list[str] = []
        self.lines: list[str] = []
        # per full block: ("\n" + hexes joined by "\n", lines joined by "\n")
        self._blocks: list[tuple[str, str]] = []

    def __len__(self) -> int:
        return len(self.lines)

    def add(self, oid: bytes, line: str) -> None:
        self.hexes.append(oid.hex())
        self.lines.append(line)
        n = len(self.lines)
        if n % BLOCK == 0:
            start = n - BLOCK
            self._blocks.append(("\n" + "\n".join(self.hexes[start:n]), "\n".join(self.lines[start:n])))

    def find(self, query: str, start: int = 0, end: int | None = None) -> list[int]:
        """Rows in [start, end) that ``query`` matches, in order."""
        q = query.strip().lower()
        if not q:
            return []
        n = len(self.lines) if end is None else min(end, len(self.lines))
        hexq = q if len(q) >= 4 and all(ch in "0123456789abcdef" for ch in q) else None
        out: list[int] = []
        row = start
        while row < n:
            block = row // BLOCK
            block_end = min((block + 1) * BLOCK, n)
            if block < len(self._blocks) and row == block * BLOCK and block_end == (block + 1) * BLOCK:
                hexes, lines = self._blocks[block]
                if q not in lines and (hexq is None or "\n" + hexq not in hexes):
                    row = block_end
                    continue
            out += self._scan(q, hexq, row, block_end)
            row = block_end
        return out

    def _scan(self, q: str, hexq: str | None, start: int, end: int) -> list[int]:
        lines = self.lines
        if hexq is None:
            return [i for i in range(start, end) if q in lines[i]]
        hexes = self.hexes
        return [i for i in range(start, end) if q in lines[i] or hexes[i].startswith(hexq)]
