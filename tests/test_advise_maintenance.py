"""`advise`'s maintenance rows, held against what git really does.

Each test builds a repository just under or just over one threshold (small
thresholds set in the repository's config keep them small), asks packscope
whether the task fires, then runs the task with git on a copy and checks
that git did (or did not) change the store the way the task changes it.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from packscope.core.advise.maintenance import geometric_split, maintenance
from packscope.core.repo.session import open_session
from tests.repos import git, git_text

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


def rows(repo: Path) -> dict:
    with open_session(str(repo)) as s:
        return {t.task: t for t in maintenance(s)}


def new_repo(path: Path, commits: int = 2, *, bare_config: dict | None = None) -> Path:
    git("init", "-q", "-b", "main", path)
    for i in range(commits):
        (path / f"f{i}").write_text(f"{i}\n")
        git("add", f"f{i}", cwd=path)
        git("commit", "-q", "-m", f"c{i}", cwd=path, env={"GIT_COMMITTER_DATE": f"{1_600_000_000 + i} +0000"})
    for k, v in (bare_config or {}).items():
        git("config", k, v, cwd=path)
    return path


def gitdir(work: Path) -> Path:
    return work / ".git"


def copy_of(repo: Path, tmp: Path, name: str = "copy") -> Path:
    dest = tmp / name
    shutil.copytree(repo, dest, symlinks=True)
    return dest


def packs(work: Path) -> set[str]:
    return {p.name for p in (gitdir(work) / "objects" / "pack").glob("*.pack")}


def blobs_with_prefix(prefix: str, count: int, seed: str) -> list[bytes]:
    """Blob contents whose SHA-1 ids start with ``prefix``."""
    out, i = [], 0
    while len(out) < count:
        body = f"{seed} {i}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith(prefix):
            out.append(body)
        i += 1
    return out


def write_blobs(work: Path, bodies: list[bytes]) -> None:
    for b in bodies:
        git("hash-object", "-w", "--stdin", cwd=work, input=b)


def in_17(work: Path) -> int:
    d = gitdir(work) / "objects" / "17"
    return len(list(d.iterdir())) if d.is_dir() else 0


def fill_17(work: Path, target: int) -> None:
    """Exactly ``target`` loose objects in objects/17."""
    need = target - in_17(work)
    assert need >= 0
    write_blobs(work, blobs_with_prefix("17", need, "seventeen"))
    assert in_17(work) == target


def gc_auto(work: Path) -> None:
    git("-c", "gc.autoDetach=false", "gc", "--auto", "-q", cwd=work)


def maintenance_run(work: Path, task: str) -> None:
    git("maintenance", "run", "--auto", f"--task={task}", "--quiet", cwd=work)


def one_pack_per_commit(work: Path, n: int, start: int = 0) -> None:
    for i in range(start, start + n):
        (work / f"p{i}").write_text(f"pack {i}\n")
        git("add", f"p{i}", cwd=work)
        git("commit", "-q", "-m", f"p{i}", cwd=work)
        git("repack", "-d", "-q", cwd=work)


# --- gc --auto: the objects/17 estimate --------------------------------------------------


@pytest.mark.parametrize("in17,fires", [(2, False), (3, True)])
def test_gc_auto_counts_objects_17_against_ceil_of_a_256th(tmp_path, in17, fires):
    # gc.auto 257: ceil(257/256) = 2, so git fires at 3 in objects/17 (a floor would fire at 2)
    work = new_repo(tmp_path / "r", bare_config={"gc.auto": "257"})
    fill_17(work, in17)
    row = rows(work)["gc-auto"]
    trig = {t.setting: t for t in row.triggers}["gc.auto"]
    assert (trig.value, trig.threshold, trig.fires) == (in17, 2, fires)
    assert trig.source.startswith(str(gitdir(work) / "config"))
    assert row.would_run is fires
    copy = copy_of(work, tmp_path)
    before = packs(copy)
    gc_auto(copy)
    assert (packs(copy) != before) is fires  # gc packed the loose history, or left it alone


def test_gc_auto_zero_turns_gc_off_whatever_the_count(tmp_path):
    work = new_repo(tmp_path / "r", bare_config={"gc.auto": "0"})
    fill_17(work, 4)
    row = rows(work)["gc-auto"]
    assert row.would_run is False and "off" in row.why
    copy = copy_of(work, tmp_path)
    gc_auto(copy)
    assert packs(copy) == set()


def test_gc_auto_threshold_default_is_6700(tmp_path):
    work = new_repo(tmp_path / "r")
    trig = {t.setting: t for t in rows(work)["gc-auto"].triggers}["gc.auto"]
    assert (trig.threshold, trig.source) == (27, "default")


# --- gc --auto: the pack count -------------------------------------------------------------


@pytest.mark.parametrize("count,fires", [(3, False), (4, True)])
def test_gc_auto_pack_limit_fires_above_the_limit(tmp_path, count, fires):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"gc.autoPackLimit": "3"})
    one_pack_per_commit(work, count)
    assert len(packs(work)) == count
    row = rows(work)["gc-auto"]
    trig = {t.setting: t for t in row.triggers}["gc.autoPackLimit"]
    assert (trig.value, trig.threshold, trig.fires, row.would_run) == (count, 3, fires, fires)
    copy = copy_of(work, tmp_path)
    gc_auto(copy)
    assert len(packs(copy)) == (1 if fires else count)


def test_gc_auto_pack_limit_leaves_kept_packs_out(tmp_path):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"gc.autoPackLimit": "3"})
    one_pack_per_commit(work, 4)
    kept = sorted(packs(work))[0]
    (gitdir(work) / "objects" / "pack" / kept.replace(".pack", ".keep")).write_text("")
    row = rows(work)["gc-auto"]
    assert {t.setting: t for t in row.triggers}["gc.autoPackLimit"].value == 3
    assert row.would_run is False
    copy = copy_of(work, tmp_path)
    gc_auto(copy)
    assert len(packs(copy)) == 4


def test_gc_auto_pack_limit_counts_packs_a_midx_covers(tmp_path):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"gc.autoPackLimit": "3"})
    one_pack_per_commit(work, 4)
    git("multi-pack-index", "write", cwd=work)
    row = rows(work)["gc-auto"]
    assert row.would_run is True
    copy = copy_of(work, tmp_path)
    gc_auto(copy)
    assert len(packs(copy)) == 1


def test_pack_refs_runs_only_when_gc_runs(tmp_path):
    for count, fires in ((3, False), (4, True)):
        work = new_repo(tmp_path / f"r{count}", commits=0, bare_config={"gc.autoPackLimit": "3"})
        one_pack_per_commit(work, count)
        git("branch", "side", cwd=work)
        row = rows(work)["pack-refs"]
        assert row.triggers[0].value == 2  # main and side, loose
        assert row.would_run is fires
        copy = copy_of(work, tmp_path, f"copy{count}")
        gc_auto(copy)
        assert (gitdir(copy) / "refs" / "heads" / "side").exists() is (not fires)


def test_pack_refs_off_by_gc_pack_refs_false(tmp_path):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"gc.autoPackLimit": "1", "gc.packRefs": "false"})
    one_pack_per_commit(work, 2)
    assert rows(work)["gc-auto"].would_run is True
    assert rows(work)["pack-refs"].would_run is False
    copy = copy_of(work, tmp_path)
    gc_auto(copy)
    assert (gitdir(copy) / "refs" / "heads" / "main").exists()


def test_a_recent_gc_log_stops_auto_gc(tmp_path):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"gc.autoPackLimit": "1"})
    one_pack_per_commit(work, 2)
    (gitdir(work) / "gc.log").write_text("error: something failed\n")
    row = rows(work)["gc-auto"]
    assert row.would_run is False and "gc.log" in row.why
    copy = copy_of(work, tmp_path)
    git("gc", "--auto", "-q", cwd=copy)  # detached by default: the log is read
    assert len(packs(copy)) == 2


# --- git maintenance tasks -----------------------------------------------------------------


@pytest.mark.parametrize("extra,fires", [(0, False), (1, True)])
def test_loose_objects_task_fires_at_its_threshold(tmp_path, extra, fires):
    work = new_repo(tmp_path / "r", commits=2)  # 2 commits: 6 loose objects
    loose = int(git_text("count-objects", "-v", cwd=work).split("count: ")[1].split()[0])
    # the threshold one above the count (under) or equal to it (over: git fires at the threshold)
    git("config", "maintenance.loose-objects.auto", str(loose + 1 - extra), cwd=work)
    row = rows(work)["loose-objects"]
    assert row.triggers[0].value == loose
    assert row.would_run is fires
    copy = copy_of(work, tmp_path)
    maintenance_run(copy, "loose-objects")
    assert bool(packs(copy)) is fires


@pytest.mark.parametrize("count,fires", [(2, False), (3, True)])
def test_incremental_repack_counts_packs_outside_the_midx(tmp_path, count, fires):
    work = new_repo(tmp_path / "r", commits=0, bare_config={"maintenance.incremental-repack.auto": "3"})
    one_pack_per_commit(work, 2)
    git("multi-pack-index", "write", cwd=work)
    one_pack_per_commit(work, count, start=10)  # these are outside it
    row = rows(work)["incremental-repack"]
    assert row.triggers[0].value == count
    assert row.would_run is fires
    copy = copy_of(work, tmp_path)
    midx = gitdir(copy) / "objects" / "pack" / "multi-pack-index"
    before = midx.read_bytes()
    maintenance_run(copy, "incremental-repack")
    assert (midx.read_bytes() != before) is fires


def test_incremental_repack_never_with_multi_pack_index_off(tmp_path):
    work = new_repo(
        tmp_path / "r",
        commits=0,
        bare_config={"maintenance.incremental-repack.auto": "2", "core.multiPackIndex": "false"},
    )
    one_pack_per_commit(work, 3)
    assert rows(work)["incremental-repack"].would_run is False
    copy = copy_of(work, tmp_path)
    maintenance_run(copy, "incremental-repack")
    assert not (gitdir(copy) / "objects" / "pack" / "multi-pack-index").exists()


def graph_written(work: Path) -> set[str]:
    info = gitdir(work) / "objects" / "info"
    return {p.name for p in info.rglob("*graph*")} if info.exists() else set()


@pytest.mark.parametrize("commits,fires", [(3, False), (4, True)])
def test_commit_graph_counts_commits_not_in_the_graph(tmp_path, commits, fires):
    work = new_repo(tmp_path / "r", commits=2, bare_config={"maintenance.commit-graph.auto": "4"})
    git("commit-graph", "write", "--reachable", "--split", cwd=work)
    for i in range(commits):
        git("commit", "-q", "--allow-empty", "-m", f"n{i}", cwd=work)
    row = rows(work)["commit-graph"]
    assert row.triggers[0].value == commits
    assert row.would_run is fires
    copy = copy_of(work, tmp_path)
    before = graph_written(copy)
    maintenance_run(copy, "commit-graph")
    assert (graph_written(copy) != before) is fires


def test_commit_graph_counts_a_tip_again_for_every_ref(tmp_path):
    # two commits, two refs at the tip: git counts tip, parent, tip again = 3
    work = new_repo(tmp_path / "r", commits=2, bare_config={"maintenance.commit-graph.auto": "3"})
    git("branch", "other", cwd=work)
    row = rows(work)["commit-graph"]
    assert row.would_run is True and row.triggers[0].value == 3
    copy = copy_of(work, tmp_path)
    maintenance_run(copy, "commit-graph")
    assert graph_written(copy)


def test_commit_graph_peels_tags_and_skips_non_commits(tmp_path):
    work = new_repo(tmp_path / "r", commits=2, bare_config={"maintenance.commit-graph.auto": "3"})
    git("tag", "-a", "-m", "t", "v1", cwd=work)
    blob = git_text("hash-object", "-w", "f0", cwd=work).strip()
    git("tag", "blobtag", blob, cwd=work)
    row = rows(work)["commit-graph"]
    # main: tip + parent = 2; refs/tags/v1 peels to the tip again: 3
    assert row.triggers[0].value == 3 and row.would_run is True
    copy = copy_of(work, tmp_path)
    maintenance_run(copy, "commit-graph")
    assert graph_written(copy)


# --- repack --geometric=2 ---------------------------------------------------------------------


def make_blob_packs(work: Path, sizes: list[int]) -> dict[str, int]:
    """One pack per size holding that many new blobs: {pack name: size}."""
    out = {}
    for k, n in enumerate(sizes):
        ids = [git_text("hash-object", "-w", "--stdin", cwd=work, input=f"pack{k} blob{j}\n").strip() for j in range(n)]
        name = git_text(
            "pack-objects", "-q", str(gitdir(work) / "objects" / "pack" / "pack"), cwd=work, input="\n".join(ids) + "\n"
        ).strip()
        out[f"pack-{name}.pack"] = n
    git("prune-packed", cwd=work)
    return out


@pytest.mark.parametrize(
    "sizes",
    [[1, 1, 3, 8, 20], [2, 5, 11, 30], [3, 4, 5], [10, 1], [1, 2, 4, 8, 3]],
)
def test_geometric_rollup_names_the_packs_git_replaces(tmp_path, sizes):
    work = new_repo(tmp_path / "r", commits=1)
    git("repack", "-a", "-d", "-q", cwd=work)
    made = make_blob_packs(work, sizes)
    row = rows(work)["geometric-repack"]
    copy = copy_of(work, tmp_path)
    before = packs(copy)
    git("repack", "--geometric=2", "-d", "-q", cwd=copy)
    gone = before - packs(copy)
    assert set(row.packs) == {n[: -len(".pack")] for n in gone}
    assert row.would_run is bool(gone)
    assert set(made) <= before


def test_geometric_split_by_the_rules():
    assert geometric_split([]) == 0
    assert geometric_split([5, 20]) == 0  # already a progression
    assert geometric_split([5, 8]) == 2
    assert geometric_split([1, 1, 3, 8, 20]) == 5  # 1+1 < 2*3 ... the merged pack reaches the top
    assert geometric_split([1, 10, 30]) == 0


# --- maintenance.auto and maintenance.<task>.enabled ---------------------------------------------


@pytest.mark.parametrize("auto", [True, False])
def test_maintenance_auto_decides_whether_a_commit_starts_it(tmp_path, auto):
    work = new_repo(
        tmp_path / "r",
        commits=0,
        bare_config={"gc.autoPackLimit": "2", "gc.autoDetach": "false", "maintenance.auto": str(auto).lower()},
    )
    one_pack_per_commit(work, 3)
    row = rows(work)["gc-auto"]
    assert row.would_run is True
    trig = {t.setting: t for t in row.triggers}["maintenance.auto"]
    assert (trig.value, trig.fires) == (auto, auto)
    copy = copy_of(work, tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "after", cwd=copy)  # commit runs `maintenance run --auto`
    assert (len(packs(copy)) == 1) is auto


@pytest.mark.parametrize("enabled", [True, False])
def test_an_enabled_task_runs_in_a_plain_auto_run(tmp_path, enabled):
    work = new_repo(tmp_path / "r", commits=2, bare_config={"maintenance.loose-objects.auto": "3"})
    git("config", "maintenance.loose-objects.enabled", str(enabled).lower(), cwd=work)
    row = rows(work)["loose-objects"]
    assert row.would_run is True and row.enabled is enabled
    assert rows(work)["gc-auto"].would_run is False
    copy = copy_of(work, tmp_path)
    git("maintenance", "run", "--auto", "--quiet", cwd=copy)
    assert bool(packs(copy)) is enabled
