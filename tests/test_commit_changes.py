"""What a commit changed, against git: the changed files with status
(``--name-status -M100%``: exact renames), ``--numstat`` line counts, and
each file's patch text (``git diff``), on a history built with git that holds
edits, additions, deletions, exact renames, mode and type changes, binary
files, missing final newlines and large random edits."""

from __future__ import annotations

import random

import pytest

from packscope.core.history.commit_changes import file_changes, line_counts, patch_lines
from packscope.core.history.line_diff import count_changes, edit_script
from packscope.core.repo.session import open_session
from tests.repos import build_every_change_kind, git, git_numstat, git_text


def _lines(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "{", "}", "", "return x;", "int f(void)", "  x++;"]
    return "".join(rnd.choice(words) + "\n" for _ in range(n))


def _mutate(text: str, seed: int, edits: int) -> str:
    rnd = random.Random(seed)
    lines = text.splitlines(keepends=True)
    for _ in range(edits):
        at = rnd.randrange(len(lines) + 1)
        action = rnd.random()
        if action < 0.4 and lines:
            del lines[min(at, len(lines) - 1)]
        elif action < 0.8:
            lines.insert(at, f"new line {rnd.randrange(1000)}\n")
        elif lines:
            lines[min(at, len(lines) - 1)] = "changed\n"
    return "".join(lines)


@pytest.fixture(scope="module")
def changes_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("changes") / "repo"
    big = _lines(400, 1)
    build_every_change_kind(repo, {"big.txt": big}, {"big.txt": _mutate(big, 2, 40), "added.txt": "fresh\nfile\n"})
    return repo


def _ours(repo):
    session = open_session(str(repo))
    head = bytes.fromhex(git_text("rev-parse", "HEAD", cwd=repo).strip())
    trees = [bytes.fromhex(git_text("rev-parse", f"{rev}^{{tree}}", cwd=repo).strip()) for rev in ("HEAD~1", "HEAD")]
    assert head
    return session, file_changes(session.store, trees[0], trees[1])


def test_changed_files_and_statuses_equal_gits(changes_repo):
    _, changes = _ours(changes_repo)
    expected = git_text("diff", "--name-status", "-M100%", "HEAD~1", "HEAD", cwd=changes_repo).splitlines()
    got = []
    for c in changes:
        if c.status == "R":
            got.append(f"{c.name_status}\t{c.old_path.decode()}\t{c.path.decode()}")
        else:
            got.append(f"{c.status}\t{c.path.decode()}")
    assert got == expected
    assert {c.status for c in changes} == {"A", "D", "M", "T", "R"}


def test_numstat_equals_gits(changes_repo):
    session, changes = _ours(changes_repo)
    expected = {
        path.encode(): None if added == "-" else (int(added), int(deleted))
        for path, (added, deleted) in git_numstat(changes_repo, "HEAD~1", "HEAD").items()
    }
    got = {c.path: line_counts(session.store, c) for c in changes}
    assert got == expected


def test_patch_text_equals_git_diff(changes_repo):
    """Every file but big.txt, whose random edits among repeated lines have
    several minimal alignments (git picks one with its indent heuristic;
    the counts above agree for it)."""
    session, changes = _ours(changes_repo)
    paths = [c.path.decode() for c in changes if c.path != b"big.txt"]
    expected = git("diff", "-M100%", "HEAD~1", "HEAD", "--", *paths, "moved/old-name.txt", cwd=changes_repo)
    got = [line for c in changes if c.path != b"big.txt" for line in patch_lines(session.store, c)]
    assert got == expected.split(b"\n")[:-1]
    assert any(line.startswith(b"@@") for line in got)  # hunks were compared, not only headers


def test_a_long_patch_is_cut_with_a_note(changes_repo):
    session, changes = _ours(changes_repo)
    big = next(c for c in changes if c.path == b"big.txt")
    cut = patch_lines(session.store, big, max_lines=10)
    assert cut[-1].startswith(b"[... the rest of this diff is not shown")
    assert sum(1 for line in cut if line[:1] in (b"+", b"-", b" ")) - 2 == 10  # 10 lines past the ---/+++ pair


@pytest.mark.parametrize("seed", range(40))
def test_edit_scripts_are_minimal_and_rebuild_the_new_side(seed):
    rnd = random.Random(seed)
    a = [rnd.choice([b"x", b"y", b"z", b"w"]) for _ in range(rnd.randrange(0, 40))]
    b = [rnd.choice([b"x", b"y", b"z", b"w"]) for _ in range(rnd.randrange(0, 40))]
    runs = edit_script(a, b)
    rebuilt = []
    for op, i, j, k in runs:
        if op == "=":
            assert a[i : i + k] == b[j : j + k]
            rebuilt += a[i : i + k]
        elif op == "+":
            rebuilt += b[j : j + k]
    assert rebuilt == b
    added, deleted = count_changes(runs)
    # minimal: equal to the length difference of an LCS-based edit
    lcs = _lcs(a, b)
    assert (added, deleted) == (len(b) - lcs, len(a) - lcs)


def _lcs(a, b) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]
