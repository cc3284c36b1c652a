"""Mutation fuzzing against git, a seeded and bounded run (the engine is
packscope.bench.fuzz; ``packscope bench fuzz --count N --seed S`` runs a
longer one).  A small repository with every file kind packscope reads
(packs with deltas, loose objects, a split commit-graph, a
multi-pack-index, packed-refs, config, alternates) is copied and damaged
one file at a time; ``fsck``, ``cat-file --batch-all-objects --batch``,
``log --all`` and ``info --json`` run on each copy, compiled and pure.

Asserted on every case: no Python traceback; the compiled and the pure
path print the same and exit alike; fsck's exit status is git fsck's, bit
for bit, and ``log --all``'s / ``cat-file --batch-all-objects``'s are git's
(0, or 128 where git dies) — but for the known differences in ``fuzz.ALLOWED``, each
with its reason, which the test prints when it meets them (``pytest -s``).
``PACKSCOPE_FUZZ_COUNT`` changes the number of cases."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from packscope.bench import fuzz
from tests.repos import git_env

COUNT = int(os.environ.get("PACKSCOPE_FUZZ_COUNT", "60"))
SEED = 2026


@pytest.mark.both_paths
def test_mutated_copies_never_crash_agree_across_paths_and_exit_as_git(tmp_path):
    problems: list[fuzz.Problem] = []
    cases = 0
    for _, found in fuzz.fuzz(COUNT, SEED, work_dir=tmp_path):
        cases += 1
        problems += found
    assert cases == COUNT
    allowed = [p for p in problems if p.allowed]
    if allowed:
        print(f"\n{len(allowed)} known differences from git met in {COUNT} cases:")
        for p in allowed:
            print("  " + p.line())
    unexplained = [p for p in problems if not p.allowed]
    assert not unexplained, "\n".join(p.line() for p in unexplained)


def test_the_cases_are_the_same_for_the_same_seed(tmp_path):
    base = fuzz.build_base(tmp_path)
    first = [m.describe() for m in fuzz.mutations(base, 30, SEED)]
    assert first == [m.describe() for m in fuzz.mutations(base, 30, SEED)]
    assert first != [m.describe() for m in fuzz.mutations(base, 30, SEED + 1)]
    kinds = {m.kind for m in fuzz.mutations(base, 300, SEED)}
    assert kinds == {kind for kind, _ in fuzz.targets(base)}  # every file kind gets damaged
    assert {"pack", "idx", "midx", "graph", "graph-chain", "packed-refs", "config", "alternates"} <= kinds


def test_a_traceback_is_caught_and_reported(tmp_path):
    """The checker itself: a case whose command dies with a Python
    exception is a problem (the worker survives and says so)."""
    worker = fuzz.Worker(pure=False, scratch=tmp_path)
    try:
        status, _, _, tb = worker.run(["-C", str(tmp_path), "cat-file", "-t", "HEAD"])  # not a repository
        assert status == 128 and tb is None
        status, _, _, tb = worker.run(["--no-such-option-at-all"])
        assert isinstance(status, int) and tb is None  # argparse's exit, not a crash
    finally:
        worker.close()


def test_a_path_that_is_not_utf8_is_written_as_its_bytes_in_a_strict_locale(tmp_path):
    """A found case: a byte flipped in objects/info/alternates made the
    path undecodable, and writing it to a strict UTF-8 stdout raised."""
    base = fuzz.build_base(tmp_path)
    alternates = base / ".git" / "objects" / "info" / "alternates"
    alternates.write_bytes(alternates.read_bytes().rstrip(b"\n") + b"\xf8\n")
    env = {**git_env(), "PYTHONIOENCODING": "utf-8:strict"}
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(base), "fsck", "--no-progress"],
        capture_output=True,
        env=env,
    )
    assert b"Traceback" not in p.stderr, p.stderr.decode(errors="replace")
    assert b"\xf8" in p.stdout  # the path as it is on disk
    theirs = subprocess.run(["git", "fsck", "--full", "--no-progress"], cwd=base, capture_output=True, env=git_env())
    assert p.returncode == theirs.returncode
    shutil.rmtree(base)
