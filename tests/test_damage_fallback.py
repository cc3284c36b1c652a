"""A damaged pack entry with a good copy elsewhere: reads go on, as in git.

git marks a damaged packed object bad and reads another copy (another pack,
or a loose file) — for the object itself and for a damaged delta base in the
middle of its chain.  packscope does the same and notes the damage in the
store's problems; fsck still reports the damaged entry.
"""

from __future__ import annotations

import os
import shutil
import zlib
from pathlib import Path

import pytest

from packscope.core.errors import PackscopeError
from packscope.core.oid import SHA1
from packscope.core.store.odb import ObjectStore
from tests import repos
from tests.cli import packscope
from tests.repos import git, git_text


def keep_only(repo: Path, pack: Path) -> None:
    """Delete every pack of ``repo`` but ``pack``: no other copy is left."""
    for other in repos.pack_files(repo):
        if other != pack:
            for suffix in (".pack", ".idx"):
                other.with_suffix(suffix).unlink()


def verify_pack_rows(idx: Path) -> list[list[str]]:
    """git verify-pack -v rows: id, type, size, size-in-pack, offset[, depth, base]."""
    out = git_text("verify-pack", "-v", idx)
    return [line.split() for line in out.splitlines() if len(line.split()) >= 5 and len(line.split()[0]) == 40]


def damage_entry_data(pack: Path, offset: int, in_pack: int) -> None:
    """Overwrite bytes in the middle of an entry's zlib data (its header stays)."""
    data = bytearray(pack.read_bytes())
    start = offset + max(3, in_pack // 2)
    for k in range(start, min(start + 4, offset + in_pack - 1)):
        data[k] ^= 0x5A
    os.chmod(pack, 0o644)
    pack.write_bytes(bytes(data))


@pytest.fixture
def two_copies(tmp_path, packed_repo):
    """Every object in two packs: `damaged` (searched first: newest) and a
    second pack written with different delta choices."""
    repo = tmp_path / "two.git"
    shutil.copytree(packed_repo, repo)
    git("repack", "-a", "-d", "-q", cwd=repo)
    first = repos.pack_files(repo)[0]
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo)
    git("pack-objects", "-q", "--depth=3", "--window=4", repo / "objects" / "pack" / "pack", cwd=repo, input=ids)
    later = max(p.stat().st_mtime for p in repos.pack_files(repo)) + 100
    for suffix in (".pack", ".idx"):
        os.utime(first.with_suffix(suffix), (later, later))  # git and packscope search it first
    repos.age_directories(repo)
    return repo, first


def test_a_damaged_delta_base_is_read_from_the_other_pack_as_git_does(two_copies):
    repo, damaged = two_copies
    rows = verify_pack_rows(damaged.with_suffix(".idx"))
    bases = {r[6] for r in rows if len(r) >= 7}
    # A whole (non-delta) blob that other entries use as their delta base.
    victim = next(r for r in rows if r[0] in bases and r[1] == "blob" and len(r) == 5 and int(r[3]) > 40)
    damage_entry_data(damaged, int(victim[4]), int(victim[3]))
    dependents = [r[0] for r in rows if len(r) >= 7 and r[6] == victim[0]]
    assert dependents, "the victim is some delta's base"
    stdin = "\n".join([victim[0], *dependents]) + "\n"
    expected = git("cat-file", "--batch", cwd=repo, input=stdin)
    got = packscope("-C", repo, "cat-file", "--batch", input=stdin)
    assert got.stdout == expected
    assert b"missing" not in got.stdout
    # In-process: the damage is noted, not hidden.
    store = ObjectStore(str(repo / "objects"), SHA1)
    for oid in dependents:
        store.read(bytes.fromhex(oid))
    assert any(p.offset == int(victim[4]) for p in store.problems)


def test_with_no_other_copy_the_damage_is_the_answer(two_copies):
    repo, damaged = two_copies
    keep_only(repo, damaged)
    rows = verify_pack_rows(damaged.with_suffix(".idx"))
    bases = {r[6] for r in rows if len(r) >= 7}
    victim = next(r for r in rows if r[0] in bases and r[1] == "blob" and len(r) == 5 and int(r[3]) > 40)
    damage_entry_data(damaged, int(victim[4]), int(victim[3]))
    dependent = next(r[0] for r in rows if len(r) >= 7 and r[6] == victim[0])
    store = ObjectStore(str(repo / "objects"), SHA1)
    with pytest.raises(PackscopeError) as e:
        store.read(bytes.fromhex(dependent))
    assert e.value.offset == int(victim[4]) and e.value.path.endswith(damaged.name)
    # Other objects are unaffected.
    healthy = next(r[0] for r in rows if r[0] != victim[0] and len(r) == 5 and r[0] not in dependents_of(rows, victim))
    assert store.read(bytes.fromhex(healthy))


def dependents_of(rows, victim) -> set[str]:
    """Every entry whose chain runs through ``victim``."""
    base_of = {r[0]: r[6] for r in rows if len(r) >= 7}
    out = set()
    for oid in base_of:
        b = base_of.get(oid)
        while b is not None:
            if b == victim[0]:
                out.add(oid)
                break
            b = base_of.get(b)
    return out


def test_a_damaged_object_itself_is_read_from_a_loose_copy(two_copies):
    repo, damaged = two_copies
    keep_only(repo, damaged)
    rows = verify_pack_rows(damaged.with_suffix(".idx"))
    victim = next(r for r in rows if r[1] == "blob" and int(r[3]) > 40)
    content = git("cat-file", "blob", victim[0], cwd=repo)
    damage_entry_data(damaged, int(victim[4]), int(victim[3]))
    # Written by hand: git hash-object -w would only freshen the packed copy.
    loose = repo / "objects" / victim[0][:2] / victim[0][2:]
    loose.parent.mkdir(exist_ok=True)
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))
    got = packscope("-C", repo, "cat-file", "--batch", input=victim[0] + "\n").stdout
    assert got == git("cat-file", "--batch", cwd=repo, input=victim[0] + "\n")
    assert got.endswith(content + b"\n")
