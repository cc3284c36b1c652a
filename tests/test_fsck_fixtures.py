"""The prebuilt corrupt fixtures (fixtures/corrupt, with git's verdicts in
manifest.json) and the prebuilt healthy ones, when present on this machine.

They are not part of a fresh clone (CI builds its own corrupt repositories
in test_fsck_corrupt.py), so everything here skips without them.  Set
PACKSCOPE_FIXTURES to point elsewhere than ../fixtures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.repos import git_env, git_fsck

ROOT = Path(os.environ.get("PACKSCOPE_FIXTURES", Path(__file__).resolve().parents[2] / "fixtures"))
CORRUPT = ROOT / "corrupt"
MANIFEST = CORRUPT / "manifest.json"


def cases():
    if not MANIFEST.is_file():
        return []
    return json.loads(MANIFEST.read_text())["cases"]


def packscope(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(repo), *args],
        capture_output=True,
        cwd=Path(__file__).resolve().parents[1],
        env=git_env(),
    )


@pytest.mark.skipif(not MANIFEST.is_file(), reason=f"no prebuilt corrupt fixtures at {CORRUPT}")
@pytest.mark.parametrize("case", cases(), ids=[c["name"] for c in cases()])
def test_corrupt_fixture_gets_gits_verdict_and_is_located(case):
    repo = CORRUPT / case["repo"]
    p = packscope(repo, "fsck", "--json", "--no-progress")
    assert b"Traceback" not in p.stderr, p.stderr.decode()
    lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
    findings, summary = lines[:-1], lines[-1]["summary"]
    assert p.returncode == summary["exit"] == case["fsck"]["exit"], findings
    target = case["target"]
    errors = [f for f in findings if f["severity"] == "error"]
    if case["fsck"]["exit"] == 0:
        assert errors == []
        # the defect is still shown, as a warning naming the file
        assert any(f["severity"] == "warning" and target not in (f["oid"] or "") and f["path"] for f in findings)
    elif target.startswith("refs/"):
        assert any(f["path"] and f["path"].endswith(target) for f in errors)
    else:
        located = [f for f in errors if f["oid"] == target or (f["path"] and "objects/pack/" in f["path"])]
        assert located and all(f["path"] or f["oid"] for f in located)
    first = case["fsck"]["first_error"]
    if "objects/pack/pack-" in first:
        pack_name = first.split("objects/pack/")[1].split(".pack")[0]
        assert any(pack_name in (f["path"] or "") for f in errors)
    if "at offset" in first:
        offset = int(first.rsplit("at offset", 1)[1].split()[0])
        assert any(f["offset"] == offset and f["oid"] == target for f in errors)


@pytest.mark.skipif(not MANIFEST.is_file(), reason=f"no prebuilt corrupt fixtures at {CORRUPT}")
@pytest.mark.parametrize("case", cases(), ids=[c["name"] for c in cases()])
def test_corrupt_fixture_damage_stays_local_to_cat_file(case):
    repo = CORRUPT / case["repo"]
    p = packscope(repo, "cat-file", "--batch-check", "--batch-all-objects")
    assert b"Traceback" not in p.stderr and p.returncode == 0, p.stderr.decode()
    lines = p.stdout.decode().splitlines()
    if case["name"] in ("pack-bad-checksum", "pack-truncated"):
        # git refuses the whole pack ("missing" for all); reads here go on
        # where the bytes allow, and every id still gets exactly one answer.
        assert len(lines) == len({line.split()[0] for line in lines})
        return
    git = subprocess.run(
        ["git", "cat-file", "--batch-check", "--batch-all-objects"], cwd=repo, capture_output=True, env=git_env()
    )
    assert lines == git.stdout.decode().splitlines()


def healthy():
    return sorted(p for p in ROOT.glob("*.git")) if ROOT.is_dir() else []


@pytest.mark.skipif(not healthy(), reason=f"no prebuilt fixtures at {ROOT}")
@pytest.mark.parametrize("repo", healthy(), ids=[p.name for p in healthy()])
def test_healthy_fixture_passes_with_gits_dangling_objects(repo):
    p = packscope(repo, "fsck", "--no-progress")
    git_status, git_out = git_fsck(repo)
    assert p.returncode == git_status == 0, p.stdout.decode()
    ours = sorted(line for line in p.stdout.decode().splitlines() if line.startswith("dangling "))
    assert ours == sorted(line for line in git_out.splitlines() if line.startswith("dangling "))
