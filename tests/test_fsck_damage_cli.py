"""One repository per kind of damage (built here from a healthy one), used
as a person would use packscope on it: `packscope fsck --json` gets git
fsck's exit status and names the damaged file or object, and
`cat-file --batch-check --batch-all-objects` still answers for every object,
as git does.  (The findings themselves, kind by kind, are in
test_fsck_corrupt.py, through core's API.)"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git_env, git_fsck, git_text


def _loose_blob(repo: Path) -> tuple[str, Path]:
    oid = git_text("rev-parse", "loose:loose/file.txt", cwd=repo).strip()
    return oid, repo / "objects" / oid[:2] / oid[2:]


# Each defect returns what a finding must name: a path ending, or an object id.


def loose_garbage(repo: Path) -> str:
    oid, path = _loose_blob(repo)
    os.chmod(path, 0o644)
    path.write_bytes(b"corrupt\n")
    return oid


def missing_object(repo: Path) -> str:
    oid, path = _loose_blob(repo)
    os.chmod(path, 0o644)
    path.unlink()
    return oid


def pack_crc_mismatch(repo: Path) -> str:
    from tests.test_fsck_corrupt import damage_blob_entry, reachable_whole_blob

    row = reachable_whole_blob(repo)
    damage_blob_entry(repo, row)  # only the entry's CRC32 and zlib data disagree
    return row["oid"]


def pack_bad_checksum(repo: Path) -> str:
    pack, _ = repos.the_pack(repo)
    repos.flip_byte(pack, pack.stat().st_size - 1)
    return pack.name


def idx_bad_checksum(repo: Path) -> str:
    _, idx = repos.the_pack(repo)
    repos.flip_byte(idx, idx.stat().st_size - 1)
    return idx.name


def pack_truncated(repo: Path) -> str:
    pack, _ = repos.the_pack(repo)
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[: len(data) * 6 // 10])
    return pack.name


def broken_ref(repo: Path) -> str:
    (repo / "refs" / "heads" / "broken").write_text("deadbeef" * 5 + "\n")
    return "refs/heads/broken"


def idx_without_pack(repo: Path) -> str:
    blob = git_text("hash-object", "-w", "--stdin", cwd=repo, input=b"only in the orphaned index\n").strip()
    name = git_text("pack-objects", "-q", str(repo / "objects" / "pack" / "pack"), cwd=repo, input=blob + "\n")
    (repo / "objects" / "pack" / f"pack-{name.strip()}.pack").unlink()
    loose = repo / "objects" / blob[:2] / blob[2:]
    os.chmod(loose, 0o644)
    loose.unlink()
    return f"pack-{name.strip()}.idx"


DEFECTS = [
    loose_garbage,
    missing_object,
    pack_crc_mismatch,
    pack_bad_checksum,
    idx_bad_checksum,
    pack_truncated,
    broken_ref,
    idx_without_pack,
]
# git refuses these packs whole (every object "missing"); packscope reads on
# where the bytes allow, so only "one answer per id" is compared.
REFUSED_PACKS = {pack_bad_checksum, pack_truncated}


@pytest.fixture(params=DEFECTS, ids=lambda d: d.__name__.replace("_", "-"))
def damaged(request, fsck_base, tmp_path):
    repo = repos.copy_repo(fsck_base, tmp_path / "damaged.git")
    target = request.param(repo)
    return request.param, repo, target


def test_fsck_gets_gits_exit_status_and_names_the_damage(damaged):
    _defect, repo, target = damaged
    p = packscope_in(repo, "fsck", "--json", "--no-progress")
    assert b"Traceback" not in p.stderr, p.stderr.decode()
    lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
    findings, summary = lines[:-1], lines[-1]["summary"]
    git_status, git_out = git_fsck(repo)
    assert p.returncode == summary["exit"] == git_status, (git_out, findings)
    # Damage that fails git's check is an error here; damage git passes is still shown, as a warning.
    severity = "error" if git_status else "warning"
    named = [
        f for f in findings if f["severity"] == severity and (f["oid"] == target or (f["path"] or "").endswith(target))
    ]
    assert named, (target, findings)
    assert all(f["remedy"] for f in named)


def test_cat_file_answers_for_every_object_as_git_does(damaged):
    defect, repo, _target = damaged
    p = packscope_in(repo, "cat-file", "--batch-check", "--batch-all-objects")
    assert p.returncode == 0 and b"Traceback" not in p.stderr, p.stderr.decode()
    lines = p.stdout.decode().splitlines()
    git = subprocess.run(
        ["git", "cat-file", "--batch-check", "--batch-all-objects"], cwd=repo, capture_output=True, env=git_env()
    )
    theirs = git.stdout.decode().splitlines()
    if defect in REFUSED_PACKS:
        assert sorted(line.split()[0] for line in lines) == sorted(line.split()[0] for line in theirs)
    else:
        assert lines == theirs
