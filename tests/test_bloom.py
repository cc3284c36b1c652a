"""Changed-path Bloom filters: murmur3, filter construction, and agreement
with the filters git 2.39 writes into commit-graph files."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.history.bloom import (
    SEED1,
    SEED2,
    BloomFilter,
    BloomSettings,
    murmur3_32,
    path_hashes,
    with_leading_dirs,
)
from packscope.core.history.commit_graph import CommitGraph
from packscope.core.oid import SHA1, SHA256
from tests import repos

V1 = BloomSettings(1, 7, 10)
V2 = BloomSettings(2, 7, 10)
MAX_CHANGED_PATHS = 512  # gitformat-commit-graph: more changes give the all-ones filter


def build_filter(changed_paths, settings: BloomSettings, max_changed: int = MAX_CHANGED_PATHS) -> bytes:
    """The filter bytes git writes for a commit whose diff lists
    ``changed_paths``, built from packscope's path hashes."""
    changed_paths = list(changed_paths)
    if len(changed_paths) > max_changed:
        return b"\xff"
    keys = with_leading_dirs(changed_paths)
    nbytes = (len(keys) * settings.bits_per_entry + 7) // 8
    if nbytes == 0:
        return b"\x00"
    data = bytearray(nbytes)
    nbits = nbytes * 8
    for key in keys:
        for h in path_hashes(key, settings):
            bit = h % nbits
            data[bit >> 3] |= 1 << (bit & 7)
    return bytes(data)


def maybe_contains(f: BloomFilter, path: bytes) -> bool:
    """Whether ``path`` may have changed, its leading directories checked
    too, as the walks ask a filter."""
    return all(f.contains_hashes(path_hashes(key, f.settings)) for key in with_leading_dirs([path]))


# --- an independent murmur3 reference ----------------------------------------------
#
# Written from the algorithm's description rather than from packscope.core.history.bloom: blocks
# are read with struct, bytes are converted to C chars explicitly, and the tail
# is folded with an int.from_bytes-style loop.


def _ref_murmur3(data: bytes, seed: int, signed: bool) -> int:
    mask = 0xFFFFFFFF

    def char(b: int) -> int:  # what a C char holds, as uint32
        return (b - 256) & mask if (signed and b >= 128) else b

    def mix(k: int) -> int:
        k = (k * 0xCC9E2D51) & mask
        k = ((k << 15) | (k >> 17)) & mask
        return (k * 0x1B873593) & mask

    h = seed
    whole = len(data) - len(data) % 4
    for start in range(0, whole, 4):
        if signed:
            k = 0
            for shift, b in zip((0, 8, 16, 24), data[start : start + 4], strict=True):
                k |= (char(b) << shift) & mask
        else:
            (k,) = struct.unpack_from("<I", data, start)
        h ^= mix(k)
        h = ((h << 13) | (h >> 19)) & mask
        h = (h * 5 + 0xE6546B64) & mask
    rest = data[whole:]
    if rest:
        k = 0
        for shift, b in reversed(list(zip((0, 8, 16)[: len(rest)], rest, strict=True))):
            k ^= (char(b) << shift) & mask
        h ^= mix(k)
    h ^= len(data)
    for shift, mul in ((16, 0x85EBCA6B), (13, 0xC2B2AE35)):
        h ^= h >> shift
        h = (h * mul) & mask
    return h ^ (h >> 16)


# Published MurmurHash3_x86_32 test vectors (unsigned bytes).
KNOWN = [
    (b"", 0, 0),
    (b"", 1, 0x514E28B7),
    (b"", 0xFFFFFFFF, 0x81F16F39),
    (b"\0", 0, 0x514E28B7),
    (b"\0\0", 0, 0x30F4C306),
    (b"\0\0\0", 0, 0x85F0B427),
    (b"\0\0\0\0", 0, 0x2362F9DE),
    (b"!", 0, 0x72661CF4),
    (b"!C", 0, 0xA0F7B07A),
    (b"!Ce", 0, 0x7E4A8634),
    (b"!Ce\x87", 0, 0xF55B516B),
    (b"!Ce\x87", 0x5082EDEE, 0x2362F9DE),
    (b"\xff\xff\xff\xff", 0, 0x76293B50),
    (b"aaaa", 0x9747B28C, 0x5A97808A),
    (b"abc", 0, 0xB3DD93FA),
    (b"Hello world!", 0, 0x627B0C2C),
    (b"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723),
]


@pytest.mark.parametrize("data,seed,expected", KNOWN)
def test_murmur3_matches_published_vectors(data, seed, expected):
    assert murmur3_32(data, seed) == expected
    assert _ref_murmur3(data, seed, signed=False) == expected


@given(st.binary(max_size=40), st.integers(0, 0xFFFFFFFF))
@settings(max_examples=300, deadline=None)
def test_murmur3_agrees_with_the_reference_for_both_char_signednesses(data, seed):
    assert murmur3_32(data, seed) == _ref_murmur3(data, seed, signed=False)
    assert murmur3_32(data, seed, signed_chars=True) == _ref_murmur3(data, seed, signed=True)


@given(st.binary(max_size=40).filter(lambda b: all(x < 0x80 for x in b)), st.integers(0, 0xFFFFFFFF))
@settings(max_examples=100, deadline=None)
def test_signed_and_unsigned_hashing_agree_on_ascii(data, seed):
    assert murmur3_32(data, seed, signed_chars=True) == murmur3_32(data, seed)


@pytest.mark.parametrize("path", ["é".encode(), "dir/ü".encode(), "café".encode(), "ÿÿÿÿ".encode(), b"\x80abc"])
def test_signed_hashing_differs_on_high_bytes(path):
    # Blocks (4 bytes) and tails (1-3 bytes) holding bytes >= 0x80 both change.
    assert murmur3_32(path, SEED1, signed_chars=True) != murmur3_32(path, SEED1)


def test_path_hashes_are_double_hashing_modulo_2_32():
    p = b"dir/file.txt"
    h1, h2 = murmur3_32(p, SEED1), murmur3_32(p, SEED2)
    assert path_hashes(p, V2) == tuple((h1 + i * h2) % 2**32 for i in range(7))
    assert path_hashes(p, V1) == path_hashes(p, V2)  # ASCII: versions agree
    assert len(path_hashes(p, BloomSettings(1, 3, 10))) == 3


# --- filters -----------------------------------------------------------------------


def test_leading_directories_are_added_once():
    assert with_leading_dirs([b"a/b/c", b"a/b/d", b"e"]) == [b"a/b/c", b"a/b", b"a", b"a/b/d", b"e"]
    assert with_leading_dirs([b"x/"]) == [b"x"]


@given(
    st.lists(st.text(alphabet="ab/é日", min_size=1, max_size=12), min_size=1, max_size=30),
    st.sampled_from([V1, V2, BloomSettings(2, 3, 6)]),
)
@settings(max_examples=150, deadline=None)
def test_every_added_path_and_directory_is_maybe_contained(paths, bloom_settings):
    raw = [p.strip("/").encode() for p in paths if p.strip("/") and "//" not in p]
    if not raw:
        return
    f = BloomFilter(build_filter(raw, bloom_settings), bloom_settings)
    for key in with_leading_dirs(raw):
        assert maybe_contains(f, key)


def test_special_filters():
    nothing = BloomFilter(b"\x00", V1)
    assert nothing.state == "no-changes"
    assert not maybe_contains(nothing, b"any/path")
    too_many = BloomFilter(b"\xff", V1)
    assert too_many.state == "too-many-changes"
    assert maybe_contains(too_many, b"any/path")
    unknown = BloomFilter(b"", V1)
    assert unknown.state == "not-computed"
    assert maybe_contains(unknown, b"any/path")


# --- against git ---------------------------------------------------------------------


def _graph_and_changes(repo, fmt):
    g = CommitGraph.open(str(repo / "objects"), fmt)
    records = list(g)
    changes = repos.first_parent_changes(
        repo, [(r.oid.hex(), r.parents[0].hex() if r.parents else None) for r in records]
    )
    return g, records, changes


@pytest.mark.parametrize("fixture,fmt", [("graph_repo", SHA1), ("graph_sha256_repo", SHA256)])
def test_git_filters_are_exactly_what_the_changed_paths_build(request, fixture, fmt):
    g, records, changes = _graph_and_changes(request.getfixturevalue(fixture), fmt)
    states = set()
    for r in records:
        f = g.bloom_filter(r.position)
        assert f is not None, "git --changed-paths computes every filter"
        paths = changes[r.oid.hex()]
        states.add(f.state)
        if len(paths) > 512:
            assert f.data == b"\xff"
            continue
        assert f.data == build_filter(paths, f.settings), r.oid.hex()
        for key in with_leading_dirs(paths):
            assert maybe_contains(f, key), (r.oid.hex(), key)
    assert states == {"normal", "no-changes", "too-many-changes"}


def test_git_2_39_writes_version_1_filters_hashing_signed_chars(graph_repo):
    g, records, changes = _graph_and_changes(graph_repo, SHA1)
    high = [r for r in records if any(b >= 0x80 for p in changes[r.oid.hex()] for b in p)]
    assert len(high) == 1
    f = g.bloom_filter(high[0].position)
    assert f.settings == V1
    paths = changes[high[0].oid.hex()]
    assert sorted(paths) == sorted(p.encode() for p in repos.HIGH_BIT_PATHS)
    assert f.data == build_filter(paths, V1)
    # Textbook (unsigned, version 2) hashing would not reproduce git's bytes.
    assert f.data != build_filter(paths, V2)


def test_unchanged_paths_are_mostly_ruled_out(graph_repo):
    g, records, changes = _graph_and_changes(graph_repo, SHA1)
    probes = [b"nowhere/%d" % i for i in range(40)] + [b"dir1/file%d.txt" % i for i in range(40)]
    asked = maybe = 0
    for r in records:
        f = g.bloom_filter(r.position)
        if f.state != "normal":
            continue
        changed = set(with_leading_dirs(changes[r.oid.hex()]))
        for p in probes:
            if p not in changed:
                asked += 1
                maybe += maybe_contains(f, p)
    assert asked > 1000
    assert maybe / asked < 0.1  # 7 hashes, 10 bits per entry: ~1% in theory


def test_split_layers_without_or_with_uncomputed_filters_give_none(split_graph_repo):
    g = CommitGraph.open(str(split_graph_repo / "objects"), SHA1)
    base, middle, top = g.layers
    assert base.has_bloom and not middle.has_bloom and top.has_bloom
    in_base = [g.bloom_filter(p) for p in range(base.num_commits)]
    assert all(f is not None for f in in_base)
    assert all(g.bloom_filter(middle.commit_base + i) is None for i in range(middle.num_commits))
    in_top = [g.bloom_filter(top.commit_base + i) for i in range(top.num_commits)]
    assert sum(f is not None for f in in_top) == 3  # --max-new-filters=3
    records = [g.commit_at(top.commit_base + i) for i in range(top.num_commits)]
    changes = repos.first_parent_changes(split_graph_repo, [(r.oid.hex(), r.parents[0].hex()) for r in records])
    for r, f in zip(records, in_top, strict=True):
        if f is not None:
            assert f.data == build_filter(changes[r.oid.hex()], f.settings)
