"""last_modified on a wide directory: each tree is read once per
comparison, not once per entry, on both paths, with git's answers."""

from __future__ import annotations

import pytest

from packscope.core import native
from packscope.core.history.last_modified import last_modified
from tests import repos
from tests.cli import packscope
from tests.object_source import core_store
from tests.test_last_modified import git_answers

WIDE = 150


def _wide_stream(n: int) -> bytes:
    """A root commit adding ``n`` files under d/, then commits changing every
    3rd, every 5th and one file, and a merge of a side branch that changes
    every 4th."""
    out = bytearray()
    t = 1_600_000_000

    def commit(mark: int, when: int, parent: int | None, files: dict[str, bytes], branch: str = "main") -> None:
        out.extend(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark))
        out.extend(b"committer C <c@x> %d +0000\ndata 3\nc%d\n" % (when, mark % 10))
        if parent is not None:
            out.extend(b"from :%d\n" % parent)
        for path, data in files.items():
            out.extend(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        out.extend(b"\n")

    commit(1, t, None, {f"d/f{i:05d}": b"file %d\n" % i for i in range(n)})
    commit(2, t + 10, 1, {f"d/f{i:05d}": b"three %d\n" % i for i in range(0, n, 3)})
    commit(3, t + 20, 2, {f"d/f{i:05d}": b"four %d\n" % i for i in range(0, n, 4)}, branch="side")
    commit(4, t + 30, 2, {f"d/f{i:05d}": b"five %d\n" % i for i in range(0, n, 5)})
    # the merge takes the side's files (where both changed one, the side's):
    # those entries are TREESAME to the second parent, whose chain answers
    out.extend(
        b"commit refs/heads/main\nmark :5\ncommitter C <c@x> %d +0000\ndata 2\nm\nfrom :4\nmerge :3\n" % (t + 40)
    )
    for i in range(0, n, 4):
        out.extend(b"M 100644 inline d/f%05d\ndata %d\n%s\n" % (i, len(b"four %d\n" % i), b"four %d\n" % i))
    out.extend(b"\n")
    commit(6, t + 50, 5, {"d/f00007": b"last\n"})
    return bytes(out)


@pytest.fixture(scope="module")
def wide_repo(tmp_path_factory):
    repo = repos.init_bare(tmp_path_factory.mktemp("wide") / "wide.git")
    repos.git("fast-import", "--quiet", cwd=repo, input=_wide_stream(WIDE))
    return repo


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "pure"])
def test_a_wide_directory_is_answered_as_git_with_one_pass_per_tree(wide_repo, door, compiled):
    built = native.compiled_module()
    if compiled and built is None:
        pytest.skip("the compiled module is not built")
    lookups = []
    door.use("compiled" if compiled else "pure")
    if compiled:
        one = built.tree_entry

        def counted(data, name, rawsz):
            lookups.append(name)
            return one(data, name, rawsz)

        door.stub("tree_entry", counted)
    want = {n: c for n, c in git_answers(wide_repo, "main", "d").items()}
    assert len(want) == WIDE and len(set(want.values())) == 5  # root, c2, side, c4, c6
    store = core_store(wide_repo)
    try:
        head = bytes.fromhex(repos.git_text("rev-parse", "main", cwd=wide_repo).strip())
        got = {n: (c.hex() if c else "") for n, c in last_modified(store, head, "d")}
    finally:
        store.close()
    assert got == want
    # one-by-one lookups only for a few names (the directory "d" in each
    # commit's root, a few changed names): never one per entry of d
    assert len(lookups) < WIDE // 2, len(lookups)


@pytest.mark.both_paths
def test_the_command_agrees_on_both_paths(wide_repo):
    outs = [
        packscope("-C", wide_repo, "last-modified", "main", "d", env={"PACKSCOPE_PURE": pure}).stdout
        for pure in ("0", "1")
    ]
    assert outs[0] == outs[1] and outs[0].count(b"\n") == WIDE
