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
    damage: str | None = None  # the entry reads, but its extent is wrong (cut by a truncation)


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
        from packscope.core.store.pack_index import PackIndex

        self.handle = handle
        self.lock = lock
        # A mapping of our own: the store's may be closed by its open-file
        # LRU or by a rescan after a repack deletes the file, and a mapped
        # file stays readable after it is deleted — the view keeps its ids
        # and offsets and can say where each object lives now.
        with lock:
            self.index = PackIndex(handle.index.path, handle.index.fmt).open()
        self.count = self.index.num_objects
        self.data_end = handle.files.pack_size - rawsz
        self.order: OffsetOrder | None = None
        self.by_offset = True  # show offset order once it exists
        self.removed: str | None = None  # why the pack's data is gone (a repack), once noticed
        self._rows: dict[int, EntryRow] = {}  # by position; bounded below

    def close(self) -> None:
        self.index.close()

    def mark_removed(self, why: str) -> None:
        """The .pack was deleted: rows keep id and offset, and say so."""
        self.removed = why
        self._rows.clear()

    @property
    def name(self) -> str:
        return self.handle.name

    @property
    def in_offset_order(self) -> bool:
        return self.offset_order is not None

    @property
    def offset_order(self) -> OffsetOrder | None:
        """The order rows are shown in, when it is by offset."""
        return self.order if self.by_offset else None

    def set_order(self, order: OffsetOrder | None) -> None:
        self.order = order

    def position_of_row(self, k: int) -> int:
        order = self.offset_order
        return k if order is None else order.positions[k]

    def row_of_position(self, position: int) -> int:
        order = self.offset_order
        if order is None:
            return position
        with self.lock:
            offset = self.index.offset_at(position)
        return order.rank_of_offset(offset)

    def row_of_offset(self, offset: int) -> int | None:
        if self.order is None:
            return None
        k = self.order.rank_of_offset(offset)
        return k if self.in_offset_order else self.order.positions[k]

    def _next_offset(self, offset: int) -> int | None:
        """Where the entry at ``offset`` ends: the next entry's offset, or
        the end of the data for the last (None before the order exists)."""
        order = self.order
        if order is None:
            return None
        k = bisect_left(order.offsets, offset)
        if k >= len(order) or order.offsets[k] != offset:
            return None
        return order.offsets[k + 1] if k + 1 < len(order) else self.data_end

    def _disk_size(self, position: int, offset: int) -> int | None:
        nxt = self._next_offset(offset)
        return None if nxt is None else nxt - offset

    def extent_problem(self, offset: int) -> str | None:
        """An entry the end of the data cuts: it starts before the end but
        the index puts the next entry past it (the pack was truncated)."""
        end = self.data_end
        if offset >= end:
            return f"starts past the end of the data (@{end:,}): the pack is truncated"
        nxt = self._next_offset(offset)
        if nxt is not None and nxt > end:
            return (
                f"runs past the end of the data: {nxt - offset:,} bytes by the index, "
                f"{end - offset:,} left before @{end:,} (the pack is truncated)"
            )
        return None

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
        if self.removed:
            return EntryRow(position, oid, offset, "?", None, disk, None, None, self.removed)
        cut = self.extent_problem(offset)
        if cut is not None and offset >= self.data_end:
            return EntryRow(position, oid, offset, "?", None, disk, None, None, cut)
        try:
            pack = self.handle.pack
            type_name, size = pack.info_at(offset)
            chain = pack.delta_chain(offset)
            depth = len(chain) - 1
            base = pack.delta_base(offset) if depth else None
        except (PackscopeError, OSError, TypeError, AttributeError) as e:
            msg = e.message if isinstance(e, PackscopeError) else f"{type(e).__name__}: {e}"
            if cut is not None:
                msg = f"{cut}; {msg}"
            return EntryRow(position, oid, offset, "?", None, disk, None, None, msg)
        return EntryRow(position, oid, offset, type_name, size, disk, depth, base, damage=cut)

    def find(self, query: str) -> list[int]:
        """Rows matching ``query``: a hex id prefix, or ``@OFFSET``."""
        from packscope.core.oid import parse_prefix

        q = query.strip().lower()
        if q.startswith("@"):
            return [self.row_at_offset(q[1:])]
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

    def row_at_offset(self, text: str) -> int:
        """The row of the entry that starts at offset ``text``; an offset
        outside the entries or inside one is refused with a message that
        says where it falls (never a jump to the nearest entry)."""
        from packscope.inspector.widgets.virtual_list import SearchRefused

        try:
            offset = int(text.replace(",", "").replace("_", ""), 0)
        except ValueError:
            raise SearchRefused(f"@{text}: not an offset (a number: @1234 or @0x4d2)") from None
        end = self.data_end
        if offset < 12 or offset >= end:
            raise SearchRefused(
                f"@{offset:,} is outside this pack's entries, which lie in [12, {end:,})"
                + (" — the pack is only " + f"{end + self.index.fmt.rawsz:,} bytes" if offset >= end else "")
            )
        if self.order is None:
            with self.lock:
                offsets = self.index.offsets()
            pos = [i for i, o in enumerate(offsets) if o == offset]
            if pos:
                return self.row_of_position(pos[0])
            before = max((o for o in offsets if o < offset), default=None)
        else:
            k = self.order.rank_of_offset(offset)
            if self.order.offsets[k] == offset:
                return k if self.in_offset_order else self.order.positions[k]
            before = self.order.offsets[k] if self.order.offsets[k] < offset else None
        if before is None:
            raise SearchRefused(f"@{offset:,} is before the first entry of this pack")
        nxt = self._next_offset(before)
        span = f"[{before:,}, {nxt:,})" if nxt is not None else f"starting @{before:,}"
        raise SearchRefused(f"@{offset:,} is inside the entry at @{before:,} {span}, not the start of an entry")

    def describe_row(self, r: EntryRow) -> str:
        return f"{short_id(r.oid)} @{r.offset}"
