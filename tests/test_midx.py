"""The multi-pack-index: git's files (single, from repack, an incremental
chain), hand-made files for the large-offset rules, and damaged copies."""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import struct

import pytest

from packscope.core.errors import BadMultiPackIndexError
from packscope.core.oid import SHA1, SHA256, parse_prefix
from packscope.core.store.midx import MultiPackIndex
from packscope.core.store.search import ALGORITHMS
from tests import repos


def _pack_dir(repo):
    return repo / "objects" / "pack"


def _discover(repo, fmt=SHA1) -> MultiPackIndex:
    m = MultiPackIndex.discover(str(_pack_dir(repo)), fmt)
    assert m is not None
    return m


def _git_locations(repo, names, object_format="sha1") -> dict[str, tuple[str, int]]:
    """{id: (idx name, offset)} from git show-index over the named packs."""
    out = {}
    for name in names:
        for oid, off in repos.show_index(_pack_dir(repo) / name, object_format).items():
            assert oid not in out, "the test packs are disjoint"
            out[oid] = (name, off)
    return out


def _assert_agrees_with_show_index(m: MultiPackIndex, repo, object_format="sha1"):
    expected = _git_locations(repo, m.pack_names, object_format)
    assert m.num_objects == len(expected)
    seen = {}
    for i in range(m.num_objects):
        oid = m.name_at(i)
        pack, off = m.entry_at(i)
        seen[oid.hex()] = (m.pack_names[pack], off)
        for algorithm in ALGORITHMS:
            assert m.find(oid, algorithm) == i
        assert m.offset_of(oid) == (pack, off)
    assert seen == expected


def _absent_ids(m: MultiPackIndex, n=150, seed=3):
    present = set(m.names())
    rnd = random.Random(seed)
    out = [bytes([b]) + rnd.randbytes(m.fmt.rawsz - 1) for b in (0, 0x7F, 0xFF)]
    out += [rnd.randbytes(m.fmt.rawsz) for _ in range(n)]
    # neighbours of present ids: the last byte nudged either way
    for name in list(present)[:50]:
        for delta in (-1, 1):
            last = (name[-1] + delta) % 256
            out.append(name[:-1] + bytes([last]))
    return [x for x in out if x not in present]


# --- git's files -----------------------------------------------------------------------


def test_single_midx_lists_every_pack_in_name_order(midx_repo):
    m = _discover(midx_repo)
    assert not m.is_chain and len(m.layers) == 1
    on_disk = sorted(p.name for p in _pack_dir(midx_repo).glob("pack-*.idx"))
    assert m.pack_names == on_disk
    assert m.num_packs == 8


def test_every_object_maps_to_the_pack_offset_git_show_index_reports(midx_repo):
    _assert_agrees_with_show_index(_discover(midx_repo), midx_repo)


def test_fanout_and_buckets_describe_the_sorted_names(midx_repo):
    m = _discover(midx_repo)
    assert len(m.fanout) == 256 and m.fanout[255] == m.num_objects
    assert list(m.fanout) == sorted(m.fanout)
    names = list(m.names())
    assert names == sorted(names) and len(set(names)) == len(names)
    for b in range(256):
        lo, hi = m.bucket(b)
        assert all(names[i][0] == b for i in range(lo, hi))
        assert m.layer_buckets(b) == [(lo, hi)]
    oidl = m.layers[0].chunks.get(b"OIDL").offset
    assert [m.page_of(i) for i in range(m.num_objects)] == [(oidl + 20 * i) // 4096 for i in range(m.num_objects)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_absent_ids_are_absent_for_every_algorithm(midx_repo, algorithm):
    m = _discover(midx_repo)
    name_at = m.name_at
    for oid in _absent_ids(m):
        assert m.find(oid, algorithm) == -1
        path = m.find_traced(oid, algorithm)
        assert path.found is None and path.algorithm == algorithm
        lo, hi = path.bucket
        assert lo <= path.insert_at <= hi
        assert path.insert_at == lo or name_at(path.insert_at - 1) < oid
        assert path.insert_at == hi or oid < name_at(path.insert_at)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_traced_search_finds_what_the_untraced_one_finds(midx_repo, algorithm):
    m = _discover(midx_repo)
    for i in range(m.num_objects):
        oid = m.name_at(i)
        path = m.find_traced(oid, algorithm)
        assert path.found == i == path.insert_at
        assert path.bucket == m.bucket(oid[0])
        assert path.probes and path.probes[-1].mi == i and path.probes[-1].cmp == 0
        assert set(path.pages) <= {m.page_of(j) for j in range(*path.bucket)} | {
            m.page_of(min(path.bucket[1], m.num_objects - 1))
        }


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_find_prefix_returns_every_match_in_name_order(midx_repo, algorithm):
    m = _discover(midx_repo)
    names = [n.hex() for n in m.names()]
    rnd = random.Random(5)
    for text in [n[:k] for n in rnd.sample(names, 20) for k in (4, 6)] + ["0000", "ffff"]:
        expected = [i for i, n in enumerate(names) if n.startswith(text)]
        assert m.find_prefix(parse_prefix(text, SHA1), algorithm) == expected
    first = names[0][:4]
    assert m.find_prefix(parse_prefix(first, SHA1), algorithm, limit=1) == [0]


def test_repack_write_midx_is_read_with_its_reverse_index_chunk_skipped(repack_midx_repo):
    assert not list((repack_midx_repo / "objects").glob("??/*")), "the repack packed every loose object"
    m = _discover(repack_midx_repo)
    assert b"RIDX" in m.layers[0].chunks
    assert m.num_packs == 6
    _assert_agrees_with_show_index(m, repack_midx_repo)
    everything = {oid for oid, _, _ in repos.all_objects(repack_midx_repo)}
    assert {n.hex() for n in m.names()} == everything
    m.verify_checksum()


def test_sha256_midx(tmp_path):
    repo = repos.build_midx_repo(tmp_path, packs=3, name="midx256", object_format="sha256")
    m = _discover(repo, SHA256)
    _assert_agrees_with_show_index(m, repo, "sha256")
    m.verify_checksum()
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(_pack_dir(repo) / "multi-pack-index"), SHA1).open()
    assert ei.value.kind == "midx-hash-version" and ei.value.offset == 5


def test_checksum_verifies(midx_repo):
    _discover(midx_repo).verify_checksum()


def test_opening_is_lazy_and_discovery_finds_nothing_without_a_midx(tmp_path):
    m = MultiPackIndex(str(tmp_path / "multi-pack-index"), SHA1)
    assert not m.is_open
    with pytest.raises(BadMultiPackIndexError) as ei:
        _ = m.num_objects  # the first question opens it
    assert ei.value.kind == "midx-unreadable"
    assert MultiPackIndex.discover(str(tmp_path), SHA1) is None


# --- incremental chains ----------------------------------------------------------------


def test_chain_numbers_objects_and_packs_across_layers(midx_chain_repo):
    m = _discover(midx_chain_repo)
    assert m.is_chain and len(m.layers) == 2
    base, tip = m.layers
    assert (base.object_base, tip.object_base) == (0, base.num_objects)
    assert (base.pack_base, tip.pack_base) == (0, base.num_packs)
    assert m.pack_names == base.pack_names + tip.pack_names
    assert len(m.pack_names) == 7
    assert m.num_objects == base.num_objects + tip.num_objects
    assert m.fanout[255] == m.num_objects
    _assert_agrees_with_show_index(m, midx_chain_repo)
    m.verify_checksum()


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_chain_searches_report_global_positions(midx_chain_repo, algorithm):
    m = _discover(midx_chain_repo)
    base, tip = m.layers
    for i in range(m.num_objects):
        oid = m.name_at(i)
        path = m.find_traced(oid, algorithm)
        assert path.found == i
        layer = base if i < tip.object_base else tip
        lo, hi = layer.bucket(oid[0])
        assert path.bucket == (lo + layer.object_base, hi + layer.object_base)
    for oid in _absent_ids(m, n=50):
        assert m.find(oid, algorithm) == -1
        assert len(m.find_traced_layers(oid, algorithm)) == 2
    names = [n.hex() for n in m.names()]
    for text in ("0000", names[3][:5], names[-2][:4]):
        expected = sorted((n, i) for i, n in enumerate(names) if n.startswith(text))
        assert m.find_prefix(parse_prefix(text, SHA1), algorithm) == [i for _, i in expected]


def test_a_single_file_wins_over_a_chain(midx_chain_repo, tmp_path):
    pack_dir = tmp_path / "pack"
    shutil.copytree(_pack_dir(midx_chain_repo), pack_dir)
    layer = next((pack_dir / "multi-pack-index.d").glob("*.midx"))
    shutil.copy(layer, pack_dir / "multi-pack-index")
    m = MultiPackIndex.discover(str(pack_dir), SHA1)
    assert not m.is_chain and m.num_objects == m.layers[0].num_objects


def test_broken_chains_are_typed_errors(midx_chain_repo, tmp_path):
    pack_dir = tmp_path / "pack"
    shutil.copytree(_pack_dir(midx_chain_repo), pack_dir)
    chain_dir = pack_dir / "multi-pack-index.d"
    chain = chain_dir / "multi-pack-index-chain"
    lines = chain.read_text().split()

    chain.write_text(lines[0] + "\nnot-a-hash\n")
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(chain), SHA1).open()
    assert ei.value.kind == "midx-chain" and ei.value.offset == 41

    # a layer stored under another layer's name
    chain.write_text(lines[0] + "\n" + lines[1] + "\n")
    a, b = (chain_dir / f"multi-pack-index-{h}.midx" for h in lines)
    a_bytes = a.read_bytes()
    a.write_bytes(b.read_bytes())
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(chain_dir), SHA1).open()
    assert ei.value.kind == "midx-chain" and ei.value.path == str(a)

    a.write_bytes(a_bytes)
    b.unlink()
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(chain), SHA1).open()
    assert ei.value.path == str(b)


# --- hand-made files: the large-offset rules ----------------------------------------------


def _make_midx(entries, pack_names, large=None) -> bytes:
    """A SHA-1 multi-pack-index: ``entries`` are (oid, pack, stored offset word)."""
    entries = sorted(entries)
    pnam = b"".join(n.encode() + b"\0" for n in pack_names)
    pnam += b"\0" * (-len(pnam) % 4)
    fan = [0] * 256
    for oid, _, _ in entries:
        for b in range(oid[0], 256):
            fan[b] += 1
    chunks = [
        (b"PNAM", pnam),
        (b"OIDF", struct.pack(">256I", *fan)),
        (b"OIDL", b"".join(o for o, _, _ in entries)),
        (b"OOFF", b"".join(struct.pack(">II", p, w) for _, p, w in entries)),
    ]
    if large is not None:
        chunks.append((b"LOFF", b"".join(struct.pack(">Q", x) for x in large)))
    header = b"MIDX" + bytes([1, 1, len(chunks), 0]) + struct.pack(">I", len(pack_names))
    at = len(header) + 12 * (len(chunks) + 1)
    table = b""
    for cid, data in chunks:
        table += cid + struct.pack(">Q", at)
        at += len(data)
    table += b"\0\0\0\0" + struct.pack(">Q", at)
    body = header + table + b"".join(d for _, d in chunks)
    return body + hashlib.sha1(body).digest()


OIDS = [bytes([b]) * 20 for b in (0x10, 0x20, 0x30)]


def test_top_bit_indexes_the_large_offset_chunk_when_it_exists(tmp_path):
    path = tmp_path / "multi-pack-index"
    path.write_bytes(
        _make_midx(
            [(OIDS[0], 0, 12), (OIDS[1], 1, 0x80000001), (OIDS[2], 1, 0x80000000)],
            ["pack-a.idx", "pack-b.idx"],
            large=[2**32 + 7, 2**40],
        )
    )
    m = MultiPackIndex(str(path), SHA1)
    m.verify_checksum()
    assert [m.entry_at(i) for i in range(3)] == [(0, 12), (1, 2**40), (1, 2**32 + 7)]
    assert m.pack_names == ["pack-a.idx", "pack-b.idx"]


def test_without_a_large_offset_chunk_the_top_bit_is_part_of_the_offset(tmp_path):
    path = tmp_path / "multi-pack-index"
    path.write_bytes(_make_midx([(OIDS[0], 0, 0x80000010), (OIDS[1], 0, 0xFFFFFFF0)], ["pack-a.idx"]))
    m = MultiPackIndex(str(path), SHA1)
    assert [m.entry_at(i) for i in range(2)] == [(0, 0x80000010), (0, 0xFFFFFFF0)]


def test_bad_large_offset_index_and_pack_id_are_typed_errors(tmp_path):
    path = tmp_path / "multi-pack-index"
    path.write_bytes(_make_midx([(OIDS[0], 0, 0x80000005), (OIDS[1], 3, 1)], ["pack-a.idx"], large=[2**33]))
    m = MultiPackIndex(str(path), SHA1)
    with pytest.raises(BadMultiPackIndexError) as ei:
        m.entry_at(0)
    assert ei.value.kind == "midx-large-offset" and ei.value.offset is not None
    with pytest.raises(BadMultiPackIndexError) as ei:
        m.entry_at(1)
    assert ei.value.kind == "midx-pack-id"


def test_unsorted_pack_names_are_refused(tmp_path):
    path = tmp_path / "multi-pack-index"
    path.write_bytes(_make_midx([(OIDS[0], 0, 12)], ["pack-b.idx", "pack-a.idx"]))
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(path), SHA1).open()
    assert ei.value.kind == "midx-pack-names"


# --- damaged copies of git's file ------------------------------------------------------


@pytest.fixture
def midx_copy(midx_repo, tmp_path):
    dst = tmp_path / "multi-pack-index"
    shutil.copy(_pack_dir(midx_repo) / "multi-pack-index", dst)
    os.chmod(dst, 0o644)
    return dst


def _patch(path, offset, data):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _open_error(path, fmt=SHA1) -> BadMultiPackIndexError:
    with pytest.raises(BadMultiPackIndexError) as ei:
        MultiPackIndex(str(path), fmt).open()
    e = ei.value
    assert e.path == str(path) and e.remedy
    return e


def test_truncated_copies_are_typed_errors(midx_copy):
    size = midx_copy.stat().st_size
    original = midx_copy.read_bytes()
    for cut in (0, 3, 11, 30, size // 2, size - 1):
        midx_copy.write_bytes(original[:cut])
        e = _open_error(midx_copy)
        assert e.offset is not None
        assert "truncated" in e.kind or "chunk" in e.kind or e.kind == "midx-signature"


def test_a_flipped_fanout_byte_is_a_fanout_error(midx_copy, midx_repo):
    oidf = _discover(midx_repo).layers[0].chunks.get(b"OIDF").offset
    _patch(midx_copy, oidf + 4 * 0x30, b"\xff")
    e = _open_error(midx_copy)
    assert e.kind == "midx-fanout"
    assert oidf + 4 * 0x30 <= e.offset <= oidf + 4 * 0x31


@pytest.mark.parametrize(
    "offset,data,kind",
    [
        (0, b"MIDY", "midx-signature"),
        (4, b"\x07", "midx-version"),
        (5, b"\x02", "midx-hash-version"),
        (8, struct.pack(">I", 9), "midx-pack-names"),  # one pack more than PNAM lists
        (12, b"XNAM", "midx-missing-chunk"),  # PNAM renamed
    ],
)
def test_bad_header_fields_are_typed_errors(midx_copy, offset, data, kind):
    _patch(midx_copy, offset, data)
    e = _open_error(midx_copy)
    assert e.kind == kind and e.offset is not None


def test_object_count_disagreeing_with_chunk_sizes_is_refused(midx_copy, midx_repo):
    oidf = _discover(midx_repo).layers[0].chunks.get(b"OIDF").offset
    total = _discover(midx_repo).num_objects
    _patch(midx_copy, oidf + 4 * 255, struct.pack(">I", total + 3))
    e = _open_error(midx_copy)
    assert e.kind == "midx-chunk-size"


def test_a_damaged_name_fails_only_the_checksum(midx_copy, midx_repo):
    oidl = _discover(midx_repo).layers[0].chunks.get(b"OIDL").offset
    _patch(midx_copy, oidl + 5, b"\x00")
    m = MultiPackIndex(str(midx_copy), SHA1)
    m.open()
    with pytest.raises(BadMultiPackIndexError) as ei:
        m.verify_checksum()
    assert ei.value.kind == "midx-checksum"
