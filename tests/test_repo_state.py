"""The repository's state, stamped when a long job starts and ends
(core/repo/repo_state.py), and fsck's findings of a run during which it
changed, sorted against the final state (core/fsck/changed_during.py)."""

from __future__ import annotations

import time
from pathlib import Path

from packscope.core.fsck.changed_during import settle
from packscope.core.fsck.findings import ERROR, ERROR_PACK, ERROR_REACHABLE, INFO, Finding
from packscope.core.repo.repo_state import compare, state_of, take_state
from packscope.core.repo.repository import Repository
from packscope.core.repo.session import open_session
from packscope.core.store.temporary_files import is_git_temporary
from tests import repos
from tests.repos import git, git_text


def work_repo(tmp_path: Path, commits: int = 6) -> Path:
    work = repos.work_tree_with_commits(tmp_path / "work", commits)
    git("repack", "-a", "-d", "-q", cwd=work)
    return work


def state(work: Path):
    return state_of(Repository.discover(work))


def commit(work: Path, name: str) -> str:
    (work / name).write_text(name + "\n")
    git("add", name, cwd=work)
    git("commit", "-q", "-m", name, cwd=work)
    return git_text("rev-parse", "HEAD", cwd=work).strip()


def tick() -> None:
    time.sleep(0.01)  # mtimes in ns: a rewrite within the same tick would still differ by inode


def test_nothing_done_is_no_change(tmp_path):
    work = work_repo(tmp_path)
    a = state(work)
    git("log", "--oneline", cwd=work)
    git("fsck", "--no-progress", cwd=work)
    assert compare(a, state(work)) is None


def test_a_repack_is_told_with_its_time(tmp_path):
    work = work_repo(tmp_path)
    commit(work, "x")
    a = state(work)
    tick()
    git("repack", "-a", "-d", "-q", cwd=work)
    change = compare(a, state(work))
    assert change is not None
    assert change.what() == "a repack"
    assert change.describe() == "a repack at " + time.strftime("%H:%M", time.localtime(change.at))
    (old,) = [p for p in a.packs if p.endswith(".pack")]
    assert old in change.packs_removed
    assert any(p.endswith(".pack") for p in change.packs_added)


def test_a_commit_updates_refs_and_loose_objects(tmp_path):
    work = work_repo(tmp_path)
    a = state(work)
    tick()
    commit(work, "y")
    change = compare(a, state(work))
    assert change is not None and change.refs and change.loose
    assert not change.packs_added and not change.packs_removed
    assert "refs updated" in change.what()


def test_a_packed_ref_update_is_seen(tmp_path):
    work = work_repo(tmp_path)
    git("pack-refs", "--all", cwd=work)
    a = state(work)
    tick()
    git("update-ref", "refs/heads/main", "HEAD~1", cwd=work)
    change = compare(a, state(work))
    assert change is not None and change.refs


def test_git_s_temporary_files_are_not_part_of_the_state(tmp_path):
    work = work_repo(tmp_path)
    pack_dir = work / ".git" / "objects" / "pack"
    a = state(work)
    for name in (".tmp-123-pack-abc.pack", ".tmp-123-pack-abc.idx", "tmp_pack_XyZ", "tmp_idx_XyZ"):
        (pack_dir / name).write_bytes(b"half written")
    b = take_state(work / ".git", work / ".git", work / ".git" / "objects")
    assert compare(a, b) is None
    assert all(is_git_temporary(n) for n in (".tmp-1-pack-x.pack", "tmp_pack_1", "/a/b/tmp_idx_2"))
    assert not is_git_temporary("pack-0123.pack")


# --- settling a changed run's findings ------------------------------------------------------


def ref_finding(work: Path, ref: str, oid: str) -> Finding:
    return Finding(
        "ref-broken",
        ERROR,
        f"{ref}: invalid sha1 pointer {oid} (the object is missing)",
        "refs",
        ERROR_REACHABLE,
        path=str(work / ".git" / ref),
        oid=oid,
        details={"object": "missing", "root": ref},
    )


def pack_finding(pack: Path, kind: str = "idx-unreadable") -> Finding:
    return Finding(
        kind,
        ERROR,
        "cannot read pack index",
        "packs",
        ERROR_PACK,
        path=str(pack.with_suffix(".idx")),
        pack=str(pack),
        idx=str(pack.with_suffix(".idx")),
    )


def settled(work: Path, findings: list[Finding], start):
    end = state(work)
    with open_session(str(work)) as session:
        return settle(findings, start, end, session)


def test_an_unchanged_repository_keeps_every_finding(tmp_path):
    work = work_repo(tmp_path)
    a = state(work)
    findings = [ref_finding(work, "refs/heads/main", "00" * 20), pack_finding(work / "gone.pack")]
    s = settled(work, findings, a)
    assert s.change is None and s.kept == findings and not s.dropped and not s.changed
    assert s.sentence() == ""


def test_findings_about_vanished_files_and_moved_refs_are_dropped(tmp_path):
    """What a repack loop made fsck say: an .idx that was gone by the time it
    was read, a branch naming a commit the check's object pass never saw,
    a temporary pack — none of it in the final state."""
    work = work_repo(tmp_path)
    (old_pack,) = repos.pack_files(work / ".git")
    a = state(work)
    tick()
    new = commit(work, "z")  # written after the object pass: "missing"
    git("repack", "-a", "-d", "-q", cwd=work)
    assert not old_pack.exists()
    tmp = old_pack.parent / ".tmp-99-pack-1234.pack"
    findings = [
        ref_finding(work, "refs/heads/main", new),
        pack_finding(old_pack),
        Finding("pack-orphan", "warning", "pack without its index", "packs", 0, path=str(tmp)),
    ]
    s = settled(work, findings, a)
    assert s.change is not None and "a repack" in s.change.describe()
    assert s.dropped == findings and not s.kept and not s.changed
    assert s.exit_status() == 0
    assert "the repository changed during the check (a repack" in s.sentence()
    assert "3 findings" in s.sentence()


def test_damage_the_final_state_confirms_is_kept(tmp_path):
    """A ref that still names a missing object, and damage in a pack the
    change did not rewrite, stand; a dangling object is marked: it may come
    from the change."""
    work = work_repo(tmp_path)
    (pack,) = repos.pack_files(work / ".git")
    bogus = "ab" * 20
    (work / ".git" / "refs" / "heads" / "bad").write_text(bogus + "\n")
    a = state(work)
    tick()
    dangling = commit(work, "w")  # a new loose commit, a new pack beside the old one
    repos.add_pack_beside(work / ".git")
    findings = [
        ref_finding(work, "refs/heads/bad", bogus),
        pack_finding(pack, "pack-checksum"),
        Finding("dangling", INFO, f"dangling commit {dangling}", "dangling", 0, oid=dangling),
    ]
    s = settled(work, findings, a)
    assert s.change is not None
    assert s.kept == findings[:2]
    assert s.changed == findings[2:]
    assert s.exit_status() == ERROR_REACHABLE | ERROR_PACK
    assert "may come from the change" in s.sentence()


def test_a_ref_whose_target_moved_is_dropped_even_if_the_old_target_is_gone(tmp_path):
    work = work_repo(tmp_path)
    a = state(work)
    tick()
    (work / ".git" / "refs" / "heads" / "side").write_text(git_text("rev-parse", "HEAD", cwd=work))
    s = settled(work, [ref_finding(work, "refs/heads/side", "cd" * 20)], a)
    assert len(s.dropped) == 1 and not s.kept


def test_what_an_object_s_content_breaks_stands_whichever_pack_holds_it_now(tmp_path):
    """A syntax finding (git's message id) is about the object's content,
    the same in any copy: the repack that removed the pack it was read
    from does not make it go away; a gc that removed the object does."""
    work = work_repo(tmp_path)
    (old_pack,) = repos.pack_files(work / ".git")
    tree = git_text("rev-parse", "HEAD^{tree}", cwd=work).strip()
    a = state(work)
    tick()
    commit(work, "v")
    git("repack", "-a", "-d", "-q", cwd=work)
    assert not old_pack.exists()

    def syntax(oid: str) -> Finding:
        return Finding(
            "syntax",
            "warning",
            "hasDotgit: tree has an entry named '.git'",
            "objects",
            0,
            path=str(old_pack),
            pack=str(old_pack),
            oid=oid,
            msg_id="hasDotgit",
        )

    s = settled(work, [syntax(tree), syntax("ef" * 20)], a)
    assert [f.oid for f in s.kept] == [tree]
    assert [f.oid for f in s.dropped] == ["ef" * 20]


def test_a_temporary_file_is_never_damage_even_when_nothing_else_changed(tmp_path):
    """A repack under way from before the run to after it: the state (which
    leaves git's temporary files out) did not change, and a finding about
    its .tmp pack is dropped all the same."""
    work = work_repo(tmp_path)
    pack_dir = work / ".git" / "objects" / "pack"
    tmp = pack_dir / ".tmp-7-pack-abcd.pack"
    tmp.write_bytes(b"PACK half written")
    a = state(work)
    orphan = Finding("pack-orphan", "warning", "pack without its index", "packs", 0, path=str(tmp))
    real = ref_finding(work, "refs/heads/main", "00" * 20)
    s = settled(work, [orphan, real], a)
    assert s.change is None and s.dropped == [orphan] and s.kept == [real]


def test_half_a_pack_seen_while_packs_moved_is_marked_or_dropped(tmp_path):
    """A repack deletes and writes a pack's .idx and .pack one at a time:
    an index seen without its pack while packs came and went may be one of
    those (marked), and one whose pack is there now was (dropped); with no
    change, a stray index stands."""
    work = work_repo(tmp_path)
    pack_dir = work / ".git" / "objects" / "pack"
    stray = pack_dir / "pack-1234.idx"
    stray.write_bytes(b"\377tOc stray")
    whole = pack_dir / "pack-5678.idx"
    whole.write_bytes(b"\377tOc written first")

    def orphan(path: Path) -> Finding:
        return Finding("orphan-idx", "warning", "index without its pack", "packs", 0, path=str(path))

    a = state(work)
    assert settled(work, [orphan(stray)], a).kept == [orphan(stray)]  # nothing moved: it stands
    tick()
    git("repack", "-a", "-d", "-q", cwd=work)
    whole.with_suffix(".pack").write_bytes(b"PACK its pack, written since")
    s = settled(work, [orphan(stray), orphan(whole)], a)
    assert s.change is not None
    assert s.changed == [orphan(stray)] and s.dropped == [orphan(whole)] and not s.kept
