"""The rows of one pack, for a virtual list: computed for the visible window
only, never one Python object per entry.

Row ``k`` is either index position ``k`` (name order: free, the index is
already sorted that way) or the ``k``-th entry by pack offset (the order the
data lies in, which also gives each entry's size on disk: the distance to
the next offset).  The offset order is two arrays (8 + 4 bytes per entry),
built by a worker in slices that take the core lock briefly, so a pack of a
million entries opens at once in name order and switches to offset order
when the arrays are ready (a couple of seconds later).
"""

from __future__ import annotations

import heapq
import time
from array import array
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from itertools import islice

from packscope.core.errors import PackscopeError
from packscope.inspector.safe_text import short_id

SLICE = 20_000  # entries per lock hold / GIL release while building the order
SYNC_LIMIT = 20_000  # up to this many entries, build the order before the first paint


@dataclass(frozen=True, slots=True)
class EntryRow:
    position: int
    oid: bytes
    offset: int
    type_name: str
    size: int | None
    disk_size: int | None
    depth: int | None
    base: bytes | None
    error: str | None = None


class OffsetOrder:
    """Entries sorted by offset: ``offsets[k]`` and ``positions[k]``."""

    __slots__ = ("offsets", "positions")

    def __init__(self, offsets: array, positions: array) -> None:
        self.offsets = offsets
        self.positions = positions

    def __len__(self) -> int:
        return len(self.positions)

    def rank_of_offset(self, offset: int) -> int:
        """The row holding ``offset`` (or the last row starting before it)."""
        return max(0, bisect_right(self.offsets, offset) - 1)

    @classmethod
    def build(cls, index, lock, cancelled=lambda: False, progress=lambda f: None) -> OffsetOrder | None:
        """Sort (offset, position) keys packed in one int each: sorted runs
        of ``SLICE`` keys, then a k-way merge into an array.  Returns None
        when cancelled."""
        n = index.num_objects
        shift = max(1, (n - 1).bit_length())
        mask = (1 << shift) - 1
        runs: list[array] = []
        for start in range(0, n, SLICE):
            if cancelled():
                return None
            end = min(n, start + SLICE)
            with lock:
                offset_at = index.offset_at
                keys = [(offset_at(i) << shift) | i for i in range(start, end)]
            keys.sort()
            runs.append(array("Q", keys))
            progress(0.6 * end / max(1, n))
            time.sleep(0)  # let the UI thread in between slices
        offsets = array("Q")
        positions = array("I")
        merged = heapq.merge(*runs) if len(runs) > 1 else iter(runs[0] if runs else ())
        done = 0
        while True:
            if cancelled():
                return None
            chunk = list(islice(merged, SLICE * 2))
            if not chunk:
                break
            offsets.extend([k >> shift for k in chunk])
            positions.extend([k & mask for k in chunk])
            done += len(chunk)
            progress(0.6 + 0.4 * done / max(1, n))
            time.sleep(0)
        return cls(offsets, positions)


class PackEntries:
    """Row data of one pack (a ``packscope.core.store.odb.PackHandle``)."""

    def __init__(self, handle, lock, rawsz: int) -> None:
        self.handle = handle
        self.lock = lock
        with lock:
            self.index = handle.index.open()
        self.count = self.index.num_objects
        self.data_end = handle.files.pack_size - rawsz
        self.order: OffsetOrder | None = None
        self.by_offset = True  # show offset order once it exists
        self._rows: dict[int, EntryRow] = {}  # by position; bounded below

    @property
    def name(self) -> str:
        return self.handle.name

    @property
    def in_offset_order(self) -> bool:
        return self.by_offset and self.order is not None

    def set_order(self, order: OffsetOrder | None) -> None:
        self.order = order

    def position_of_row(self, k: int) -> int:
        if self.in_offset_order:
            return self.order.positions[k]
        return k

    def row_of_position(self, position: int) -> int:
        if not self.in_offset_order:
            return position
        with self.lock:
            offset = self.index.offset_at(position)
        return self.order.rank_of_offset(offset)

    def row_of_offset(self, offset: int) -> int | None:
        if self.order is None:
            return None
        k = self.order.rank_of_offset(offset)
        return k if self.in_offset_order else self.order.positions[k]

    def _disk_size(self, position: int, offset: int) -> int | None:
        order = self.order
        if order is None:
            return None
        k = bisect_left(order.offsets, offset)
        if k >= len(order) or order.offsets[k] != offset:
            return None
        nxt = order.offsets[k + 1] if k + 1 < len(order) else self.data_end
        return nxt - offset

    def row(self, k: int) -> EntryRow:
        position = self.position_of_row(k)
        hit = self._rows.get(position)
        if hit is not None and (hit.disk_size is not None or self.order is None):
            return hit
        with self.lock:
            row = self._compute(position)
        if len(self._rows) > 4096:
            self._rows.clear()  # only the visible window matters
        self._rows[position] = row
        return row

    def _compute(self, position: int) -> EntryRow:
        index = self.index
        oid = index.name_at(position)
        offset = index.offset_at(position)
        disk = self._disk_size(position, offset)
        try:
            pack = self.handle.pack
            type_name, size = pack.info_at(offset)
            chain = pack.delta_chain(offset)
            depth = len(chain) - 1
            base = pack.delta_base(offset) if depth else None
        except (PackscopeError, OSError, TypeError, AttributeError) as e:
            msg = e.message if isinstance(e, PackscopeError) else f"{type(e).__name__}: {e}"
            return EntryRow(position, oid, offset, "?", None, disk, None, None, msg)
        return EntryRow(position, oid, offset, type_name, size, disk, depth, base)

    def find(self, query: str) -> list[int]:
        """Rows matching ``query``: a hex id prefix, or ``@OFFSET``."""
        from packscope.core.oid import parse_prefix

        q = query.strip().lower()
        if q.startswith("@"):
            try:
                offset = int(q[1:], 0)
            except ValueError:
                return []
            if self.order is None:
                with self.lock:
                    pos = [i for i in range(self.count) if self.index.offset_at(i) == offset][:1]
                return pos
            k = self.order.rank_of_offset(offset)
            return [k if self.in_offset_order else self.order.positions[k]]
        try:
            prefix = parse_prefix(q, self.index.fmt) if len(q) >= 4 else None
        except PackscopeError:
            return []
        with self.lock:
            if prefix is not None:
                positions = self.index.find_prefix(prefix, limit=1000)
            else:
                # Short prefixes (1-3 hex digits): the fanout bucket bounds them.
                try:
                    lo = self.index.bucket(int(q[:2].ljust(2, "0"), 16))[0]
                    hi = self.index.bucket(int(q[:2].ljust(2, "f"), 16))[1]
                except ValueError:
                    return []
                name_at = self.index.name_accessor()
                positions = [i for i in range(lo, min(hi, lo + 5000)) if name_at(i).hex().startswith(q)][:1000]
        return sorted(self.row_of_position(p) for p in positions)

    def describe_row(self, r: EntryRow) -> str:
        return f"{short_id(r.oid)} @{r.offset}"
