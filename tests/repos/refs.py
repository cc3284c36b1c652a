"""The refs repository: every kind of ref, symref, worktree and clash the
ref store and revision tests read (tests/test_refs.py, tests/test_revision.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.repos.common import git, git_dated, git_text

# --- refs and revisions (tests/test_refs.py, tests/test_revision.py) ------------


def refs_worktree(main: Path) -> Path:
    """The linked worktree build_refs_repo adds beside ``main``."""
    return main.parent / (main.name + "-wt")


def refs_repo_placeholders(path: Path) -> dict[str, str]:
    """Values for the placeholders that revision tests write in place of
    build_refs_repo's ids: ``<c1>`` (main~5), ``<c1_7>`` (its first 7 digits),
    ``<c2>``, ``<c5_7>``, ``<v1_9>``, an absent id, the null id, the linked
    worktree's name …"""

    def rp(rev: str) -> str:
        return git_text("rev-parse", rev, cwd=path).strip()

    c1, c2, c5, v1 = rp("main~5"), rp("main~4"), rp("main~2"), rp("refs/tags/v1")
    hexsz = len(c1)
    absent = ("deadbeef" * 8)[:hexsz]
    return {
        "<c1>": c1,
        "<c1_7>": c1[:7],
        "<c1_8>": c1[:8],
        "<c2>": c2,
        "<c5_7>": c5[:7],
        "<c5_12>": c5[:12],
        "<c5_10_upper>": c5[:10].upper(),
        "<v1_9>": v1[:9],
        "<absent>": absent,
        "<absent_9>": absent[:9],
        "<null>": "0" * hexsz,
        "<wt>": refs_worktree(path).name,
    }


def fill_placeholders(text: str, values: dict[str, str]) -> str:
    for k, v in values.items():
        text = text.replace(k, v)
    return text


# Refs build_refs_repo makes that name one ref each: HEAD and @, main by
# its short and longer names, a symbolic ref, a branch moved after packing
# and one only in a loose file, lightweight and annotated tags (one of them a
# tag of a tag, one written after packing).
REFS_REPO_NAMES = [
    "HEAD",
    "@",
    "main",
    "heads/main",
    "refs/heads/main",
    "alias",
    "side",
    "loose-only",
    "light",
    "v1",
    "v1-outer",
    "v2",
]

# Names that build_refs_repo gives several refs, one per rule of git's dwim
# order (refs/X, refs/tags/X, refs/heads/X, refs/remotes/X, its HEAD), and
# the pseudo refs it writes: which commit a name resolves to tells the rule.
REFS_REPO_CLASHES = ["x1", "x2", "x3", "x4", "origin", "origin/main", "remotes/x3", "ORIG_HEAD", "bisect/main-bisect"]

# <revision>:<path> forms over build_refs_repo's trees (spaces, non-ASCII,
# trailing slashes, through a tag, a merge's second parent and a tree).
REFS_REPO_PATHS = [
    "HEAD:",
    "HEAD:a.txt",
    "HEAD:dir",
    "HEAD:dir/",
    "HEAD:dir/sub/c.txt",
    "HEAD:sp ace.txt",
    "HEAD:uni-\u00e9.txt",
    "v1:dir/b.txt",
    "tree-tag:dir/sub",
    "HEAD~3^2:side.txt",
    "HEAD^{tree}:dir",
]


def build_refs_repo(root: Path, object_format: str = "sha1") -> Path:
    """A work tree repository whose refs exercise every lookup rule.

    History on main (HEAD): c1 - c2 - c4 (merges side: s1 - s2 off c1) - c5
    - c6 (octopus of c5, o1, o2) - c7 (adds a gitlink).  Tags: ``light``
    (lightweight), ``v1`` (annotated, c4), ``v1-outer`` (a tag of v1),
    ``tree-tag``, ``blob-tag``, and ``v2`` written after packing.  Refs are
    packed with ``git pack-refs --all``, then ``side`` moves and
    ``loose-only`` appears loosely.  Clashing names x1..x4 test the dwim
    order; a branch named like a hex abbreviation of c1 points at c5, and one
    named with c2's full id points at c5 too.  A linked worktree (branch
    ``feature``) has its own refs/bisect and refs/worktree refs.
    """
    main = root / f"refs-{object_format}"
    wt = refs_worktree(main)
    for p in (main, wt):
        if p.exists():
            shutil.rmtree(p)
    git("init", "-q", "-b", "main", f"--object-format={object_format}", main)
    clock = [1_600_000_000]

    def an_hour_later(*args):
        clock[0] += 3600
        return git_dated(f"{clock[0]} +0200", *args, cwd=main)

    def commit(*args):
        return an_hour_later("commit", "-q", *args)

    def write(rel, text):
        p = main / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)

    write("a.txt", "alpha\n")
    write("dir/b.txt", "beta\n")
    write("dir/sub/c.txt", "gamma\n")
    write("sp ace.txt", "space\n")
    write("uni-\u00e9.txt", "unicode\n")
    git("add", "-A", cwd=main)
    c1 = commit("-m", "c1")
    write("a.txt", "alpha 2\n")
    git("add", "-A", cwd=main)
    c2 = commit("-m", "c2")
    git("checkout", "-q", "-b", "side", c1, cwd=main)
    write("side.txt", "side 1\n")
    git("add", "-A", cwd=main)
    commit("-m", "s1")
    write("side.txt", "side 2\n")
    git("add", "-A", cwd=main)
    commit("-m", "s2")
    git("checkout", "-q", "main", cwd=main)
    c4 = an_hour_later("merge", "-q", "--no-ff", "-m", "c4 merge side", "side")
    write("dir/b.txt", "beta 2\n")
    git("add", "-A", cwd=main)
    c5 = commit("-m", "c5")
    for name in ("o1", "o2"):
        git("checkout", "-q", "-b", name, c5, cwd=main)
        write(f"{name}.txt", name + "\n")
        git("add", "-A", cwd=main)
        commit("-m", name)
    git("checkout", "-q", "main", cwd=main)
    an_hour_later("merge", "-q", "--no-ff", "-m", "c6 octopus", "o1", "o2")
    fake = "5" * (40 if object_format == "sha1" else 64)
    git("update-index", "--add", "--cacheinfo", f"160000,{fake},mod/ule", cwd=main)
    commit("-m", "c7 gitlink")

    tag_env = {"GIT_COMMITTER_DATE": f"{clock[0] + 60} +0000"}
    git("tag", "light", c2, cwd=main)
    git("tag", "-a", "-m", "v1", "v1", c4, cwd=main, env=tag_env)
    git("-c", "advice.nestedTag=false", "tag", "-a", "-m", "outer", "v1-outer", "v1", cwd=main, env=tag_env)
    git("tag", "-a", "-m", "a tree", "tree-tag", f"{c5}^{{tree}}", cwd=main, env=tag_env)
    git("tag", "-a", "-m", "a blob", "blob-tag", f"{c1}:a.txt", cwd=main, env=tag_env)
    git("update-ref", "refs/remotes/origin/main", c2, cwd=main)
    git("symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main", cwd=main)
    git("symbolic-ref", "refs/heads/alias", "refs/heads/main", cwd=main)
    # Name clashes for the dwim order: refs/X, tags, heads, remotes.
    for ref, rev in [
        ("refs/x1", "main~1"),
        ("refs/tags/x1", c1),
        ("refs/heads/x1", c2),
        ("refs/tags/x2", c1),
        ("refs/heads/x2", c2),
        ("refs/heads/x3", c1),
        ("refs/remotes/x3", c2),
        ("refs/remotes/x4", c1),
    ]:
        git("update-ref", ref, rev, cwd=main)
    git("branch", c1[:8], c5, cwd=main)  # a branch that looks like an abbreviation
    git("branch", c2, c5, cwd=main)  # a branch named with a full id
    git("pack-refs", "--all", cwd=main)
    git("update-ref", "refs/heads/side", c5, cwd=main)  # loose, hiding the packed one
    git("branch", "loose-only", c2, cwd=main)
    git("tag", "-a", "-m", "v2", "v2", c5, cwd=main, env=tag_env)
    git("update-ref", "ORIG_HEAD", c1, cwd=main)
    git("update-ref", "refs/bisect/main-bisect", c4, cwd=main)
    git("worktree", "add", "-q", "-b", "feature", wt, c2, cwd=main)
    git("update-ref", "refs/bisect/bad", c1, cwd=wt)
    git("update-ref", "refs/worktree/mine", c4, cwd=wt)
    return main
