"""Commit-graph files, single and split, checked against git's view of the history."""

from __future__ import annotations

import os
import random
import shutil
import struct

import pytest

from packscope.core.errors import BadCommitGraphError, PackscopeError
from packscope.core.fsck.commit_graph_checks import commit_graph_problems
from packscope.core.history.commit_graph import CommitGraph
from packscope.core.oid import SHA1, SHA256
from tests import repos
from tests.object_source import core_store


def _open(repo, fmt=SHA1) -> CommitGraph:
    g = CommitGraph.open(str(repo / "objects"), fmt)
    assert g is not None
    return g


def _levels_and_corrected_dates(table):
    """Topological levels and corrected commit dates, computed from git's
    parents and times alone (iteratively: parents before children)."""
    level, corrected = {}, {}
    for start in table:
        stack = [start]
        while stack:
            c = stack[-1]
            if c in level:
                stack.pop()
                continue
            pending = [p for p in table[c][1] if p not in level]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            parents = table[c][1]
            level[c] = 1 + max((level[p] for p in parents), default=0)
            corrected[c] = max([table[c][2]] + [corrected[p] + 1 for p in parents])
    return level, corrected


def _assert_matches_git(g: CommitGraph, repo, *, corrected_dates: bool):
    table = repos.commit_table(repo)
    assert g.num_commits == len(table)
    level, corrected = _levels_and_corrected_dates(table)
    seen = set()
    for pos in range(g.num_commits):
        r = g.commit_at(pos)
        h = r.oid.hex()
        seen.add(h)
        tree, parents, time = table[h]
        assert r.position == pos
        assert r.tree.hex() == tree
        assert tuple(p.hex() for p in r.parents) == parents  # order matters: first parent first
        assert r.commit_time == time
        assert r.topo_level == level[h]
        assert r.generation == (corrected[h] if corrected_dates else level[h])
        assert tuple(g.oid_at(p) for p in r.parent_positions) == r.parents
        assert g.lookup(r.oid) == pos
    assert seen == set(table)


# --- single file ---------------------------------------------------------------------


@pytest.mark.parametrize("fixture,fmt", [("graph_repo", SHA1), ("graph_sha256_repo", SHA256)])
def test_every_commit_agrees_with_git(request, fixture, fmt):
    repo = request.getfixturevalue(fixture)
    g = _open(repo, fmt)
    assert not g.is_chain and len(g.layers) == 1
    assert g.uses_corrected_dates
    _assert_matches_git(g, repo, corrected_dates=True)


def test_octopus_merges_read_their_extra_parents_from_edge(graph_repo):
    g = _open(graph_repo)
    assert b"EDGE" in g.layers[0].chunks
    widths = sorted(len(r.parents) for r in g if len(r.parents) > 2)
    assert widths == [4, 5]


def test_a_huge_corrected_date_offset_comes_from_the_overflow_table(graph_repo):
    g = _open(graph_repo)
    assert b"GDO2" in g.layers[0].chunks
    past = [r for r in g if r.commit_time == 1_000_000_000]
    assert len(past) == 1
    (parent,) = past[0].parents
    assert g.commit(parent).commit_time == 5_000_000_000  # needs the 34-bit time field
    assert past[0].generation == 5_000_000_001
    assert past[0].generation - past[0].commit_time > 2**31  # beyond GDA2's 31 bits


def test_lookup_of_non_commits_and_unknown_ids_is_none(graph_repo):
    g = _open(graph_repo)
    table = repos.commit_table(graph_repo)
    trees = {t for t, _, _ in table.values()}
    for t in trees:
        assert g.lookup(bytes.fromhex(t)) is None
    rnd = random.Random(7)
    for _ in range(200):
        assert g.lookup(rnd.randbytes(20)) is None
    assert g.lookup(b"\0" * 20) is None and g.lookup(b"\xff" * 20) is None


def test_open_returns_none_without_a_graph(tmp_path):
    (tmp_path / "info").mkdir()
    assert CommitGraph.open(str(tmp_path), SHA1) is None
    (tmp_path / "info" / "commit-graphs").mkdir()
    (tmp_path / "info" / "commit-graphs" / "commit-graph-chain").write_text("")
    assert CommitGraph.open(str(tmp_path), SHA1) is None


def test_verify_agrees_with_the_commit_objects(graph_repo):
    g = _open(graph_repo)
    src = core_store(graph_repo)
    try:
        assert commit_graph_problems(g, src.read) == []

        victim = g.oid_at(3)

        def lying_read(oid):
            kind, data = src.read(oid)
            if oid == victim:
                head, rest = data.split(b"\ncommitter ", 1)
                line, tail = rest.split(b"\n", 1)
                fields = line.rsplit(b" ", 2)
                data = head + b"\ncommitter " + fields[0] + b" %d " % (int(fields[1]) + 1) + fields[2] + b"\n" + tail
            return kind, data

        found = commit_graph_problems(g, lying_read)
        assert len(found) == 1
        assert found[0].kind == "commit-graph-date" and found[0].oid == victim.hex()
        assert found[0].message.startswith(f"commit date for commit {victim.hex()} in commit-graph is ")
    finally:
        src.close()


# --- split chains ----------------------------------------------------------------------


def test_split_chain_layers_number_commits_globally(split_graph_repo):
    g = _open(split_graph_repo)
    assert g.is_chain
    assert [layer.index for layer in g.layers] == [0, 1, 2]
    bases = [layer.commit_base for layer in g.layers]
    assert bases == [0, g.layers[0].num_commits, g.layers[0].num_commits + g.layers[1].num_commits]
    assert [len(layer.base_hashes) for layer in g.layers] == [0, 1, 2]
    assert g.layers[2].base_hashes == (g.layers[0].checksum, g.layers[1].checksum)
    _assert_matches_git(g, split_graph_repo, corrected_dates=True)


def test_split_chain_parents_reach_into_lower_layers(split_graph_repo):
    g = _open(split_graph_repo)
    top = g.layers[2]
    first = min((g.commit_at(top.commit_base + i) for i in range(top.num_commits)), key=lambda r: r.commit_time)
    assert all(p < top.commit_base for p in first.parent_positions)
    assert any(len(r.parents) == 4 for r in g)  # the octopus in the middle layer


def test_a_layer_without_corrected_dates_turns_them_off_for_the_chain(mixed_generation_repo):
    g = _open(mixed_generation_repo)
    assert not g.layers[0].has_generation_data
    assert not g.uses_corrected_dates
    _assert_matches_git(g, mixed_generation_repo, corrected_dates=False)


def test_split_chain_verifies(split_graph_repo):
    g = _open(split_graph_repo)
    src = core_store(split_graph_repo)
    try:
        assert commit_graph_problems(g, src.read) == []
    finally:
        src.close()


# --- damage ----------------------------------------------------------------------------


def _copy_objects_info(repo, tmp_path):
    dst = tmp_path / "objects"
    shutil.copytree(repo / "objects" / "info", dst / "info")
    for p in (dst / "info").rglob("*"):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return dst


def _patch(path, offset, data: bytes):
    with open(path, "r+b") as f:
        f.seek(offset)
        f.write(data)


def _expect(objects, kind_part, fmt=SHA1) -> BadCommitGraphError:
    with pytest.raises(BadCommitGraphError) as ei:
        g = CommitGraph.open(str(objects), fmt)
        for _ in g:
            pass
    e = ei.value
    assert isinstance(e, PackscopeError)
    assert kind_part in e.kind
    assert e.path and e.remedy
    return e


def test_truncated_graph_is_a_typed_error(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    path = objects / "info" / "commit-graph"
    size = path.stat().st_size
    for cut in (0, 5, 40, size // 2, size - 1):
        os.truncate(path, cut)
        e = _expect(objects, "commit-graph")
        assert e.path == str(path)
        assert cut == 0 or e.offset is not None
        shutil.copy(graph_repo / "objects" / "info" / "commit-graph", path)
        os.chmod(path, 0o644)


def test_flipped_fanout_byte_is_a_fanout_error(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    path = objects / "info" / "commit-graph"
    oidf = _open(graph_repo).layers[0].chunks.get(b"OIDF").offset
    _patch(path, oidf + 4 * 0x40, b"\xff")
    e = _expect(objects, "fanout")
    assert oidf + 4 * 0x40 <= e.offset <= oidf + 4 * 0x41


def test_fanout_total_disagreeing_with_the_chunks_is_a_size_error(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    path = objects / "info" / "commit-graph"
    oidf = _open(graph_repo).layers[0].chunks.get(b"OIDF").offset
    total = struct.unpack_from(">I", path.read_bytes(), oidf + 4 * 255)[0]
    _patch(path, oidf + 4 * 255, struct.pack(">I", total + 1))
    _expect(objects, "chunk-size")


@pytest.mark.parametrize(
    "offset,data,kind",
    [
        (0, b"XGPH", "signature"),
        (4, b"\x02", "version"),
        (5, b"\x02", "hash-version"),
        (6, b"\x20", "commit-graph"),  # more chunks than the table holds
    ],
)
def test_bad_header_fields_are_typed_errors(graph_repo, tmp_path, offset, data, kind):
    objects = _copy_objects_info(graph_repo, tmp_path)
    _patch(objects / "info" / "commit-graph", offset, data)
    e = _expect(objects, kind)
    assert e.offset is not None


def test_opening_with_the_wrong_object_format_is_refused(graph_repo, tmp_path):
    e = _expect(graph_repo / "objects", "hash-version", fmt=SHA256)
    assert e.offset == 5


def test_chunk_offsets_going_backwards_are_refused(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    # the second row's offset (after "OIDF" + 8 bytes, "OIDL") set to 0
    _patch(objects / "info" / "commit-graph", 8 + 12 + 4, b"\0" * 8)
    e = _expect(objects, "chunk-table")
    assert e.offset == 8 + 12


def test_damaged_contents_fail_the_checksum_and_order_checks(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    path = objects / "info" / "commit-graph"
    layer = _open(graph_repo).layers[0]
    oidl = layer.chunks.get(b"OIDL").offset
    a, b = layer.name_at(10), layer.name_at(11)
    _patch(path, oidl + 20 * 10, b)
    _patch(path, oidl + 20 * 11, a)
    g = CommitGraph.open(str(objects), SHA1)
    kinds = {e.kind for e in commit_graph_problems(g)}
    assert {"commit-graph-checksum", "commit-graph-order"} <= kinds


def test_parent_position_beyond_the_graph_is_refused(graph_repo, tmp_path):
    objects = _copy_objects_info(graph_repo, tmp_path)
    layer = _open(graph_repo).layers[0]
    cdat = layer.chunks.get(b"CDAT").offset
    _patch(objects / "info" / "commit-graph", cdat + 20, struct.pack(">I", layer.num_commits + 5))
    g = CommitGraph.open(str(objects), SHA1)
    with pytest.raises(BadCommitGraphError) as ei:
        g.commit_at(0)
    assert ei.value.kind == "commit-graph-parent"


def _open_keeping(objects):
    problems = []
    g = CommitGraph.open(str(objects), SHA1, problems=problems)
    return g, problems


def test_broken_chains_keep_their_valid_base_layers_and_say_why(split_graph_repo, tmp_path):
    objects = _copy_objects_info(split_graph_repo, tmp_path)
    graphs = objects / "info" / "commit-graphs"
    chain = graphs / "commit-graph-chain"
    lines = chain.read_text().split()
    whole = _open(split_graph_repo)
    base_commits = [whole.commit_at(pos) for pos in range(whole.layers[0].num_commits)]

    chain.write_text("\n".join(reversed(lines)) + "\n")  # the top layer first: git takes it, then fails
    g, problems = _open_keeping(objects)
    assert g is None and [e.kind for e in problems] == ["commit-graph-chain-base"]

    chain.write_text("\n".join([*lines[:1], "nothex", *lines[2:]]) + "\n")
    g, problems = _open_keeping(objects)
    assert len(g.layers) == 1 and [e.kind for e in problems] == ["commit-graph-chain"]
    assert problems[0].offset == len(lines[0]) + 1 and problems[0].path == str(chain)
    assert [g.commit_at(pos) for pos in range(g.num_commits)] == base_commits  # walks use what is left

    chain.write_text("\n".join(lines) + "\n")
    (graphs / f"graph-{lines[1]}.graph").unlink()
    g, problems = _open_keeping(objects)
    assert len(g.layers) == 1 and "missing" in problems[0].message
    assert commit_graph_problems(g) == []


def test_a_chain_of_two_layers_is_readable_without_the_third(split_graph_repo, tmp_path):
    objects = _copy_objects_info(split_graph_repo, tmp_path)
    chain = objects / "info" / "commit-graphs" / "commit-graph-chain"
    lines = chain.read_text().split()
    chain.write_text("\n".join(lines[:2]) + "\n")
    g = CommitGraph.open(str(objects), SHA1)
    assert len(g.layers) == 2
    assert commit_graph_problems(g) == []


@pytest.mark.parametrize("chunk, shift", [(b"EDGE", 2), (b"GDO2", 4)])
def test_a_chunk_of_fixed_width_rows_with_a_ragged_size_is_a_size_error(graph_repo, tmp_path, chunk, shift):
    """The chunk after ``chunk`` (or the table's terminator) starts
    ``shift`` bytes early, half a row of ``chunk`` (4-byte EDGE rows, 8-byte
    GDO2 rows) and whole rows of the next: ``chunk`` alone is ragged, and
    that is said on opening, before any row is read."""
    objects = _copy_objects_info(graph_repo, tmp_path)
    path = objects / "info" / "commit-graph"
    table = _open(graph_repo).layers[0].chunks
    ids = [c.id for c in table]
    row = table.table_offset + 12 * (ids.index(chunk) + 1)
    start = struct.unpack_from(">Q", path.read_bytes(), row + 4)[0]
    _patch(path, row + 4, struct.pack(">Q", start - shift))
    e = _expect(objects, "chunk-size")
    assert e.offset == table.get(chunk).offset and chunk.decode() in e.message
