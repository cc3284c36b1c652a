"""Patches, counts and combined diffs pair lines as git's default diff does,
not as a minimal diff would: before its search, git's xdiff leaves out a
line that has many copies on the other side when it sits among lines with
none (here: a blank line inside a rewritten block, the new side full of
blank lines), so git deletes and re-adds it.  A combined diff diffs each
parent without context, which first cuts the common tail (whole 1024-byte
blocks): its counts of copies then leave out the tail's blank lines.

On a large rewrite git's search also gives up on minimality past a cost
(about 256 rounds): a catalog of 600 lines drawn from 50, rewritten.

Also as git prints them: an empty file added has no ---/+++ lines, and a
hunk header's function name cut at 80 bytes inside a UTF-8 character
loses the whole character.

Compared with ``git show``/``git diff`` in this process: ``packscope show``
(patch, --stat, --numstat, --cc) and the UI's diff text and counts."""

from __future__ import annotations

import random

import pytest

from packscope.core.history.line_diff import count_changes, edit_script
from packscope.core.objects import parse_commit
from packscope.inspector import commit_changes_model as model
from packscope.inspector.core_access import CoreAccess
from tests.cli import packscope_show_here
from tests.repos import git, git_dated


def _block(first: str, second: str) -> str:
    """A function whose body is two runs of calls around a blank line."""
    return (
        "def run():\n"
        + "".join(f"    {first}_{i}()\n" for i in range(4))
        + "\n"
        + "".join(f"    {second}_{i}()\n" for i in range(4))
    )


def _spaced(n: int) -> str:
    """The body rewritten: n calls, each after a blank line."""
    return "def run():\n" + "".join(f"\n    call_{i}()\n" for i in range(n))


# a tail longer than 1024 bytes ending in blank lines: git's context-free
# diff (each parent of a combined diff) cuts those blank lines first
TAIL = "".join(f"    # the shared tail of this file, its line number {k:02d}\n" for k in range(24)) + "\n" * 30
# a function name line over 80 bytes whose 80th byte is inside "é"
NAME = 'msgid "' + "é" * 40 + '"\n'
PO = NAME + "".join(f'"text {k}"\n' for k in range(6))


def _catalog(seed: int) -> str:
    """600 lines drawn from 50 (many repeated, some blank)."""
    rnd = random.Random(seed)
    words = [f'msgid "word {i}"\n' for i in range(40)] + ["\n"] * 10
    return "".join(rnd.choice(words) for _ in range(600))


@pytest.fixture(scope="module")
def pairs_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("pairs") / "repo"
    git("init", "-q", "-b", "main", repo)
    clock = [1_700_000_000]

    def write(files: dict[str, str]) -> None:
        for name, text in files.items():
            (repo / name).write_text(text)

    def commit(msg: str) -> None:
        clock[0] += 60
        git("add", "-A", cwd=repo)
        git_dated(f"{clock[0]} +0100", "commit", "-q", "-m", msg, cwd=repo)

    write(
        {
            "short.py": _block("step", "finish"),
            "long.py": _block("step", "finish") + TAIL,
            "notes.po": PO,
            "catalog.txt": _catalog(6),
        }
    )
    commit("base")
    git("checkout", "-q", "-b", "side", cwd=repo)
    write({"short.py": _block("walk", "stop"), "long.py": _block("walk", "stop") + TAIL})
    commit("side")
    git("checkout", "-q", "main", cwd=repo)
    write(
        {
            "short.py": _spaced(4) + "\n",
            "long.py": _spaced(3) + TAIL,
            "notes.po": PO.replace("text 5", "text five"),
            "empty.txt": "",
            "catalog.txt": _catalog(106),
        }
    )
    commit("rewrite")
    git("merge", "-q", "--no-commit", "side", cwd=repo, check=False)
    write({"short.py": _spaced(4) + "\n# merged\n", "long.py": _spaced(3) + "# merged\n" + TAIL})
    commit("merge")
    return repo


def test_the_rewrites_are_ones_git_diffs_non_minimally(pairs_repo):
    """The cases are what the tests are about: git deletes and re-adds the
    blank line that a minimal diff keeps (one line more each way), and its
    counts for the catalog are over the minimal ones."""
    for name in ("short.py", "long.py"):
        old = git("show", f"HEAD~2:{name}", cwd=pairs_repo).splitlines()
        new = git("show", f"HEAD^1:{name}", cwd=pairs_repo).splitlines()
        added, deleted = count_changes(edit_script(old, new))
        numstat = git("diff", "--numstat", "HEAD~2", "HEAD^1", "--", name, cwd=pairs_repo).split()
        assert (int(numstat[0]), int(numstat[1])) == (added + 1, deleted + 1), name
    # and the catalog's rewrite is one where git's search stops short
    counts = [
        git("diff", *minimal, "--numstat", "HEAD~2", "HEAD^1", "--", "catalog.txt", cwd=pairs_repo).split()[:2]
        for minimal in ([], ["--minimal"])
    ]
    assert int(counts[0][0]) > int(counts[1][0]), counts


def test_show_patch_and_counts_equal_git_show(pairs_repo, monkeypatch):
    for words in (["--stat", "--numstat", "-p"], ["--format=%s"]):
        want = git("show", *words, "HEAD^1", cwd=pairs_repo, env={"COLUMNS": "80"})
        assert packscope_show_here(pairs_repo, [*words, "HEAD^1"], monkeypatch) == want, words


def test_combined_diff_equals_git_show_cc(pairs_repo, monkeypatch):
    want = git("show", "--cc", "HEAD", cwd=pairs_repo)
    assert b"diff --cc long.py" in want and b"diff --cc short.py" in want
    assert packscope_show_here(pairs_repo, ["--cc", "HEAD"], monkeypatch) == want


def test_ui_diff_text_and_counts_equal_git_diff(pairs_repo):
    core = CoreAccess(str(pairs_repo))
    oid = bytes.fromhex(git("rev-parse", "HEAD^1", cwd=pairs_repo).decode().strip())
    with core.lock:
        commit = parse_commit(core.bulk.store.read(oid)[1], core.bulk.store.fmt, oid)
    (pc,) = model.list_changes(core, commit, oid)
    model.count_lines(core, [pc], counted=lambda: None, cancelled=lambda: False)
    assert sorted(c.path for c in pc.changes) == [b"catalog.txt", b"empty.txt", b"long.py", b"notes.po", b"short.py"]
    for i, change in enumerate(pc.changes):
        path = change.path.decode()
        want = git("diff", "HEAD~2", "HEAD^1", "--", path, cwd=pairs_repo)
        got = b"".join(line + b"\n" for line in model.patch_text(core, change))
        assert got == want, path
        numstat = git("diff", "--numstat", "HEAD~2", "HEAD^1", "--", path, cwd=pairs_repo).split()
        assert pc.counts[i] == (int(numstat[0]), int(numstat[1])), path
