"""A pack entry's header, parsed from a buffer (gitformat-pack).

An entry starts with a header: the type in bits 4-6 of the first byte, the
inflated size as a varint whose first 4 bits are in that byte, then for
OFS_DELTA the distance back to the base (a big-endian varint with "+1 per
continuation" so each length has its own range) and for REF_DELTA the
base's id; a zlib stream follows.

``parse_entry_header`` is the pure reference and the source of every
header error; the compiled parser (``entry_header`` of core/native.py's
``backend``) answers the same tuple or None for anything the reference
would refuse, reading the same HEADER_PEEK window (core/_native.c
ENTRY_PEEK).  ``Pack._header`` tries the compiled one first.
"""

from __future__ import annotations

import mmap
from typing import NamedTuple, TypeVar

from packscope.core.errors import BadPackError, DeltaError

OBJ_COMMIT, OBJ_TREE, OBJ_BLOB, OBJ_TAG = 1, 2, 3, 4
OBJ_OFS_DELTA, OBJ_REF_DELTA = 6, 7
TYPE_NAMES = {1: "commit", 2: "tree", 3: "blob", 4: "tag", 6: "ofs-delta", 7: "ref-delta"}

HEADER_PEEK = 64  # enough for any entry header: 1 + 9 size bytes + a 32-byte id or a 10-byte distance

T = TypeVar("T")

# (type number, size, data offset, base offset, base id)
HeaderTuple = tuple[int, int, int, int | None, bytes | None]


class EntryHeader(NamedTuple):
    offset: int
    type_num: int
    size: int  # inflated size of this entry's data (for a delta: the delta's own size)
    header_len: int
    data_offset: int  # where the zlib stream starts
    base_offset: int | None = None  # OFS_DELTA
    base_oid: bytes | None = None  # REF_DELTA

    @property
    def type_name(self) -> str:
        return TYPE_NAMES[self.type_num]

    @property
    def is_delta(self) -> bool:
        return self.type_num >= OBJ_OFS_DELTA


def given(value: T | None) -> T:
    """A header field its entry's type guarantees (the base offset of an
    OFS_DELTA, the base id of a REF_DELTA): the header parser sets it."""
    if value is None:
        raise BadPackError("a delta entry's header lacks its base", kind="pack-header")
    return value


def _bad(
    message: str, path: str, offset: int, kind: str, cls: type[BadPackError | DeltaError] = BadPackError
) -> Exception:
    return cls(message, path=path, offset=offset, kind=kind, oid=None)


def parse_entry_header(buf: bytes | mmap.mmap, offset: int, end: int, rawsz: int, path: str) -> HeaderTuple:
    """The header of the entry at ``offset`` of ``buf`` (a pack's bytes or
    map; ``end``: where the trailing checksum starts, ``rawsz``: the id
    length, ``path``: for errors) as (type number, size, data offset, base
    offset, base id); a typed error for anything malformed."""
    if offset < 12 or offset >= end:
        raise _bad(f"offset {offset} is outside the pack's entries [12, {end})", path, offset, "pack-offset")
    peek = buf[offset : offset + HEADER_PEEK]
    c = peek[0]
    type_num = (c >> 4) & 7
    size = c & 15
    shift = 4
    i = 1
    try:
        while c & 0x80:
            c = peek[i]
            i += 1
            size |= (c & 0x7F) << shift
            shift += 7
            if shift > 70:
                raise _bad("entry size varint is too long", path, offset, "pack-entry-header")
        base_offset: int | None
        base_oid: bytes | None
        if type_num <= OBJ_TAG and type_num:
            base_offset = base_oid = None
        elif type_num == OBJ_OFS_DELTA:
            c = peek[i]
            i += 1
            distance = c & 0x7F
            while c & 0x80:
                c = peek[i]
                i += 1
                distance = ((distance + 1) << 7) | (c & 0x7F)
            base_offset = offset - distance
            base_oid = None
            # A base must come earlier in the pack; this also rules out OFS loops.
            if distance <= 0 or base_offset < 12:
                raise _bad(
                    f"OFS_DELTA base offset {base_offset} is not before the delta",
                    path,
                    offset,
                    "delta-base-offset",
                    DeltaError,
                )
        elif type_num == OBJ_REF_DELTA:
            base_oid = peek[i : i + rawsz]
            if len(base_oid) != rawsz:
                raise IndexError
            i += rawsz
            base_offset = None
        else:
            raise _bad(f"invalid entry type {type_num}", path, offset, "pack-entry-type")
    except IndexError:
        raise _bad("entry header runs past the end of the pack", path, offset, "pack-truncated") from None
    if offset + i > end:
        raise _bad("entry header runs into the pack trailer", path, offset, "pack-truncated")
    return type_num, size, offset + i, base_offset, base_oid
