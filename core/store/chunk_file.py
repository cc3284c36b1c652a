"""The chunk table shared by commit-graph and multi-pack-index files.

Layout (gitformat-chunk): after the file's own header, ``count + 1`` rows
of 12 bytes — a 4-byte chunk id and an 8-byte big-endian offset from the
start of the file.  The last row has id 0 and marks where the last chunk
ends, so every chunk's size is the next row's offset minus its own.  The
trailing checksum follows the last chunk.

The table is validated once, on open, so that readers can slice chunks
without re-checking bounds: offsets never go backwards, the first chunk
starts after the table, the last ends before the checksum, ids are unique.
Errors are raised as the caller's class (BadCommitGraphError or
BadMultiPackIndexError) so the user sees which file is at fault.
"""

from __future__ import annotations

import mmap
import re
import struct
from collections.abc import Callable, Iterator
from typing import NamedTuple

from packscope.core.errors import PackscopeError
from packscope.core.oid import ObjectFormat

ROW_SIZE = 12
HASH_VERSIONS = {"sha1": 1, "sha256": 2}
_ROW = struct.Struct(">4sQ")


class Chunk(NamedTuple):
    id: bytes  # 4 ASCII bytes, e.g. b"OIDF"
    offset: int  # from the start of the file
    size: int

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def name(self) -> str:
        return self.id.decode("latin-1")


class ChunkTable:
    """The chunks of one file, in file order, found by id."""

    __slots__ = ("_by_id", "_error_cls", "_kind", "_path", "chunks", "table_end", "table_offset")

    def __init__(
        self,
        chunks: tuple[Chunk, ...],
        table_offset: int,
        table_end: int,
        path: str,
        error_cls: type[PackscopeError],
        kind: str,
    ) -> None:
        self.chunks = chunks
        self.table_offset = table_offset
        self.table_end = table_end
        self._by_id = {c.id: c for c in chunks}
        self._path = path
        self._error_cls = error_cls
        self._kind = kind

    def __iter__(self) -> Iterator[Chunk]:
        return iter(self.chunks)

    def __len__(self) -> int:
        return len(self.chunks)

    def __contains__(self, chunk_id: bytes) -> bool:
        return chunk_id in self._by_id

    def get(self, chunk_id: bytes) -> Chunk | None:
        return self._by_id.get(chunk_id)

    def _fail(self, message: str, offset: int, suffix: str) -> PackscopeError:
        return self._error_cls(message, path=self._path, offset=offset, kind=f"{self._kind}-{suffix}")

    def require(self, chunk_id: bytes) -> Chunk:
        """The chunk, or the caller's error naming the missing id."""
        c = self._by_id.get(chunk_id)
        if c is None:
            raise self._fail(
                f"required chunk {chunk_id.decode('latin-1')} is missing", self.table_offset, "missing-chunk"
            )
        return c

    def expect_size(self, chunk_id: bytes, size: int, what: str) -> Chunk | None:
        """The chunk if present, checking its size is exactly ``size``."""
        c = self._by_id.get(chunk_id)
        if c is not None and c.size != size:
            raise self._fail(f"chunk {c.name} is {c.size} bytes but {what} needs {size}", c.offset, "chunk-size")
        return c

    def expect_rows(self, chunk_id: bytes, width: int) -> Chunk | None:
        """The chunk if present, checking it holds whole ``width``-byte rows."""
        c = self._by_id.get(chunk_id)
        if c is not None and c.size % width:
            raise self._fail(f"{c.name} chunk size {c.size} is not a multiple of {width}", c.offset, "chunk-size")
        return c


def read_chunk_table(
    data: mmap.mmap | bytes,
    table_offset: int,
    count: int,
    *,
    end: int,
    path: str,
    error_cls: type[PackscopeError],
    kind: str,
) -> ChunkTable:
    """Parse ``count`` chunk rows plus the terminator starting at ``table_offset``.

    ``end`` is where chunk data must stop: the start of the trailing
    checksum.  ``kind`` prefixes the error kinds (e.g. ``"midx"``).
    """

    def fail(message: str, offset: int, suffix: str = "chunk-table") -> PackscopeError:
        return error_cls(message, path=path, offset=offset, kind=f"{kind}-{suffix}")

    table_end = table_offset + (count + 1) * ROW_SIZE
    if table_end > end:
        raise fail(
            f"file too short for its table of {count} chunks (needs {table_end} bytes before the checksum, has {end})",
            min(len(data), table_end),
            "truncated",
        )
    rows = [_ROW.unpack_from(data, table_offset + i * ROW_SIZE) for i in range(count + 1)]
    term_id, term_offset = rows[count]
    if term_id != b"\0\0\0\0":
        raise fail(
            f"chunk table is not terminated by a zero id after {count} chunks (found {term_id!r})",
            table_offset + count * ROW_SIZE,
        )
    chunks: list[Chunk] = []
    seen: set[bytes] = set()
    prev = table_end  # chunk data cannot overlap the header or the table
    for i in range(count):
        cid, off = rows[i]
        at = table_offset + i * ROW_SIZE
        if cid == b"\0\0\0\0":
            raise fail(f"chunk {i} has the terminating id 0 before the end of the table", at)
        if cid in seen:
            raise fail(f"chunk id {cid.decode('latin-1')} appears twice", at)
        # Equal offsets are allowed: an empty chunk is legal, only going back is not.
        if off < prev:
            raise fail(
                f"chunk {cid.decode('latin-1')} starts at {off}, before "
                + ("the end of the chunk table" if i == 0 else "the previous chunk")
                + f" ({prev})",
                at,
            )
        seen.add(cid)
        prev = off
        chunks.append(Chunk(cid, off, 0))
    if term_offset < prev:
        raise fail(
            f"chunk table ends at {term_offset}, before the last chunk starts ({prev})", table_offset + count * ROW_SIZE
        )
    if term_offset > end:
        raise fail(
            f"chunks run to offset {term_offset}, past the trailing checksum at {end} (truncated file?)",
            table_offset + count * ROW_SIZE,
            "truncated",
        )
    sized = []
    for i, c in enumerate(chunks):
        nxt = chunks[i + 1].offset if i + 1 < len(chunks) else term_offset
        sized.append(Chunk(c.id, c.offset, nxt - c.offset))
    return ChunkTable(tuple(sized), table_offset, table_end, path, error_cls, kind)


def read_header(
    data: mmap.mmap,
    size: int,
    *,
    signature: bytes,
    header_size: int,
    versions: tuple[int, ...],
    fmt: ObjectFormat,
    error: Callable[[str, int, str], PackscopeError],
    what: str,
    kind: str,
) -> tuple[int, int, int]:
    """The header both chunk files open with: ``signature``, version, hash
    version, number of chunks, number of base files.  Returns (version,
    chunks, bases) once the size, signature, version and hash version are
    checked; a failure is ``error(message, offset, kind-suffix)``."""
    if size < header_size + fmt.rawsz:
        raise error(f"{what} is truncated ({size} bytes)", size, f"{kind}-truncated")
    if data[:4] != signature:
        raise error(f"bad signature {bytes(data[:4])!r} (expected {signature!r})", 0, f"{kind}-signature")
    version, hash_version, nchunks, nbase = data[4], data[5], data[6], data[7]
    if version not in versions:
        raise error(f"unsupported {what} version {version}", 4, f"{kind}-version")
    if hash_version != HASH_VERSIONS[fmt.name]:
        raise error(
            f"hash version {hash_version} does not match the repository's {fmt.name} "
            f"(expected {HASH_VERSIONS[fmt.name]})",
            5,
            f"{kind}-hash-version",
        )
    return version, nchunks, nbase


def read_chain(
    path: str, fmt: ObjectFormat, error_cls: type[PackscopeError], what: str, kind: str, consequence: str = ""
) -> Iterator[tuple[int, bytes]]:
    """(offset, layer hash in hex) for each line of a chain file
    (``multi-pack-index-chain``, ``commit-graph-chain``), blank lines
    skipped.  An unreadable file is ``<kind>-unreadable``, raised here; a
    line that is not a hash is ``<kind>-chain``, raised when iteration
    reaches it (its message ends with ``consequence``)."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError as e:
        raise error_cls(f"cannot read {what} chain: {e.strerror}", path=path, kind=f"{kind}-unreadable") from e
    pattern = re.compile(rb"[0-9a-f]{%d}" % fmt.hexsz)

    def lines() -> Iterator[tuple[int, bytes]]:
        at = 0
        for line in text.split(b"\n"):
            if line:
                if not pattern.fullmatch(line):
                    message = f"chain line {line[:80]!r} is not a {fmt.name} hash{consequence}"
                    raise error_cls(message, path=path, offset=at, kind=f"{kind}-chain")
                yield at, line
            at += len(line) + 1

    return lines()


def git_chunk_table(data: bytes, table_offset: int, count: int, rawsz: int) -> dict[bytes, tuple[int, int]] | None:
    """The chunks git 2.39 pairs from this table (``read_table_of_contents``),
    ``{id: (offset, size)}``, or None where git refuses the table (an error,
    and the file goes unused).  Looser than :func:`read_chunk_table`: git
    does not ask the first chunk to start after the table, and checks each
    row against the next one only; packscope's own reading stays strict and
    this says what git makes of the same bytes, where git's verdict decides
    an exit status."""
    size = len(data)
    if table_offset + (count + 1) * ROW_SIZE > size:
        return None  # git would read rows past its map: nothing to emulate
    chunks: dict[bytes, tuple[int, int]] = {}
    for i in range(count):
        cid, off = _ROW.unpack_from(data, table_offset + i * ROW_SIZE)
        nxt = _ROW.unpack_from(data, table_offset + (i + 1) * ROW_SIZE)[1]
        if cid == b"\0\0\0\0" or nxt < off or nxt > size - rawsz or cid in chunks:
            return None  # "terminating chunk id appears earlier", "improper chunk offset(s)", "duplicate chunk ID"
        chunks[cid] = (off, nxt - off)
    if _ROW.unpack_from(data, table_offset + count * ROW_SIZE)[0] != b"\0\0\0\0":
        return None  # "final chunk has non-zero id"
    return chunks
