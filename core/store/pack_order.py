"""A pack's entries in pack order: sorted offsets and the index positions
in that order (disk sizes, OFS_DELTA base ids, the fastest reading order),
from a valid ``.rev`` file when there is one, else sorted in memory."""

from __future__ import annotations

import sys
from array import array
from itertools import pairwise

from packscope.core.store.pack_index import PackIndex


def pack_order(index: PackIndex, rev_path: str) -> tuple[array[int], array[int]]:
    """(sorted offsets, index positions in that order).  A ``.rev`` file
    (``RIDX``, version 1, hash id, then one 4-byte index position per object
    in pack order, then two checksums) spares the sort when it is valid for
    this pack; otherwise sort (offset, position) pairs packed into one int,
    which is faster than sorting with a key function."""
    n = index.num_objects
    by_position = index.offsets()
    positions = read_rev(rev_path, index)
    if positions is not None:
        offsets = array("Q", [by_position[p] for p in positions])
        if all(a < b for a, b in pairwise(offsets)):
            return offsets, positions
    order = sorted(range(n), key=by_position.__getitem__)
    return array("Q", [by_position[i] for i in order]), array("I", order)


def read_rev(path: str, index: PackIndex) -> array[int] | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    n, rawsz = index.num_objects, index.fmt.rawsz
    hash_id = {"sha1": 1, "sha256": 2}.get(index.fmt.name)
    if (
        len(data) != 12 + 4 * n + 2 * rawsz
        or data[:4] != b"RIDX"
        or int.from_bytes(data[4:8], "big") != 1
        or int.from_bytes(data[8:12], "big") != hash_id
        or data[12 + 4 * n : 12 + 4 * n + rawsz] != index.pack_checksum
    ):
        return None
    positions = array("I", data[12 : 12 + 4 * n])  # "I" is 4 bytes on every platform CPython supports
    if sys.byteorder == "little":
        positions.byteswap()
    if any(p >= n for p in positions):
        return None
    return positions
