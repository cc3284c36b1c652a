"""The index file as a reachability root: versions 2-4, split and sparse
indexes, cache tree and resolve-undo, against git ls-files; damaged
indexes give typed errors with offsets."""

from __future__ import annotations

import struct

import pytest

from packscope.core.errors import RepositoryError
from packscope.core.oid import SHA1
from packscope.core.repo.index_file import IndexFile, index_objects
from tests import repos
from tests.repos import git, git_text


def ls_files(work, *extra) -> list[tuple[int, str, int, bytes]]:
    out = git("ls-files", "-s", "-z", *extra, cwd=work)
    rows = []
    for rec in out.split(b"\0"):
        if rec:
            meta, path = rec.split(b"\t", 1)
            mode, oid, stage = meta.split()
            rows.append((int(mode, 8), oid.decode(), int(stage), path))
    return rows


def ours(work) -> list[tuple[int, str, int, bytes]]:
    index = IndexFile.open(str(work / ".git" / "index"), SHA1)
    return [(e.mode, e.oid.hex(), e.stage, e.path) for e in index.entries()]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    work = tmp_path_factory.mktemp("index") / "work"
    git("init", "-q", "-b", "main", work)
    for d in ("a", "a/b", "c", "deep/er/still"):
        (work / d).mkdir(parents=True, exist_ok=True)
        for i in range(12):
            (work / d / f"file-{i:02d}.txt").write_text(f"{d} {i}\n")
    long_dir = work / ("x" * 200) / ("y" * 200)
    long_dir.mkdir(parents=True)
    (long_dir / ("z" * 200)).write_text("a 600-byte path\n")
    (work / "é.txt").write_text("high bytes in the name\n")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    return work


@pytest.fixture
def copy(work, tmp_path):
    dst = repos.copy_repo(work, tmp_path / "work")
    git("update-index", "-q", "--refresh", cwd=dst, check=False)  # copied files have new stat data
    return dst


@pytest.mark.parametrize("version", [2, 3, 4])
def test_entries_match_git_ls_files_in_every_version(copy, version):
    if version == 3:
        (copy / "new.txt").write_text("intent to add\n")
        git("add", "-N", "new.txt", cwd=copy)
        git("update-index", "--skip-worktree", "c/file-01.txt", cwd=copy)
    git("update-index", "--index-version", str(version), cwd=copy)
    index = IndexFile.open(str(copy / ".git" / "index"), SHA1)
    assert index.version == version and index.checksum_ok() is True and index.problems == []
    assert ours(copy) == ls_files(copy)
    if version == 3:
        flags = {e.path: (e.intent_to_add, e.skip_worktree) for e in index.entries()}
        assert flags[b"new.txt"] == (True, False) and flags[b"c/file-01.txt"] == (False, True)
        # an intent-to-add entry keeps the empty blob alive (git 2.39's fsck), marked as such
        kept = {r.path: (r.source, r.oid) for r in index_objects(index)}
        assert kept[b"new.txt"] == ("intent-to-add", SHA1.hash_object("blob", b""))


def test_cache_tree_root_is_the_tree_git_writes(copy):
    tree = git_text("write-tree", cwd=copy).strip()
    index = IndexFile.open(str(copy / ".git" / "index"), SHA1)
    nodes = index.cache_tree()
    assert nodes[0][:2] == (b"", bytes.fromhex(tree))
    assert {n for n, _, _ in nodes} >= {b"a", b"b", b"c", b"deep", b"er", b"still"}


def test_split_index_counts_the_shared_index_entries_it_keeps(copy):
    git("update-index", "--split-index", cwd=copy)
    (copy / "a" / "file-00.txt").write_text("changed after the split\n")
    git("rm", "-q", "c/file-03.txt", cwd=copy)
    git("add", "a/file-00.txt", cwd=copy)
    index = IndexFile.open(str(copy / ".git" / "index"), SHA1)
    assert index.split_link() is not None
    got = {(r.oid.hex(), r.path) for r in index_objects(index, str(copy / ".git")) if r.source == "entry"}
    want = {(oid, path) for _, oid, _, path in ls_files(copy)}
    # the split index stores replaced entries without their paths; the ids are what matter
    assert {oid for oid, _ in got} == {oid for oid, _ in want}
    assert index.problems == []


def git_version() -> tuple[int, ...]:
    return tuple(int(x) for x in git_text("version").split()[2].split(".")[:2])


@pytest.mark.skipif(git_version() < (2, 32), reason="sparse indexes need git 2.32")
def test_sparse_directory_entries_are_trees(copy):
    git("sparse-checkout", "init", "--cone", "--sparse-index", cwd=copy)
    git("sparse-checkout", "set", "a", cwd=copy)
    index = IndexFile.open(str(copy / ".git" / "index"), SHA1)
    assert b"sdir" in index.extensions
    dirs = {r.path: r.oid.hex() for r in index_objects(index) if r.source == "entry" and r.type == "tree"}
    assert dirs[b"c/"] == git_text("rev-parse", "HEAD:c", cwd=copy).strip()


def test_resolve_undo_records_keep_the_conflicting_blobs(copy):
    git("checkout", "-q", "-b", "left", cwd=copy)
    (copy / "a" / "file-00.txt").write_text("left\n")
    git("commit", "-q", "-am", "left", cwd=copy)
    git("checkout", "-q", "main", cwd=copy)
    (copy / "a" / "file-00.txt").write_text("right\n")
    git("commit", "-q", "-am", "right", cwd=copy)
    git("merge", "-q", "left", cwd=copy, check=False)
    (copy / "a" / "file-00.txt").write_text("resolved\n")
    git("add", "a/file-00.txt", cwd=copy)
    index = IndexFile.open(str(copy / ".git" / "index"), SHA1)
    undo = {(stage, oid.hex()) for path, stage, oid, _ in index.resolve_undo() if path == b"a/file-00.txt"}
    out = git_text("ls-files", "--resolve-undo", cwd=copy)
    want = {(int(line.split()[2]), line.split()[1]) for line in out.splitlines()}
    assert undo == want and len(undo) == 3


# --- damage ---------------------------------------------------------------------------------


def damaged(copy, edit) -> bytes:
    path = copy / ".git" / "index"
    data = bytearray(path.read_bytes())
    edit(data)
    path.write_bytes(bytes(data))
    return str(path)


@pytest.mark.parametrize(
    "edit,kind",
    [
        (lambda d: d.__delitem__(slice(30, None)), "index-truncated"),
        (lambda d: d.__setitem__(slice(0, 4), b"XIRC"), "index-signature"),
        (lambda d: d.__setitem__(slice(4, 8), struct.pack(">I", 9)), "index-version"),
        (lambda d: d.__setitem__(slice(8, 12), struct.pack(">I", 10**9)), "index-count"),
        (lambda d: d.__delitem__(slice(200, -20)), ("index-count", "index-truncated")),
        (
            lambda d: d.__setitem__(slice(8, 12), struct.pack(">I", struct.unpack(">I", d[8:12])[0] + 3)),
            ("index-truncated", "index-entry"),
        ),
    ],
    ids=["truncated", "signature", "version", "count beyond size", "entries cut", "count too high"],
)
def test_damaged_index_raises_a_typed_error_with_its_offset(copy, edit, kind):
    path = damaged(copy, edit)
    with pytest.raises(RepositoryError) as info:
        IndexFile.open(path, SHA1)
    assert info.value.kind in (kind if isinstance(kind, tuple) else (kind,)) and info.value.path == path
    assert "read-tree" in info.value.remedy


def test_v4_prefix_longer_than_the_previous_path_is_refused(copy):
    git("update-index", "--index-version", "4", cwd=copy)
    data = bytearray((copy / ".git" / "index").read_bytes())
    second = 12 + 62 + 1 + len(b"a/b/file-00.txt") + 1  # header, first entry: stat+id+flags, varint 0, path, NUL
    data[second + 62] = 0x7F  # strip 127 bytes of a 15-byte path
    (copy / ".git" / "index").write_bytes(bytes(data))
    with pytest.raises(RepositoryError) as info:
        IndexFile.open(str(copy / ".git" / "index"), SHA1)
    assert info.value.kind == "index-entry" and info.value.offset == second


def test_checksum_mismatch_is_noticed_and_an_all_zero_trailer_is_skipped(copy):
    path = damaged(copy, lambda d: d.__setitem__(-1, d[-1] ^ 1))
    assert IndexFile.open(path, SHA1).checksum_ok() is False
    path = damaged(copy, lambda d: d.__setitem__(slice(-20, None), bytes(20)))
    assert IndexFile.open(path, SHA1).checksum_ok() is None


def test_unknown_required_extension_is_a_problem_not_a_failure(copy):
    def add_extension(d):
        body = d[:-20]
        body += b"zzzz" + struct.pack(">I", 3) + b"abc"
        d[:] = body + bytes(20)

    count = len(ls_files(copy))
    path = damaged(copy, add_extension)
    index = IndexFile.open(path, SHA1)
    assert [p.kind for p in index.problems] == ["index-extension"]
    assert len(list(index.entries())) == count


@pytest.mark.parametrize("damage", ["skip-hash", "skip-hash-and-damaged", "wrong-hash"])
def test_fsck_dies_on_an_index_git_2_39_cannot_verify(copy, damage):
    """git 2.39 predates index.skipHash: an all-zero trailer fails its check
    like a wrong one, and fsck dies (128); packscope says which it was."""
    import subprocess

    from tests.cli import packscope_in

    path = copy / ".git" / "index"
    data = bytearray(path.read_bytes())
    if damage == "wrong-hash":
        data[-1] ^= 1
    else:
        data[-20:] = bytes(20)
    if damage == "skip-hash-and-damaged":
        data[40] ^= 1  # a ctime byte: still parses
    path.write_bytes(bytes(data))
    git_status = subprocess.run(["git", "fsck"], cwd=copy, capture_output=True, env=repos.git_env()).returncode
    p = packscope_in(copy, "fsck", "--no-progress")
    assert p.returncode == git_status == 128
    assert ("index.skipHash" in p.stdout.decode()) == damage.startswith("skip-hash")
