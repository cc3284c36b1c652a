"""`packscope cat-file` answers exactly as `git cat-file` does."""

from __future__ import annotations

import hashlib
import os
import select
import subprocess
import sys
from collections import defaultdict

import pytest

from tests.cli import packscope
from tests.repos import git, git_env, git_text

FULL = "%(objectname) %(objecttype) %(objectsize) %(objectsize:disk) %(deltabase)"
REPOS = [
    "packed_repo",
    "sha256_repo",
    "idxv1_repo",
    "idx64_repo",
    "many_packs_repo",
    "ref_delta_repo",
    "thin_completed_repo",
    "deep_chain_repo",
    "big_copies_repo",
    "loose_repo",
    "midx_repo",
]


@pytest.mark.parametrize("fixture", REPOS)
def test_batch_check_of_all_objects_equals_git(fixture, request):
    repo = request.getfixturevalue(fixture)
    want = git("cat-file", "--batch-all-objects", f"--batch-check={FULL}", cwd=repo)
    got = packscope("-C", repo, "cat-file", "--batch-all-objects", f"--batch-check={FULL}").stdout
    assert got == want


# Contents: the index-format variants (v1, 64-bit offsets, many packs) read
# entries no differently from the packed repository; --batch-check covers them.
CONTENT_REPOS = [r for r in REPOS if r not in {"idxv1_repo", "idx64_repo", "many_packs_repo"}]


@pytest.mark.parametrize("fixture", CONTENT_REPOS)
def test_batch_contents_of_all_objects_equal_git(fixture, request):
    repo = request.getfixturevalue(fixture)
    want = git("cat-file", "--batch-all-objects", "--batch", cwd=repo)
    got = packscope("-C", repo, "cat-file", "--batch-all-objects", "--batch").stdout
    assert got == want


def _ambiguous_prefix(ids: list[str]) -> str | None:
    by = defaultdict(list)
    for i in ids:
        by[i[:4]].append(i)
    return next((p for p, v in sorted(by.items()) if len(v) > 1), None)


@pytest.mark.parametrize("fixture", ["many_packs_repo", "packed_repo", "sha256_repo", "midx_repo"])
def test_mixed_present_absent_and_abbreviated_ids_equal_git(fixture, request):
    repo = request.getfixturevalue(fixture)
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    hashname = "sha256" if len(ids[0]) == 64 else "sha1"
    absent = [hashlib.new(hashname, b"absent %d" % n).hexdigest() for n in range(50)]
    lines = []
    for k, oid in enumerate(ids[::3]):
        lines += [oid, oid[: 7 + k % 5], absent[k % 50], absent[k % 50][:9]]
    lines += ["0" * len(ids[0]), "not-an-id", "abc"]
    amb = _ambiguous_prefix(ids)
    if amb:
        lines.append(amb)
    stdin = "\n".join(lines) + "\n"
    for fmt in ("%(objectname) %(objecttype) %(objectsize)", FULL):
        want = git("cat-file", f"--batch-check={fmt}", cwd=repo, input=stdin)
        got = packscope("-C", repo, "cat-file", f"--batch-check={fmt}", input=stdin).stdout
        assert got.decode().splitlines() == want.decode().splitlines()


def test_an_ambiguous_prefix_is_reported_like_git(packed_repo):
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=packed_repo).split()
    amb = _ambiguous_prefix(ids)
    assert amb, "the test repository should hold two ids sharing 4 hex digits"
    got = packscope("-C", packed_repo, "cat-file", "--batch-check", input=amb + "\n").stdout
    assert got == f"{amb} ambiguous\n".encode()


@pytest.mark.parametrize("fixture", ["packed_repo", "sha256_repo"])
def test_single_object_modes_equal_git(fixture, request):
    repo = request.getfixturevalue(fixture)
    head = git_text("rev-parse", "HEAD", cwd=repo).strip()
    tree = git_text("rev-parse", "HEAD^{tree}", cwd=repo).strip()
    tag = git_text("rev-parse", "v3", cwd=repo).strip()
    blob = git_text("rev-parse", "HEAD:foo.txt", cwd=repo).strip()
    for oid in (head, tree, tag, blob):
        for mode in ("-t", "-s", "-p"):
            assert packscope("-C", repo, "cat-file", mode, oid).stdout == git("cat-file", mode, oid, cwd=repo)
        assert packscope("-C", repo, "cat-file", "-e", oid).returncode == 0
    absent = "1" * len(head)
    assert packscope("-C", repo, "cat-file", "-e", absent).returncode == 1
    p = packscope("-C", repo, "cat-file", "-t", absent, check=False)
    assert p.returncode == 128 and b"Traceback" not in p.stderr and b"remedy" in p.stderr


def test_unknown_format_atom_is_a_clear_error(packed_repo):
    p = packscope("-C", packed_repo, "cat-file", "--batch-check=%(nosuchatom)", input="HEAD\n", check=False)
    assert p.returncode == 128
    assert b"unknown format element: %(nosuchatom)" in p.stderr and b"Traceback" not in p.stderr


def test_rest_atom_keeps_the_rest_of_the_line(packed_repo):
    head = git_text("rev-parse", "HEAD", cwd=packed_repo).strip()
    stdin = f"{head} some text here\n{head[:10]} more\n"
    fmt = "%(objectname) %(objecttype) [%(rest)]"
    assert packscope("-C", packed_repo, "cat-file", f"--batch-check={fmt}", input=stdin).stdout == git(
        "cat-file", f"--batch-check={fmt}", cwd=packed_repo, input=stdin
    )


def test_a_batch_answers_each_line_before_the_next_arrives(packed_repo):
    # A script that writes one id and waits for its answer must get it at
    # once (git flushes per object too); stdin stays open throughout.
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=packed_repo).split()[:3]
    p = subprocess.Popen(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(packed_repo), "cat-file", "--batch-check"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=git_env(),
    )
    try:
        for text in [*ids, "0" * 39 + "1"]:
            p.stdin.write(text.encode() + b"\n")
            p.stdin.flush()
            ready, _, _ = select.select([p.stdout], [], [], 30)
            assert ready, f"no answer to {text} while stdin is still open"
            line = os.read(p.stdout.fileno(), 4096).decode()
            assert line.startswith(text) and line.endswith("\n")
    finally:
        p.stdin.close()
        p.wait(30)


def test_batch_output_is_the_same_when_python_runs_unbuffered(packed_repo):
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=packed_repo).split()
    stdin = "\n".join([*ids[:50], "f" * 40, "HEAD", "", *ids[50:80]]) + "\n"
    for unbuffered in (False, True):
        env = {k: v for k, v in git_env().items() if k != "PYTHONUNBUFFERED"}
        if unbuffered:
            env["PYTHONUNBUFFERED"] = "1"
        got = subprocess.run(
            [sys.executable, "-m", "packscope.inspector.cli", "-C", str(packed_repo), "cat-file", "--batch"],
            input=stdin.encode(),
            capture_output=True,
            env=env,
        ).stdout
        assert got == git("cat-file", "--batch", cwd=packed_repo, input=stdin)


@pytest.mark.parametrize("fmt", ["%(objectname) %(objecttype)", "%(objectname) [%(rest)]"])
def test_blank_lines_and_whitespace_around_names_are_answered_as_git_does(packed_repo, fmt):
    # Without %(rest) the whole line is the name; with it, the name ends at
    # the first space or tab and the rest starts after the whitespace.
    stdin = " HEAD\nHEAD \n\n\tx y\nHEAD \t  x  y \nHEAD\tz\n  \nHEAD\n"
    got = packscope("-C", packed_repo, "cat-file", f"--batch-check={fmt}", input=stdin).stdout
    assert got == git("cat-file", f"--batch-check={fmt}", cwd=packed_repo, input=stdin)


def test_print_shows_odd_tree_modes_as_git_does(tmp_path):
    """cat-file -p of a tree whose modes git would not write: group-writable
    and non-executable files, a symlink with permission bits, a gitlink, an
    unknown file type and a mode wider than 32 bits."""
    repo = tmp_path / "odd-modes.git"
    git("init", "-q", "--bare", repo)
    blob = bytes.fromhex(git_text("hash-object", "-w", "--stdin", cwd=repo, input="x").strip())
    sub = bytes.fromhex(git_text("mktree", cwd=repo, input="").strip())
    entries = [
        (b"100664", b"a"),
        (b"100600", b"b"),
        (b"160000", b"c"),
        (b"40000", b"d", sub),
        (b"170000", b"e"),
        (b"%o" % ((1 << 36) | 0o100775), b"f"),
        (b"120777", b"l"),
    ]
    raw = b"".join(e[0] + b" " + e[1] + b"\0" + (e[2] if len(e) > 2 else blob) for e in entries)
    tree = git_text("hash-object", "--literally", "-t", "tree", "-w", "--stdin", cwd=repo, input=raw).strip()
    want = git("cat-file", "-p", tree, cwd=repo)
    assert packscope("-C", repo, "cat-file", "-p", tree).stdout == want
    assert len(want.splitlines()) == len(entries)
