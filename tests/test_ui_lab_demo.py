"""The Lookup lab as an instrument in front of an audience (issue 17): it
fits any bucket and terminal, its keys are its own, runs are compared
fairly, long stage lists are summarised, and recorded traces replay."""

from __future__ import annotations

import contextlib
import hashlib
import random
import re
import struct
from pathlib import Path

import pytest
from textual.widgets import Input

from packscope.core.store.search import ALGORITHMS
from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.widgets.lab_views import SearchView
from tests import repos
from tests.ui_support import open_screen, running, settle, started, until


def screen_text(app) -> list[str]:
    """What the terminal shows now, one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def write_bucket_pack(repo: Path, first_byte: int, n: int, seed: int = 3) -> list[bytes]:
    """A synthetic pack whose index holds ``n`` random names, all in the
    bucket of ``first_byte`` (a real repository would need ~800k objects
    for a bucket this size).  The .pack is a header only: lookups read
    just the index."""
    rnd = random.Random(seed)
    names = {bytes([first_byte]) + rnd.randbytes(19) for _ in range(n)}
    names |= {bytes([b]) + rnd.randbytes(19) for b in range(first_byte + 1, 256)}  # the bucket does not end the table
    names = sorted(names)
    fanout = [sum(1 for x in names if x[0] <= b) for b in range(256)]
    pack = b"PACK" + struct.pack(">II", 2, len(names))
    pack += hashlib.sha1(pack).digest()
    body = b"\377tOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout) + b"".join(names)
    body += bytes(4 * len(names)) + b"".join(struct.pack(">I", 12 + 64 * i) for i in range(len(names)))
    body += pack[-20:]
    body += hashlib.sha1(body).digest()
    stem = repo / "objects" / "pack" / f"pack-{hashlib.sha1(body).hexdigest()}"
    stem.with_suffix(".pack").write_bytes(pack)
    stem.with_suffix(".idx").write_bytes(body)
    return names


@pytest.fixture(scope="module")
def big_bucket(tmp_path_factory):
    """A small real repository plus a synthetic pack with a 3,400-name
    bucket (5a), as big as git.git's biggest."""
    repo = repos.build_packed(tmp_path_factory.mktemp("lab-demo"), commits=20)
    names = write_bucket_pack(repo, 0x5A, 3400)
    repos.age_directories(repo)
    return repo, names


async def _lab(app, pilot) -> LabScreen:
    screen = await open_screen(app, pilot, "6", LabScreen, "the Lab")
    await settle(app, pilot)
    return screen


async def _look_up(app, pilot, screen: LabScreen, text: str) -> None:
    screen.lookup(text)
    await settle(app, pilot)
    await until(pilot, lambda: screen.run is not None and screen.run.text == text, f"the lookup of {text}")


@contextlib.asynccontextmanager
async def lab_after_lookup(big_bucket, size):
    """``async with lab_after_lookup(big_bucket, size) as (app, pilot, screen)``:
    the Lab on the big-bucket repository, once it has looked up one of its ids."""
    repo, names = big_bucket
    async with running(repo, poll_seconds=60, size=size) as (app, pilot):
        screen = await _lab(app, pilot)
        await _look_up(app, pilot, screen, names[1234].hex())
        yield app, pilot, screen


def _big_search(screen: LabScreen):
    return next(
        s
        for s in screen.run.stages
        if s.is_search and s.paths["binary"].bucket[1] - s.paths["binary"].bucket[0] >= 3000
    )


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("which", ["present", "absent"])
async def test_every_algorithm_row_and_the_legend_stay_on_screen(big_bucket, size, which):
    repo, names = big_bucket
    target = names[1234].hex() if which == "present" else (names[1234][:-1] + b"\x00").hex()
    assert which == "present" or bytes.fromhex(target) not in names
    async with running(repo, poll_seconds=60, size=size) as (app, pilot):
        screen = await _lab(app, pilot)
        await _look_up(app, pilot, screen, target)
        stage = _big_search(screen)
        i = screen.run.stages.index(stage)
        assert stage.steps >= 8  # binary over 3,400 names: a dozen probes
        # The finished search, and every step of it on the way.
        for step in range(stage.steps, -1, -1):
            screen.set_frame(screen.frames.index((i, step)))
            await pilot.pause()
            rows = screen_text(app)
            for a in ALGORITHMS:
                assert any(re.match(rf"\s*{a}\s+[━─│▼◆✕]", r) for r in rows), (step, a, "\n".join(rows))
            text = "\n".join(rows)
            assert "window [lo,hi)" in text and "✕ absent" in text, text  # both ends of the legend
            assert f"frame {screen.frame + 1}/{len(screen.frames)}" in text
        view = screen.query_one(SearchView)
        # The room left is used: more than one line of probes when it fits.
        assert view.probe_lines >= 2
        # Sized by what it draws at its width, not by counting newlines.
        drawn = view.render_text(view.size.width)
        assert view.size.height == len(drawn.wrap(app.console, view.size.width))


async def _assert_lab_keys_are_the_labs(app, pilot, screen: LabScreen) -> None:
    """k cycles K, p plays, f asks for a file of ids — none reaches the log."""
    from packscope.inspector.widgets.event_log import EventLogPanel, KindFilter
    from packscope.inspector.widgets.prompt import Prompt

    focused = app.focused
    assert focused is None or not any(isinstance(n, EventLogPanel) for n in focused.ancestors_with_self), focused
    k = screen.batch_k
    await pilot.press("k")
    assert screen.batch_k != k
    await pilot.press("home", "p")
    assert screen.playing and not app.logbook.paused
    await pilot.press("p")
    assert not screen.playing
    await pilot.press("f")
    await until(pilot, lambda: isinstance(app.screen, Prompt | KindFilter), "a modal after f")
    assert isinstance(app.screen, Prompt), app.screen
    await pilot.press("escape")
    await until(pilot, lambda: app.screen is screen, "the lab back after Esc")


@pytest.mark.asyncio
async def test_keys_stay_the_labs_after_a_batch_and_a_screen_switch(big_bucket):
    async with lab_after_lookup(big_bucket, (120, 40)) as (app, pilot, screen):
        await pilot.press("k", "k", "k")  # K back to 100: a quick batch
        assert screen.batch_k == 100
        await pilot.press("b")
        await until(pilot, lambda: len(screen.runs) == 1, "the batch to finish")
        await pilot.press("1")
        await settle(app, pilot)
        await pilot.press("6")
        await settle(app, pilot)
        assert app.screen is screen
        await pilot.press("v")  # back to the lookup
        await _assert_lab_keys_are_the_labs(app, pilot, screen)


@pytest.mark.asyncio
async def test_keys_stay_the_labs_after_the_palette_and_tab_leaves_the_log(big_bucket):
    from packscope.inspector.widgets.event_log import EventLogList

    async with lab_after_lookup(big_bucket, (120, 40)) as (app, pilot, screen):
        await pilot.press("ctrl+p")
        await until(pilot, lambda: app.screen is not screen, "the command palette")
        await pilot.press("r", "e", "s")
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is screen, "the lab back after the palette")
        await _assert_lab_keys_are_the_labs(app, pilot, screen)
        # Into the log on purpose, then Tab gets out of it.
        log = screen.query_one(EventLogList)
        log.focus()
        await pilot.pause()
        assert app.focused is log
        await pilot.press("tab")
        assert app.focused is not log
        await _assert_lab_keys_are_the_labs(app, pilot, screen)


def _steps(index, path, oid: bytes, algorithm: str):
    """core's own count of one search: Steps records every name read."""
    from packscope.core.store.search import Steps, search_function

    lo, hi = path.bucket
    steps = Steps(index.page_of)
    search_function(algorithm)(index.name_accessor(), lo, hi, index.num_objects, oid, steps)
    return steps


@pytest.mark.asyncio
async def test_names_read_include_the_bounds_interpolation_reads(big_bucket):
    from tests.ui_support import plain

    repo, names = big_bucket
    one = next(n for n in names if n[0] == 0x5B)  # the synthetic pack's bucket 5b holds one name
    async with running(repo, poll_seconds=60, size=(160, 48)) as (app, pilot):
        screen = await _lab(app, pilot)
        await _look_up(app, pilot, screen, one.hex())
        stage = next(s for s in screen.run.stages if s.is_search and s.event.path.found is not None)
        screen.set_frame(screen.frames.index((screen.run.stages.index(stage), stage.steps)))
        await pilot.pause()
        drawn = screen.query_one(SearchView).render_text(160).plain
        for a in ALGORITHMS:
            steps = _steps(stage.index, stage.paths[a], one, a)
            reads = len(steps.reads)
            assert reads >= len(steps.probes) and (a == "binary" or reads > len(steps.probes))
            n = len(steps.probes)
            assert f"{n} probe{'' if n == 1 else 's'}, {reads} name{'' if reads == 1 else 's'} read" in drawn, (
                a,
                drawn,
            )
        # A batch counts them the same way, and shows median and p99 beside the mean.
        worker = screen.start_batch(ids=[one] * 3, source="one id")
        await worker.wait()
        await settle(app, pilot)
        for a in ALGORITHMS:
            per_lookup = sum(len(_steps(s.index, s.paths[a], one, a).reads) for s in screen.run.stages if s.is_search)
            assert screen.last_batch.reads[a] == [per_lookup] * 3
        chart = plain(screen.query_one("#lab-batch-chart"), width=160)
        assert chart.count("p50") == chart.count("p99") == chart.count("mean") == 4 * len(ALGORITHMS)
        # At 80 columns every figure is still there (nothing cut with "…").
        from packscope.inspector.widgets.lab_views import batch_table

        narrow = plain_lines_of(batch_table(screen.last_batch, 14, narrow=True), 78)
        assert "…" not in "\n".join(line for line in narrow if "p50" in line or "max" in line), narrow
        assert sum(line.count("max") for line in narrow) == 4 * len(ALGORITHMS)


@pytest.mark.asyncio
async def test_runs_start_from_a_fresh_store_unless_warm(big_bucket):
    from tests.ui_support import plain

    repo, _names = big_bucket
    async with running(repo, poll_seconds=60, size=(160, 48)) as (app, pilot):
        screen = await _lab(app, pilot)
        await (screen.start_batch(k=100, mode="absent", seed=7)).wait()
        await settle(app, pilot)
        first = screen.last_batch
        assert first.searches >= 100 and first.settings["cache"] == "cold"
        await pilot.press("r")  # nothing changed: the same work again
        await until(pilot, lambda: len(screen.runs) == 2, "the second run")
        second = screen.runs[1]
        assert second.searches == first.searches and second.probes == first.probes
        await pilot.press("W", "r")  # warm: the live store ...
        await until(pilot, lambda: len(screen.runs) == 3, "the first warm run")
        await pilot.press("r")  # ... whose negative cache now knows these ids
        await until(pilot, lambda: len(screen.runs) == 4, "the second warm run")
        assert screen.runs[3].settings["cache"] == "warm" and screen.runs[3].searches < first.searches
        await pilot.press("W", "a", "r")  # cold again, another store algorithm
        await until(pilot, lambda: len(screen.runs) == 5, "a run under interpolation")
        rows = plain(screen.query_one("#lab-batch-runs"), width=200)
        for word in ("cold", "warm", "binary", "interpolation", "names b/i/h"):
            assert word in rows, rows
        assert screen.runs[4].settings["algorithm"] == "interpolation"


@pytest.fixture(scope="module")
def forty_packs(tmp_path_factory):
    repo = repos.build_many_packs(tmp_path_factory.mktemp("lab-packs"), packs=40)
    repos.age_directories(repo)
    return repo


@pytest.mark.asyncio
async def test_a_long_run_of_packs_searched_is_folded_and_enter_lists_it(forty_packs):
    from tests.ui_support import plain

    async with running(forty_packs, poll_seconds=60, size=(160, 48)) as (app, pilot):
        screen = await _lab(app, pilot)
        packs = len(app.core.store.packs)
        assert packs >= 40
        # The pack searched last: its ids are found after every other pack missed.
        last = app.core.store.packs[-1]
        target = sorted(repos.show_index(Path(last.index.path)))[0]
        await _look_up(app, pilot, screen, target)
        run = screen.run
        searches = [s for s in run.stages if s.is_search]
        assert len(searches) == packs and run.found
        lines = plain_lines(screen.query_one("#lab-stages"))
        assert len(lines) < 10, lines
        assert f"… {packs - 1 - 3} packs searched, not found" in "\n".join(lines)
        assert sum("found at" in line for line in lines) == 1  # the hit is never folded
        assert lines[-1].lstrip("▶ ").split()[1] == "finished"
        # Stepping inside the fold: the folded line says where it is.
        middle = run.stages.index(searches[20])
        screen.set_frame(screen.frames.index((middle, 0)))
        await pilot.pause()
        assert f"now {middle + 1}: {searches[20].event.pack}" in plain(screen.query_one("#lab-stages"), width=300)
        await pilot.press("enter")  # all of them
        assert len(plain_lines(screen.query_one("#lab-stages"))) == len(run.stages)
        await pilot.press("enter")  # folded again
        assert len(plain_lines(screen.query_one("#lab-stages"))) < 10


def plain_lines_of(renderable, width: int) -> list[str]:
    from io import StringIO

    from rich.console import Console

    console = Console(width=width, file=StringIO(), color_system=None)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get().rstrip("\n").split("\n")


def plain_lines(widget) -> list[str]:
    from io import StringIO

    from rich.console import Console

    console = Console(width=300, file=StringIO(), color_system=None)
    with console.capture() as cap:
        console.print(widget.content)
    return cap.get().rstrip("\n").split("\n")


@pytest.mark.asyncio
async def test_every_screen_at_80x24_folds_the_panels_and_shows_its_own_keys_first(big_bucket):
    from textual.binding import Binding

    from packscope.inspector.app import SCREEN_TABLE
    from packscope.inspector.widgets.key_bar import KeyBar, _own_ids

    repo, _names = big_bucket
    async with running(repo, poll_seconds=60, size=(80, 24)) as (app, pilot):
        checked = 0
        for spec in SCREEN_TABLE:
            await pilot.press(spec.key)
            await settle(app, pilot)
            screen = app.screen
            assert not screen.log_panel.display and not screen.rates_panel.display, spec.name
            rows = screen_text(app)
            assert f"{spec.key} {spec.title}" in rows[0], rows[0]  # this screen's tab, by name
            active = {b.id for node, b, _on, _tip in screen.active_bindings.values() if node is screen}
            own = [
                b
                for b in type(screen).BINDINGS
                if isinstance(b, Binding)
                and b.show
                and b.description
                and b.id in _own_ids(type(screen))
                and b.id in active  # not hidden here by the screen's check_action
            ]
            if not own:
                continue
            firsts = [f"{app.get_key_display(b)} {b.description}" for b in own]
            await until(
                pilot,
                lambda firsts=firsts, screen=screen: any(screen.query_one(KeyBar).plain.startswith(f) for f in firsts),
                f"{spec.name}'s own keys first in the key bar",
            )
            bar = screen.query_one(KeyBar).plain
            await until(pilot, lambda bar=bar: screen_text(app)[-1].startswith(bar[:20]), "the key bar drawn")
            checked += 1
        assert checked >= 4
    # Tall enough, the panels are back.
    async with running(repo, poll_seconds=60, size=(160, 48)) as (app, pilot):
        assert app.screen.log_panel.display and app.screen.rates_panel.display


BAR_CHARS = set("█━─│▼◆✕ ")


@pytest.mark.asyncio
async def test_presentation_mode_hides_panels_enlarges_bars_and_shows_keys(big_bucket):
    from textual.widgets import Digits

    from packscope.inspector.widgets.keys_overlay import KeysOverlay

    async with lab_after_lookup(big_bucket, (160, 48)) as (app, pilot, screen):
        assert screen.log_panel.display and screen.rates_panel.display
        await pilot.press("z")
        assert app.present
        await pilot.pause()
        assert not screen.log_panel.display and not screen.rates_panel.display
        await pilot.press("home", "right", "right")
        await pilot.pause()
        rows = screen_text(app)
        for a in ALGORITHMS:
            r = next(i for i, row in enumerate(rows) if re.match(rf"\s*{a}\s+[━─│▼◆✕]", row))
            for above in rows[r - 2 : r]:  # two more rows of the same bar
                assert above[:14].strip() == "" and above[14:].strip(), (a, above)
                assert set(above[14:].rstrip()) <= BAR_CHARS, (a, above)
        # The keys pressed, in the corner; the frame and the speed, large.
        overlay = screen.query_one(KeysOverlay)
        assert overlay.display and overlay.shown[-3:] == ["Home", "→", "→"]
        corner = "\n".join(row[-40:] for row in rows[-8:])
        assert "→" in corner and "Home" in corner, corner
        assert screen.query_one("#lab-big-frame", Digits).value == "3"
        await pilot.press("plus")
        assert screen.query_one("#lab-big-speed", Digits).value == str(4 * 2)  # 4 → 8 frames/s
        await pilot.press("z")  # and back
        await pilot.pause()
        assert not app.present and screen.log_panel.display and not overlay.display
        assert screen.query_one(SearchView).bar_rows == 1


@pytest.mark.asyncio
async def test_present_from_the_start_opens_without_panels(big_bucket):
    from packscope.inspector.app import PackscopeApp

    repo, _names = big_bucket
    app = PackscopeApp(str(repo), poll_seconds=60, present=True, start="lab")
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        assert isinstance(app.screen, LabScreen)
        assert not app.screen.log_panel.display and not app.screen.rates_panel.display
        assert app.screen.query_one("#lab-big").display


def _masked(text: str) -> str:
    """Timings differ between any two runs: mask them."""
    return re.sub(r"[\d.]+ (µs|ms)", "T", text)


async def _drawings(app, pilot, screen: LabScreen) -> list[tuple[str, str, str]]:
    """(stage list, bucket search, frame line) at every frame of the run shown."""
    from tests.ui_support import plain

    out = []
    for f in range(len(screen.frames)):
        screen.set_frame(f)
        await pilot.pause()
        out.append(
            (
                _masked("\n".join(plain_lines(screen.query_one("#lab-stages")))),
                screen.query_one(SearchView).render_text(150).plain,
                plain(screen.query_one("#lab-frame"), width=150),
            )
        )
    return out


@pytest.mark.asyncio
@pytest.mark.parametrize("compare", ["all", "binary"])
async def test_a_recorded_trace_replays_frame_by_frame_as_the_live_lookup(big_bucket, tmp_path, compare):
    from packscope.inspector import lab_batch
    from packscope.inspector import lab_model as lab
    from tests.cli import packscope

    repo, names = big_bucket
    real = sorted(repos.show_index(repos.pack_files(repo)[0].with_suffix(".idx")))[7]
    targets = [names[1234].hex(), (names[1234][:-1] + b"\x01").hex(), real, "main"]
    # Recorded "on a server": a fresh process, its own store.
    out = packscope("-C", repo, "lookup", "--json", "--algorithm", compare, *targets).stdout
    trace_file = tmp_path / "trace.jsonl"
    trace_file.write_bytes(out)
    assert len(out.splitlines()) == len(targets)
    async with running(repo, poll_seconds=60, size=(160, 48)) as (app, pilot):
        screen = await _lab(app, pilot)
        # The same lookups live, in the same order on one fresh store, as recorded
        # (each lookup leaves the store's MRU order to the next).
        fresh = lab_batch.fresh_session(app.core.session, app.core.lock)
        try:
            lives = [lab.traced_lookup(fresh, app.core.lock, text) for text in targets]
        finally:
            fresh.close()
        assert screen.open_trace(str(trace_file))
        for i, text in enumerate(targets):
            replayed = screen.run
            assert replayed.text == text and screen.replay[2] == i
            assert f"replay {i + 1}/{len(targets)}" in "\n".join(screen_text(app))
            played = await _drawings(app, pilot, screen)
            live = lives[i]
            assert replayed.frames() == live.frames()
            assert [s.paths for s in replayed.stages] == [s.paths for s in live.stages]
            assert any(len(s.paths) == len(ALGORITHMS) for s in replayed.stages)  # all three drawn
            replay_state = screen.replay
            screen.show_run(live)
            assert await _drawings(app, pilot, screen) == played
            screen.replay = replay_state
            await pilot.press("right_square_bracket")  # the next recorded lookup
            await until(pilot, lambda i=i: screen.replay[2] == (i + 1) % len(targets), "the next recording")


@pytest.mark.asyncio
async def test_replay_is_opened_from_the_lab_and_from_the_command_line(big_bucket, tmp_path):
    from packscope.inspector.app import PackscopeApp
    from packscope.inspector.widgets.prompt import Prompt
    from tests.cli import packscope

    repo, names = big_bucket
    trace_file = tmp_path / "one.jsonl"
    trace_file.write_bytes(packscope("-C", repo, "lookup", "--json", "--algorithm", "all", names[99].hex()).stdout)
    async with running(repo, poll_seconds=60, size=(160, 48)) as (app, pilot):
        screen = await _lab(app, pilot)
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, Prompt), "the replay prompt")
        # The directory is filled in and only the file's name typed: Pilot takes
        # up to a second per key under load, and the tmp path is 80 keys long.
        app.screen.query_one("#prompt-input", Input).value = f"{trace_file.parent}/"
        await pilot.press(*trace_file.name, "enter")
        await until(pilot, lambda: screen.replay is not None, "the trace replayed")
        assert screen.run.oid == names[99] and screen.run.found
        assert screen.frame == len(screen.frames) - 1
        await pilot.press("home", "space")
        assert screen.frame == 1
    # `packscope lab --replay FILE` sets this before the app starts.
    app = PackscopeApp(str(repo), poll_seconds=60, start="lab")
    app.lab_replay = str(trace_file)
    async with app.run_test(size=(160, 48)) as pilot:
        await started(app, pilot)
        assert isinstance(app.screen, LabScreen)
        await until(pilot, lambda: app.screen.replay is not None, "the trace replayed at start")
        assert app.screen.run.oid == names[99]
    bad = tmp_path / "summary.json"
    bad.write_bytes(packscope("-C", repo, "lookup", "--json", "--summary", names[99].hex()).stdout)
    p = packscope("-C", repo, "lab", "--replay", bad, check=False)
    assert p.returncode == 128 and b"cannot be replayed" in p.stderr


@pytest.mark.asyncio
async def test_a_frame_is_built_once_for_layout_and_paint(big_bucket):
    async with lab_after_lookup(big_bucket, (160, 48)) as (_app, pilot, screen):
        view = screen.query_one(SearchView)
        built = []
        build = view._build
        view._build = lambda width: built.append(width) or build(width)
        screen.set_frame(1)
        await pilot.pause(0.1)
        assert built == [view.size.width]  # the height asked and the lines drawn from one build


@pytest.mark.asyncio
async def test_page_down_scrolls_an_unfolded_stage_list(forty_packs):
    async with running(forty_packs, poll_seconds=60, size=(80, 24)) as (app, pilot):
        screen = await _lab(app, pilot)
        await _look_up(app, pilot, screen, "ff" * 20)  # missing: every pack searched
        await pilot.press("enter")  # all 40-odd stages listed
        view = screen.query_one("#lab-lookup")
        await until(pilot, lambda: view.max_scroll_y > 0, "a view taller than the screen")
        assert view.scroll_y == 0
        await pilot.press("pagedown")
        await until(pilot, lambda: view.scroll_y > 0, "the view scrolled down")
        await pilot.press("pageup")
        await until(pilot, lambda: view.scroll_y == 0, "the view back at the top")
