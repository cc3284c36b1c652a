"""Hard bounds on hostile input: a declared size is a limit, never a
promise; delta loops and over-deep chains, symbolic-ref and alternates
chains are cut off; counts are checked against file sizes before anything
is allocated.  Each case must fail fast, with a typed error, in bounded
memory."""

from __future__ import annotations

import itertools
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import pytest

from packscope.core.errors import (
    BadPackIndexError,
    BadRefError,
    CorruptObjectError,
    DeltaError,
    LimitExceededError,
    PackscopeError,
)
from packscope.core.oid import SHA1
from packscope.core.repo.refs import MAX_SYMREF_READS, RefStore
from packscope.core.repo.repository import Repository
from packscope.core.store.alternates import MAX_DEPTH, resolve_alternates
from packscope.core.store.delta import apply_delta
from packscope.core.store.loose import read_loose, read_loose_header
from packscope.core.store.odb import ObjectStore
from packscope.core.store.pack import Pack
from packscope.core.store.pack_index import PackIndex
from tests import repos
from tests.repos import git_text

A, B = bytes.fromhex("aa" * 20), bytes.fromhex("bb" * 20)
BIG = 10 << 20  # what a hostile file tries to make us allocate


def bounded(fn, *, seconds=1.0, peak=2 << 20):
    """Run ``fn`` expecting a PackscopeError; assert time and peak memory."""
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(PackscopeError) as info:
            fn()
    finally:
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    assert time.perf_counter() - t0 < seconds
    assert top < peak, f"peak {top} bytes"
    return info.value


@pytest.fixture
def bare(tmp_path):
    return repos.init_bare(tmp_path / "r.git")


def open_pack(pack: Path, **kw) -> Pack:
    return Pack(str(pack), fmt=SHA1, **kw)


# --- declared sizes ---------------------------------------------------------------------


def test_pack_entry_declaring_a_terabyte_is_refused_before_inflating(bare):
    pack, _ = repos.write_raw_pack(bare, [(A, 3, b"tiny", None)], declared_sizes={A: 1 << 40})
    p = open_pack(pack)
    e = bounded(lambda: p.read_at(12))
    assert isinstance(e, LimitExceededError) and e.offset == 12 and e.path == str(pack)


def test_pack_entry_inflating_beyond_its_declared_size_stops_at_the_declaration(bare):
    pack, _ = repos.write_raw_pack(bare, [(A, 3, bytes(BIG), None)], declared_sizes={A: 10})
    e = bounded(lambda: open_pack(pack).read_at(12))
    assert isinstance(e, CorruptObjectError) and e.kind == "pack-size"


def test_loose_object_declaring_a_terabyte_is_refused(tmp_path):
    path = tmp_path / "obj"
    path.write_bytes(zlib.compress(b"blob 1099511627776\0tiny"))
    e = bounded(lambda: read_loose(str(path), SHA1))
    assert isinstance(e, (LimitExceededError, CorruptObjectError))
    assert read_loose_header(str(path)) == ("blob", 1 << 40)  # the header alone is just information


def test_loose_object_inflating_beyond_its_declared_size_stops_there(tmp_path):
    path = tmp_path / "obj"
    path.write_bytes(zlib.compress(b"blob 10\0" + bytes(BIG)))
    e = bounded(lambda: read_loose(str(path), SHA1))
    assert e.kind == "loose-size"


def test_delta_declaring_a_huge_result_is_refused_before_building_it():
    e = bounded(lambda: apply_delta(b"abc", repos.insert_delta(3, b"xyz", declared=1 << 40)))
    assert isinstance(e, LimitExceededError)


def test_delta_writing_past_its_declared_result_is_an_error():
    e = bounded(lambda: apply_delta(b"abc", repos.insert_delta(3, b"xyz", declared=2)))
    assert isinstance(e, DeltaError) and e.kind == "delta-result-size"


# --- delta chains ----------------------------------------------------------------------------


def test_ref_delta_loop_inside_one_pack_is_detected_by_every_reader(bare):
    pack, idx = repos.write_raw_pack(
        bare, [(A, 7, repos.insert_delta(3, b"abc"), B), (B, 7, repos.insert_delta(3, b"xyz"), A)]
    )
    p = open_pack(pack)
    offset = PackIndex(str(idx), SHA1).open().offset_of(A)
    for read in (p.read_at, p.info_at, p.delta_chain):
        e = bounded(lambda read=read: read(offset))
        assert isinstance(e, DeltaError) and e.kind == "delta-loop"


def test_ref_delta_loop_through_two_packs_is_detected_by_the_store(bare):
    repos.write_raw_pack(bare, [(A, 7, repos.insert_delta(3, b"abc"), B)])
    repos.write_raw_pack(bare, [(B, 7, repos.insert_delta(3, b"xyz"), A)])
    store = ObjectStore(str(bare / "objects"), SHA1)
    try:
        e = bounded(lambda: store.read(A))
        assert isinstance(e, DeltaError) and e.kind in ("delta-loop", "delta-missing-base")
    finally:
        store.close()


def test_chains_deeper_than_the_cap_are_cut_and_long_ones_read_iteratively(deep_chain_repo):
    (pack,) = repos.pack_files(deep_chain_repo)
    tip = git_text("rev-parse", "main:growing.txt", cwd=deep_chain_repo).strip()
    offset = repos.show_index(pack.with_suffix(".idx"))[tip]
    e = bounded(lambda: open_pack(pack, max_chain_depth=100).read_at(offset), seconds=5, peak=64 << 20)
    assert isinstance(e, DeltaError) and e.kind == "delta-too-deep"
    type_name, data = open_pack(pack).read_at(offset)  # ~1500 deep: no recursion involved
    assert type_name == "blob" and data.count(b"\n") > 1000


# --- refs and alternates -------------------------------------------------------------------------


def test_symbolic_ref_chains_are_followed_a_bounded_number_of_steps(bare):
    head = bare / "refs" / "heads"
    for i in range(MAX_SYMREF_READS + 2):
        (head / f"s{i}").write_text(f"ref: refs/heads/s{i + 1}\n")
    refs = RefStore(Repository.open(bare))
    with pytest.raises(BadRefError) as info:
        refs.follow("refs/heads/s0")
    assert info.value.kind == "ref-too-deep"
    (head / "x").write_text("ref: refs/heads/y\n")
    (head / "y").write_text("ref: refs/heads/x\n")
    with pytest.raises(BadRefError) as info:
        refs.follow("refs/heads/x")
    assert info.value.kind == "ref-loop"


def test_alternates_chains_are_bounded_and_loops_cut(tmp_path):
    dirs = [repos.init_bare(tmp_path / f"r{i}.git") / "objects" for i in range(MAX_DEPTH + 3)]
    for a, b in itertools.pairwise(dirs):
        (a / "info" / "alternates").write_text(str(b) + "\n")
    found, problems = resolve_alternates(str(dirs[0]))
    assert len(found) == MAX_DEPTH and [p.kind for p in problems] == ["alternates-too-deep"]
    (dirs[1] / "info" / "alternates").write_text(str(dirs[0]) + "\n")
    found, problems = resolve_alternates(str(dirs[0]))
    assert found == [str(dirs[1])] and [p.kind for p in problems] == ["alternates-loop"]


def test_fsck_reports_alternates_problems_as_warnings(fsck_base, tmp_path, run_fsck):
    repo = repos.copy_repo(fsck_base, tmp_path / "r.git")
    (repo / "objects" / "info" / "alternates").write_text(str(tmp_path / "nowhere") + "\n")
    status, findings = run_fsck(repo)
    assert status == 0
    assert [f.severity for f in findings if f.kind == "alternates-missing"] == ["warning"]


# --- counts against sizes ----------------------------------------------------------------------------


def test_idx_fanout_claiming_more_objects_than_the_file_holds_is_refused(tmp_path):
    path = tmp_path / "pack-x.idx"
    fanout = [0] * 255 + [1 << 31]
    path.write_bytes(b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout) + bytes(40))
    e = bounded(lambda: PackIndex(str(path), SHA1).open())
    assert isinstance(e, BadPackIndexError) and e.kind == "idx-truncated"


def test_pack_header_count_disagreeing_with_its_index_is_refused(bare):
    pack, _ = repos.write_raw_pack(bare, [(A, 3, b"blob", None)])
    data = bytearray(pack.read_bytes())
    data[8:12] = struct.pack(">I", 1 << 30)
    pack.write_bytes(bytes(data))
    e = bounded(lambda: open_pack(pack).read_at(12))
    assert e.kind == "pack-count"


def test_multi_pack_index_and_commit_graph_counts_are_checked_against_chunk_sizes(fsck_base, tmp_path):
    from packscope.core.history.commit_graph import CommitGraph
    from packscope.core.store.midx import MultiPackIndex

    repo = repos.copy_repo(fsck_base, tmp_path / "r.git")
    repos.git("multi-pack-index", "write", cwd=repo)
    repos.git("commit-graph", "write", "--reachable", cwd=repo)
    for path, fanout_signature in (
        (repo / "objects" / "pack" / "multi-pack-index", b"OIDF"),
        (repo / "objects" / "info" / "commit-graph", b"OIDF"),
    ):
        data = bytearray(path.read_bytes())
        # the chunk table: 4-byte id, 8-byte offset per entry; patch the fanout's last count
        at = data.index(fanout_signature)
        offset = struct.unpack(">Q", data[at + 4 : at + 12])[0]
        data[offset + 1020 : offset + 1024] = struct.pack(">I", 1 << 30)
        path.write_bytes(bytes(data))
    bounded(lambda: MultiPackIndex(str(repo / "objects" / "pack" / "multi-pack-index"), SHA1).open())
    bounded(lambda: CommitGraph.open(str(repo / "objects"), SHA1))
