"""`packscope fsck` and core's Fsck API: healthy repositories pass with
git's dangling objects, output streams (text and JSON lines), progress goes
to stderr, cancel stops, and damage stays local for every other command."""

from __future__ import annotations

import json
import subprocess

import pytest

from packscope.core.errors import CancelledError
from packscope.core.fsck.verify import Fsck
from packscope.core.repo.session import open_session
from tests import repos
from tests.cli import packscope_in
from tests.repos import git_fsck, git_text

HEALTHY = [
    "packed_repo",
    "sha256_repo",
    "idxv1_repo",
    "idx64_repo",
    "many_packs_repo",
    "midx_repo",
    "repack_midx_repo",
    "midx_chain_repo",
    "graph_repo",
    "split_graph_repo",
    "mixed_generation_repo",
    "ref_delta_repo",
    "thin_completed_repo",
    "loose_repo",
    "loose_sha256_repo",
    "rev_repo",
    "fsck_base",
    "fsck_worktree",
]


@pytest.mark.parametrize("name", HEALTHY)
def test_healthy_repository_exits_zero_and_lists_gits_dangling_objects(name, request):
    repo = request.getfixturevalue(name)
    p = packscope_in(repo, "fsck", "--no-progress")
    assert p.returncode == 0, p.stdout.decode() + p.stderr.decode()
    git_status, git_out = git_fsck(repo)
    assert git_status == 0, git_out
    ours = sorted(line for line in p.stdout.decode().splitlines() if line.startswith("dangling "))
    theirs = sorted(line for line in git_out.splitlines() if line.startswith("dangling "))
    assert ours == theirs
    assert all(line.startswith(("dangling ", "notice: ")) for line in p.stdout.decode().splitlines())


def test_deep_delta_chain_is_checked_without_recursion_limits(deep_chain_repo, run_fsck):
    status, findings = run_fsck(deep_chain_repo)
    assert status == 0 and not [f for f in findings if f.severity != "info"]


@pytest.fixture
def crc_damaged(fsck_base, tmp_path):
    """A reachable blob (a delta base) damaged inside its zlib data; trailers recomputed."""
    from tests.test_fsck_corrupt import damage_blob_entry, reachable_whole_blob

    repo = repos.copy_repo(fsck_base, tmp_path / "damaged.git")
    row = reachable_whole_blob(repo)
    damage_blob_entry(repo, row)
    return repo, row["oid"]


def test_json_lines_one_finding_each_then_a_summary(crc_damaged):
    repo, bad = crc_damaged
    p = packscope_in(repo, "fsck", "--json", "--no-progress")
    lines = [json.loads(line) for line in p.stdout.decode().splitlines()]
    summary = lines[-1]["summary"]
    assert p.returncode == summary["exit"] == 6
    first = lines[0]
    assert first["kind"] == "pack-crc" and first["oid"] == bad and first["exit_bit"] == 4
    assert set(first) >= {
        "kind",
        "severity",
        "message",
        "path",
        "offset",
        "pack",
        "idx",
        "oid",
        "elsewhere",
        "remedy",
        "msg_id",
        "area",
    }
    assert summary["errors"] == sum(1 for f in lines[:-1] if f["severity"] == "error")


def test_text_output_names_location_copies_and_remedy(crc_damaged):
    repo, bad = crc_damaged
    out = packscope_in(repo, "fsck", "--no-progress").stdout.decode()
    block = out.split("\nerror: ")[0]
    assert block.startswith("error: ") and bad in block
    assert "where:" in block and "elsewhere: no other copy" in block and "remedy:" in block


def test_progress_goes_to_stderr_only_when_asked(fsck_base):
    quiet = packscope_in(fsck_base, "fsck", "--no-progress")
    loud = packscope_in(fsck_base, "fsck", "--progress")
    assert quiet.stderr == b"" and quiet.stdout == loud.stdout
    assert b"Checking packs" in loud.stderr and b"Checking connectivity" in loud.stderr


def test_connectivity_only_does_not_read_blobs(crc_damaged):
    repo, _ = crc_damaged
    p = packscope_in(repo, "fsck", "--connectivity-only", "--no-progress")
    assert p.returncode == git_fsck(repo, "--connectivity-only")[0] == 0


def test_findings_stream_before_the_run_ends(crc_damaged):
    repo, bad = crc_damaged
    session = open_session(str(repo))
    phases = []
    checker = Fsck(session.repo, session.store, progress=lambda d, t, phase: phases.append(phase))
    first = next(iter(checker.run()))
    assert first.oid == bad and "connectivity" not in phases  # found while still checking packs
    session.close()


def test_progress_reports_each_phase_and_its_totals(fsck_base):
    session = open_session(str(fsck_base))
    calls = []
    checker = Fsck(session.repo, session.store, progress=lambda d, t, phase: calls.append((phase, d, t)))
    list(checker.run())
    session.close()
    phases = [p for p, _, _ in calls]
    assert phases.index("packs") < phases.index("loose objects") < phases.index("connectivity")
    packs = [(d, t) for p, d, t in calls if p == "packs"]
    assert packs[0][0] == 0 and packs[-1][0] == packs[-1][1] == len(
        repos.verify_pack_rows(repos.the_pack(fsck_base)[0])
    )


def test_cancel_stops_the_run_with_a_typed_error(many_packs_repo):
    session = open_session(str(many_packs_repo))
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 3

    checker = Fsck(session.repo, session.store, cancel=cancel)
    with pytest.raises(CancelledError) as info:
        list(checker.run())
    session.close()
    assert info.value.kind == "cancelled"


def test_cancel_from_the_cli_is_interrupt_free(fsck_base):
    # Ctrl-C is the CLI's cancel: cli.run_guarded turns it into status 130; here
    # only check that a finished run never reports a cancellation.
    p = packscope_in(fsck_base, "fsck", "--no-progress")
    assert b"cancelled" not in p.stderr


# --- damage stays local -----------------------------------------------------------------------


def test_batch_check_over_every_id_of_a_damaged_repository_answers_them_all(crc_damaged):
    repo, bad = crc_damaged
    p = packscope_in(repo, "cat-file", "--batch-check", "--batch-all-objects")
    assert p.returncode == 0 and b"Traceback" not in p.stderr
    ids = git_text("cat-file", "--batch-all-objects", "--batch-check=%(objectname)", cwd=repo).split()
    lines = p.stdout.decode().splitlines()
    assert [line.split()[0] for line in lines] == ids
    assert all(len(line.split()) == 3 for line in lines)  # headers of the damaged entry still parse
    assert [line.split()[1] for line in lines if line.startswith(bad)] == ["blob"]


def test_batch_contents_stop_at_the_damaged_object_as_git_does(crc_damaged):
    """git prints the damaged object's header, then dies (128): every object
    before it in id order comes out whole, byte for byte as git's."""
    repo, bad = crc_damaged
    offset = repos.show_index(repos.the_pack(repo)[1])[bad]
    ours = packscope_in(repo, "cat-file", "--batch", "--batch-all-objects")
    theirs = subprocess.run(
        ["git", "cat-file", "--batch", "--batch-all-objects"], cwd=repo, capture_output=True, env=repos.git_env()
    )
    assert (ours.returncode, theirs.returncode) == (128, 128)
    assert b"Traceback" not in ours.stderr
    assert f"@ {offset}".encode() in ours.stderr and b"remedy" in ours.stderr
    assert ours.stdout == theirs.stdout
    assert ours.stdout.rsplit(b"\n", 2)[-2].split()[0] == bad.encode()  # its header is the last line


def test_single_object_commands_keep_working_next_to_a_damaged_one(crc_damaged):
    repo, bad = crc_damaged
    head = git_text("rev-parse", "main", cwd=repo).strip()
    p = packscope_in(repo, "cat-file", "-p", head)
    assert p.returncode == 0 and p.stdout.startswith(b"tree ")
    p = packscope_in(repo, "cat-file", "-p", bad)
    offset = repos.show_index(repos.the_pack(repo)[1])[bad]
    assert p.returncode == 128 and b"Traceback" not in p.stderr and f"@ {offset}".encode() in p.stderr
    p = packscope_in(repo, "lookup", bad, head)
    assert p.returncode == 0 and b"Traceback" not in p.stderr
