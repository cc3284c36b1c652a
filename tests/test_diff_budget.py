"""Line diffs of big and odd files against git, and their budgets: the
counts (``git diff --numstat``) and patch text (``git diff``) of a long file
with every 37th line rewritten, CRLF lines, missing final newlines either
way, a NUL byte just inside and just past git's 8,000-byte binary probe,
files emptied and filled; a diff stops when its check raises; the Commit
screen's model skips files over its size budget, saying why, and counts the
rest as git does."""

from __future__ import annotations

import random

import pytest

from packscope.core.errors import CancelledError
from packscope.core.history.commit_changes import file_changes, line_counts, patch_lines
from packscope.core.history.line_diff import count_lines
from packscope.core.repo.session import open_session
from packscope.inspector import commit_changes_model as model
from packscope.inspector.core_access import CoreAccess
from tests.repos import git, git_numstat, git_text


def _long_text(lines: int, seed: int) -> bytes:
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "return x;", "int f(void)", "{", "}"]
    return b"".join(b"%d %s %s\n" % (i, rnd.choice(words).encode(), rnd.choice(words).encode()) for i in range(lines))


def _every_37th_rewritten(text: bytes) -> bytes:
    lines = text.split(b"\n")[:-1]
    return b"".join((b"rewritten %d\n" % i if i % 37 == 5 else line + b"\n") for i, line in enumerate(lines))


FIRST = {
    "long.txt": _long_text(20_000, 1),
    "crlf.txt": b"".join(b"line %d\r\n" % i for i in range(60)),
    "eol-to-noeol.txt": b"one\ntwo\nthree\n",
    "noeol-to-eol.txt": b"one\ntwo\nthree",
    "noeol-both.txt": b"one\ntwo\nthree",
    "late-nul.txt": b"x" * 8100 + b"\n" + b"\0 after the probe\n" + b"tail\n",
    "early-nul.dat": b"head\n" + b"x" * 7900 + b"\0\n" + b"tail\n",
    "emptied.txt": b"all\nof\nthis\ngoes\n",
    "filled.txt": b"",
}
SECOND = {
    "long.txt": _every_37th_rewritten(FIRST["long.txt"]),
    "crlf.txt": b"".join((b"edit %d\r\n" if i % 9 == 4 else b"line %d\r\n") % i for i in range(60)),
    "eol-to-noeol.txt": b"one\ntwo\nthree",
    "noeol-to-eol.txt": b"one\ntwo\nthree\n",
    "noeol-both.txt": b"one\nTWO\nthree and more",
    "late-nul.txt": b"x" * 8100 + b"\n" + b"\0 after the probe\n" + b"changed tail\n",
    "early-nul.dat": b"head\n" + b"x" * 7900 + b"\0\n" + b"other tail\n",
    "emptied.txt": b"",
    "filled.txt": b"now\nsomething\n",
}


@pytest.fixture(scope="module")
def odd_repo(tmp_path_factory):
    repo = tmp_path_factory.mktemp("odd") / "repo"
    git("init", "-q", "-b", "main", str(repo))
    for version in (FIRST, SECOND):
        for name, data in version.items():
            (repo / name).write_bytes(data)
        git("add", "-A", cwd=repo)
        git("commit", "-q", "-m", "version", cwd=repo)
    return repo


def _changes(repo):
    session = open_session(str(repo))
    trees = [bytes.fromhex(git_text("rev-parse", f"{r}^{{tree}}", cwd=repo).strip()) for r in ("HEAD~1", "HEAD")]
    return session, file_changes(session.store, trees[0], trees[1])


def test_big_and_odd_files_count_as_git_numstat(odd_repo):
    session, changes = _changes(odd_repo)
    expected = {
        path.encode(): None if added == "-" else (int(added), int(deleted))
        for path, (added, deleted) in git_numstat(odd_repo, "HEAD~1", "HEAD").items()
    }
    got = {c.path: line_counts(session.store, c) for c in changes}
    assert got == expected
    assert got[b"long.txt"] == (541, 541)  # 20,000 lines, every 37th rewritten
    assert got[b"late-nul.txt"] is not None and got[b"early-nul.dat"] is None  # git's 8,000-byte probe


def test_big_and_odd_files_patch_as_git_diff(odd_repo):
    session, changes = _changes(odd_repo)
    for c in changes:
        want = git("diff", "HEAD~1", "HEAD", "--", c.path.decode(), cwd=odd_repo).split(b"\n")[:-1]
        assert patch_lines(session.store, c, max_lines=10**6) == want, c.path
    long = next(c for c in changes if c.path == b"long.txt")
    assert sum(1 for line in patch_lines(session.store, long, max_lines=10**6) if line.startswith(b"@@")) == 541


def test_a_diff_stops_when_its_check_raises():
    # Two unrelated texts over a few repeated lines: the search itself is
    # long (numbering each side's 70 KB takes two checks each, the rest is
    # the search's).
    words = [b"w%d\n" % i for i in range(40)]
    old, new = (b"".join(random.Random(seed).choices(words, k=10_000)) for seed in (2, 3))
    calls = []

    def check() -> None:
        calls.append(1)
        if len(calls) == 8:
            raise CancelledError("stop")

    with pytest.raises(CancelledError):
        count_lines(old, new, check)
    assert len(calls) == 8  # called while the search went on, and nothing after it raised


def test_files_over_the_size_budget_are_skipped_with_the_reason(odd_repo, monkeypatch):
    monkeypatch.setattr(model, "FILE_BUDGET_BYTES", 100 * 1024)
    monkeypatch.setattr(model, "BUDGET_TEXT", model.size_text(100 * 1024))
    core = CoreAccess(str(odd_repo))
    core.open()
    from packscope.core.objects import parse_commit

    head = bytes.fromhex(git_text("rev-parse", "HEAD", cwd=odd_repo).strip())
    store = core.bulk.store
    commit = parse_commit(store.read(head)[1], store.fmt, head)
    (pc,) = model.list_changes(core, commit)
    model.count_lines(core, [pc], counted=lambda: None, cancelled=lambda: False)
    assert pc.counting_done
    skipped = {pc.changes[i].path: why for i, why in pc.skipped.items()}
    size = max(len(FIRST["long.txt"]), len(SECOND["long.txt"]))  # the larger side
    assert skipped == {b"long.txt": f"{round(size / 1024):,} KB, over the 100 KB budget"}
    numstat = git_numstat(odd_repo, "HEAD~1", "HEAD")
    counted = {pc.changes[i].path.decode(): c for i, c in pc.counts.items()}
    assert counted == {p: None if a == "-" else (int(a), int(d)) for p, (a, d) in numstat.items() if p != "long.txt"}
    core.close()
