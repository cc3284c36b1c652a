"""git's temporary files, one rule for every reader
(core/store/temporary_files.py): the pack directory's scan, the
repository's state stamp, fsck's findings of a run and advise's count of
half-written files must agree on the same names."""

from __future__ import annotations

from packscope.core.advise.stored_files import temporary_files
from packscope.core.fsck.changed_during import unchanged
from packscope.core.fsck.findings import ERROR, ERROR_PACK, Finding
from packscope.core.repo.repo_state import compare, take_state
from packscope.core.store.pack_directory import scan_pack_dir
from tests import repos
from tests.repos import git

HASH = "3" * 40
# The names git's writers give a file before renaming it into place:
# repack's packs, pack-objects' and index-pack's files.
IN_THE_PACK_DIRECTORY = (
    f".tmp-4242-pack-{HASH}.pack",
    f".tmp-4242-pack-{HASH}.idx",
    f".tmp-4242-pack-{HASH}.rev",
    f".tmp-4242-pack-{HASH}.bitmap",
    "tmp_pack_Ab12Cd",
    "tmp_idx_Ab12Cd",
    "tmp_rev_Ab12Cd",
    "tmp_bitmap_Ab12Cd",
    "tmp_mtimes_Ab12Cd",
)


def test_the_store_the_state_fsck_and_advise_agree_on_git_s_temporary_files(tmp_path):
    work = repos.work_tree_with_commits(tmp_path / "work", 2)
    git("repack", "-a", "-d", "-q", cwd=work)
    git_dir = work / ".git"
    objects = git_dir / "objects"
    pack_dir = objects / "pack"
    # a loose object's temporary file, written before the first stamp (its
    # directory's mtime is part of the state, the file is not)
    (objects / "ab").mkdir(exist_ok=True)
    loose_tmp = objects / "ab" / "tmp_obj_Ab12Cd"
    loose_tmp.write_bytes(b"z" * 7)
    scan_before = scan_pack_dir(str(objects))
    state_before = take_state(git_dir, git_dir, objects)
    paths = [loose_tmp]
    for i, name in enumerate(IN_THE_PACK_DIRECTORY):
        (pack_dir / name).write_bytes(b"x" * (100 + i))
        paths.append(pack_dir / name)

    # the store: neither packs nor orphans
    scan = scan_pack_dir(str(objects))
    assert (scan.packs, scan.orphans) == (scan_before.packs, scan_before.orphans)
    # the state: none of them is stamped, so nothing changed
    state_after = take_state(git_dir, git_dir, objects)
    assert sorted(state_after.packs) == sorted(state_before.packs)
    assert compare(state_before, state_after) is None
    # fsck: a finding about any of them is set aside, not damage
    findings = [Finding("idx-unreadable", ERROR, "cannot read", "packs", ERROR_PACK, path=str(p)) for p in paths]
    settled = unchanged(findings)
    assert (settled.kept, settled.dropped) == ([], findings)
    # advise: every one of them, and nothing else, counted as half-written
    assert temporary_files(str(objects)) == (len(paths), sum(p.stat().st_size for p in paths))
