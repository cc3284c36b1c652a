"""fsck's tree check, compiled (core/_native.c fsck_tree, tree_unseen) against
the pure reference (core/fsck/syntax.py's _tree_is_clean and
check_tree_closely, special_blobs.add_tree, the walk's tree_items loop), on
the same inputs: the same "clean" verdict and ids, the compiled bits naming
exactly the message ids the close look reports, the same .gitmodules /
.gitattributes candidates, the same unseen entries; and whole fsck runs with
both paths giving the same findings.  git's own verdicts on crafted trees are
in test_fsck_syntax.py (its oracle runs whichever path is built)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from stat import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG

import pytest
from hypothesis import strategies as st

from packscope.core import objects
from packscope.core.errors import CorruptObjectError
from packscope.core.fsck import syntax
from packscope.core.fsck.special_blobs import SpecialBlobs
from packscope.core.fsck.syntax import (
    TREE_FLAGS,
    TREE_LOOK_BUDGET,
    TREE_LOOK_MODE,
    TREE_LOOK_NAME,
    check_tree_closely,
)
from tests import repos
from tests.delta_paths import NOT_BUILT, _native, compiled_against_pure
from tests.test_fsck_syntax import TREES

NAMES = [
    b"a", b"b", b"a.c", b"a-b", b"a!b", b"a b", b".", b"..", b".git", b".GIT", b".Git.", b"git~1", b"GIT~1 ",
    b".git:x", b".git. .", b"a/b", b".gitmodules", b".GITMODULES", b"gitmod~1", b".gitattributes", b"GITATT~1",
    b".gitignore", b".mailmap", b".mailmap.", b"gitattributes.txt", b"Documentation", b"\xff", b"x\xe2\x80\x8c",
    ".g\u200cit".encode(), ".gitmodule\u017f".encode(), "\ufeff.mailmap".encode(), b"gi7eba~1", b"tgit",
]  # fmt: skip
MODES = [b"100644", b"40000", b"100755", b"120000", b"160000", b"040000", b"100664", b"100600", b"0", b"7" * 12, b"1"]
EXACT = 0x7FF  # the message-id bits
NAME_BITS = TREE_FLAGS["hasDotgit"] | TREE_FLAGS["gitmodulesSymlink"]


def sort_key(entry: tuple[bytes, bytes, bytes]) -> bytes:
    mode, name, _ = entry
    return name + b"/" if mode in (b"40000", b"040000") else name


@st.composite
def trees(draw, rawsz):
    entries = []
    for _ in range(draw(st.integers(0, 8))):
        name = draw(st.one_of(st.sampled_from(NAMES), st.binary(min_size=1, max_size=4).filter(lambda b: 0 not in b)))
        mode = draw(st.sampled_from(MODES))
        oid = draw(st.one_of(st.just(bytes(rawsz)), st.binary(min_size=rawsz, max_size=rawsz)))
        entries.append((mode, name, oid))
    if draw(st.booleans()):
        entries.sort(key=sort_key)  # git's order: the common, "regular" case
    body = b"".join(m + b" " + n + b"\0" + o for m, n, o in entries)
    if draw(st.integers(0, 9)) == 0:
        body = body[: draw(st.integers(0, len(body)))]  # cut anywhere
    return body


def message_bits(body, fmt) -> int:
    return sum({TREE_FLAGS[p.msg_id] for p in check_tree_closely(body, fmt)})


def pure_ids(body, fmt):
    ids: list = []
    clean = syntax._tree_is_clean(body, fmt.rawsz, ids)
    return clean, ids


def specials(add):
    s = SpecialBlobs()
    add(s)
    return s.found, s.named_by_promisor


def assert_same_verdict(body, fmt):
    flags, ids, candidates = _native.fsck_tree(body, fmt.rawsz)
    clean, clean_ids = pure_ids(body, fmt)
    if flags == 0:
        assert clean
        assert list(ids) == list(clean_ids[0] if clean_ids else ())
    else:
        assert ids is None
        # only a name the compiled check cannot fold (non-ASCII) may be clean for the pure path
        assert not clean or flags == TREE_LOOK_NAME
    expected = message_bits(body, fmt)
    mask = EXACT
    if flags & TREE_LOOK_NAME:
        mask &= ~NAME_BITS
    if flags & TREE_LOOK_BUDGET:
        mask &= ~TREE_FLAGS["duplicateEntries"]
    assert flags & mask == expected & mask
    if flags & TREE_FLAGS["badTree"]:
        assert candidates is None
    else:
        assert specials(lambda s: s.add_candidates(candidates, True)) == specials(
            lambda s: s.add_tree(body, fmt.rawsz, True)
        )


@compiled_against_pure
def test_compiled_tree_check_gives_the_pure_verdict(fmt, data):
    assert_same_verdict(data.draw(trees(fmt.rawsz)), fmt)


@NOT_BUILT
@pytest.mark.parametrize("case", list(TREES))
def test_compiled_tree_check_on_the_cases_git_judges(case):
    from packscope.core.oid import SHA1

    assert_same_verdict(TREES[case], SHA1)
    flags, _, _ = _native.fsck_tree(TREES[case], 20)
    assert (flags == 0) == (case == "good")


@NOT_BUILT
def test_a_mode_git_does_not_write_is_looked_at_closely():
    body = b"100664 a\0" + b"\1" * 20
    flags, _, _ = _native.fsck_tree(body, 20)
    assert flags == TREE_LOOK_MODE  # clean for git's messages, but not for the quick check
    assert check_tree_closely(body, objects.SHA1 if hasattr(objects, "SHA1") else _sha1()) == []


def _sha1():
    from packscope.core.oid import SHA1

    return SHA1


@NOT_BUILT
def test_duplicates_far_apart_in_a_sorted_tree_are_found():
    # "a" (file) ... "a" (dir): between them, names that sort between "a" and "a/"
    oid = b"\1" * 20
    body = b"".join(m + b" " + n + b"\0" + oid for m, n in [(b"100644", b"a"), (b"100644", b"a!"), (b"100644", b"a-b"), (b"100644", b"a.c"), (b"40000", b"a")])  # fmt: skip
    flags, _, _ = _native.fsck_tree(body, 20)
    assert flags == TREE_FLAGS["duplicateEntries"] == message_bits(body, _sha1())


def pure_unseen(body, fmt, seen):
    try:
        items = objects.tree_items_py(body, fmt)
    except CorruptObjectError:
        return None
    out = []
    for mode, _name, oid in items:
        kind = S_IFMT(mode)
        if oid not in seen and kind in (S_IFDIR, S_IFREG, S_IFLNK):
            out.append((oid, int(kind == S_IFDIR)))
    return out


@compiled_against_pure
def test_unseen_entries_are_the_walks_entries(fmt, data):
    body = data.draw(trees(fmt.rawsz))
    items = objects.tree_patterns(fmt.rawsz).ids.findall(body)
    seen = set(data.draw(st.lists(st.sampled_from(items))) if items else [])
    assert _native.tree_unseen(body, fmt.rawsz, seen) == pure_unseen(body, fmt, seen)


@NOT_BUILT
def test_unseen_refuses_what_is_not_a_set():
    with pytest.raises(TypeError):
        _native.tree_unseen(b"", 20, [])


# --- whole runs --------------------------------------------------------------------------------


def fsck_json(repo, pure: bool, jobs: int):
    env = dict(os.environ, PACKSCOPE_PURE="1" if pure else "0", PACKSCOPE_FSCK_MIN_CHUNK="1")
    run = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(repo), "fsck", "--json", "--jobs", str(jobs)],
        capture_output=True,
        env=env,
        check=False,
    )
    return run.returncode, [json.loads(line) for line in run.stdout.splitlines()]


@pytest.mark.both_paths
@NOT_BUILT
def test_both_paths_find_the_same_in_a_repository_of_bad_trees(tmp_path):
    """Every crafted tree reachable from a commit, packed: the same findings,
    summary and exit status with the compiled and the pure path, 1 and 2 jobs."""
    repo = repos.init_bare(tmp_path / "bad.git")
    blob = repos.git("hash-object", "-w", "--stdin", cwd=repo, input=b"").decode().strip()
    written = [blob, repos.hash_literally(repo, "tree", b"")]
    entries = []
    for name, body in TREES.items():
        if name in ("truncated", "malformed mode"):
            continue  # trees git cannot parse: git's walk stops at them
        written.append(repos.hash_literally(repo, "tree", body))
        entries.append(b"40000 " + name.replace(" ", "-").encode() + b"\0" + bytes.fromhex(written[-1]))
    written.append(repos.hash_literally(repo, "tree", b"".join(sorted(entries, key=lambda e: e.split(b"\0")[0][6:]))))
    commit = f"tree {written[-1]}\nauthor A <a@b> 1 +0000\ncommitter A <a@b> 1 +0000\n\nbad trees\n"
    written.append(repos.hash_literally(repo, "commit", commit.encode()))
    repos.git("update-ref", "refs/heads/main", written[-1], cwd=repo)
    # packed by id (pack-objects --revs would refuse the bad trees), then the loose copies removed
    repos.git("pack-objects", "-q", repo / "objects" / "pack" / "pack", cwd=repo, input="\n".join(written) + "\n")
    repos.git("prune-packed", cwd=repo)
    runs = {(pure, jobs): fsck_json(repo, pure, jobs) for pure in (False, True) for jobs in (1, 2)}
    first = runs[(False, 1)]
    assert first[0] != 0 and any(f.get("msg_id") == "duplicateEntries" for f in first[1])
    for key, outcome in runs.items():
        assert outcome == first, key


# --- the walk's id set -------------------------------------------------------------------------


@compiled_against_pure
def test_the_compiled_id_set_answers_as_a_set_of_bytes(fmt, data):
    """add / in / len / clear as a Python set (the pure path's "seen") does,
    ids colliding in their first bytes included."""
    prefix = data.draw(st.binary(min_size=0, max_size=fmt.rawsz))
    ids = st.binary(min_size=fmt.rawsz - len(prefix), max_size=fmt.rawsz - len(prefix)).map(lambda b: prefix + b)
    compiled, reference = _native.id_set(fmt.rawsz), set()
    for op, oid in data.draw(st.lists(st.tuples(st.sampled_from(["add", "in", "clear"]), ids), max_size=3000)):
        if op == "add":
            compiled.add(oid)
            reference.add(oid)
        elif op == "clear" and data.draw(st.integers(0, 50)) == 0:
            compiled.clear()
            reference.clear()
        assert (oid in compiled) == (oid in reference)
        assert len(compiled) == len(reference)
    assert all(oid in compiled for oid in reference)
    null = bytes(fmt.rawsz)  # all zero: what the compiled table's empty slots hold
    before = len(reference)
    compiled.add(null)
    compiled.add(null)
    assert null in compiled and len(compiled) == before + (null not in reference)
    assert b"short" not in compiled and None not in compiled and bytes(fmt.rawsz + 1) not in compiled
    with pytest.raises(TypeError):
        compiled.add(b"short")
    # what a worker hands the parent: every id back to back, added there in one call
    raw = compiled.joined()
    assert len(raw) == len(compiled) * fmt.rawsz
    assert {raw[i : i + fmt.rawsz] for i in range(0, len(raw), fmt.rawsz)} == reference | {null}
    copy = _native.id_set(fmt.rawsz)
    copy.update_joined(raw)
    copy.update(list(reference)[:3])
    assert len(copy) == len(compiled) and all(oid in copy for oid in reference)
    with pytest.raises(ValueError):
        copy.update_joined(raw + b"x")


@compiled_against_pure
def test_unseen_entries_with_the_id_set_are_those_with_a_set(fmt, data):
    body = data.draw(trees(fmt.rawsz))
    items = objects.tree_patterns(fmt.rawsz).ids.findall(body)
    chosen = data.draw(st.lists(st.sampled_from(items))) if items else []
    seen = _native.id_set(fmt.rawsz)
    for oid in chosen:
        seen.add(oid)
    assert _native.tree_unseen(body, fmt.rawsz, seen) == pure_unseen(body, fmt, set(chosen))
