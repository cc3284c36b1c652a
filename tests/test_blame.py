"""`packscope blame` prints what `git blame` prints, byte for byte, in the
default format and with --porcelain, on histories built here: several
authors (one mapped by .mailmap, one with a wide name), lines edited,
moved, duplicated blocks of braces and blank lines (git's pre-pass and
indent heuristic decide where those go), a whole-file rename, merges where
each side changed the file (and a merge that changed it itself), a
criss-cross, a last line without a newline, and a second root.  Each
history with a commit-graph with changed-path filters and without one, on
the compiled path and with PACKSCOPE_PURE=1.
"""

from __future__ import annotations

import random

import pytest

from tests.cli import packscope
from tests.repos import git, git_dated

AUTHORS = [
    ("Ada Lovelace", "ada@example.com"),
    ("Bob", "bob@old.example.com"),  # mapped by .mailmap
    ("Zoë Ünïcode", "zoe@example.com"),
    ("山田太郎", "taro@example.com"),  # two columns a character
]


def _c_file(rng: random.Random, functions: int) -> list[str]:
    lines = ["#include <stdio.h>", ""]
    for f in range(functions):
        lines += [f"static int fn{f}(int x)", "{", "\tint y = x;", ""]
        for k in range(rng.randint(1, 5)):
            lines += [f"\tif (x > {k})", "\t\ty += x;" if k % 2 else "\t\ty -= 1;", ""]
        lines += ["\treturn y;", "}", ""]
    return lines


def _edit(rng: random.Random, lines: list[str], round_: int) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        at = rng.randrange(len(out) + 1)
        if kind < 0.3 and len(out) > 10:  # delete a few lines
            del out[at : at + rng.randint(1, 4)]
        elif kind < 0.55:  # insert a small block that looks like the others
            block = ["", f"static int added{round_}_{at}(void)", "{", "\treturn 0;", "}"]
            out[at:at] = block
        elif kind < 0.8 and len(out) > 20:  # move a block
            n = rng.randint(2, 6)
            block = out[at : at + n]
            del out[at : at + n]
            to = rng.randrange(len(out) + 1)
            out[to:to] = block
        elif out:  # change a line
            k = min(at, len(out) - 1)
            out[k] = out[k] + f" /* r{round_} */"
    return out


def _write(path, lines: list[str], newline_at_end: bool = True) -> None:
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    path.write_text(text, encoding="utf-8")


def _commit(repo, n: int, message: str, *extra: str) -> str:
    name, mail = AUTHORS[n % len(AUTHORS)]
    stamp = f"{1_700_000_000 + n * 3600} {'+0200' if n % 2 else '-0530'}"
    git("add", "-A", cwd=repo)
    return git_dated(
        stamp,
        "-c",
        f"user.name={name}",
        "-c",
        f"user.email={mail}",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        message,
        *extra,
        cwd=repo,
    )


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A history of main.c (renamed from old.c on the way) and notes.txt."""
    repo = tmp_path_factory.mktemp("blame")
    git("init", "-q", "-b", "main", cwd=repo)
    rng = random.Random(30)
    (repo / ".mailmap").write_text("Bob Mapped <bob@example.com> <bob@old.example.com>\n")
    lines = _c_file(rng, 12)
    _write(repo / "old.c", lines)
    _write(repo / "notes.txt", ["one", "two", "three"], newline_at_end=False)
    n = 0
    _commit(repo, n, "first")
    for _ in range(4):
        n += 1
        lines = _edit(rng, lines, n)
        _write(repo / "old.c", lines)
        _commit(repo, n, f"edit {n}\n\nwith a body")
    # a whole-file rename, nothing else changed
    git("mv", "old.c", "main.c", cwd=repo)
    n += 1
    _commit(repo, n, "rename old.c to main.c")
    # two branches that both edit, merged; then a criss-cross
    git("checkout", "-q", "-b", "side", cwd=repo)
    side = list(lines)
    for _ in range(3):
        n += 1
        side = _edit(rng, side, n)
        _write(repo / "main.c", side)
        _commit(repo, n, f"side {n}")
    git("checkout", "-q", "main", cwd=repo)
    for _ in range(2):
        n += 1
        lines = _edit(rng, lines, n)
        _write(repo / "main.c", lines)
        _commit(repo, n, f"main {n}")
    n += 1
    git("merge", "-q", "--no-commit", "-s", "ours", "side", cwd=repo)
    merged = lines[: len(lines) // 2] + side[len(side) // 2 :] + ["/* the merge's own line */"]
    _write(repo / "main.c", merged)
    _commit(repo, n, "merge side")
    lines = merged
    for _ in range(2):
        n += 1
        lines = _edit(rng, lines, n)
        _write(repo / "main.c", lines)
        _write(repo / "notes.txt", ["one", f"two {n}", "three"], newline_at_end=False)
        _commit(repo, n, f"after merge {n}")
    # a second root, merged in (its file is unrelated)
    git("checkout", "-q", "--orphan", "other", cwd=repo)
    git("rm", "-q", "-rf", ".", cwd=repo)
    _write(repo / "other.txt", ["from another root"])
    n += 1
    _commit(repo, n, "another root")
    git("checkout", "-q", "main", cwd=repo)
    n += 1
    git("merge", "-q", "--allow-unrelated-histories", "--no-commit", "other", cwd=repo)
    _commit(repo, n, "join the other root")
    return repo


@pytest.fixture(params=["no-graph", "graph-with-filters"])
def variant(request, history, tmp_path):
    """The history cloned bare, with or without a commit-graph with Bloom filters."""
    bare = tmp_path / "clone.git"
    git("clone", "-q", "--bare", "--no-local", history, bare)
    if request.param == "graph-with-filters":
        git("commit-graph", "write", "--reachable", "--changed-paths", cwd=bare)
    return bare


def _cases(repo) -> list[tuple[str, str]]:
    revs = git("rev-list", "--all", cwd=repo).decode().split()
    out = []
    for rev in [*revs[:: max(1, len(revs) // 5)], "HEAD"]:
        for f in git("ls-tree", "-r", "--name-only", rev, cwd=repo).decode().split():
            if f != ".mailmap":
                out.append((rev, f))
    return out


def test_blame_prints_what_git_blame_prints(variant, backend_path):
    from packscope.core.repo.session import open_session
    from packscope.inspector.commands.blame import blame_output

    cases = _cases(variant)
    assert len(cases) >= 10
    session = open_session(str(variant))
    try:
        for rev, f in cases:
            for fmt in ([], ["--porcelain"]):
                want = git("blame", *fmt, rev, "--", f, cwd=variant)
                got = blame_output(session, rev, f, porcelain=bool(fmt))
                assert got == want, f"{rev} {f} {fmt}"
    finally:
        session.close()


@pytest.mark.both_paths
@pytest.mark.parametrize("path", ["pure", "compiled"])
def test_the_command_prints_what_git_blame_prints(variant, path):
    env = {"PACKSCOPE_PURE": "1"} if path == "pure" else {}
    for fmt in ([], ["--porcelain"]):
        want = git("blame", *fmt, "HEAD", "--", "main.c", cwd=variant)
        got = packscope("-C", variant, "blame", *fmt, "HEAD", "--", "main.c", env=env)
        assert got.returncode == 0, got.stderr
        assert got.stdout == want


def test_blame_follows_the_rename_and_names_the_old_path(history):
    out = packscope("-C", history, "blame", "HEAD", "--", "main.c").stdout
    assert b" old.c " in out and b" main.c " in out
    assert out == git("blame", "HEAD", "--", "main.c", cwd=history)


def test_blame_of_a_missing_file_is_refused(history):
    p = packscope("-C", history, "blame", "HEAD", "--", "no-such-file", check=False)
    assert p.returncode == 128
    assert b"no such path" in p.stderr


def test_blame_follows_a_rename_with_edits_as_git_pairs_it(tmp_path):
    """A file renamed and edited in the same commit (about 90% alike): git's
    rename detection pairs it by similarity, so its old lines keep their
    first commit and the porcelain names the old path."""
    repo = tmp_path / "similar"
    repo.mkdir()
    git("init", "-q", "-b", "main", cwd=repo)
    lines = _c_file(random.Random(5), 10)
    _write(repo / "before.c", lines)
    _commit(repo, 0, "first")
    (repo / "before.c").unlink()
    _write(repo / "after.c", [*lines[:3], "/* renamed and edited */", *lines[3:]])
    _commit(repo, 1, "rename with an edit")
    assert git("diff", "--name-status", "-M", "HEAD~1", "HEAD", cwd=repo).startswith(b"R0")
    for fmt in ([], ["--porcelain"]):
        want = git("blame", *fmt, "HEAD", "--", "after.c", cwd=repo)
        got = packscope("-C", repo, "blame", *fmt, "HEAD", "--", "after.c")
        assert got.stdout == want
    assert b"filename before.c" in want
