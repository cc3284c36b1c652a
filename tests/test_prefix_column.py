"""The prefix column: the batch search agrees with the plain one and with git."""

from __future__ import annotations

import hashlib
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from packscope.core.oid import SHA1, SHA256
from packscope.core.store.pack_index import PackIndex
from packscope.core.store.prefix_column import build_prefix_column, prefix_column_search
from packscope.core.store.search import binary_search
from tests import repos


def test_the_column_holds_each_names_first_four_bytes_for_every_stride():
    names = sorted(hashlib.sha1(b"%d" % i).digest() for i in range(500))
    for stride, lead in ((20, 0), (24, 4), (32, 0)):
        # Names at `start`, one per `stride` bytes, padding between them.
        blob = b"".join(b"\xaa" * lead + n + b"\xbb" * (stride - 20 - lead) for n in names) + b"trailer!"
        column = build_prefix_column(blob, lead, len(names), stride)
        assert list(column) == [struct.unpack(">I", n[:4])[0] for n in names]
    assert len(build_prefix_column(b"", 0, 0, 20)) == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(min_size=6, max_size=6), min_size=0, max_size=60), st.binary(min_size=6, max_size=6))
def test_the_column_search_agrees_with_binary_search_even_when_prefixes_collide(raw, target):
    # Six-byte names from a tiny alphabet of prefixes: many share their first four bytes.
    names = sorted({b"\x01\x02\x03\x04" + r[4:] if r[0] & 1 else r for r in raw})
    column = build_prefix_column(b"".join(n + b"\0\0" for n in names), 0, len(names), 8)
    name_at = names.__getitem__
    for probe in [*names, target, b"\x01\x02\x03\x04" + target[4:]]:
        expected = binary_search(name_at, 0, len(names), len(names), probe)
        got = prefix_column_search(column, name_at, 0, len(names), probe)
        assert got == (expected if expected >= 0 else -1)


@pytest.mark.parametrize("fixture", ["packed_repo", "idxv1_repo", "sha256_repo", "idx64_repo"])
def test_a_busy_index_switches_to_the_column_and_still_answers_as_git_show_index(fixture, request):
    repo = request.getfixturevalue(fixture)
    fmt = SHA256 if "sha256" in repo.name else SHA1
    idx_path = sorted((repo / "objects" / "pack").glob("pack-*.idx"))[0]
    expected = repos.show_index(idx_path, fmt.name)
    idx = PackIndex(idx_path, fmt)
    idx.compiled_search = False  # the column is the pure path's batch search
    idx.prefix_column_after = 10
    ids = list(expected)
    random.Random(3).shuffle(ids)
    absent = [hashlib.new(fmt.hashname, b"absent %d" % i).digest() for i in range(200)]
    for hexid in ids:
        assert idx.offset_of(bytes.fromhex(hexid)) == expected[hexid]
    assert idx._prefix_column is not None, "the column is built after prefix_column_after lookups"
    assert all(idx.find(oid) == -1 for oid in absent)
    assert idx.find(fmt.null) == -1 and idx.find(b"\xff" * fmt.rawsz) == -1


def test_the_column_is_off_when_asked_and_for_other_algorithms(packed_repo):
    idx_path = sorted((packed_repo / "objects" / "pack").glob("pack-*.idx"))[0]
    idx = PackIndex(idx_path, SHA1)
    idx.compiled_search = False
    idx.prefix_column_after = None
    names = list(idx.open().names())
    for name in names * 3:
        idx.find(name)
    assert idx._prefix_column is None
    idx.prefix_column_after = 0
    for name in names:
        idx.find(name, "interpolation")
    assert idx._prefix_column is None  # only the binary search has a batch form
    idx.find(names[0])
    assert idx._prefix_column is not None
    idx.close()  # the column holds no view of the mapping: closing works
    assert idx.find(names[-1]) == len(names) - 1
