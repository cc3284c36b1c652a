"""What the object directory holds beside the objects a walk reaches, by
file name and size alone: the loose object files, cruft packs (``.mtimes``),
files a writer left half-done, and what ``git count-objects -v`` calls
garbage.  Read by :class:`packscope.core.advise.sizes.SizeWalk` for the
``stored`` part of ``advise``; no object is parsed here."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from packscope.core.oid import ObjectFormat
from packscope.core.store.loose import count_loose_files
from packscope.core.store.temporary_files import is_git_temporary

_HEX = re.compile(r"[0-9a-fA-F]+")


def loose_files(objects_dir: str, hexsz: int) -> Iterator[tuple[bytes, str]]:
    """(id, path) of every loose object file, as git's loose iteration names them."""
    for i in range(256):
        sub = os.path.join(objects_dir, f"{i:02x}")
        try:
            names = os.listdir(sub)
        except OSError:
            continue
        for n in names:
            if len(n) == hexsz - 2 and _HEX.fullmatch(n):
                yield bytes([i]) + bytes.fromhex(n), os.path.join(sub, n)


def cruft_packs(objects_dir: str) -> tuple[int, int]:
    pack_dir = os.path.join(objects_dir, "pack")
    n = b = 0
    try:
        names = os.listdir(pack_dir)
    except OSError:
        return 0, 0
    present = set(names)
    for name in names:
        if name.endswith(".mtimes"):
            n += 1
            base = name[: -len(".mtimes")]
            for ext in (".pack", ".idx", ".mtimes", ".rev"):
                if base + ext in present:
                    b += file_size(os.path.join(pack_dir, base + ext))
    return n, b


def temporary_files(objects_dir: str) -> tuple[int, int]:
    """Files a writer left half-done (the store's rule, ``is_git_temporary``):
    tmp_pack_*, tmp_idx_*, .tmp-*, … in objects/pack, tmp_obj_* in the
    loose subdirectories and the object directory itself."""
    n = b = 0
    for d in [
        os.path.join(objects_dir, "pack"),
        objects_dir,
        *(os.path.join(objects_dir, f"{i:02x}") for i in range(256)),
    ]:
        for name in _listdir(d):
            if is_git_temporary(name):
                n += 1
                b += file_size(os.path.join(d, name))
    return n, b


PACK_EXTS = (".idx", ".rev", ".pack", ".bitmap", ".keep", ".promisor", ".mtimes")


def count_garbage(objects_dir: str, fmt: ObjectFormat) -> tuple[int, int]:
    """(files, bytes) that ``git count-objects -v`` reports as garbage: in
    objects/pack, a file of no pack extension or a pack's companion without
    both its .pack and .idx; in the loose subdirectories, any file not named
    by an object id, and an id-named entry that is not a regular file."""
    n = b = 0
    pack_dir = os.path.join(objects_dir, "pack")
    groups: dict[str, list[str]] = {}
    for name in _listdir(pack_dir):
        if name == "multi-pack-index" or (name.startswith("multi-pack-index") and name.endswith((".bitmap", ".rev"))):
            continue
        if name.endswith(PACK_EXTS):
            groups.setdefault(name[: name.rindex(".")], []).append(name)
        else:
            n += 1
            b += file_size(os.path.join(pack_dir, name))
    for base, names in groups.items():
        if base + ".pack" in names and base + ".idx" in names:
            continue
        for name in names:
            n += 1
            b += file_size(os.path.join(pack_dir, name))
    # the loose subdirectories: git count-objects' own census (core/store/loose.py), one rule
    for path in count_loose_files(objects_dir, fmt).garbage:
        n += 1
        b += file_size(path)
    return n, b


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def file_size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0
