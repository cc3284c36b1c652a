"""fsck's exit bits and counts as git fsck's, on repositories git builds:
a pack index listing an object twice, resolve-undo records, cache-tree
nodes, intent-to-add entries, an empty or damaged index file, commit dates
a commit-graph cannot hold, broken split chains (also across an
alternate), and the dangling objects of alternates."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

import pytest

from tests import repos
from tests.repos import git, git_fsck, git_text, pack_entry_header, work_tree_with_commits

EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def dangling(lines) -> list[str]:
    return sorted(line for line in lines if line.startswith("dangling "))


def compare(run_fsck, repo: Path, **options):
    """(status, findings, git's output) after checking the statuses agree."""
    status, findings = run_fsck(repo, **options)
    git_status, git_out = git_fsck(repo)
    assert status == git_status, ([f.message for f in findings if f.severity != "info"], git_out)
    assert dangling(f.message for f in findings if f.kind == "dangling") == dangling(git_out.splitlines())
    return status, findings, git_out


def rm_loose(repo: Path, oid: str) -> None:
    path = repo / ".git" / "objects" / oid[:2] / oid[2:]
    os.chmod(path, 0o644)
    path.unlink()


@pytest.fixture
def work(tmp_path) -> Path:
    """A work tree with loose objects only: a file and a directory two deep."""
    w = tmp_path / "w"
    git("init", "-q", "-b", "main", w)
    (w / "d" / "e").mkdir(parents=True)
    for name, text in (("a", "a\n"), ("d/b", "b\n"), ("d/e/c", "c\n")):
        (w / name).write_text(text)
    git("add", ".", cwd=w)
    git("commit", "-q", "-m", "first", cwd=w)
    return w


# --- a pack index listing one object twice ---------------------------------------------------


def test_pack_index_listing_an_object_twice_is_allowed(work, run_fsck):
    payload = b"stored twice in one pack\n"
    body = bytearray(b"PACK" + struct.pack(">II", 2, 2))
    for _ in range(2):
        body += pack_entry_header(3, len(payload)) + zlib.compress(payload)
    body += hashlib.sha1(bytes(body)).digest()
    pack = work / ".git" / "objects" / "pack" / "pack-twice.pack"
    pack.write_bytes(bytes(body))
    git("index-pack", pack, cwd=work)  # git writes the .idx, the id listed twice
    shown = git_text("show-index", cwd=work, input=pack.with_suffix(".idx").read_bytes())
    assert len(shown.splitlines()) == 2 and len({line.split()[1] for line in shown.splitlines()}) == 1
    status, findings, _ = compare(run_fsck, work)
    assert status == 0 and not [f for f in findings if f.area == "packs"]


# --- the index: resolve-undo, cache-tree, intent-to-add, damage ------------------------------------


def test_unresolvable_resolve_undo_record_is_bit_8_as_git(work, run_fsck):
    ours_blob = git_text("hash-object", "-w", "--stdin", cwd=work, input="stage one only\n").strip()
    theirs = git_text("hash-object", "-w", "--stdin", cwd=work, input="stage three only\n").strip()
    git(
        "update-index",
        "--index-info",
        cwd=work,
        input=f"0 {'0' * 40}\ta\n100644 {ours_blob} 1\ta\n100644 {theirs} 3\ta\n",
    )
    (work / "a").write_text("resolved\n")
    git("add", "a", cwd=work)  # the conflict is recorded as resolve-undo
    assert theirs in git_text("ls-files", "--resolve-undo", cwd=work)
    rm_loose(work, theirs)
    status, findings, git_out = compare(run_fsck, work)
    assert status == 8
    line = f"{theirs}: invalid sha1 pointer in resolve-undo"
    assert line in git_out and any(f.message.startswith(line) for f in findings)


def staged_trees(work: Path) -> dict[str, str]:
    """Stage new contents two levels deep and write the trees (cache-tree valid)."""
    (work / "d" / "b").write_text("b2\n")
    (work / "d" / "e" / "c").write_text("c2\n")
    git("add", ".", cwd=work)
    root = git_text("write-tree", cwd=work).strip()
    return {
        "root": root,
        "d": git_text("rev-parse", f"{root}:d", cwd=work).strip(),
        "e": git_text("rev-parse", f"{root}:d/e", cwd=work).strip(),
    }


@pytest.mark.parametrize(
    "gone,status",
    [
        (("root",), 8),  # its subtrees are not looked at: d is dangling, as for git
        (("d",), 10),  # the root's walk misses d (2), d's node fails (8); e is dangling
        (("root", "d"), 8),
    ],
)
def test_cache_tree_nodes_are_visited_as_git_visits_them(work, run_fsck, gone, status):
    trees = staged_trees(work)
    for name in gone:
        rm_loose(work, trees[name])
    got, findings, git_out = compare(run_fsck, work)
    assert got == status
    visited = ("root",) if "root" in gone else gone  # below a failed node, git looks no further
    for name in visited:
        assert f"{trees[name]}: invalid sha1 pointer in cache-tree" in git_out
    assert {f.oid for f in findings if f.kind == "index-broken"} == {trees[n] for n in visited}


def test_intent_to_add_entry_keeps_the_empty_blob_alive(work, run_fsck):
    (work / "new").write_text("not yet\n")
    git("add", "-N", "new", cwd=work)
    status, findings, _ = compare(run_fsck, work)  # no "dangling blob e69de29…", for either
    assert status == 0
    rm_loose(work, EMPTY_BLOB)
    status, findings, git_out = compare(run_fsck, work)
    assert status == 2 and f"missing blob {EMPTY_BLOB}" in git_out
    assert EMPTY_BLOB in {f.oid for f in findings if f.severity == "error"}


@pytest.mark.parametrize("damage", ["empty", "truncated", "signature", "checksum"])
def test_index_git_cannot_read_exits_128(work, run_fsck, damage):
    index = work / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(
        {
            "empty": b"",
            "truncated": data[:20],
            "signature": b"DIRX" + data[4:],
            "checksum": data[:-1] + bytes([data[-1] ^ 1]),
        }[damage]
    )
    status, findings, git_out = compare(run_fsck, work)
    assert status == 128 and "fatal:" in git_out
    assert any(f.area == "index" and f.path == str(index) for f in findings)


# --- commit dates a commit-graph cannot hold -------------------------------------------------------


@pytest.mark.parametrize("date", ["17179869184", "17179869186", "99999999999", "-5"])
def test_commit_dates_beyond_34_bits_or_before_the_epoch_fail_the_graph(work, run_fsck, date):
    tree = git_text("rev-parse", "HEAD^{tree}", cwd=work).strip()
    head = git_text("rev-parse", "HEAD", cwd=work).strip()
    # At exactly 2^34 the graph's date, and so the commit's generation, is 0:
    # git 2.39 then skips the checks of every commit after it in id order and
    # only notices the non-zero generations that follow.  The far commit is
    # made to sort first so that git 2.39 sees it (packscope always does).
    for n in range(1000):
        body = (
            f"tree {tree}\nparent {head}\nauthor A <a@b> 1700000000 +0000\ncommitter C <c@d> {date} +0000\n\nfar {n}\n"
        )
        far = repos.hash_literally(work, "commit", body.encode())
        if far < head:
            break
    child = git_text("commit-tree", tree, "-p", far, "-m", "child", cwd=work).strip()
    git("update-ref", "refs/heads/main", child, cwd=work)
    git("commit-graph", "write", "--reachable", cwd=work)
    status, findings, git_out = compare(run_fsck, work)
    assert status & 16
    ours = {f.message for f in findings if f.area == "commit-graph"}
    theirs = {line for line in git_out.splitlines() if line.startswith("commit date for commit")}
    assert theirs <= ours  # in git's own words
    assert any(m.startswith(f"commit date for commit {far} in commit-graph is ") for m in ours)


# --- broken split chains ---------------------------------------------------------------------------


@pytest.fixture
def chained(tmp_path) -> Path:
    """Three layers, written one by one."""
    w = tmp_path / "chained"

    def layer_on_odd_commits(i: int) -> None:
        if i % 2:
            git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=w)

    return work_tree_with_commits(w, 6, layer_on_odd_commits)


def chain_file(repo: Path) -> Path:
    return repo / ".git" / "objects" / "info" / "commit-graphs" / "commit-graph-chain"


@pytest.mark.parametrize(
    "damage,status",
    [
        ("missing middle layer", 0),
        ("line that is not a hash", 0),
        ("middle layer with a bad signature", 0),
        ("layers out of order", 16),
        ("middle layer left out of the chain", 16),
        ("middle layer's trailer changed", 16),
        ("middle layer's fanout goes down", 16),
        ("middle layer counts more base graphs", 16),
    ],
)
def test_broken_chain_keeps_its_valid_base_as_git(chained, run_fsck, damage, status):
    chain = chain_file(chained)
    lines = chain.read_text().split()
    assert len(lines) == 3
    layer = chain.parent / f"graph-{lines[1]}.graph"
    if damage == "missing middle layer":
        layer.unlink()
    elif damage == "line that is not a hash":
        chain.write_text(f"{lines[0]}\nnothex\n{lines[2]}\n")
    elif damage == "middle layer with a bad signature":
        os.chmod(layer, 0o644)
        layer.write_bytes(b"X" + layer.read_bytes()[1:])
    elif damage.startswith(("middle layer's", "middle layer counts")):
        os.chmod(layer, 0o644)
        data = bytearray(layer.read_bytes())
        if "trailer" in damage:
            data[-1] ^= 1
        elif "fanout" in damage:
            (oidf,) = [
                struct.unpack_from(">Q", data, 12 + 12 * i)[0]
                for i in range(data[6])
                if data[8 + 12 * i : 12 + 12 * i] == b"OIDF"
            ]
            data[oidf + 4 * 200 + 3] ^= 0x7F  # one bucket's count above the next one's
        else:
            data[7] += 1  # the header's base-graph count
        layer.write_bytes(bytes(data))
    elif damage == "layers out of order":
        chain.write_text(f"{lines[1]}\n{lines[0]}\n{lines[2]}\n")
    else:
        chain.write_text(f"{lines[0]}\n{lines[2]}\n")
    got, findings, _ = compare(run_fsck, chained)
    assert got == status
    graph = [f for f in findings if f.area == "commit-graph"]
    assert graph, "the broken chain is reported"
    assert all(f.severity == "warning" for f in graph) == (status == 0)


def test_split_chain_across_an_alternate_is_read_whole(tmp_path, run_fsck):
    lender = work_tree_with_commits(tmp_path / "lender", 3)
    git("commit-graph", "write", "--reachable", "--split", cwd=lender)
    borrower = tmp_path / "borrower"
    git("clone", "-q", "--shared", lender, borrower)
    (borrower / "g").write_text("g\n")
    git("add", "g", cwd=borrower)
    git("commit", "-q", "-m", "own", cwd=borrower)
    git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=borrower)
    lines = chain_file(borrower).read_text().split()
    local = {p.name for p in chain_file(borrower).parent.glob("graph-*.graph")}
    assert len(lines) == 2 and f"graph-{lines[0]}.graph" not in local  # the base layer is the lender's
    status, findings, _ = compare(run_fsck, borrower)
    assert status == 0 and not [f for f in findings if f.area == "commit-graph"]
    # walks read the whole chain too, the lender's layer included
    from packscope.core.history.commit_graph import CommitGraph
    from packscope.core.oid import SHA1

    objects = str(borrower / ".git" / "objects")
    graph = CommitGraph.open(objects, SHA1, alternates=(str(lender / ".git" / "objects"),))
    assert graph is not None and len(graph.layers) == 2
    graph.close()
    problems: list = []
    assert CommitGraph.open(objects, SHA1, problems=problems) is None and "missing" in problems[0].message


# --- alternates' dangling objects ----------------------------------------------------------------------


@pytest.mark.parametrize("packed", [False, True])
def test_alternates_unreachable_objects_are_dangling_as_for_git(tmp_path, run_fsck, packed):
    lender = tmp_path / "lender"
    git("init", "-q", "-b", "main", lender)
    (lender / "a").write_text("a\n")
    git("add", "a", cwd=lender)
    git("commit", "-q", "-m", "a", cwd=lender)
    git("checkout", "-q", "-b", "side", cwd=lender)
    (lender / "s").write_text("s\n")
    git("add", "s", cwd=lender)
    git("commit", "-q", "-m", "s", cwd=lender)
    git("hash-object", "-w", "--stdin", cwd=lender, input="loose only\n")
    if packed:
        git("repack", "-a", "-d", "-q", cwd=lender)
    borrower = repos.init_bare(tmp_path / "borrower.git")
    (borrower / "objects" / "info" / "alternates").write_text(str(lender / ".git" / "objects") + "\n")
    git("update-ref", "refs/heads/main", git_text("rev-parse", "main", cwd=lender).strip(), cwd=borrower)
    status, _findings, git_out = compare(run_fsck, borrower)
    assert status == 0 and len(dangling(git_out.splitlines())) >= 2
