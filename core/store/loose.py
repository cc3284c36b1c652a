"""Loose objects, and the cache of loose object names.

A loose object is ``objects/xx/yyyy…`` (the id's first byte in hex names
the directory): a zlib stream of ``<type> SP <decimal size> NUL <content>``.
Reading inflates the header first, checks the declared size against caps,
then inflates at most that many more bytes, so a corrupt or hostile file
cannot make us allocate more than it declares.

``LooseCache`` answers "is this id loose?" and "which loose ids start with
this prefix?" without a stat() per question: the first question about a
subdirectory reads it once (``os.scandir``) into a sorted list, and a flag
remembers that it was read.  Strategy "per-subdir" keeps one
``sortedcontainers.SortedList`` per subdirectory; "global-resort" keeps one
list for everything and sorts it again after each subdirectory is read —
the naive approach from git's history, kept to show (and measure) why
per-subdirectory lists win.
"""

from __future__ import annotations

import os
import time
from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, NamedTuple

from zlib_ng import zlib_ng

from packscope.core import trace  # (the event classes load when a tracer listens)
from packscope.core.errors import CorruptObjectError, LimitExceededError, MissingObjectError
from packscope.core.oid import ObjectFormat, Prefix
from packscope.core.store.zlib_errors import ZlibError
from packscope.core.trace import Tracer

if TYPE_CHECKING:
    from sortedcontainers import SortedList

OBJECT_TYPES = frozenset((b"commit", b"tree", b"blob", b"tag"))
DEFAULT_MAX_OBJECT_SIZE = 4 << 30
HEADER_MAX = 32  # git's MAX_HEADER_LEN: "commit" SP 20 digits NUL fits
FIRST_CHUNK = 4096  # inflate this much first: most objects are done in one call
MAX_DEFLATE_RATIO = 1032
STRATEGIES = ("per-subdir", "global-resort")

LOOSE_REMEDY = (
    "Replace the damaged loose file with a good copy of the object (from another clone: "
    "`git cat-file -p ID` there, `git hash-object -w` here), or delete it if a pack also has it."
)


def loose_path(objects_dir: str, oid_hex: str) -> str:
    return os.path.join(objects_dir, oid_hex[:2], oid_hex[2:])


def _corrupt(message: str, kind: str, path: str, oid: bytes | None) -> CorruptObjectError:
    return CorruptObjectError(
        message, path=path, oid=None if oid is None else oid.hex(), kind=kind, remedy=LOOSE_REMEDY
    )


def parse_loose_header(head: bytes, path: str = "", oid: bytes | None = None) -> tuple[str, int, int]:
    """(type name, size, header length including the NUL) from inflated bytes."""
    nul = head.find(b"\0", 0, HEADER_MAX)
    if nul < 0:
        raise _corrupt("loose object header has no NUL in its first 32 bytes", "loose-header", path, oid)
    type_bytes, sp, digits = head[:nul].partition(b" ")
    if not sp or type_bytes not in OBJECT_TYPES:
        raise _corrupt(f"loose object header has a bad type {type_bytes[:16]!r}", "loose-header", path, oid)
    # Decimal digits only, no sign, no spaces, no leading zero (as git).
    if not digits.isdigit() or (len(digits) > 1 and digits[0] == 0x30):
        raise _corrupt(f"loose object header has a bad size {digits[:24]!r}", "loose-header", path, oid)
    return type_bytes.decode(), int(digits), nul + 1


def _read_file(path: str, oid: bytes | None, limit: int = -1) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except FileNotFoundError:
        raise MissingObjectError(
            "loose object file is missing", path=path, oid=None if oid is None else oid.hex()
        ) from None
    except IsADirectoryError:
        # git opens it, then dies mapping it ("mmap failed: No such device")
        raise CorruptObjectError(
            "loose object is a directory, not a file (git dies here: mmap failed)",
            path=path,
            oid=None if oid is None else oid.hex(),
            kind="loose-directory",
            remedy="Move the directory out of the object store; if the object is needed, "
            "copy it from another clone (git cat-file -p ID there, git hash-object -w here).",
        ) from None
    except OSError as e:
        raise _corrupt(f"cannot read loose object: {e.strerror}", "loose-unreadable", path, oid) from e


def read_loose_header(path: str, oid: bytes | None = None) -> tuple[str, int]:
    """(type name, size), inflating only the start of the file."""
    path = str(path)
    data = _read_file(path, oid, 1024)  # the header never needs more input than this
    try:
        head = zlib_ng.decompressobj().decompress(data, HEADER_MAX)
    except ZlibError as e:
        raise _corrupt(f"loose object is not a valid zlib stream: {e}", "loose-zlib", path, oid) from None
    type_name, size, _ = parse_loose_header(head, path, oid)
    return type_name, size


def read_loose(
    path: str,
    fmt: ObjectFormat,
    oid: bytes | None = None,
    max_size: int = DEFAULT_MAX_OBJECT_SIZE,
    verify: bool = False,
) -> tuple[str, bytes]:
    """(type name, content) of a loose object; with ``verify`` (and ``oid``)
    also check that the content hashes to ``oid``."""
    path = str(path)
    data = _read_file(path, oid)
    d = zlib_ng.decompressobj()
    try:
        head = d.decompress(data, FIRST_CHUNK)
        type_name, size, header_len = parse_loose_header(head, path, oid)
        if size > max_size:
            raise LimitExceededError(
                f"loose object declares {size} bytes, above the cap of {max_size}",
                path=path,
                oid=None if oid is None else oid.hex(),
                kind="object-too-large",
            )
        if size > len(data) * MAX_DEFLATE_RATIO + 64:
            raise _corrupt(
                f"loose object declares {size} bytes, more than its {len(data)} bytes can inflate to",
                "loose-size",
                path,
                oid,
            )
        body = head[header_len:]
        if len(body) <= size and not d.eof:
            # At most one byte beyond the declared size, to notice excess.
            body += d.decompress(d.unconsumed_tail, size + 1 - len(body))
    except ZlibError as e:
        raise _corrupt(f"loose object is not a valid zlib stream: {e}", "loose-zlib", path, oid) from None
    if len(body) > size:
        raise _corrupt(f"loose object has more bytes than its declared {size}", "loose-size", path, oid)
    if not d.eof:
        raise _corrupt("loose object's zlib stream is truncated", "loose-zlib", path, oid)
    if len(body) < size:
        raise _corrupt(f"loose object has {len(body)} bytes, it declares {size}", "loose-size", path, oid)
    if d.unused_data or d.unconsumed_tail:
        raise _corrupt("garbage after the loose object's zlib stream", "loose-zlib", path, oid)
    if verify and oid is not None and fmt.hash_object(type_name, body) != oid:
        raise _corrupt("loose object's content does not hash to its name", "loose-hash", path, oid)
    return type_name, body


# --- the name cache ------------------------------------------------------------


class LooseCacheCounts(NamedTuple):
    entries: int
    subdirs_seen: int
    fills: int
    flushes: int
    strategy: str


def _subdir_number(subdir: int | str) -> int:
    n = int(subdir, 16) if isinstance(subdir, str) else subdir
    if not 0 <= n <= 255:
        raise ValueError(f"loose subdirectory {subdir!r} is not 00..ff")
    return n


class LooseCache:
    """Names of the loose objects of one objects directory, read lazily, one
    subdirectory at a time."""

    def __init__(
        self, objects_dir: str, fmt: ObjectFormat, strategy: str = "per-subdir", tracer: Tracer | None = None
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown loose cache strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}")
        self.objects_dir = str(objects_dir)
        self.fmt = fmt
        self.tracer = tracer
        self._strategy = strategy
        self.fills = 0
        self.flushes = 0
        self._reset()

    def _reset(self) -> None:
        self._seen = [False] * 256
        self._lists: list[SortedList | None] = [None] * 256  # per-subdir
        self._all: list[bytes] = []  # global-resort

    @property
    def strategy(self) -> str:
        return self._strategy

    def set_strategy(self, name: str) -> None:
        if name not in STRATEGIES:
            raise ValueError(f"unknown loose cache strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
        if name != self._strategy:
            self._strategy = name
            self.flush("strategy")

    def flush(self, reason: str = "request") -> None:
        """Forget everything; subdirectories are read again on next need."""
        self._reset()
        self.flushes += 1
        tracer = self.tracer
        if tracer is not None and tracer.active:
            tracer.emit(trace.LooseCacheFlushed(self.objects_dir, reason))

    def seen(self, subdir: int | str) -> bool:
        return self._seen[_subdir_number(subdir)]

    def _scan(self, n: int) -> list[bytes]:
        """Ids named in objects/xx; anything else there (temp files) is skipped."""
        xx = f"{n:02x}"
        rest_len = self.fmt.hexsz - 2
        rawsz = self.fmt.rawsz
        found = []
        try:
            with os.scandir(os.path.join(self.objects_dir, xx)) as it:
                for entry in it:
                    name = entry.name
                    if len(name) != rest_len:
                        continue
                    try:
                        raw = bytes.fromhex(xx + name)
                    except ValueError:
                        continue
                    if len(raw) == rawsz:  # fromhex skips spaces: a spaced name is not an id
                        found.append(raw)
        except (FileNotFoundError, NotADirectoryError):
            pass  # no objects with this first byte
        return found

    def fill(self, subdir: int | str) -> int:
        """Read objects/xx unless already read; the number of names added."""
        n = _subdir_number(subdir)
        if self._seen[n]:
            return 0
        t0 = time.perf_counter()
        names = self._scan(n)
        if self._strategy == "per-subdir":
            self._lists[n] = _sorted_list(names)
        else:
            self._all.extend(names)
            self._all.sort()  # the whole list, every time: the point of this strategy
        self._seen[n] = True
        self.fills += 1
        seconds = time.perf_counter() - t0
        tracer = self.tracer
        if tracer is not None and tracer.active:
            tracer.emit(trace.LooseCacheFilled(self.objects_dir, f"{n:02x}", len(names), seconds, self._strategy))
        return len(names)

    def _subdir_list(self, n: int) -> SortedList:
        """objects/xx's sorted names under the per-subdirectory strategy,
        read now if not yet."""
        if not self._seen[n]:
            self.fill(n)
        names = self._lists[n]
        if names is None:  # seen under the other strategy, then switched
            names = self._lists[n] = _sorted_list(self._scan(n))
        return names

    def contains(self, oid: bytes) -> bool:
        n = oid[0]
        if self._strategy == "per-subdir":
            return oid in self._subdir_list(n)
        if not self._seen[n]:
            self.fill(n)
        names = self._all
        i = bisect_left(names, oid)
        return i < len(names) and names[i] == oid

    def matches(self, prefix: Prefix) -> list[bytes]:
        """Every cached id starting with ``prefix``, in order."""
        n = prefix.first_byte
        if self._strategy == "per-subdir":
            return list(self._subdir_list(n).irange(prefix.low, prefix.high))
        if not self._seen[n]:
            self.fill(n)
        names = self._all
        return names[bisect_left(names, prefix.low) : bisect_right(names, prefix.high)]

    def entries(self, subdir: int | str) -> list[bytes]:
        """The ids of objects/xx (read now if not yet)."""
        n = _subdir_number(subdir)
        if self._strategy == "per-subdir":
            return list(self._subdir_list(n))
        if not self._seen[n]:
            self.fill(n)
        low = bytes([n])
        high = bytes([n]) + b"\xff" * (self.fmt.rawsz - 1)
        names = self._all
        return names[bisect_left(names, low) : bisect_right(names, high)]

    def fill_all(self) -> int:
        return sum(self.fill(n) for n in range(256))

    @property
    def count(self) -> int:
        """Names cached so far."""
        if self._strategy == "per-subdir":
            return sum(len(sl) for sl in self._lists if sl is not None)
        return len(self._all)

    @property
    def subdirs_seen(self) -> int:
        return sum(self._seen)

    def count_in(self, subdir: int | str) -> int | None:
        """Names cached for objects/xx, or None if it has not been read (no copy, no fill)."""
        n = _subdir_number(subdir)
        if not self._seen[n]:
            return None
        if self._strategy == "per-subdir":
            names = self._lists[n]
            return len(names) if names is not None else 0
        start = bisect_left(self._all, bytes([n]))
        end = bisect_left(self._all, bytes([n + 1])) if n < 255 else len(self._all)
        return end - start

    def counts(self) -> LooseCacheCounts:
        return LooseCacheCounts(self.count, self.subdirs_seen, self.fills, self.flushes, self._strategy)


def _sorted_list(names: list[bytes]) -> SortedList:
    """A SortedList of ``names``; sortedcontainers is imported here, on first
    use, because its import (~4 ms) is a tenth of a one-shot command's budget."""
    from sortedcontainers import SortedList

    return SortedList(names)


class LooseFiles(NamedTuple):
    """What ``git count-objects -v`` counts in one objects directory."""

    counts: list[int]  # loose objects per subdirectory 00..ff
    ids: list[bytes]  # their ids, one per file (a name in upper case is a file of its own)
    garbage: list[str]  # paths of the files there that are not loose objects


def count_loose_files(objects_dir: str, fmt: ObjectFormat) -> LooseFiles:
    """git count-objects' census: a loose object is a regular file (not
    followed if a symbolic link) named by the id's remaining hex digits, in
    either case, in a lower-case two-digit subdirectory; anything else there
    (temp files, a directory or a link with an id's name) is garbage.  The
    lookup cache is wider (it lists every name git's batch listing does)."""
    rest_len = fmt.hexsz - 2
    counts = [0] * 256
    ids: list[bytes] = []
    garbage: list[str] = []
    for n in range(256):
        xx = f"{n:02x}"
        try:
            with os.scandir(os.path.join(objects_dir, xx)) as it:
                entries = list(it)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            raw = None
            if len(name) == rest_len:
                try:
                    raw = bytes.fromhex(xx + name)
                except ValueError:
                    raw = None
            try:
                regular = entry.is_file(follow_symlinks=False)
            except OSError:
                regular = False
            if raw is not None and len(raw) == fmt.rawsz and regular:
                counts[n] += 1
                ids.append(raw)
            else:
                garbage.append(entry.path)
    return LooseFiles(counts, ids, garbage)
