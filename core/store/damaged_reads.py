"""Reading around a damaged pack entry, as git does.

When an entry of a pack cannot be read (zlib damage, a bad header, a delta
that does not apply), git marks it bad and looks for another copy.
``ObjectStore.read`` hands such failures here:

1. another copy of the object itself — in another pack, or a loose file;
2. else, when the damage lies in a delta base of its chain, a good copy of
   that base, found by its id elsewhere, stands in for it
   (``Pack.good_copies``) and the chain is rebuilt on it.

The damage is noted in the store's ``problems``; with no other copy the
original error (path, offset of the damaged entry) stands.  fsck reads packs
directly and still reports every damaged entry.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from packscope.core.errors import BadPackError, CorruptObjectError, PackscopeError
from packscope.core.store.location import CHANGED_KINDS, VANISHED_KINDS, Location
from packscope.core.store.loose import read_loose

if TYPE_CHECKING:  # the store calls in here; a type name only, no import at run time
    from packscope.core.store.odb import ObjectStore


def read_around_damage(store: ObjectStore, oid: bytes, loc: Location, damage: PackscopeError) -> tuple[str, bytes]:
    """git's answer to a damaged pack entry: use another copy.  First a
    copy of ``oid`` itself in another pack or loose; else, when the
    damage is in a delta base of its chain, a good copy of that base
    (found by its id elsewhere) stands in for it.  The damage is noted
    in ``problems``; with no other copy the original error stands."""
    if loc.pack is None or loc.offset is None:
        raise damage  # only a pack entry has other copies to go around it with
    pack, at = loc.pack.pack, loc.offset
    key = (pack.path, oid)
    if key in store.repairing:
        raise damage
    store.repairing.add(key)
    try:
        copy = other_copy(store, oid, pack.path)
        if copy is not None:
            store.note_problem(damage)
            return copy
        for _ in range(store.max_repaired_bases):
            bad_at = damage.offset
            if bad_at is None or bad_at == at or bad_at in pack.good_copies:
                raise damage
            base_oid = pack.oid_at(bad_at)
            good = other_copy(store, base_oid, pack.path) if base_oid is not None else None
            if good is None:
                raise damage
            store.note_problem(damage)
            pack.good_copies[bad_at] = good
            try:
                return pack.read_at(at)
            except (CorruptObjectError, BadPackError) as e:
                if e.kind in VANISHED_KINDS or e.kind in CHANGED_KINDS:
                    raise
                damage = e
        raise damage
    finally:
        store.repairing.discard(key)


def other_copy(store: ObjectStore, oid: bytes, damaged_pack: str) -> tuple[str, bytes] | None:
    """(type, content) of ``oid`` from any pack but ``damaged_pack``, or
    a loose file; None when no readable copy exists."""
    for h in store.all_packs():
        if h.files.pack_path == damaged_pack:
            continue
        try:
            pos = h.index.find(oid)
            if pos >= 0:
                return store.read(oid, Location("pack", h.objects_dir, h.files.local, h, h.index.offset_at(pos)))
        except PackscopeError:
            continue
    for path in store.loose_paths(oid):
        if os.path.isfile(path):
            try:
                return read_loose(path, store.fmt, oid)
            except PackscopeError:
                continue
    return None
