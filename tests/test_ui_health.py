"""Health (8): fsck in a worker, grouped findings, details, cancel; the UI
on corrupt repositories; and a UI session that leaves the repository as it was."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from packscope.inspector.screens.health import FindingScreen, HealthScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests import repos
from tests import ui_history_repos as hr
from tests.ui_support import list_text, open_screen, plain, running, until


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory):
    return hr.build_history_repo(tmp_path_factory.mktemp("health"), "base.git")


@pytest.fixture(scope="module")
def corrupt(base_repo, tmp_path_factory):
    return hr.corrupt_copies(base_repo, tmp_path_factory.mktemp("corrupt"))


async def run_health(app, pilot, timeout=20):
    screen = await open_screen(
        app, pilot, "8", HealthScreen, "the health check to finish", lambda s: s.state.finished, timeout
    )
    assert screen.state.error is None, screen.state.error  # finished, not crashed
    await pilot.pause(0.3)
    return screen


def kinds(screen) -> dict[str, int]:
    """Findings by kind, over every group."""
    out: dict[str, int] = {}
    for f in screen.findings:
        out[f.kind] = out.get(f.kind, 0) + 1
    return out


@pytest.mark.asyncio
async def test_healthy_repository_has_no_errors(base_repo):
    async with running(base_repo) as (app, pilot):
        screen = await run_health(app, pilot)
        assert screen.state.summary["exit"] == 0
        assert not [g for g in screen.groups.values() if g.severity == "error"]
        assert "done" in plain(screen.query_one("#health-title"), width=300)


@pytest.mark.parametrize(
    "name, kind_part",
    [
        ("truncated-pack", "pack"),
        ("flipped-byte", ""),
        ("garbage-loose", "loose"),
        ("broken-ref", "ref"),
        ("idx-without-pack", "orphan"),
    ],
)
@pytest.mark.asyncio
async def test_problems_grouped_with_details(corrupt, name, kind_part):
    repo = corrupt[name]
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot)
        found = kinds(screen)
        assert found, name
        assert any(kind_part in k for k in found), found
        lst = screen.query_one(VirtualList)
        rows = list_text(lst)
        # groups, causes (damaged files) first, then worst first, with counts
        first_group = next(g for g in screen.ordered_groups())
        assert rows[0].startswith(("▾", "▸")) and (first_group.title or first_group.kind) in rows[0]
        assert ("findings caused by this" in rows[0] or first_group.count() == len(first_group.findings)) and (
            first_group.cause or f"×{first_group.count()}" in rows[0]
        )
        # i on a finding: location, elsewhere, remedy
        row = next(i for i, (k, _v) in enumerate(screen.rows) if k == "finding")
        lst.move_to(row)
        await pilot.press("i")
        await pilot.pause()
        assert isinstance(app.screen, FindingScreen)
        detail = plain(app.screen.query_one("#finding-detail"), width=200)
        f = screen.rows[row][1].finding
        assert "remedy" in detail and "file" in detail and "offset" in detail
        assert f.path and os.path.basename(f.path) in detail
        assert f.remedy and f.remedy.split()[0] in detail
        await pilot.press("escape")
        assert app.screen is screen
        # Enter on a group closes and opens it
        lst.move_to(0)
        before = len(screen.rows)
        await pilot.press("enter")
        assert len(screen.rows) != before  # opened or closed


def git_fsck_lines(repo) -> list[str]:
    return repos.git_fsck(repo)[1].splitlines()


def truncated_pack(corrupt):
    """The truncated-pack repository, its damaged pack, and that pack's
    index as git reads it (id → offset)."""
    repo = corrupt["truncated-pack"]
    pack = repos.pack_files(repo)[0]
    return repo, pack, repos.show_index(pack.with_suffix(".idx"))


@pytest.mark.asyncio
async def test_a_truncated_pack_comes_first_above_what_it_causes(corrupt):
    """The damaged pack is the first group, open, with "N findings caused by
    this"; the commit-graph mismatches and unreadable objects it causes sit
    below it in closed subgroups — each about an object that pack's index
    holds — not above it as groups of their own."""
    repo, pack, held = truncated_pack(corrupt)
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot)
        lst = screen.query_one(VirtualList)
        rows = list_text(lst)
        top = screen.ordered_groups()[0]
        assert top.cause and top.kind == str(pack)
        assert rows[0].startswith("▾") and pack.name in rows[0] and "pack-truncated" in rows[0]
        caused = [e for sub in top.subgroups.values() for e in sub.findings]
        assert caused and f"{len(caused):,} findings caused by this" in rows[0]
        assert all(e.finding.oid in held for e in caused)
        assert all(e.offset == held[e.finding.oid] for e in caused)
        # every finding about an object of that pack is under it (none left at the top level)
        for g in screen.groups.values():
            if g is not top:
                assert all(e.finding.oid not in held for e in g.findings), g.kind
        sub_rows = [i for i, (k, v) in enumerate(screen.rows) if k == "group" and v.depth == 1]
        assert sub_rows and all(rows[i].lstrip().startswith("▸") for i in sub_rows)  # closed, with counts
        # git agrees the pack is the problem
        assert any(pack.stem in line for line in git_fsck_lines(repo))


@pytest.mark.asyncio
async def test_enter_on_a_caused_finding_opens_the_pack_entry_at_its_offset(corrupt):
    repo, pack, held = truncated_pack(corrupt)
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot)
        lst = screen.query_one(VirtualList)
        top = screen.ordered_groups()[0]
        sub = next(iter(top.subgroups.values()))
        at = next(i for i, (k, v) in enumerate(screen.rows) if k == "group" and v is sub)
        lst.move_to(at)
        await pilot.press("enter")  # opens the subgroup
        entry = sub.findings[0]
        lst.move_to(next(i for i, (k, v) in enumerate(screen.rows) if k == "finding" and v is entry))
        await pilot.press("enter")
        from packscope.inspector.screens.pack_entries import PackScreen

        pack_view = await until(pilot, lambda: isinstance(app.screen, PackScreen) and app.screen, "the pack view")
        plst = pack_view.query_one(VirtualList)
        await until(
            pilot,
            lambda: (
                pack_view.entries is not None
                and list_text(plst)[plst.cursor].split()[:2] == [str(held[entry.finding.oid]), entry.finding.oid]
            ),
            "the cursor on the entry of the finding's object",
        )
        assert pack_view.handle.name == pack.stem


@pytest.mark.asyncio
async def test_dangling_objects_are_one_closed_group_with_git_s_count(base_repo, tmp_path):
    repo = repos.copy_repo(base_repo, tmp_path / "dangling.git")
    repos.add_loose(repo, 40, seed=77)  # unreachable blobs
    dangling = [line for line in git_fsck_lines(repo) if line.startswith("dangling ")]
    assert len(dangling) >= 40
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot)
        rows = list_text(screen.query_one(VirtualList))
        group = screen.groups["dangling"]
        assert group.count() == len(dangling)
        line = rows[next(i for i, (k, v) in enumerate(screen.rows) if v is group)]
        assert line.startswith("▸") and f"×{len(dangling)}" in line
        assert not any(k == "finding" and v.finding.kind == "dangling" for k, v in screen.rows)


@pytest.mark.asyncio
async def test_overview_badge_leads_to_health(corrupt):
    async with running(corrupt["idx-without-pack"]) as (app, pilot):
        assert "Health" in str(app.screen.query_one("#ov-health").border_subtitle)
        await pilot.press("h")
        await pilot.pause()
        assert isinstance(app.screen, HealthScreen)
        await pilot.press("1")
        await pilot.pause()
        await pilot.click("#ov-health")
        await pilot.pause()
        assert isinstance(app.screen, HealthScreen)


@pytest.mark.asyncio
async def test_escape_cancels_a_running_check(base_repo, monkeypatch):
    import packscope.core.fsck.findings as ff

    real = ff.Ticker._report

    def slow(self):  # every progress step is slow: the check is still running when Esc comes
        import time

        time.sleep(0.05)
        real(self)

    real_init = ff.Ticker.__init__

    def every_step(self, progress=None, cancel=None, every=512):  # report (and sleep) on every step
        real_init(self, progress, cancel, 1)

    monkeypatch.setattr(ff.Ticker, "_report", slow)
    monkeypatch.setattr(ff.Ticker, "__init__", every_step)
    async with running(base_repo) as (app, pilot):
        await pilot.press("8")
        screen = app.screen
        await until(
            pilot, lambda: screen.state.running and screen.state.done > 0, "the check to be running with progress"
        )
        assert "Esc cancels" in plain(screen.query_one("#health-title"), width=300)
        await pilot.press("escape")
        await until(pilot, lambda: screen.state.finished, "Esc to end the check", timeout=10)
        assert screen.state.cancelled
        assert isinstance(app.screen, HealthScreen)  # Esc cancelled; it did not go back
        assert "cancelled" in plain(screen.query_one("#health-title"), width=300)


def _fingerprint(repo) -> dict:
    out = {}
    for dirpath, dirs, files in os.walk(repo):
        for f in files + dirs:
            p = os.path.join(dirpath, f)
            st = os.lstat(p)
            digest = hashlib.sha1(Path(p).read_bytes()).hexdigest() if os.path.isfile(p) else "dir"
            out[os.path.relpath(p, repo)] = (digest, st.st_mtime_ns, st.st_size, st.st_mode)
    return out


@pytest.mark.asyncio
async def test_a_ui_session_leaves_every_file_unchanged(corrupt, base_repo):
    """A scripted session over every screen, on a healthy and two damaged
    repositories: nothing crashes, and no file changes (content, size, mode, mtime)."""
    for repo in (base_repo, corrupt["truncated-pack"]):
        before = _fingerprint(repo)
        await _tour_every_screen(repo, damaged=repo is not base_repo)
        assert _fingerprint(repo) == before


async def _tour_every_screen(repo, damaged: bool) -> None:
    async with running(repo) as (app, pilot):
        await pilot.press("7")
        await until(
            pilot,
            lambda: (app.screen.history is not None and app.screen.history.done) or app.screen.history.loaded > 0,
            "some history",
        )
        history = app.screen.history
        if damaged and history.loaded == 0:
            # HEAD lives in the cut pack, and git uses none of its objects (git log dies):
            # History says why it is empty instead of opening a commit
            assert "git uses none of its objects" in (history.error or ""), history.error
            await pilot.press("8")
        else:
            await pilot.press("G", "enter")
            await until(pilot, lambda: getattr(app.screen, "last_done", False), "the last commit's screen", timeout=30)
            await pilot.press("escape", "8")
        await until(pilot, lambda: app.screen.state.finished, "the health check to finish", timeout=20)
        assert (app.screen.state.summary["exit"] != 0) is damaged
        for key in "1246":
            await pilot.press(key)
        await pilot.pause(0.2)
        await pilot.press("q")


@pytest.mark.asyncio
async def test_the_cursor_stays_on_the_first_group_while_groups_arrive(base_repo):
    """Findings stream in: a damaged file found first with one finding, then
    one with more that sorts above it.  A cursor left at the top stays at the
    top (on the new first group); it does not follow the first group down."""
    from packscope.core.fsck.findings import Finding
    from packscope.inspector.screens.health import Entry

    async with running(base_repo) as (app, pilot):
        screen = await run_health(app, pilot)
        lst = screen.query_one(VirtualList)

        def cause(pack: str, n: int) -> list:
            f = Finding("pack-crc", "error", f"damage in {pack}", "packs", 4, path=pack, pack=pack, offset=12)
            out = [Entry(f, pack, 12, True)]
            for k in range(n):
                c = Finding("unreadable", "error", "cannot read", "reachability", 2, oid=f"{k:040x}")
                out.append(Entry(c, pack, 100 + k))
            return out

        screen.state.running = True  # as while a check streams its findings
        screen.entries.clear()
        screen.findings.clear()
        screen._pending = cause("/x/pack-b.pack", 1)
        screen.tick()
        assert lst.cursor == 0 and screen.rows[0][1].kind == "/x/pack-b.pack"
        screen._pending = cause("/x/pack-a.pack", 5)
        screen.tick()
        assert screen.rows[0][1].kind == "/x/pack-a.pack"  # more findings: above
        assert lst.cursor == 0
        screen.state.running = False


@pytest.mark.asyncio
async def test_x_exports_the_findings_as_fsck_json_prints_them(corrupt, tmp_path, monkeypatch):
    import json
    import tempfile

    from tests.cli import packscope

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    repo = corrupt["truncated-pack"]
    cli = [json.loads(line) for line in packscope("-C", repo, "fsck", "--json", check=False).stdout.splitlines()]
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot)
        await pilot.press("x")
        path = await until(pilot, lambda: screen.exported, "the export written")
        assert os.path.dirname(path) == str(tmp_path)
        exported = [json.loads(line) for line in Path(path).read_text().splitlines()]
        assert exported[-1] == cli[-1] and "summary" in exported[-1]  # the same summary, exit bits included
        key = lambda d: json.dumps(d, sort_keys=True)  # noqa: E731
        assert sorted(map(key, exported)) == sorted(map(key, cli))


def _note(log: Path, text: str) -> None:
    """A spy's record, in a file: the check runs in a forked process."""
    with open(log, "a", encoding="utf-8") as out:
        out.write(text + "\n")


def _noted(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


@pytest.mark.asyncio
async def test_a_check_releases_the_pack_pages_it_read(base_repo, monkeypatch, tmp_path):
    """A full check reads every pack whole; its private store gives the
    mapped pages back as it goes (at each phase at least), so they do not
    all stay resident for the rest of the run (git.git: 500 MB)."""
    from packscope.core.store.odb import ObjectStore

    log = tmp_path / "released"
    real = ObjectStore.release_mapped_pages

    def spy(self):
        _note(log, str(self.objects_dir))
        return real(self)

    monkeypatch.setattr(ObjectStore, "release_mapped_pages", spy)
    async with running(base_repo) as (app, pilot):
        screen = await run_health(app, pilot)
        phases = {"packs", "connectivity"}
        assert screen.state.summary["exit"] == 0
        assert len(_noted(log)) >= len(phases), _noted(log)


@pytest.mark.asyncio
async def test_the_check_runs_in_a_process_that_is_gone_when_it_ends(base_repo, monkeypatch, tmp_path):
    """The check's memory leaves with its process: it runs outside the UI
    process, and no process of it is left once it finished."""
    import multiprocessing

    from packscope.core.fsck.verify import Fsck

    log = tmp_path / "pids"
    real = Fsck.run

    def spy(self):
        _note(log, str(os.getpid()))
        return real(self)

    monkeypatch.setattr(Fsck, "run", spy)
    async with running(base_repo) as (app, pilot):
        screen = await run_health(app, pilot)
        assert screen.state.summary["exit"] == 0
        (pid,) = _noted(log)
        assert int(pid) != os.getpid()
        assert multiprocessing.active_children() == []


def _fsck_cli_findings(repo) -> list[tuple[str, str]]:
    import json
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(repo), "fsck", "--json", "--jobs", "1"],
        capture_output=True,
        check=False,
    )
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    return [(r["kind"], r["message"]) for r in rows if "kind" in r]


@pytest.mark.asyncio
async def test_health_checks_a_pack_in_worker_processes_with_the_clis_findings(corrupt, monkeypatch, tmp_path):
    """Health runs the object pass as `packscope fsck` does, over forked
    workers (every pack split here): the findings of one process."""
    import packscope.core.fsck.parallel as parallel

    monkeypatch.setenv("PACKSCOPE_FSCK_MIN_CHUNK", "1")
    monkeypatch.setattr(parallel, "default_jobs", lambda: 2)
    log = tmp_path / "ranges"
    real = parallel.ObjectPass.check_entries

    def spy(self, slot, order, bases, ticker):
        _note(log, str(len(order)))
        return real(self, slot, order, bases, ticker)

    monkeypatch.setattr(parallel.ObjectPass, "check_entries", spy)
    repo = corrupt["flipped-byte"]
    async with running(repo) as (app, pilot):
        screen = await run_health(app, pilot, timeout=40)
        assert _noted(log), "no pack went to the worker processes"
        assert [(f.kind, f.message) for f in screen.findings] == _fsck_cli_findings(repo)


def _slow_range(task):
    """In a worker (the pool finds it by name): a range that would take a minute."""
    import time

    time.sleep(60)


@pytest.mark.asyncio
async def test_escape_stops_the_worker_processes(base_repo, monkeypatch):
    """Esc during the parallel object pass: the workers are gone within
    seconds (the pool is terminated at the next progress poll)."""
    import multiprocessing

    import packscope.core.fsck.parallel as parallel

    monkeypatch.setenv("PACKSCOPE_FSCK_MIN_CHUNK", "1")
    monkeypatch.setattr(parallel, "default_jobs", lambda: 2)
    monkeypatch.setattr(parallel, "_check_range", _slow_range)
    async with running(base_repo) as (app, pilot):
        await pilot.press("8")
        screen = app.screen
        await until(
            pilot,
            lambda: screen.state.running and multiprocessing.active_children(),
            "the object pass to run in worker processes",
            timeout=20,
        )
        await pilot.press("escape")
        await until(pilot, lambda: screen.state.finished, "Esc to end the check", timeout=5)
        assert screen.state.cancelled
        assert multiprocessing.active_children() == []
