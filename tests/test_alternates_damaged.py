"""A damaged ``objects/info/alternates`` (a NUL byte, bytes that are no
path, lines naming nothing): git reads the file as one C string and skips
what it cannot use with a warning; packscope answers as git does, never with
a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from packscope.core.oid import SHA1
from packscope.core.store.alternates import resolve_alternates
from packscope.core.store.odb import ObjectStore
from tests import repos
from tests.cli import packscope_in
from tests.repos import git

SHARED = b"only in the borrowed-from repository\n"


def _pair(tmp_path: Path, packed_repo: Path) -> tuple[Path, Path, bytes]:
    """A repository (``user``) borrowing from ``base``, which holds a blob
    nobody else has; the blob's id."""
    base = repos.copy_repo(packed_repo, tmp_path / "base.git")
    user = repos.init_bare(tmp_path / "user.git")
    oid = git("hash-object", "-w", "--stdin", cwd=base, input=SHARED).strip()
    return base, user, oid


def _variants(base: Path) -> dict[str, bytes]:
    objects = str(base / "objects").encode()
    return {
        # a NUL inside the path: git looks for the path cut there
        "nul-inside-path": objects[:-5] + b"\0" + objects[-5:] + b"\n",
        # a NUL after a good line: git reads nothing past it
        "nul-after-good-line": objects + b"\n\0" + b"/nowhere\n",
        # a NUL before a good line: git never reads that line
        "nul-hides-good-line": b"/nowhere/objects\n\0\n" + objects + b"\n",
        # a NUL first: the file is empty for git
        "nul-first": b"\0" + objects + b"\n",
        # bytes that are no path, then a good line
        "garbage-then-good": b"\xff\xfe not a path\n" + objects + b"\n",
        # a relative line to nowhere, a comment, a good line, quoted
        "missing-then-quoted": b'../../nowhere/objects\n# comment\n"' + objects + b'"\n',
    }


@pytest.mark.parametrize(
    "variant",
    [
        "nul-inside-path",
        "nul-after-good-line",
        "nul-hides-good-line",
        "nul-first",
        "garbage-then-good",
        "missing-then-quoted",
    ],
)
def test_a_damaged_alternates_file_is_read_as_git_reads_it(tmp_path, packed_repo, variant):
    base, user, oid = _pair(tmp_path, packed_repo)
    (user / "objects" / "info" / "alternates").write_bytes(_variants(base)[variant])
    commands = [
        ("cat-file", "-e", oid.decode()),
        ("cat-file", "-p", oid.decode()),
        ("cat-file", "--batch-all-objects", "--batch-check"),
        ("log", "--all", "--format=%H"),
        ("fsck",),
    ]
    for args in commands:
        want = git(*args, cwd=user, check=False)
        want_rc = _git_rc(user, *args)
        got = packscope_in(user, *args)
        assert b"Traceback" not in got.stderr, (args, got.stderr.decode(errors="replace"))
        assert got.returncode == want_rc, (args, got.returncode, want_rc, got.stderr)
        if args[0] != "fsck":
            assert got.stdout == want, args
    info = packscope_in(user, "info", "--json")
    assert b"Traceback" not in info.stderr and info.returncode == 0, info.stderr


def _git_rc(repo: Path, *args: str) -> int:
    import subprocess

    return subprocess.run(["git", *args], cwd=repo, capture_output=True, env=repos.git_env()).returncode


def test_an_alternates_line_that_is_no_usable_path_is_a_problem_not_an_error(tmp_path, packed_repo):
    base, user, oid = _pair(tmp_path, packed_repo)
    objects = str(base / "objects")
    # what no file can hold but a caller can pass: a NUL inside a path
    found, problems = resolve_alternates(str(user / "objects"), [objects[:4] + "\0" + objects[4:], objects])
    assert found == [objects]
    assert [p.kind for p in problems] == ["alternates-missing"]
    (user / "objects" / "info" / "alternates").write_bytes(b"\0" + objects.encode() + b"\n")
    store = ObjectStore(str(user / "objects"), SHA1, env_alternates=[objects[:4] + "\0" + objects[4:], objects])
    try:
        assert store.read(bytes.fromhex(oid.decode())) == ("blob", SHARED)
    finally:
        store.close()
