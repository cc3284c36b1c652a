"""fsck on a multi-pack-index damaged under a valid checksum: an object's
offset that disagrees with its pack's own index (midx-offset), ids out of
order (midx-order), and a named pack that is gone (midx-pack-missing) —
each reported where it is, and each also refused by `git multi-pack-index
verify` (the oracle)."""

from __future__ import annotations

import hashlib
import struct
import subprocess
from pathlib import Path

import pytest

from tests import repos
from tests.repos import git_fsck

HEADER = 12  # "MIDX", version, id version, chunk count, base count, pack count
RAWSZ = 20


def chunks(data: bytes) -> dict[bytes, int]:
    """Chunk id -> offset, from the table after the header (gitformat-chunk)."""
    count = data[6]
    table = {}
    for k in range(count):
        cid, offset = struct.unpack_from(">4sQ", data, HEADER + 12 * k)
        table[cid] = offset
    return table


def rewrite(midx: Path, data: bytearray) -> None:
    """Write data back with a fresh trailing checksum: only the damage
    made on purpose is left to find."""
    data[-RAWSZ:] = hashlib.sha1(bytes(data[:-RAWSZ])).digest()
    midx.chmod(0o644)
    midx.write_bytes(bytes(data))


def names(data: bytes) -> list[bytes]:
    at = chunks(data)[b"OIDL"]
    count = struct.unpack_from(">I", data, chunks(data)[b"OIDF"] + 4 * 255)[0]
    return [bytes(data[at + RAWSZ * k : at + RAWSZ * (k + 1)]) for k in range(count)]


@pytest.fixture
def midx_copy(midx_repo, tmp_path) -> tuple[Path, Path]:
    repo = repos.copy_repo(midx_repo, tmp_path / "midx.git")
    return repo, repo / "objects" / "pack" / "multi-pack-index"


def verify_fails(repo: Path) -> bool:
    p = subprocess.run(["git", "multi-pack-index", "verify"], cwd=repo, capture_output=True, env=repos.git_env())
    return p.returncode != 0


def test_an_offset_that_disagrees_with_the_packs_index_is_midx_offset(midx_copy, run_fsck):
    repo, midx = midx_copy
    data = bytearray(midx.read_bytes())
    position = len(names(data)) // 2
    entry = chunks(data)[b"OOFF"] + 8 * position
    pack_id, offset = struct.unpack_from(">II", data, entry)
    struct.pack_into(">II", data, entry, pack_id, offset + 1)
    rewrite(midx, data)
    assert verify_fails(repo)
    status, findings = run_fsck(repo)
    found = [f for f in findings if f.kind == "midx-offset"]
    assert [f.oid for f in found] == [names(data)[position].hex()]
    assert f"says {offset + 1}" in found[0].message and f"offset {offset} there" in found[0].message
    assert status & 32
    assert not any(f.kind == "midx-checksum" for f in findings)


def test_ids_out_of_order_are_midx_order_at_their_position(midx_copy, run_fsck):
    repo, midx = midx_copy
    data = bytearray(midx.read_bytes())
    ids = names(data)
    # two neighbours in one fanout bucket, so the fanout stays right
    k = next(k for k in range(len(ids) - 1) if ids[k][0] == ids[k + 1][0])
    oidl, ooff = chunks(data)[b"OIDL"], chunks(data)[b"OOFF"]
    data[oidl + RAWSZ * k : oidl + RAWSZ * (k + 2)] = ids[k + 1] + ids[k]
    data[ooff + 8 * k : ooff + 8 * (k + 2)] = (
        data[ooff + 8 * (k + 1) : ooff + 8 * (k + 2)] + data[ooff + 8 * k : ooff + 8 * (k + 1)]
    )
    rewrite(midx, data)
    assert verify_fails(repo)
    status, findings = run_fsck(repo)
    found = [f for f in findings if f.kind == "midx-order"]
    assert [(f.oid, f.message) for f in found] == [(ids[k].hex(), f"ids out of order at position {k + 1}")]
    assert status & 32


def test_a_named_pack_that_is_gone_is_midx_pack_missing(midx_copy, run_fsck):
    repo, midx = midx_copy
    idx = sorted((repo / "objects" / "pack").glob("pack-*.idx"))[0]
    idx.unlink()
    idx.with_suffix(".pack").unlink()
    assert verify_fails(repo)
    status, findings = run_fsck(repo)
    found = [f for f in findings if f.kind == "midx-pack-missing"]
    assert [f.message for f in found] == [f"multi-pack-index names pack {idx.name}, which is not there"]
    assert found[0].path == str(midx)
    assert status & 32


@pytest.mark.parametrize("damage", ["idx-fanout", "pack-cut", "pack-count"])
def test_a_pack_the_midx_lists_but_git_cannot_load_sets_bit_32_as_git(midx_copy, run_fsck, damage):
    """git's multi-pack-index verify loads the pack each listed object is
    in: an unreadable .idx, or a .pack that does not match it (cut short,
    another object count), fails it too: exit bits as git fsck's."""
    repo, midx = midx_copy
    idx = sorted((repo / "objects" / "pack").glob("pack-*.idx"))[0]
    pack = idx.with_suffix(".pack")
    target = idx if damage == "idx-fanout" else pack
    data = bytearray(target.read_bytes())
    if damage == "idx-fanout":
        data[8 + 4 * 200 + 2] ^= 0x40  # one fanout entry larger than the next
    elif damage == "pack-cut":
        data = data[: len(data) - 7]
    else:
        data[11] ^= 1  # the object count
    target.chmod(0o644)
    target.write_bytes(bytes(data))
    status, findings = run_fsck(repo)
    assert status == git_fsck(repo)[0] and status & 32
    (found,) = [f for f in findings if f.kind == "midx-pack-unusable"]
    assert found.pack == str(pack) and found.path == str(midx)
