"""A pack whose trailing hash is not the one its .idx records (cut short:
truncated at any length) is refused whole, as git 2.39 does — with a
multi-pack-index over it or without: every object in it is missing, even
entries before the cut.  ``cat-file --batch-all-objects`` answers "missing"
for each and exits 0; ``log --all`` dies (128) at the first commit it
cannot read.  Built with git; exit status and stdout compared with git's
on the compiled and the pure path; fsck's exit bits too.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.cli import packscope
from tests.repos import git, git_env

PATHS = {"compiled": None, "pure": {"PACKSCOPE_PURE": "1"}}
COMMANDS = {
    "batch": ["cat-file", "--batch-all-objects", "--batch"],
    "batch-check": ["cat-file", "--batch-all-objects", "--batch-check"],
    "log": ["log", "--all"],
}


@pytest.fixture(scope="module")
def two_packs(tmp_path_factory) -> Path:
    """Six commits in two packs (three each), with a multi-pack-index."""
    work = tmp_path_factory.mktemp("two-packs") / "w"
    git("init", "-q", "--initial-branch=main", work)
    for i in range(1, 7):
        (work / f"f{i}").write_text("".join(f"{n}\n" for n in range(i * 200)))
        git("add", f"f{i}", cwd=work)
        git("commit", "-qm", f"c{i}", cwd=work)
        if i in (3, 6):
            git("repack", "-dq", cwd=work)
    git("multi-pack-index", "write", cwd=work)
    return work


def damaged_copy(src: Path, dest: Path, which: int, keep: int, midx: bool) -> Path:
    shutil.copytree(src, dest)
    packs = sorted((dest / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(packs) == 2
    pack = packs[which]
    size = pack.stat().st_size
    with open(pack, "r+b") as f:
        f.truncate(keep if keep > 0 else size + keep)
    if not midx:
        (dest / ".git" / "objects" / "pack" / "multi-pack-index").unlink()
    return dest


@pytest.mark.both_paths  # PACKSCOPE_PURE in its subprocesses: CI's first pass runs both
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("midx", [True, False], ids=["midx", "no-midx"])
@pytest.mark.parametrize("keep", [-1, -20, 500], ids=["one-byte-short", "trailer-cut", "cut-to-500"])
@pytest.mark.parametrize("which", [0, 1])
def test_a_cut_pack_is_refused_whole_as_git(two_packs, tmp_path, which, keep, midx, path):
    repo = damaged_copy(two_packs, tmp_path / "r", which, keep, midx)
    for name, args in COMMANDS.items():
        g = subprocess.run(["git", *args], cwd=repo, capture_output=True, env=git_env())
        p = packscope(*args, cwd=repo, check=False, env=PATHS[path])
        assert b"Traceback" not in p.stderr
        assert (name, p.returncode, p.stdout) == (name, g.returncode, g.stdout)
    g = subprocess.run(["git", "fsck", "--full", "--no-progress"], cwd=repo, capture_output=True, env=git_env())
    p = packscope("fsck", "--no-progress", cwd=repo, check=False, env=PATHS[path])
    assert p.returncode == g.returncode


def test_git_does_refuse_the_whole_pack(two_packs, tmp_path):
    """Guards the fixture: git answers "missing" for objects stored before the cut
    and log dies, so the entries it could have read are not read."""
    repo = damaged_copy(two_packs, tmp_path / "r", 0, -1, True)
    out = subprocess.run(["git", *COMMANDS["batch-check"]], cwd=repo, capture_output=True, env=git_env())
    assert out.returncode == 0 and out.stdout.count(b" missing\n") >= 9
    assert subprocess.run(["git", "log", "--all"], cwd=repo, capture_output=True, env=git_env()).returncode == 128


@pytest.mark.both_paths  # PACKSCOPE_PURE in its subprocesses: CI's first pass runs both
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("midx", [True, False], ids=["midx", "no-midx"])
def test_exists_says_no_for_objects_only_in_the_refused_pack(two_packs, tmp_path, midx, path):
    repo = damaged_copy(two_packs, tmp_path / "r", 0, -1, midx)
    ids = git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=two_packs).decode().split()
    theirs, ours = [], []
    for oid in ids:
        theirs.append(
            subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, env=git_env(), capture_output=True).returncode
        )
        ours.append(packscope("cat-file", "-e", oid, cwd=repo, check=False, env=PATHS[path]).returncode)
    assert ours == theirs
    assert 0 in theirs and 1 in theirs  # both kinds of object are there


def test_only_a_triage_session_reads_past_the_refusal(two_packs, tmp_path):
    """One rule, two modes: a session opened as the commands open it refuses
    the cut pack's objects; one opened for triage (the UI's views) reads each
    entry the cut leaves whole, as the intact repository holds it."""
    from packscope.core.errors import PackscopeError
    from packscope.core.repo.session import open_session

    repo = damaged_copy(two_packs, tmp_path / "r", 0, -1, False)
    pack = sorted((repo / ".git" / "objects" / "pack").glob("*.pack"))[0]
    listed = git("show-index", input=pack.with_suffix(".idx").read_bytes(), cwd=repo).decode().split("\n")
    rows = sorted((int(line.split()[0]), bytes.fromhex(line.split()[1])) for line in listed if line.strip())
    last = rows[-1][1]  # the entry the cut runs through
    ids = [oid for _, oid in rows]
    with open_session(str(repo)) as as_git, open_session(str(repo), reads="triage") as triage:
        for oid in ids:
            assert not as_git.store.contains(oid)
            with pytest.raises(PackscopeError):
                as_git.store.read(oid)
            assert triage.store.contains(oid)
            if oid == last:
                with pytest.raises(PackscopeError):
                    triage.store.read(oid)
                continue
            kind, data = triage.store.read(oid)
            assert data == git("cat-file", kind, oid.hex(), cwd=two_packs)
    with pytest.raises(ValueError):
        open_session(str(repo), reads="lenient")
