"""A column of every name's first four bytes: the search for batches.

The three searches in packscope.core.store.search run one Python-level probe per step, so a
lookup in a 850k-object index costs ~11 probes of slicing and comparing
20-byte names.  When a table is asked many times (a `cat-file --batch-check`
of thousands of ids), it pays to copy the first four bytes of every name
into an ``array('I')`` once — 4 bytes per object, built by C-level slicing in
milliseconds — and let ``bisect`` (C) find the first name whose prefix is not
below the target's.  One full-name comparison then confirms; ids sharing 32
bits are rare (about n²/2³³ pairs), and the loop handles them.

Untraced only: a traced lookup shows the probe-by-probe search that git
itself does, never this shortcut.
"""

from __future__ import annotations

import mmap
import sys
from array import array
from bisect import bisect_left
from collections.abc import Callable

NameAt = Callable[[int], bytes]


def build_prefix_column(buffer: mmap.mmap | bytes, start: int, count: int, stride: int) -> array[int]:
    """The first four bytes of ``count`` names, the first at ``start`` and
    one every ``stride`` bytes (a multiple of 4), as native unsigned ints
    that sort like the names."""
    column = array("I")
    if count <= 0:
        return column
    if stride % 4 or column.itemsize != 4:
        raise ValueError("prefix column needs a stride that is a multiple of 4 and 4-byte ints")
    end = start + (count - 1) * stride + 4
    # Every view is released before returning: an exported view of an mmap
    # would stop it from being closed later.
    with (
        memoryview(buffer) as whole,
        whole[start:end] as part,
        part.cast("I") as words,
        words[:: stride // 4] as firsts,
    ):
        column.frombytes(firsts.tobytes())
    if sys.byteorder == "little":
        column.byteswap()  # the file is big-endian; compare as numbers
    return column


def prefix_column_search(column: array[int], name_at: NameAt, lo: int, hi: int, target: bytes) -> int:
    """Position of ``target`` among names [lo, hi), or -1."""
    key = int.from_bytes(target[:4], "big")
    i = bisect_left(column, key, lo, hi)
    while i < hi and column[i] == key:
        name = name_at(i)
        if name == target:
            return i
        if name > target:
            break
        i += 1
    return -1
