"""The index file (``.git/index``), versions 2 to 4, as a reachability root.

Layout (gitformat-index): ``DIRC``, version, entry count; the entries; the
extensions; the hash of everything before it (all zeros when written with
``index.skipHash``).  An entry is ten 32-bit stat fields (ctime, mtime,
dev, ino, **mode**, uid, gid, size), the **object id**, 16 bits of flags
(assume-valid, extended, 2-bit stage, 12-bit name length) and, from version
3 on when "extended" is set, 16 more (skip-worktree, intent-to-add).  Then
the path:

* v2/v3: the path and a NUL, padded with NULs to a multiple of 8 bytes
  counted from the entry's start;
* v4: no padding; the path is prefix-compressed against the previous
  entry's: a varint N (the offset-varint of OFS_DELTA) says how many bytes
  to drop from the end of the previous path, then a NUL-terminated suffix.

fsck needs the objects an index keeps alive: every entry (sparse-directory
entries name trees; gitlinks name commits of other repositories and are
skipped; intent-to-add entries name the empty blob, which ``git add -N``
writes and git 2.39's fsck counts as reachable), the
cache tree (``TREE``) and the resolve-undo records (``REUC``).  A split
index (``link``) adds the entries of ``sharedindex.<hash>`` that its
delete and replace bitmaps (EWAH) leave in place.  Other extensions are
skipped by their size; an unknown *required* one (lower-case first letter)
is reported but does not stop the reading of entries.

Nothing here trusts a count: the entry count is checked against the file's
size before the first entry is read, every field is bounds-checked, and a
damaged file raises :class:`RepositoryError` (kinds ``index-*``) naming the
byte offset.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from stat import S_IFDIR, S_IFMT

from packscope.core.errors import RepositoryError
from packscope.core.objects import S_IFGITLINK
from packscope.core.oid import ObjectFormat

SIGNATURE = b"DIRC"
VERSIONS = (2, 3, 4)
MAX_INDEX_SIZE = 1 << 31
STAT_SIZE = 40  # ten 32-bit fields
FLAG_EXTENDED = 0x4000
FLAG_STAGE_SHIFT = 12
NAME_MASK = 0x0FFF
EXT_INTENT_TO_ADD = 0x2000
EXT_SKIP_WORKTREE = 0x4000
KNOWN_EXTENSIONS = frozenset((b"TREE", b"REUC", b"link", b"UNTR", b"FSMN", b"EOIE", b"IEOT", b"sdir"))
REMEDY = "Rebuild the index from HEAD: git read-tree HEAD (staged but uncommitted changes are lost)."

_HEADER = struct.Struct(">4sII")
_U32 = struct.Struct(">I")
_U16 = struct.Struct(">H")


@dataclass(frozen=True, slots=True)
class IndexEntry:
    path: bytes
    mode: int
    oid: bytes
    stage: int
    intent_to_add: bool
    skip_worktree: bool
    offset: int  # of the entry in the file

    @property
    def object_type(self) -> str | None:
        """What the entry's id names: "blob", "tree" (sparse directory), or
        None for a gitlink (another repository's commit)."""
        kind = S_IFMT(self.mode)
        if kind == S_IFGITLINK:
            return None
        return "tree" if kind == S_IFDIR else "blob"


@dataclass(frozen=True, slots=True)
class ObjectRef:
    """An object an index keeps alive, and why (for messages)."""

    oid: bytes
    type: str
    source: str  # "entry", "intent-to-add", "cache-tree" or "resolve-undo"
    path: bytes
    offset: int


def _error(message: str, path: str, offset: int | None, kind: str) -> RepositoryError:
    return RepositoryError(message, path=path, offset=offset, kind=kind, remedy=REMEDY)


class IndexFile:
    """One index file, read whole (an index is a few MB even for big trees)."""

    def __init__(self, path: str, fmt: ObjectFormat, data: bytes) -> None:
        self.path = str(path)
        self.fmt = fmt
        self.data = data
        self.problems: list[RepositoryError] = []  # damage that does not stop reading entries
        rawsz = fmt.rawsz
        if len(data) < _HEADER.size + rawsz:
            raise _error(f"index file is truncated ({len(data)} bytes)", self.path, len(data), "index-truncated")
        sig, self.version, self.count = _HEADER.unpack_from(data, 0)
        if sig != SIGNATURE:
            raise _error(f"bad index signature {sig!r} (expected b'DIRC')", self.path, 0, "index-signature")
        if self.version not in VERSIONS:
            raise _error(f"unsupported index version {self.version}", self.path, 4, "index-version")
        self.trailer_at = len(data) - rawsz
        smallest = STAT_SIZE + rawsz + 2 + 2  # v4's smallest entry: one-byte varint, empty suffix's NUL
        if self.count * smallest > self.trailer_at - _HEADER.size:
            raise _error(
                f"index claims {self.count} entries, more than its {len(data)} bytes can hold",
                self.path,
                8,
                "index-count",
            )
        self.extensions_at = self._walk_entries()
        self.extensions = self._read_extension_table()
        if b"link" in self.extensions:
            # A split index stores replaced entries without their paths: its
            # order is that of the shared index, not checkable here.
            self.problems = [p for p in self.problems if p.kind not in ("index-order", "index-entry")]

    @classmethod
    def open(cls, path: str, fmt: ObjectFormat) -> IndexFile:
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_INDEX_SIZE:
                    raise _error(
                        f"index file of {size} bytes is beyond the {MAX_INDEX_SIZE}-byte cap",
                        str(path),
                        None,
                        "index-too-large",
                    )
                data = f.read(size + 1)
        except OSError as e:
            raise _error(f"cannot read index file: {e.strerror}", str(path), None, "index-unreadable") from e
        return cls(path, fmt, data)

    # --- checksum -----------------------------------------------------------

    def checksum_ok(self) -> bool | None:
        """Whether the trailing hash matches; None when it is all zeros
        (``index.skipHash``: git then skips the check too)."""
        stored = self.data[self.trailer_at :]
        if stored == bytes(len(stored)):
            return None
        h = self.fmt.new_hash()
        h.update(memoryview(self.data)[: self.trailer_at])
        return h.digest() == stored

    # --- entries ---------------------------------------------------------------

    def _walk_entries(self) -> int:
        """Check every entry's bounds once; the offset just after the last."""
        pos = _HEADER.size
        for entry in self._entries(record=True):
            pos = entry[1]
        return pos

    def _entries(self, record: bool = False) -> Iterator[tuple[IndexEntry, int]]:
        data, rawsz, v4 = self.data, self.fmt.rawsz, self.version == 4
        end = self.trailer_at
        pos = _HEADER.size
        prev = b""
        last_stage = 0
        fixed = STAT_SIZE + rawsz + 2
        for k in range(self.count):
            start = pos
            if pos + fixed > end:
                raise _error(f"index entry {k} runs past the end of the entries", self.path, start, "index-truncated")
            mode = _U32.unpack_from(data, pos + 24)[0]
            oid = data[pos + STAT_SIZE : pos + STAT_SIZE + rawsz]
            flags = _U16.unpack_from(data, pos + STAT_SIZE + rawsz)[0]
            pos += fixed
            ext = 0
            if flags & FLAG_EXTENDED:
                if self.version < 3:
                    raise _error(
                        f"index entry {k} sets the extended flag in a version-2 index", self.path, start, "index-entry"
                    )
                if pos + 2 > end:
                    raise _error(
                        f"index entry {k} runs past the end of the entries", self.path, start, "index-truncated"
                    )
                ext = _U16.unpack_from(data, pos)[0]
                pos += 2
            if v4:
                strip, pos = _varint(data, pos, end, self.path, start)
                if strip > len(prev):
                    raise _error(
                        f"index entry {k} drops {strip} bytes of a {len(prev)}-byte previous path",
                        self.path,
                        start,
                        "index-entry",
                    )
                nul = data.find(b"\0", pos, end)
                if nul < 0:
                    raise _error(f"index entry {k}'s path is not terminated", self.path, start, "index-truncated")
                path = prev[: len(prev) - strip] + data[pos:nul]
                pos = nul + 1
            else:
                nul = data.find(b"\0", pos, end)
                if nul < 0:
                    raise _error(f"index entry {k}'s path is not terminated", self.path, start, "index-truncated")
                path = data[pos:nul]
                # NUL padding to a multiple of 8 from the entry's start (1 to 8 NULs).
                pos = start + ((nul - start + 8) & ~7)
                if pos > end:
                    raise _error(
                        f"index entry {k}'s padding runs past the entries", self.path, start, "index-truncated"
                    )
            stage = (flags >> FLAG_STAGE_SHIFT) & 3
            if record:
                if (flags & NAME_MASK) != min(len(path), NAME_MASK):
                    self._problem(
                        f"index entry {k} records a path length of {flags & NAME_MASK}, its path has {len(path)} bytes",
                        start,
                        "index-entry",
                    )
                if k and (path < prev or (path == prev and stage <= last_stage)):
                    self._problem(f"index entries out of order at entry {k} ({path[:80]!r})", start, "index-order")
            last_stage = stage
            prev = path
            yield (
                IndexEntry(path, mode, oid, stage, bool(ext & EXT_INTENT_TO_ADD), bool(ext & EXT_SKIP_WORKTREE), start),
                pos,
            )

    def entries(self) -> Iterator[IndexEntry]:
        for entry, _ in self._entries():
            yield entry

    def _problem(self, message: str, offset: int, kind: str) -> None:
        if len(self.problems) < 100:
            self.problems.append(_error(message, self.path, offset, kind))

    # --- extensions ------------------------------------------------------------------

    def _read_extension_table(self) -> dict[bytes, tuple[int, int]]:
        """{signature: (data offset, size)}; unknown required ones are problems."""
        out: dict[bytes, tuple[int, int]] = {}
        data, pos, end = self.data, self.extensions_at, self.trailer_at
        while pos + 8 <= end:
            sig = bytes(data[pos : pos + 4])
            size = _U32.unpack_from(data, pos + 4)[0]
            if pos + 8 + size > end:
                self._problem(
                    f"extension {sig!r} of {size} bytes runs past the end of the index", pos, "index-extension"
                )
                return out
            if sig not in KNOWN_EXTENSIONS and not (65 <= sig[0] <= 90):
                self._problem(
                    f"index uses extension {sig!r}, which is required but unknown here", pos, "index-extension"
                )
            out.setdefault(sig, (pos + 8, size))
            pos += 8 + size
        if pos != end:
            self._problem(f"{end - pos} stray bytes after the index extensions", pos, "index-extension")
        return out

    def cache_tree(self) -> list[tuple[bytes, bytes, int]]:
        """(directory name, tree id, offset) of every valid cache-tree node."""
        return [(name, oid, offset) for name, oid, offset, _ in self.cache_tree_nodes() if oid is not None]

    def cache_tree_nodes(self) -> list[tuple[bytes, bytes | None, int, int]]:
        """Every cache-tree node in the file's order (a node, then its
        subtrees): (directory name, tree id or None when invalidated,
        offset, number of subtrees)."""
        ext = self.extensions.get(b"TREE")
        if ext is None:
            return []
        data, rawsz = self.data, self.fmt.rawsz
        pos, end = ext[0], ext[0] + ext[1]
        out: list[tuple[bytes, bytes | None, int, int]] = []
        while pos < end:
            nul = data.find(b"\0", pos, end)
            lf = data.find(b"\n", nul + 1, end) if nul >= 0 else -1
            if lf < 0:
                self._problem("cache-tree extension is malformed", pos, "index-cache-tree")
                break
            counts = data[nul + 1 : lf].split(b" ")
            try:
                entry_count, subtrees = int(counts[0]), int(counts[1])
            except (ValueError, IndexError):
                self._problem("cache-tree node has malformed counts", pos, "index-cache-tree")
                break
            name, at, pos = data[pos:nul], pos, lf + 1
            oid = None
            if entry_count >= 0:
                if pos + rawsz > end:
                    self._problem("cache-tree node's id runs past the extension", pos, "index-cache-tree")
                    break
                oid, at = data[pos : pos + rawsz], pos
                pos += rawsz
            out.append((name, oid, at, subtrees))
        return out

    def resolve_undo(self) -> list[tuple[bytes, int, bytes, int]]:
        """(path, stage, blob id, offset) of every resolve-undo record."""
        ext = self.extensions.get(b"REUC")
        if ext is None:
            return []
        data, rawsz = self.data, self.fmt.rawsz
        pos, end = ext[0], ext[0] + ext[1]
        out: list[tuple[bytes, int, bytes, int]] = []
        while pos < end:
            nul = data.find(b"\0", pos, end)
            if nul < 0:
                self._problem("resolve-undo extension is malformed", pos, "index-resolve-undo")
                break
            path = data[pos:nul]
            pos = nul + 1
            modes = []
            for _ in range(3):
                nul = data.find(b"\0", pos, end)
                text = data[pos:nul] if nul >= 0 else b"x"
                if not text or any(c < 0x30 or c > 0x37 for c in text):
                    self._problem("resolve-undo record has a malformed mode", pos, "index-resolve-undo")
                    return out
                modes.append(int(text, 8))
                pos = nul + 1
            for stage, mode in enumerate(modes, 1):
                if mode:
                    if pos + rawsz > end:
                        self._problem("resolve-undo id runs past the extension", pos, "index-resolve-undo")
                        return out
                    out.append((path, stage, data[pos : pos + rawsz], pos))
                    pos += rawsz
        return out

    def split_link(self) -> tuple[bytes, set[int] | None, set[int] | None] | None:
        """(shared index id, deleted positions, replaced positions) of a
        split index, or None when this index is whole."""
        ext = self.extensions.get(b"link")
        if ext is None:
            return None
        rawsz = self.fmt.rawsz
        pos, size = ext
        if size < rawsz:
            self._problem("split-index link extension is too short", pos, "index-link")
            return None
        shared = self.data[pos : pos + rawsz]
        if size == rawsz:
            return shared, None, None
        try:
            deleted, at = _ewah_bits(self.data, pos + rawsz, pos + size)
            replaced, _ = _ewah_bits(self.data, at, pos + size)
        except ValueError as e:
            self._problem(f"split-index bitmap is malformed: {e}", pos, "index-link")
            return shared, None, None
        return shared, deleted, replaced


def _varint(data: bytes, pos: int, end: int, path: str, entry_at: int) -> tuple[int, int]:
    """git's offset varint (each continuation adds one before shifting)."""
    if pos >= end:
        raise _error("index entry's path prefix runs past the entries", path, entry_at, "index-truncated")
    c = data[pos]
    pos += 1
    value = c & 0x7F
    while c & 0x80:
        if pos >= end or value > 1 << 32:
            raise _error("index entry's path prefix length is malformed", path, entry_at, "index-entry")
        c = data[pos]
        pos += 1
        value = ((value + 1) << 7) | (c & 0x7F)
    return value, pos


def _ewah_bits(data: bytes, pos: int, end: int) -> tuple[set[int], int]:
    """Positions of the set bits of an EWAH bitmap at ``pos``, and where it
    ends.  Layout: bit count, word count, the 64-bit words, the position of
    the last run-length word; a run-length word holds a run bit (bit 0), a
    run length (32 bits) and how many literal words follow (31 bits)."""
    if pos + 8 > end:
        raise ValueError("bitmap header runs past the extension")
    nbits, nwords = struct.unpack_from(">II", data, pos)
    words_at = pos + 8
    stop = words_at + 8 * nwords + 4
    if stop > end:
        raise ValueError("bitmap words run past the extension")
    bits: set[int] = set()
    i = word = 0
    while i < nwords:
        rlw = struct.unpack_from(">Q", data, words_at + 8 * i)[0]
        run_bit, run_len, literals = rlw & 1, (rlw >> 1) & 0xFFFFFFFF, rlw >> 33
        if (word + run_len) * 64 > nbits + 64 or i + 1 + literals > nwords:
            raise ValueError("bitmap run exceeds its declared size")
        if run_bit:
            bits.update(range(word * 64, (word + run_len) * 64))
        word += run_len
        for k in range(literals):
            lit = struct.unpack_from(">Q", data, words_at + 8 * (i + 1 + k))[0]
            while lit:
                low = lit & -lit
                bits.add(word * 64 + low.bit_length() - 1)
                lit ^= low
            word += 1
        i += 1 + literals
    return {b for b in bits if b < nbits}, stop


def index_objects(index: IndexFile, git_dir: str | None = None) -> Iterator[ObjectRef]:
    """Every object ``index`` keeps alive (with the shared index's entries
    for a split index, read from ``git_dir``)."""
    link = index.split_link()
    if link is not None and git_dir is not None:
        shared_id, deleted, replaced = link
        shared_path = os.path.join(git_dir, f"sharedindex.{shared_id.hex()}")
        try:
            shared = IndexFile.open(shared_path, index.fmt)
        except RepositoryError as e:
            index.problems.append(e)
        else:
            gone = (deleted or set()) | (replaced or set())
            for k, entry in enumerate(shared.entries()):
                if k not in gone and entry.object_type:
                    source = "intent-to-add" if entry.intent_to_add else "entry"
                    yield ObjectRef(entry.oid, entry.object_type, source, entry.path, entry.offset)
            index.problems.extend(shared.problems)
    for entry in index.entries():
        if entry.object_type:
            source = "intent-to-add" if entry.intent_to_add else "entry"
            yield ObjectRef(entry.oid, entry.object_type, source, entry.path, entry.offset)
    for name, oid, offset in index.cache_tree():
        yield ObjectRef(oid, "tree", "cache-tree", name, offset)
    for path, _stage, oid, offset in index.resolve_undo():
        yield ObjectRef(oid, "blob", "resolve-undo", path, offset)
