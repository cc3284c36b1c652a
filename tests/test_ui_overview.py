"""The app's frame and the Overview screen, on a repository built with git."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from packscope.inspector.screens.fanout import FanoutScreen
from packscope.inspector.screens.health import HealthScreen
from packscope.inspector.screens.history import HistoryScreen
from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.screens.loose import LooseScreen
from packscope.inspector.screens.object import ObjectScreen
from packscope.inspector.screens.overview import OverviewScreen
from packscope.inspector.screens.pack_list import PacksScreen
from tests import repos
from tests.cli import packscope
from tests.ui_support import SIZE, make_app, plain, running, settle, started, until

ROOT = Path(__file__).resolve().parent.parent
KEYS_TO_SCREENS = [
    ("1", OverviewScreen),
    ("2", PacksScreen),
    ("3", LooseScreen),
    ("4", ObjectScreen),
    ("5", FanoutScreen),
    ("6", LabScreen),
    ("7", HistoryScreen),
    ("8", HealthScreen),
]


@pytest.mark.asyncio
async def test_first_paint_comes_before_the_store_opens(ui_repo, monkeypatch):
    import threading

    import packscope.inspector.core_access as ca

    real_open = ca.CoreAccess.open
    gate = threading.Event()

    def slow_open(self):
        gate.wait(10)  # a slow disk: the UI must not wait for it
        real_open(self)

    monkeypatch.setattr(ca.CoreAccess, "open", slow_open)
    app = make_app(ui_repo)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, OverviewScreen)
        assert not app.core.ready
        assert "opening" in plain(app.screen.query_one("#ov-repo"))
        assert "opening" in app.status_text
        gate.set()
        await started(app, pilot)
        assert app.core.ready
        assert "sha1" in plain(app.screen.query_one("#ov-repo"))


@pytest.mark.asyncio
async def test_overview_shows_what_git_reports(ui_repo):
    async with running(ui_repo) as (app, pilot):
        await until(pilot, lambda: app.screen.facts.loose_on_disk is not None, "the count of loose objects on disk")
        await settle(app, pilot)
        screen = app.screen
        repo_text = plain(screen.query_one("#ov-repo"), width=400)
        assert "sha1 (20-byte ids)" in repo_text and str(ui_repo) in repo_text and "(bare)" in repo_text
        store_text = plain(screen.query_one("#ov-store"), width=400)
        counts = dict(line.split(": ") for line in repos.git_text("count-objects", "-v", cwd=ui_repo).splitlines())
        assert f"packs {counts['packs']} ({int(counts['in-pack']):,} objects" in store_text
        assert "8 in the multi-pack-index, 2 outside it" in store_text
        assert f"{int(counts['count']):,} on disk" in store_text
        commits = len(repos.git_text("rev-list", "--all", cwd=ui_repo).split())
        assert f"{commits:,} commits" in store_text
        nrefs = len(repos.git_text("for-each-ref", cwd=ui_repo).splitlines())
        assert f"refs {nrefs} (" in store_text
        health = plain(screen.query_one("#ov-health"), width=300)
        assert "2 packs outside the multi-pack-index" in health
        assert "PLACEHOLDER" not in health.upper()


@pytest.mark.asyncio
async def test_the_store_panel_names_each_object_directory_and_groups_ref_counts(ui_repo, tmp_path):
    """A repository borrowing ui_repo's objects: the loose-cache row of the
    alternate says which it is (the two rows read alike before), and 1,200
    tags read "1,200 tags" as every other count of the panel does."""
    borrower = repos.init_bare(tmp_path / "borrower.git")
    (borrower / "objects" / "info" / "alternates").write_text(str(ui_repo / "objects") + "\n")
    head = repos.git_text("rev-parse", "HEAD", cwd=ui_repo).strip()
    lines = "".join(f"create refs/tags/t{n:04d} {head}\n" for n in range(1200))
    repos.git("update-ref", "--stdin", cwd=borrower, input=lines.encode())
    repos.git("pack-refs", "--all", cwd=borrower)
    async with running(borrower) as (app, pilot):
        await until(pilot, lambda: app.screen.facts.refs is not None, "the refs counted")
        await settle(app, pilot)
        store_text = plain(app.screen.query_one("#ov-store"), width=400)
        assert "; alternate 1: 0 cached from" in store_text
        assert "1,200 tags" in store_text and "1,200 packed" in store_text


@pytest.mark.asyncio
async def test_health_shows_orphans_and_problems(ui_repo_copy):
    pack_dir = ui_repo_copy / "objects" / "pack"
    (pack_dir / "pack-0000000000000000000000000000000000000000.idx").write_bytes(b"\0" * 10)
    alternates = ui_repo_copy / "objects" / "info" / "alternates"
    alternates.write_text("/nonexistent/objects\n")
    async with running(ui_repo_copy) as (app, pilot):
        health = await until(
            pilot,
            lambda: "pack-orphan" in (t := plain(app.screen.query_one("#ov-health"), width=400)) and t,
            "the opening problems in the Health panel",
        )
        assert "pack-0000000000000000000000000000000000000000.idx" in health
        assert "alternate object directory does not exist" in health


def info_problems(repo) -> list[dict]:
    out = packscope("-C", repo, "info", "--json").stdout
    return json.loads(out)["problems"]


@pytest.mark.asyncio
async def test_health_panel_says_what_info_and_the_last_health_run_say(packed_repo, tmp_path):
    """One health state: the Overview lists exactly the problems `packscope
    info` reports (here a .promisor pack without a promisor remote, and an
    orphan .idx), and after a Health run, that run's counts and age."""
    import shutil

    repo = tmp_path / "promisor.git"
    shutil.copytree(packed_repo, repo)
    pack, idx = repos.the_pack(repo)
    pack.with_suffix(".promisor").write_text("")
    shutil.copy(idx, idx.with_name("pack-" + "2" * 40 + ".idx"))
    problems = info_problems(repo)
    assert {p["kind"] for p in problems} == {"promisor-without-remote", "pack-orphan"}
    async with running(repo) as (app, pilot):

        def panel() -> str:
            return plain(app.screen.query_one("#ov-health"), width=400)

        await until(pilot, lambda: "promisor-without-remote" in panel(), "info's problems in the Health panel")
        text = panel()
        for p in problems:
            assert f"{p['kind']}: {p['message']}" in text, (p, text)
        assert "WARN" in text and "no problems" not in text
        assert "no Health run yet" in text
        await pilot.press("8")
        health = app.screen
        await until(pilot, lambda: health.state.finished, "the Health run")
        counts = {sev: sum(1 for f in health.findings if f.severity == sev) for sev in ("error", "warning", "info")}
        exit_status = health.state.summary["exit"]
        await pilot.press("1")
        await until(pilot, lambda: "last Health run (full check) at" in panel(), "the last run in the Health panel")
        text = panel()
        assert (
            f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos, exit status {exit_status}"
            in text
        )
        assert " s ago" in text or "min ago" in text


@pytest.mark.asyncio
async def test_counters_rates_and_log_follow_a_workload(ui_repo):
    from packscope.inspector.screens.overview import compact_number

    async with running(ui_repo) as (app, pilot):
        app.sample_rates()  # a baseline just before the work
        worker = app.run_workload(lookups=400, seed=1)
        await worker.wait()
        app.drain_events()
        app.sample_rates()
        await pilot.pause(0.3)
        store = app.core.store
        assert store.counters.lookups >= 400
        counters = plain(app.screen.query_one("#ov-counters"))
        # (at 120 columns the panel is too narrow for the full labels: the short ones, never cut)
        assert f"lookups {compact_number(store.counters.lookups)} hit %" in counters
        kinds = {e.kind for e in app.logbook.entries}
        assert {"lookup", "scan"} <= kinds
        assert any("lookup " in e.text.plain and " → " in e.text.plain for e in app.logbook.entries)
        assert max(app.rates.series["lookups"]) > 0
        # The log panel on screen shows the same book.
        panel = app.screen.log_panel
        assert panel.query_one("#log-list").row_count == len(app.logbook.visible())


@pytest.mark.asyncio
async def test_panels_toggle_and_number_keys_switch_screens(ui_repo):
    async with running(ui_repo) as (app, pilot):
        assert app.screen.log_panel.display and app.screen.rates_panel.display
        await pilot.press("e")
        assert not app.screen.log_panel.display
        await pilot.press("s")
        assert not app.screen.rates_panel.display
        # The number keys as the README and the key bar tell users.
        for key, screen_class in KEYS_TO_SCREENS:
            await pilot.press(key)
            await settle(app, pilot, 1)
            assert isinstance(app.screen, screen_class), (key, app.screen)
            # The panel setting follows to every screen.
            assert not app.screen.log_panel.display and not app.screen.rates_panel.display
        await pilot.press("e", "s")
        assert app.screen.log_panel.display and app.screen.rates_panel.display
        await pilot.press("1")
        assert isinstance(app.screen, OverviewScreen)


@pytest.mark.asyncio
async def test_log_pause_filter_clear(ui_repo):
    async with running(ui_repo) as (app, pilot):
        app.screen.log_panel.query_one("#log-list").focus()
        await pilot.press("p")
        assert app.logbook.paused
        before = len(app.logbook.entries)
        await app.run_workload(lookups=100, seed=2).wait()
        app.drain_events()
        assert len(app.logbook.entries) == before and app.logbook.held > 0
        assert "PAUSED" in plain(app.screen.log_panel.query_one("#log-title"))
        await pilot.press("p")
        assert not app.logbook.paused and len(app.logbook.entries) > before
        await pilot.press("f")
        await pilot.pause()
        from textual.widgets import SelectionList

        sel = app.screen.query_one(SelectionList)
        sel.deselect("lookup")
        await pilot.press("escape")
        await pilot.pause()
        assert "lookup" not in app.logbook.enabled
        assert all(e.kind != "lookup" for e in app.logbook.visible())
        await pilot.press("c")
        assert len(app.logbook.entries) == 0


@pytest.mark.asyncio
async def test_help_lists_every_binding_with_its_id(ui_repo):
    async with running(ui_repo) as (app, pilot):
        await pilot.press("question_mark")
        await pilot.pause()
        from packscope.inspector.screens.help import HelpScreen

        assert isinstance(app.screen, HelpScreen)
        text = plain(app.screen.query_one("#help-keys"))
        for keys_and_words in (
            "1 Overview",
            "2 Packs",
            "3 Loose",
            "4 Object",
            "? Help",
            "e Event log",
            "s Rates",
            "q Close view",
            "Q Quit now",
            "y Copy id",
            "R Refresh",
            "Ctrl-P Command palette",
        ):
            assert keys_and_words in text
        assert "screen.overview" not in text and "binding id" not in text  # ids mean nothing to a user
        assert "multi-pack-index" in plain(app.screen.query_one("#help-text"))
        await pilot.press("escape")
        assert isinstance(app.screen, OverviewScreen)


def test_every_binding_has_an_id_and_a_description():
    """Static check over the UI's sources: Binding(...) always names an id."""
    missing = []
    for path in (ROOT / "inspector").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Binding":
                kws = {k.arg for k in node.keywords}
                if "id" not in kws or len(node.args) < 3:
                    missing.append(f"{path.name}:{node.lineno}")
    assert missing == []


def test_not_a_repository_is_reported_before_the_ui_starts(tmp_path, capsys):
    from packscope.inspector.cli import main

    assert main([str(tmp_path)]) == 128
    err = capsys.readouterr().err
    assert "not" in err and "remedy" in err


@pytest.mark.asyncio
async def test_a_narrow_terminal_cuts_the_key_bar_in_the_middle_never_help(ui_repo):
    from packscope.inspector.screens.help import HelpScreen
    from packscope.inspector.widgets.key_bar import KeyBar

    async with running(ui_repo, size=(80, 30)) as (app, pilot):
        bar = app.screen.query_one(KeyBar)
        text = bar.plain
        assert len(text) <= 80 and "…" in text
        assert text.rstrip().endswith("? Help  ^p palette")
        await pilot.click(KeyBar, offset=(text.index("? Help") + 1, 0))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
