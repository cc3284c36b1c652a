"""fsck on a split commit-graph whose layer has a damaged chunk table, as
git 2.39's fsck: git verifies the layers its (looser) loading accepts and
only those.  A chunk offset moved by a flipped bit is a layer git loads and
then fails to verify (bit 16) though packscope's reading refuses it; a BASE
chunk whose id is damaged is a layer git leaves out, with a warning (0).

The repository is the mutation fuzzer's (two layers; the fuzzer found these
bytes); exit status compared with git's on both paths."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from packscope.bench import fuzz
from tests.cli import packscope_in
from tests.repos import git_env

PATHS = {"compiled": None, "pure": {"PACKSCOPE_PURE": "1"}}
# (layer: 0 the base, 1 the top; chunk whose row is damaged; byte of the row; mask)
CASES = {
    "base-lookup-offset": (0, b"OIDL", 11, 0x01),
    "base-data-offset": (0, b"CDAT", 11, 0x01),
    "top-lookup-offset": (1, b"OIDL", 11, 0x01),
    "top-data-offset": (1, b"CDAT", 11, 0x01),
    "top-base-chunk-id": (1, b"BASE", 0, 0x01),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return fuzz.build_base(tmp_path_factory.mktemp("graph-table"))


def damaged(base: Path, dest: Path, layer: int, chunk: bytes, byte: int, mask: int) -> Path:
    shutil.copytree(base, dest, symlinks=True)
    graphs = dest / ".git/objects/info/commit-graphs"
    name = (graphs / "commit-graph-chain").read_text().split()[layer]
    path = graphs / f"graph-{name}.graph"
    data = bytearray(path.read_bytes())
    row = next(8 + 12 * i for i in range(data[6]) if data[8 + 12 * i : 12 + 12 * i] == chunk)
    data[row + byte] ^= mask
    path.chmod(0o644)
    path.write_bytes(bytes(data))
    return dest


@pytest.mark.both_paths  # PACKSCOPE_PURE in its subprocesses: CI's first pass runs both
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", CASES)
def test_fsck_exits_as_git_on_a_damaged_chunk_table_in_a_split_graph(base, tmp_path, case, path):
    repo = damaged(base, tmp_path / "r", *CASES[case])
    theirs = subprocess.run(["git", "fsck", "--full", "--no-progress"], cwd=repo, capture_output=True, env=git_env())
    assert theirs.returncode in (0, 16), theirs.stderr  # git finishes its check on these
    ours = packscope_in(repo, "fsck", "--no-progress", env=PATHS[path])
    assert b"Traceback" not in ours.stderr
    assert ours.returncode == theirs.returncode, (theirs.stderr, ours.stdout)


def test_the_base_chunk_case_is_one_git_passes(base, tmp_path):
    """Guards the cases: both verdicts occur (16 and 0)."""
    seen = set()
    for case, args in CASES.items():
        repo = damaged(base, tmp_path / case, *args)
        seen.add(
            subprocess.run(["git", "fsck", "--no-progress"], cwd=repo, capture_output=True, env=git_env()).returncode
        )
    assert seen == {0, 16}
