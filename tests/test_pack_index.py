"""Pack indexes read and searched exactly as git show-index reports them."""

from __future__ import annotations

import hashlib
import struct

import pytest

from packscope.core.errors import BadPackIndexError
from packscope.core.oid import SHA1, SHA256, parse_prefix
from packscope.core.store.pack_index import PackIndex
from packscope.core.store.search import ALGORITHMS
from tests import repos
from tests.delta_paths import NOT_BUILT

REPOS = ["packed_repo", "idxv1_repo", "idx64_repo", "many_packs_repo", "sha256_repo"]


def indexes(repo):
    return sorted((repo / "objects" / "pack").glob("pack-*.idx"))


def fmt_of(repo):
    return SHA256 if "sha256" in repo.name else SHA1


@pytest.mark.parametrize("fixture", REPOS)
def test_every_object_is_found_at_the_offset_git_show_index_gives(fixture, request):
    repo = request.getfixturevalue(fixture)
    fmt = fmt_of(repo)
    for idx_path in indexes(repo):
        expected = repos.show_index(idx_path, fmt.name)
        idx = PackIndex(idx_path, fmt).open()
        assert idx.num_objects == len(expected)
        for hexid, offset in expected.items():
            oid = bytes.fromhex(hexid)
            for algorithm in ALGORITHMS:
                assert idx.offset_of(oid, algorithm) == offset, (hexid, algorithm)
                path = idx.find_traced(oid, algorithm)
                assert path.found is not None and idx.offset_at(path.found) == offset
                assert path.probes[-1].cmp == 0


def test_idx_versions_and_large_offsets_are_recognised(packed_repo, idxv1_repo, idx64_repo):
    assert PackIndex(indexes(packed_repo)[0], SHA1).open().version == 2
    assert PackIndex(indexes(idxv1_repo)[0], SHA1).open().version == 1
    idx = PackIndex(indexes(idx64_repo)[0], SHA1).open()
    assert idx._nlarge > 0  # offsets above 64 bytes moved to the 8-byte table
    assert max(idx.offset_at(i) for i in range(idx.num_objects)) > 64


@pytest.mark.parametrize("fixture", ["packed_repo", "sha256_repo", "idxv1_repo"])
def test_absent_ids_are_absent_for_every_algorithm(fixture, request):
    repo = request.getfixturevalue(fixture)
    fmt = fmt_of(repo)
    idx = PackIndex(indexes(repo)[0], fmt).open()
    present = set(idx.names())
    for n in range(300):
        oid = hashlib.new(fmt.hashname, b"absent %d" % n).digest()
        assert oid not in present
        for algorithm in ALGORITHMS:
            assert idx.find(oid, algorithm) == -1
            path = idx.find_traced(oid, algorithm)
            assert path.found is None and all(p.cmp != 0 for p in path.probes)
    assert idx.find(fmt.null) == -1 and idx.find(b"\xff" * fmt.rawsz) == -1


def test_search_path_stays_inside_the_fanout_bucket(packed_repo):
    idx = PackIndex(indexes(packed_repo)[0], SHA1).open()
    for oid in list(idx.names())[::7]:
        lo, hi = idx.bucket(oid[0])
        for algorithm in ALGORITHMS:
            path = idx.find_traced(oid, algorithm)
            assert path.bucket == (lo, hi)
            assert all(lo <= p.lo <= p.mi < p.hi <= hi for p in path.probes)
            assert path.pages and all(isinstance(pg, int) for pg in path.pages)


def test_prefix_search_returns_every_match(packed_repo):
    idx = PackIndex(indexes(packed_repo)[0], SHA1).open()
    names = [n.hex() for n in idx.names()]
    for hexid in names[::5]:
        for length in (4, 5, 7, 40):
            prefix = parse_prefix(hexid[:length], SHA1)
            want = [i for i, n in enumerate(names) if n.startswith(hexid[:length])]
            for algorithm in ALGORITHMS:
                assert idx.find_prefix(prefix, algorithm) == want


def test_checksums_are_read_and_verified(packed_repo):
    path = indexes(packed_repo)[0]
    idx = PackIndex(path, SHA1).open()
    data = path.read_bytes()
    assert idx.idx_checksum == hashlib.sha1(data[:-20]).digest()
    assert idx.pack_checksum == path.with_suffix(".pack").read_bytes()[-20:]
    idx.verify_checksum()


def test_crc32s_match_git_verify_pack(packed_repo):
    import zlib

    path = indexes(packed_repo)[0]
    idx = PackIndex(path, SHA1).open()
    pack = path.with_suffix(".pack").read_bytes()
    offsets = [*sorted(idx.offset_at(i) for i in range(idx.num_objects)), len(pack) - 20]
    nxt = {offsets[k]: offsets[k + 1] for k in range(len(offsets) - 1)}
    for i in range(idx.num_objects):
        off = idx.offset_at(i)
        assert idx.crc_at(i) == zlib.crc32(pack[off : nxt[off]])


# --- damaged index files -----------------------------------------------------------


@pytest.fixture
def damaged(packed_repo, tmp_path):
    src = indexes(packed_repo)[0]

    def make(mutate):
        data = bytearray(src.read_bytes())
        data = mutate(data)
        p = tmp_path / "pack-damaged.idx"
        p.write_bytes(bytes(data))
        return p

    return make


@pytest.mark.parametrize(
    "mutate, kind",
    [
        (lambda d: b"", "idx-truncated"),
        (lambda d: d[:500], "idx-truncated"),
        (lambda d: d[:-7], "idx-truncated"),
        (lambda d: d + b"\0" * 3, "idx-size"),
        (lambda d: d[:4] + struct.pack(">I", 3) + d[8:], "idx-version"),
        (lambda d: d[: 8 + 4 * 100] + struct.pack(">I", 0xFFFF) + d[8 + 4 * 101 :], "idx-fanout"),
    ],
    ids=["empty", "short", "trailer-cut", "extra-bytes", "version", "fanout"],
)
def test_damaged_indexes_are_typed_errors_naming_the_file(damaged, mutate, kind):
    p = damaged(mutate)
    with pytest.raises(BadPackIndexError) as e:
        PackIndex(p, SHA1).open()
    assert e.value.kind == kind
    assert e.value.path == str(p)
    assert e.value.remedy


def test_flipped_checksum_byte_is_found_on_verification(damaged):
    def flip(d):
        d[-1] ^= 0xFF
        return d

    idx = PackIndex(damaged(flip), SHA1).open()
    with pytest.raises(BadPackIndexError) as e:
        idx.verify_checksum()
    assert e.value.kind == "idx-checksum"


def test_index_is_opened_lazily_and_can_be_closed(packed_repo):
    idx = PackIndex(indexes(packed_repo)[0], SHA1)
    assert not idx.is_open
    some = next(iter(PackIndex(indexes(packed_repo)[0], SHA1).open().names()))
    assert idx.find(some) >= 0 and idx.is_open
    idx.close()
    assert not idx.is_open and idx.find(some) >= 0


@pytest.mark.parametrize("fixture", ["packed_repo", "idxv1_repo", "idx64_repo", "sha256_repo"])
def test_bulk_offsets_equal_one_by_one_offsets(fixture, request):
    repo = request.getfixturevalue(fixture)
    idx = PackIndex(indexes(repo)[0], fmt_of(repo)).open()
    assert list(idx.offsets()) == [idx.offset_at(i) for i in range(idx.num_objects)]


@NOT_BUILT
@pytest.mark.parametrize("fixture", ["packed_repo", "sha256_repo", "idxv1_repo"])
def test_prefix_search_compiled_and_pure_find_the_same_run(fixture, request, door):
    # find_prefix's first position comes from the compiled search when it
    # is built (idx_find answers where an absent id would go), from the
    # Python binary search otherwise: the same runs, present or not
    repo = request.getfixturevalue(fixture)
    fmt = fmt_of(repo)
    hexes = [n.hex() for n in PackIndex(indexes(repo)[0], fmt).open().names()]
    prefixes = [h[:k] for h in hexes[::3] for k in (4, 7, 9)]
    prefixes += [h[:6] + ("0" if h[6] != "0" else "f") for h in hexes[::3]]  # mostly absent
    prefixes += ["0000", "ffff", "00000", "fffff"]
    want = [[i for i, h in enumerate(hexes) if h.startswith(p)] for p in prefixes]
    assert any(w == [] for w in want) and any(w for w in want)
    calls = []

    def counted(*args):
        calls.append(args)
        return door.compiled.idx_find(*args)

    for path in ("compiled", "pure"):
        with door.path(path):
            if path == "compiled":
                door.stub("idx_find", counted)
            idx = PackIndex(indexes(repo)[0], fmt).open()
            assert [idx.find_prefix(parse_prefix(p, fmt)) for p in prefixes] == want, path
    assert len(calls) >= len(prefixes)
