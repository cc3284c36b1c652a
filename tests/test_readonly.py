"""Every command is read-only, proven three ways:

1. every file of the repository (content hash, mode, size, mtime) and every
   directory (listing, mtime) is the same after the command as before;
2. the command gives the same answer on a copy made read-only
   (``chmod -R a-w``) — which proves little when tests run as root, since
   root ignores permissions, hence:
3. the command runs under a Python audit hook (``sys.addaudithook``) that
   records any open for writing, rename, removal, mkdir, chmod, utime,
   truncate, link or writable mmap of a path inside the repository; there
   must be none.

Commands are those that exist when the suite runs (packscope.inspector.cli's
COMMANDS with a module present); each known one is run in several modes,
an unknown new one at least with ``--help``.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from packscope.inspector.cli import COMMANDS
from tests import repos
from tests.repos import git, git_env, git_text

ROOT = Path(__file__).resolve().parents[1]

INVOCATIONS = {
    "lookup": [
        ["lookup", "HEAD", "main~1", "{blob}"],
        ["lookup", "--json", "--algorithm", "all", "{blob}"],
        ["lookup", "--policy", "git", "ffffffffffffffffffffffffffffffffffffffff"],
    ],
    "cat-file": [
        ["cat-file", "-t", "HEAD"],
        ["cat-file", "-s", "{blob}"],
        ["cat-file", "-e", "{blob}"],
        ["cat-file", "-p", "HEAD^{{tree}}"],
        ["cat-file", "-p", "{tag}"],
        ["cat-file", "--batch-check", "--batch-all-objects"],
        ["cat-file", "--batch", "--batch-all-objects"],
        ["cat-file", "--batch-check=%(objectname) %(objectsize:disk) %(deltabase)", "--batch-all-objects"],
    ],
    "info": [["info"]],
    "log": [["log"], ["log", "-n", "3"]],
    "last-modified": [["last-modified"]],
    "fsck": [["fsck", "--no-progress"], ["fsck", "--json", "--progress"], ["fsck", "--connectivity-only"]],
    "bench": [["bench", "--list"]],
    "advise": [["advise"], ["advise", "--json", "--top", "5"]],
    "demo": [["demo", "--help"]],  # demo builds a repository of its own, elsewhere
}

TIMED = {"lookup", "bench"}  # their output holds timings: compare exit status only

AUDIT_RUNNER = r"""
import json, mmap, os, sys
repo, report, argv = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
seen = []

def inside(path):
    if isinstance(path, int) or path is None:
        return False
    try:
        p = os.path.realpath(os.path.abspath(os.fsdecode(path)))
    except (TypeError, ValueError):
        return False
    return p == repo or p.startswith(repo + os.sep)

def fd_inside(fd):
    try:
        return inside(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        return False

def hook(event, args):
    if event == "open":
        path, mode, flags = args
        writes = (isinstance(flags, int) and flags & WRITE) or (isinstance(mode, str) and set(mode) & set("wax+"))
        if writes and inside(path):
            seen.append([event, os.fsdecode(path), str(mode), flags])
    elif event in ("os.rename", "os.replace", "os.link", "os.symlink"):
        if inside(args[0]) or inside(args[1]):
            seen.append([event, str(args[0]), str(args[1])])
    elif event in ("os.remove", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.utime", "os.truncate",
                   "os.chflags", "os.lchmod", "shutil.rmtree", "os.mkfifo", "os.mknod"):
        if inside(args[0]) or (isinstance(args[0], int) and fd_inside(args[0])):
            seen.append([event, str(args[0])])
    elif event == "mmap.__new__":
        fileno, _length, access, _offset = args
        if access != mmap.ACCESS_READ and fileno != -1 and fd_inside(fileno):
            seen.append([event, fileno, access])

import atexit
atexit.register(lambda: open(report, "w").write(json.dumps(seen)))
sys.addaudithook(hook)
from packscope.inspector.cli import main
sys.exit(main(argv))
"""


def snapshot(root: Path) -> dict:
    """Path -> what must not change: content hash, mode, size, mtime (files);
    listing and mtime (directories)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        st = os.lstat(dirpath)
        out[os.path.relpath(dirpath, root) + "/"] = (sorted(dirnames + filenames), st.st_mtime_ns, st.st_mode)
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            digest = None
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            elif stat.S_ISLNK(st.st_mode):
                digest = os.readlink(path)
            out[os.path.relpath(path, root)] = (digest, st.st_mode, st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def readonly_repo(tmp_path_factory):
    """A non-bare repository with everything a command might touch: index,
    reflogs, packed refs, a pack with its .rev and .bitmap, a multi-pack-index,
    a commit-graph, loose objects and an annotated tag."""
    work = tmp_path_factory.mktemp("readonly") / "work"
    git("init", "-q", "-b", "main", work)
    for i in range(6):
        (work / f"dir{i % 2}").mkdir(exist_ok=True)
        (work / f"dir{i % 2}" / f"f{i}.txt").write_text(f"version {i}\n" * (i + 3))
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", f"commit {i}", cwd=work)
    git("tag", "-a", "-m", "a tag", "v1", cwd=work)
    git("-c", "pack.writeReverseIndex=true", "repack", "-a", "-d", "-q", "--write-bitmap-index", cwd=work)
    git("multi-pack-index", "write", cwd=work)
    git("commit-graph", "write", "--reachable", cwd=work)
    git("pack-refs", "--all", cwd=work)
    (work / "dir0" / "f0.txt").write_text("loose now\n")
    git("commit", "-q", "-am", "loose commit", cwd=work)
    git("update-index", "-q", "--refresh", cwd=work, check=False)
    return work


def invocations():
    found = []
    for name in COMMANDS:
        for args in INVOCATIONS.get(name, [[name, "--help"]]):
            found.append(pytest.param(args, id=" ".join(args)))
    return found


def expand(args, repo: Path) -> list[str]:
    blob = git_text("rev-parse", "HEAD:dir0/f0.txt", cwd=repo).strip()
    tag = git_text("rev-parse", "v1", cwd=repo).strip()
    return [a.format(blob=blob, tag=tag) for a in args]


def run_audited(repo: Path, args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, list]:
    report = tmp_path / f"audit-{os.getpid()}-{len(list(tmp_path.iterdir()))}.json"
    p = subprocess.run(
        [sys.executable, "-c", AUDIT_RUNNER, str(repo), str(report), "-C", str(repo), *args],
        capture_output=True,
        cwd=ROOT,
        env={**git_env(), "HOME": str(tmp_path)},
        timeout=300,
    )
    return p, json.loads(report.read_text()) if report.exists() else None


def make_readonly(root: Path, writable: bool = False) -> None:
    for dirpath, _dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, mode | stat.S_IWUSR if writable else mode & ~0o222)
        mode = os.stat(dirpath).st_mode
        os.chmod(dirpath, mode | stat.S_IWUSR if writable else mode & ~0o222)


@pytest.mark.parametrize("args", invocations())
def test_command_changes_nothing_and_writes_nowhere_in_the_repository(readonly_repo, tmp_path, args):
    repo = repos.copy_repo(readonly_repo, tmp_path / "repo")
    argv = expand(args, repo)
    before = snapshot(repo)
    p, audit = run_audited(repo, argv, tmp_path)
    assert b"Traceback" not in p.stderr, p.stderr.decode()
    assert audit == [], audit
    assert snapshot(repo) == before

    frozen = repos.copy_repo(readonly_repo, tmp_path / "frozen")
    make_readonly(frozen)
    try:
        frozen_before = snapshot(frozen)
        q, audit = run_audited(frozen, expand(args, frozen), tmp_path)
        assert audit == [], audit
        assert snapshot(frozen) == frozen_before
        assert q.returncode == p.returncode, q.stderr.decode()
        if args[0] not in TIMED:
            assert q.stdout.replace(bytes(frozen), b"REPO") == p.stdout.replace(bytes(repo), b"REPO")
    finally:
        make_readonly(frozen, writable=True)


def test_audit_hook_catches_a_write(readonly_repo, tmp_path):
    """The detector works: a deliberate write inside the repository is seen."""
    repo = repos.copy_repo(readonly_repo, tmp_path / "repo")
    runner = AUDIT_RUNNER.replace(
        "from packscope.inspector.cli import main",
        "open(os.path.join(repo, 'config'), 'a').close()\nfrom packscope.inspector.cli import main",
    )
    report = tmp_path / "audit.json"
    subprocess.run(
        [sys.executable, "-c", runner, str(repo), str(report), "-C", str(repo), "cat-file", "-t", "HEAD"],
        capture_output=True,
        cwd=ROOT,
        env=git_env(),
    )
    (event,) = json.loads(report.read_text())
    assert event[0] == "open" and event[1].endswith("config")


def test_every_available_command_is_exercised():
    assert {p.values[0][0] for p in invocations()} == set(COMMANDS)
