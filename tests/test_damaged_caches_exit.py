"""Damage git 2.39 dies on, or reads past, in the files beside the objects:
the multi-pack-index, the commit-graph and packed-refs.  ``log --all`` and
``cat-file --batch-all-objects --batch-check`` exit as git does on each
(128 where git dies, 0 where it reads on), compiled and pure.

The repository is the mutation fuzzer's (two packs under a
multi-pack-index, a two-layer commit-graph, packed refs, loose objects);
each case damages one file of a copy in one named way."""

from __future__ import annotations

import shutil
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from packscope.bench import fuzz
from tests.cli import packscope_in
from tests.repos import git_env

PATHS = {"compiled": None, "pure": {"PACKSCOPE_PURE": "1"}}
COMMANDS = {
    "log": ["log", "--all", "--format=%H"],
    "batch-check": ["cat-file", "--batch-all-objects", "--batch-check"],
}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return fuzz.build_base(tmp_path_factory.mktemp("caches"))


def chunk_row(data: bytes, header: int, chunk_id: bytes) -> int:
    """Where ``chunk_id``'s row is in the chunk table that starts at ``header``."""
    for i in range(data[6]):
        if data[header + 12 * i : header + 12 * i + 4] == chunk_id:
            return header + 12 * i
    raise AssertionError(f"no {chunk_id!r} chunk")


def flip(at: int, mask: int = 0x20) -> Callable[[bytes], bytes]:
    return lambda d: d[:at] + bytes([d[at] ^ mask]) + d[at + 1 :]


def flip_chunk_id(chunk_id: bytes, header: int) -> Callable[[bytes], bytes]:
    return lambda d: flip(chunk_row(d, header, chunk_id))(d)


def more_packs(d: bytes) -> bytes:
    """The header promises one pack more than the names chunk holds: git
    takes the padding after the last name as an empty name."""
    return d[:8] + struct.pack(">I", struct.unpack_from(">I", d, 8)[0] + 1) + d[12:]


def name_cut_by_nul(d: bytes) -> bytes:
    at = d.index(b"refs/heads/side") + len(b"refs/h")
    return d[:at] + b"\0" + d[at:]


def dangerous_name(d: bytes) -> bytes:
    at = d.index(b"refs/tags/v1") + 2  # re?s/tags/v1: neither a ref name nor under refs/
    return d[:at] + b"\x01" + d[at + 1 :]


def bad_parent_position(d: bytes) -> bytes:
    """The first commit's first parent is a position past every commit."""
    row = chunk_row(d, 8, b"CDAT")
    cdat = struct.unpack_from(">Q", d, row + 4)[0]
    at = cdat + 20  # after the root tree's id (SHA-1)
    return d[:at] + struct.pack(">I", 0x10000000) + d[at + 4 :]


MIDX = ".git/objects/pack/multi-pack-index"
PACKED = ".git/packed-refs"
CASES: dict[str, tuple[str, Callable[[bytes], bytes]]] = {
    "midx-signature": (MIDX, flip(1)),
    "midx-no-pack-names": (MIDX, flip_chunk_id(b"PNAM", 12)),
    "midx-no-fanout": (MIDX, flip_chunk_id(b"OIDF", 12)),
    "midx-no-lookup": (MIDX, flip_chunk_id(b"OIDL", 12)),
    "midx-no-offsets": (MIDX, flip_chunk_id(b"OOFF", 12)),
    "midx-names-out-of-order": (MIDX, more_packs),
    "midx-hash-version": (MIDX, flip(5, 0x03)),  # git reports it and reads the packs
    "packed-refs-nul-in-name": (PACKED, name_cut_by_nul),
    "packed-refs-dangerous-name": (PACKED, dangerous_name),
    "graph-parent-position": ("top-graph-layer", bad_parent_position),
}


def damaged(base: Path, dest: Path, target: str, mutate: Callable[[bytes], bytes]) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    if target == "top-graph-layer":
        chain = dest / ".git/objects/info/commit-graphs"
        top = (chain / "commit-graph-chain").read_text().split()[-1]
        path = chain / f"graph-{top}.graph"
    else:
        path = dest / target
    path.chmod(0o644)
    path.write_bytes(mutate(path.read_bytes()))
    return dest


@pytest.mark.both_paths  # PACKSCOPE_PURE in its subprocesses: CI's first pass runs both
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CASES)
def test_log_and_batch_exit_as_git_on_a_damaged_cache_file(base, tmp_path, case, path):
    repo = damaged(base, tmp_path / "r", *CASES[case])
    for name, args in COMMANDS.items():
        theirs = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
        ours = packscope_in(repo, *args, env=PATHS[path])
        assert b"Traceback" not in ours.stderr
        assert (name, ours.returncode) == (name, theirs.returncode), (theirs.stderr, ours.stderr)


@pytest.mark.parametrize("words", [["--graph", "--oneline"], ["--format=%h %s"]])
def test_every_log_output_exits_as_git_on_damage_found_during_the_walk(base, tmp_path, words):
    """The graph damage git dies on is known only once the walk has read it:
    each output path (the graph, ids alone as above, a format) ends with it."""
    repo = damaged(base, tmp_path / "r", *CASES["graph-parent-position"])
    args = ["log", "--all", *words]
    theirs = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
    ours = packscope_in(repo, *args)
    assert theirs.returncode == 128
    assert ours.returncode == 128, ours.stderr


def test_the_cases_are_the_damage_they_name(base, tmp_path):
    """Guards the fixture: git dies on the cases named so, and reads on past
    the others (a too-easy mutation would test nothing)."""
    expect_death = {name for name in CASES if name not in ("midx-hash-version", "packed-refs-nul-in-name")}
    for case, (target, mutate) in CASES.items():
        repo = damaged(base, tmp_path / case, target, mutate)
        theirs = subprocess.run(["git", *COMMANDS["log"]], cwd=repo, capture_output=True, env=git_env())
        assert (case, theirs.returncode) == (case, 128 if case in expect_death else 0), theirs.stderr
