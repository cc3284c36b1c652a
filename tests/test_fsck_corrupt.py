"""fsck on corrupt repositories built here, one defect class each, with git
fsck as the oracle for the verdict (its exit bit set) and our findings
checked for kind, location and "exists elsewhere"."""

from __future__ import annotations

import os
import shutil
import zlib
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope_in
from tests.repos import git, git_fsck, git_text


def kinds(findings, severity="error"):
    return {f.kind for f in findings if f.severity == severity}


def one(findings, kind):
    found = [f for f in findings if f.kind == kind]
    assert found, f"no {kind} finding in {[(f.kind, f.message) for f in findings]}"
    return found[0]


def reachable_whole_blob(repo: Path, delta_base: bool = True) -> dict:
    """A reachable blob stored whole (no delta) and big enough to damage
    inside its zlib data; with ``delta_base``, one other entries are deltas on."""
    pack, _ = repos.the_pack(repo)
    rows = {r["oid"]: r for r in repos.verify_pack_rows(pack)}
    bases = {r["base"] for r in rows.values()}
    for line in git_text("rev-list", "--objects", "--all", cwd=repo).splitlines():
        oid = line.split()[0]
        row = rows.get(oid)
        if (
            row
            and row["type"] == "blob"
            and row["depth"] == 0
            and 100 < row["packed"] < 5000
            and (oid in bases) == delta_base
        ):
            return row
    raise AssertionError("no suitable blob")


def damage_blob_entry(repo: Path, row: dict, rehash: str | None = "sha1") -> Path:
    """Flip a byte in the middle of the entry ``row`` (from
    reachable_whole_blob) of the repository's one pack, so that its zlib
    data and CRC32 are wrong; then recompute the pack's trailer with the
    ``rehash`` hash (None: leave it, the pack's checksum is wrong too).
    Returns the pack."""
    pack, _ = repos.the_pack(repo)
    repos.flip_byte(pack, row["offset"] + row["packed"] // 2)
    if rehash is not None:
        repos.rehash_pack(pack, rehash)
    return pack


@pytest.fixture
def base(fsck_base, tmp_path):
    return repos.copy_repo(fsck_base, tmp_path / "repo.git")


# --- packs ----------------------------------------------------------------------------------


def test_truncated_pack_is_refused_and_its_objects_count_as_unavailable(base, run_fsck):
    pack, _ = repos.the_pack(base)
    data = pack.read_bytes()
    os.chmod(pack, 0o644)
    pack.write_bytes(data[: len(data) * 6 // 10])
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 6
    f = one(findings, "pack-truncated")
    assert f.path == str(pack) and f.idx == str(pack.with_suffix(".idx"))
    head = one(findings, "ref-broken")
    assert head.details["object"] == "unavailable" and "refused" in head.elsewhere[0]


def test_flipped_byte_in_an_entry_is_a_crc_mismatch_at_its_offset(base, run_fsck):
    row = reachable_whole_blob(base)
    pack, idx = repos.the_pack(base)
    deltas = {r["oid"] for r in repos.verify_pack_rows(pack) if r["base"]}
    damage_blob_entry(base, row)
    status, findings = run_fsck(base)
    git_status, git_out = git_fsck(base)
    assert status == git_status == 6
    assert "CRC" in git_out
    crc = one(findings, "pack-crc")
    assert (crc.oid, crc.offset, crc.pack, crc.idx) == (row["oid"], row["offset"], str(pack), str(idx))
    assert crc.elsewhere == ()
    assert any(f.kind == "unreadable" and f.oid == row["oid"] for f in findings)
    # nothing else in the pack is blamed
    assert {f.oid for f in findings if f.area == "packs"} <= {row["oid"]} | deltas


def test_unreadable_packed_object_is_forgotten_by_the_walk_as_by_git(base, run_fsck):
    # git forgets a packed object it could not unpack unless a delta on it
    # failed too ("it is in pack - forget about it"; a failed delta marks
    # its base bad): for a damaged blob nothing is built on, 4 alone
    row = reachable_whole_blob(base, delta_base=False)
    damage_blob_entry(base, row)
    status, findings = run_fsck(base)
    assert git_fsck(base)[0] == 4 == status
    assert not [f for f in findings if f.kind == "unreadable"]
    assert one(findings, "pack-crc").oid == row["oid"]


def test_damaged_packed_object_with_a_good_loose_copy_is_not_a_broken_link(base, run_fsck):
    row = reachable_whole_blob(base, delta_base=False)
    content = git("cat-file", "blob", row["oid"], cwd=base)
    damage_blob_entry(base, row)
    # git hash-object -w would not write it (the pack has it): write the loose copy by hand
    loose = base / "objects" / row["oid"][:2] / row["oid"][2:]
    loose.parent.mkdir(exist_ok=True)
    loose.write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))
    status, findings = run_fsck(base)
    assert status == 4
    assert one(findings, "pack-crc").elsewhere == ("loose",)
    assert "git repack" in one(findings, "pack-crc").remedy
    assert not [f for f in findings if f.area == "reachability"]


def test_changed_content_under_an_intact_trailer_is_a_pack_checksum_error(base, run_fsck):
    row = reachable_whole_blob(base)
    damage_blob_entry(base, row, rehash=None)
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0]
    assert {"pack-checksum", "pack-crc"} <= kinds(findings)


@pytest.mark.parametrize(
    ("which", "exit_status", "errors"),
    [
        # the pack no longer matches its index: its objects are unavailable
        (0, 6, {"pack-index-mismatch", "unavailable", "ref-broken"}),
        # only the .idx's own checksum is wrong: reads go on
        (1, 4, {"idx-checksum"}),
    ],
    ids=["pack", "idx"],
)
def test_a_flipped_trailer_byte_is_reported_at_the_trailer(base, run_fsck, which, exit_status, errors):
    path = repos.the_pack(base)[which]
    repos.flip_byte(path, path.stat().st_size - 1)
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == exit_status
    assert kinds(findings) == errors
    f = next(f for f in findings if f.kind in ("pack-index-mismatch", "idx-checksum"))
    assert f.path == str(path) and f.offset == path.stat().st_size - 20


def test_idx_without_its_pack_is_a_warning_and_its_objects_are_missing(base, run_fsck):
    blob = git_text("hash-object", "-w", "--stdin", cwd=base, input=b"only in the orphaned pack\n").strip()
    name = git_text("pack-objects", "-q", str(base / "objects" / "pack" / "pack"), cwd=base, input=blob + "\n").strip()
    (base / "objects" / "pack" / f"pack-{name}.pack").unlink()
    loose = base / "objects" / blob[:2] / blob[2:]
    os.chmod(loose, 0o644)
    loose.unlink()
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 0
    f = one(findings, "orphan-idx")
    assert f.severity == "warning" and f.path.endswith(f"pack-{name}.idx")
    out = packscope_in(base, "cat-file", "-e", blob)
    assert out.returncode == 1


def test_pack_without_its_index_is_a_warning(base, run_fsck):
    pack, _ = repos.the_pack(base)
    shutil.copy(pack, pack.with_name("pack-" + "0" * 40 + ".pack"))
    status, findings = run_fsck(base)
    assert status == 0
    assert one(findings, "orphan-pack").severity == "warning"


# --- loose objects ---------------------------------------------------------------------------


def loose_blob(repo: Path) -> tuple[str, Path]:
    oid = git_text("rev-parse", "loose:loose/file.txt", cwd=repo).strip()
    return oid, repo / "objects" / oid[:2] / oid[2:]


def test_garbage_loose_object_is_corrupt_not_missing(base, run_fsck):
    oid, path = loose_blob(base)
    os.chmod(path, 0o644)
    path.write_bytes(b"corrupt")
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 3
    f = one(findings, "loose-zlib")
    assert (f.oid, f.path, f.exit_bit) == (oid, str(path), 1)
    broken = one(findings, "unreadable")
    assert broken.oid == oid and broken.details["referrer"].startswith("tree ")


def test_loose_object_whose_content_hashes_elsewhere_is_a_hash_mismatch(base, run_fsck):
    oid, path = loose_blob(base)
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob 5\0other"))
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0]
    assert one(findings, "loose-hash").oid == oid


def test_missing_object_is_a_broken_link_from_its_tree(base, run_fsck):
    oid, path = loose_blob(base)
    os.chmod(path, 0o644)
    path.unlink()
    status, findings = run_fsck(base)
    git_status, git_out = git_fsck(base)
    assert status == git_status == 2
    f = one(findings, "missing")
    assert f.oid == oid and f.object_type == "blob"
    tree = git_text("rev-parse", "loose:loose", cwd=base).strip()
    assert f.details["referrer"] == f"tree {tree}" and f"tree {tree}" in " ".join(git_out.split())


# --- refs ---------------------------------------------------------------------------------------


def test_ref_to_a_missing_object_is_broken(base, run_fsck):
    (base / "refs" / "heads" / "broken").write_text("deadbeef" * 5 + "\n")
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 2
    f = one(findings, "ref-broken")
    assert f.path == str(base / "refs" / "heads" / "broken") and f.oid == "deadbeef" * 5


@pytest.mark.parametrize(
    "branches, kind",
    [
        ({"dangling": "ref: refs/heads/nowhere\n"}, "ref-dangling"),
        ({"a": "ref: refs/heads/b\n", "b": "ref: refs/heads/a\n"}, "ref-loop"),
        ({"garbage": "this is not an id\n"}, "ref-unparseable"),
    ],
)
def test_a_loose_ref_that_names_no_object_is_reported(base, run_fsck, branches, kind):
    for name, text in branches.items():
        (base / "refs" / "heads" / name).write_text(text)
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 2
    found = [f for f in findings if f.kind == kind]
    assert found and all(f.path and f.path.rsplit("/", 1)[-1] in branches for f in found), findings


def test_branch_pointing_at_a_blob_is_a_ref_error(base, run_fsck):
    blob, _ = loose_blob(base)
    (base / "refs" / "heads" / "blobby").write_text(blob + "\n")
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 8
    f = one(findings, "ref-not-commit")
    assert f.object_type == "blob" and f.path.endswith("refs/heads/blobby")


def test_tag_ref_may_point_at_a_blob(base, run_fsck):
    blob, _ = loose_blob(base)
    (base / "refs" / "tags" / "blobtag").write_text(blob + "\n")
    status, _ = run_fsck(base)
    assert status == git_fsck(base)[0] == 0


def test_head_pointing_outside_refs_heads_is_strange(base, run_fsck):
    (base / "HEAD").write_text("ref: refs/tags/v3\n")
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 8
    assert "head-strange" in kinds(findings)


def test_unborn_head_is_a_notice(base, run_fsck):
    (base / "HEAD").write_text("ref: refs/heads/unborn\n")
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 0
    assert one(findings, "head-unborn").severity == "info"


# --- object syntax -------------------------------------------------------------------------------


def commit_on_branch(repo: Path, branch: str, body: bytes) -> str:
    oid = repos.hash_literally(repo, "commit", body)
    git("update-ref", f"refs/heads/{branch}", oid, cwd=repo)
    return oid


def test_tree_with_zero_padded_mode_is_a_warning(base, run_fsck):
    blob, _ = loose_blob(base)
    tree = repos.hash_literally(base, "tree", b"0100644 file\0" + bytes.fromhex(blob))
    commit_on_branch(
        base, "padded", b"tree %s\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" % tree.encode()
    )
    status, findings = run_fsck(base)
    git_status, git_out = git_fsck(base)
    assert status == git_status == 0
    f = one(findings, "zeroPaddedFilemode")
    assert (f.severity, f.oid, f.msg_id) == ("warning", tree, "zeroPaddedFilemode")
    assert "zeroPaddedFilemode" in git_out


def test_commit_with_a_bad_email_is_an_error_with_gits_message_id(base, run_fsck):
    tree = git_text("rev-parse", "main^{tree}", cwd=base).strip()
    oid = commit_on_branch(
        base, "bademail", b"tree %s\nauthor A <a@b 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" % tree.encode()
    )
    status, findings = run_fsck(base)
    git_status, git_out = git_fsck(base)
    assert status == git_status == 1
    f = one(findings, "badEmail")
    assert (f.oid, f.exit_bit, f.area) == (oid, 1, "objects") and "badEmail" in git_out
    assert f.path == str(base / "objects" / oid[:2] / oid[2:])


def test_tree_entry_naming_a_tree_as_a_blob_is_a_wrong_type(base, run_fsck):
    subtree = git_text("rev-parse", "main:dir0", cwd=base).strip()
    tree = repos.hash_literally(base, "tree", b"100644 notablob\0" + bytes.fromhex(subtree))
    commit_on_branch(
        base, "wrongtype", b"tree %s\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" % tree.encode()
    )
    status, findings = run_fsck(base)
    assert status & 2 and git_fsck(base)[0] & 2
    f = one(findings, "wrong-type")
    assert f.oid == subtree and f.object_type == "tree"


# --- delta chains ---------------------------------------------------------------------------------


def test_ref_delta_loop_is_reported_not_followed_forever(base, run_fsck):
    a, b = bytes.fromhex("aa" * 20), bytes.fromhex("bb" * 20)
    pack, _ = repos.write_raw_pack(
        base, [(a, 7, repos.insert_delta(3, b"abc"), b), (b, 7, repos.insert_delta(3, b"xyz"), a)]
    )
    status, findings = run_fsck(base)
    assert status == 4
    loops = [f for f in findings if f.kind == "delta-loop"]
    assert {f.oid for f in loops} == {a.hex(), b.hex()} and all(f.pack == str(pack) for f in loops)


def test_missing_ref_delta_base_is_reported(base, run_fsck):
    a, missing = bytes.fromhex("ab" * 20), bytes.fromhex("cd" * 20)
    repos.write_raw_pack(base, [(a, 7, repos.insert_delta(3, b"abc"), missing)])
    status, findings = run_fsck(base)
    assert status == 4
    assert one(findings, "delta-missing-base").oid == a.hex()


# --- roots: reflogs, indexes, worktrees --------------------------------------------------------------


@pytest.fixture
def work(fsck_worktree, tmp_path):
    shutil.copytree(fsck_worktree.parent / "fsck-linked", tmp_path / "fsck-linked", symlinks=True)
    dst = repos.copy_repo(fsck_worktree, tmp_path / "fsck-work")
    # the linked worktree's back-pointers are absolute paths: point them at the copies
    gd = dst / ".git" / "worktrees" / "fsck-linked"
    (gd / "gitdir").write_text(str(tmp_path / "fsck-linked" / ".git") + "\n")
    (tmp_path / "fsck-linked" / ".git").write_text(f"gitdir: {gd}\n")
    return dst


def test_healthy_worktrees_pass_like_git(work, run_fsck):
    status, findings = run_fsck(work)
    assert status == git_fsck(work)[0] == 0
    assert not [f for f in findings if f.severity == "error"]


def test_reflog_entry_naming_a_missing_object_is_reported(work, run_fsck):
    log = work / ".git" / "logs" / "refs" / "heads" / "main"
    with open(log, "a") as f:
        f.write("0" * 40 + " " + "de" * 20 + " A <a@b> 1 +0000\tbad\n")
    status, findings = run_fsck(work)
    assert status == git_fsck(work)[0] == 2
    f = one(findings, "reflog-broken")
    assert f.oid == "de" * 20 and f.path == str(log)


def test_staged_blob_only_in_the_linked_worktrees_index_is_a_root_there_only(work, run_fsck):
    """git 2.39 reads the current worktree's index alone: from the main
    worktree the linked one's staged blob is dangling, from the linked one
    it is a root (and its loss an error), as git says."""
    linked = work.parent / "fsck-linked"
    staged = git_text("rev-parse", ":staged.txt", cwd=linked).strip()
    status, findings = run_fsck(work)
    assert status == 0 == git_fsck(work)[0]
    assert f"dangling blob {staged}" in git_fsck(work)[1]
    assert staged in {f.oid for f in findings if f.kind == "dangling"}
    status, findings = run_fsck(linked)
    assert status == 0 and staged not in {f.oid for f in findings if f.kind == "dangling"}
    path = work / ".git" / "objects" / staged[:2] / staged[2:]
    os.chmod(path, 0o644)
    path.unlink()
    status, findings = run_fsck(linked)
    assert status == git_fsck(linked)[0] and status & 2
    f = one(findings, "index-broken")
    assert f.oid == staged and f.path == str(work / ".git" / "worktrees" / "fsck-linked" / "index")


def test_damaged_index_file_is_reported(work, run_fsck):
    index = work / ".git" / "index"
    data = index.read_bytes()
    index.write_bytes(data[:12] + b"\xff" * 8 + data[20:])
    status, findings = run_fsck(work)
    assert status == git_fsck(work)[0] == 128  # git dies on the index it cannot read
    assert any(f.area == "index" and f.path == str(index) for f in findings)


# --- partial clones: missing vs promised -------------------------------------------------------------


@pytest.fixture
def partial_clone(fsck_base, tmp_path):
    src = repos.copy_repo(fsck_base, tmp_path / "src.git")
    git("config", "uploadpack.allowFilter", "true", cwd=src)
    dst = tmp_path / "partial.git"
    git("clone", "-q", "--bare", "--filter=blob:none", f"file://{src}", dst)
    return dst


def test_blobs_left_out_of_a_partial_clone_are_promised_not_missing(partial_clone, run_fsck):
    status, findings = run_fsck(partial_clone)
    git_status, git_out = git_fsck(partial_clone)
    assert status == git_status == 0
    assert not kinds(findings)
    # objects of promisor packs that nothing reaches are dangling, as in git
    ours = sorted(f.message for f in findings if f.kind == "dangling")
    assert ours == sorted(line for line in git_out.splitlines() if line.startswith("dangling "))


def test_missing_object_no_promisor_pack_references_is_still_missing(partial_clone, run_fsck):
    (partial_clone / "refs" / "heads" / "broken").write_text("ef" * 20 + "\n")
    status, findings = run_fsck(partial_clone)
    assert status == git_fsck(partial_clone)[0] == 2
    assert one(findings, "ref-broken").details["object"] == "missing"


# --- commit-graph and multi-pack-index --------------------------------------------------------------------


def test_damaged_commit_graph_is_its_own_exit_bit(base, run_fsck):
    git("commit-graph", "write", "--reachable", cwd=base)
    graph = base / "objects" / "info" / "commit-graph"
    repos.flip_byte(graph, graph.stat().st_size // 2)
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 16
    assert any(f.area == "commit-graph" and f.path == str(graph) for f in findings)


def test_damaged_multi_pack_index_is_its_own_exit_bit(base, run_fsck):
    git("multi-pack-index", "write", cwd=base)
    midx = base / "objects" / "pack" / "multi-pack-index"
    repos.flip_byte(midx, midx.stat().st_size - 3)
    status, findings = run_fsck(base)
    assert status == git_fsck(base)[0] == 32
    assert one(findings, "midx-checksum").path == str(midx)


# --- alternates --------------------------------------------------------------------------------------------


def test_objects_borrowed_from_an_alternate_are_not_missing(fsck_base, tmp_path, run_fsck):
    borrower = repos.init_bare(tmp_path / "borrower.git")
    (borrower / "objects" / "info" / "alternates").write_text(str(fsck_base / "objects") + "\n")
    main = git_text("rev-parse", "main", cwd=fsck_base).strip()
    git("update-ref", "refs/heads/main", main, cwd=borrower)
    status, findings = run_fsck(borrower)
    git_status, git_out = git_fsck(borrower)
    assert status == git_status == 0
    # git lists the lender's unreachable objects as dangling too
    dangling = sorted(f.message for f in findings if f.kind == "dangling")
    assert dangling and dangling == sorted(line for line in git_out.splitlines() if line.startswith("dangling "))


def test_sha256_repository_crc_mismatch(fsck_base_sha256, tmp_path, run_fsck):
    repo = repos.copy_repo(fsck_base_sha256, tmp_path / "r.git")
    row = reachable_whole_blob(repo)
    damage_blob_entry(repo, row, rehash="sha256")
    status, findings = run_fsck(repo)
    assert status == git_fsck(repo)[0] == 6
    assert one(findings, "pack-crc").oid == row["oid"]


def test_commit_graph_naming_a_malformed_commit_is_a_graph_finding_not_a_crash(base, run_fsck):
    commit = git_text("rev-parse", "loose", cwd=base).strip()
    git("commit-graph", "write", "--reachable", cwd=base)
    path = base / "objects" / commit[:2] / commit[2:]
    os.chmod(path, 0o644)
    body = b"tree " + b"z" * 40 + b"\ncommitter C <c@d> x +0000\n\nm\n"
    path.write_bytes(zlib.compress(b"commit %d\0" % len(body) + body))
    for options in ({}, {"connectivity_only": True}):
        status, findings = run_fsck(base, **options)
        assert status & 16 and status & 1
        assert any(f.area == "commit-graph" and f.oid == commit for f in findings)


def test_index_ids_out_of_order_are_reported_and_entries_still_read(base, run_fsck):
    _, idx = repos.the_pack(base)
    moved = repos.swap_idx_neighbours(base)
    status, findings = run_fsck(base)
    assert status & 4
    f = one(findings, "idx-order")
    assert f.path == str(idx) and f.oid == moved.hex()
    assert not [f for f in findings if f.kind in ("hash-mismatch", "pack-crc")]  # each entry still reads
