"""fsck with worker processes (--jobs N) gives the verdict of one process:
the same findings in the same order, the same exit status, on damaged
repositories built here (the damage of tests/test_fsck_corrupt.py), and
progress and cancel keep working while the workers run.

PACKSCOPE_FSCK_MIN_CHUNK=1 makes the small test packs split into ranges
(by default only packs of thousands of objects are)."""

from __future__ import annotations

import multiprocessing

import pytest

from packscope.core.errors import CancelledError
from packscope.core.fsck import parallel
from tests import repos
from tests.cli import packscope_in
from tests.repos import git_text
from tests.test_fsck_corrupt import commit_on_branch, damage_blob_entry, loose_blob, reachable_whole_blob

SPLIT = {"PACKSCOPE_FSCK_MIN_CHUNK": "1"}


def damage_crc(repo):
    damage_blob_entry(repo, reachable_whole_blob(repo))  # a delta base: its deltas fail too


def damage_entries_everywhere(repo):
    """A byte flipped in entries from the start, middle and end of the pack:
    findings come from every worker's range."""
    pack, _ = repos.the_pack(repo)
    rows = sorted((r for r in repos.verify_pack_rows(pack) if r["packed"] > 40), key=lambda r: r["offset"])
    for r in (rows[1], rows[len(rows) // 3], rows[len(rows) // 2], rows[-2]):
        repos.flip_byte(pack, r["offset"] + r["packed"] // 2)
    repos.rehash_pack(pack)


def damage_syntax_and_dangling(repo):
    blob, _ = loose_blob(repo)
    tree = repos.hash_literally(repo, "tree", b"0100644 file\0" + bytes.fromhex(blob))
    commit_on_branch(
        repo, "padded", b"tree %s\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" % tree.encode()
    )
    main_tree = git_text("rev-parse", "main^{tree}", cwd=repo).strip()
    commit_on_branch(
        repo, "bademail", b"tree %s\nauthor A <a@b 1 +0000\ncommitter C <c@d> 1 +0000\n\nm\n" % main_tree.encode()
    )
    # unreachable: a commit on a new tree, neither named by a ref
    lone = repos.hash_literally(repo, "tree", b"100644 lone\0" + bytes.fromhex(blob))
    repos.hash_literally(
        repo, "commit", b"tree %s\nauthor A <a@b> 2 +0000\ncommitter C <c@d> 2 +0000\n\nx\n" % lone.encode()
    )


DAMAGE = {
    "crc": damage_crc,
    "entries-everywhere": damage_entries_everywhere,
    "syntax-and-dangling": damage_syntax_and_dangling,
    "idx-order": repos.swap_idx_neighbours,
}


@pytest.fixture(params=sorted(DAMAGE))
def damaged(request, fsck_base, tmp_path):
    repo = repos.copy_repo(fsck_base, tmp_path / "repo.git")
    DAMAGE[request.param](repo)
    return repo


@pytest.mark.parametrize("extra", [(), ("--json",), ("--limit", "1")], ids=["text", "json", "limit-1"])
def test_two_jobs_print_what_one_job_prints_and_exit_alike(damaged, extra):
    one = packscope_in(damaged, "fsck", "--no-progress", "--jobs", "1", *extra, env=SPLIT)
    two = packscope_in(damaged, "fsck", "--no-progress", "--jobs", "2", *extra, env=SPLIT)
    assert b"Traceback" not in one.stderr + two.stderr
    assert one.stdout, "the damage should be reported"
    assert (two.returncode, two.stdout) == (one.returncode, one.stdout)


def test_workers_run_and_their_merged_findings_and_verdicts_equal_one_process(damaged, monkeypatch, run_fsck):
    monkeypatch.setenv("PACKSCOPE_FSCK_MIN_CHUNK", "1")
    calls = []
    real = parallel.ObjectPass.check_entries

    def spy(self, slot, order, bases, ticker):
        calls.append(len(order))
        yield from real(self, slot, order, bases, ticker)

    monkeypatch.setattr(parallel.ObjectPass, "check_entries", spy)
    serial = run_fsck(damaged, jobs=1)
    assert calls == []
    split = run_fsck(damaged, jobs=2)
    assert calls, "the pack was not split over workers"
    assert split == serial
    assert multiprocessing.active_children() == []


def test_progress_reaches_every_packed_object_and_cancel_stops_the_workers(fsck_base, monkeypatch, run_fsck):
    monkeypatch.setenv("PACKSCOPE_FSCK_MIN_CHUNK", "1")
    n = len(repos.show_index(repos.the_pack(fsck_base)[1]))
    seen: list[tuple[int, int]] = []
    run_fsck(fsck_base, jobs=2, progress=lambda done, total, phase: phase == "packs" and seen.append((done, total)))
    assert seen[-1] == (n, n)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)

    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 2  # once the pass is under way

    with pytest.raises(CancelledError):
        run_fsck(fsck_base, jobs=2, cancel=cancel)
    assert multiprocessing.active_children() == []


def test_jobs_must_be_a_positive_number(fsck_base):
    p = packscope_in(fsck_base, "fsck", "--jobs", "0")
    assert p.returncode == 2 and b"--jobs" in p.stderr


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_a_gitlink_does_not_use_the_commit_it_names_dangling_as_git_says(fsck_base, tmp_path, packed):
    # The object pass notes what each tree names from the syntax check's own
    # parse; a gitlink names another repository's commit, so an unreachable
    # commit only a gitlink names is still dangling.
    repo = repos.copy_repo(fsck_base, tmp_path / "repo.git")
    blob, _ = loose_blob(repo)
    main_tree = git_text("rev-parse", "main^{tree}", cwd=repo).strip()
    body = b"tree %s\nauthor A <a@b> 3 +0000\ncommitter C <c@d> 3 +0000\n\nsub\n" % main_tree.encode()
    linked = repos.hash_literally(repo, "commit", body)
    tree = repos.hash_literally(
        repo, "tree", b"160000 a\0" + bytes.fromhex(linked) + b"100644 b\0" + bytes.fromhex(blob)
    )
    top = b"tree %s\nauthor A <a@b> 4 +0000\ncommitter C <c@d> 4 +0000\n\ntop\n" % tree.encode()
    repos.hash_literally(repo, "commit", top)
    if packed:
        git_text("repack", "-a", "-d", "--keep-unreachable", cwd=repo)
    want = sorted(
        line for line in git_text("fsck", "--full", "--no-progress", cwd=repo).splitlines() if "dangling" in line
    )
    assert f"dangling commit {linked}" in want
    for jobs in ("1", "2"):
        p = packscope_in(repo, "fsck", "--no-progress", "--jobs", jobs, env=SPLIT)
        got = sorted(line for line in p.stdout.decode().splitlines() if line.startswith("dangling"))
        assert got == want
