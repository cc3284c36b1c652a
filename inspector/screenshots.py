"""SVG screenshots of every screen, taken from a running app (Textual's
headless test driver) on a demo repository: what the README shows.

``packscope screenshots [DIR]`` regenerates them (see commands/screenshots.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

SIZE = (120, 36)


async def _settle(app, pilot, rounds: int = 3) -> None:
    from textual.worker import WorkerCancelled

    for _ in range(rounds):
        with contextlib.suppress(WorkerCancelled):  # a cancelled worker is settled too
            await app.workers.wait_for_complete()
        await pilot.pause(0.1)


async def _press(app, pilot, *keys: str) -> None:
    """Press ``keys``, then let what they started settle."""
    await pilot.press(*keys)
    await _settle(app, pilot)


async def _wait(pilot, predicate, timeout: float = 15.0) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not predicate() and loop.time() < end:
        await pilot.pause(0.05)


async def take_screenshots(repo: str, out_dir: str | Path, size: tuple[int, int] = SIZE, say=print) -> list[Path]:
    from packscope.inspector.app import PackscopeApp
    from packscope.inspector.screens.overview import OverviewScreen
    from packscope.inspector.screens.pack_entries import PackScreen
    from packscope.inspector.widgets.virtual_list import VirtualList

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    app = PackscopeApp(str(repo))
    written: list[Path] = []

    def shoot(name: str) -> None:
        path = out / f"{name}.svg"
        path.write_text(app.export_screenshot(title=f"packscope — {name}"), encoding="utf-8")
        written.append(path)
        say(f"wrote {path}")

    async with app.run_test(size=size) as pilot:
        await _wait(pilot, lambda: app.core.ready)
        await _settle(app, pilot)
        # Some work first, so counters, log and sparklines have something to show.
        for seed in range(3):
            await app.run_workload(lookups=600, seed=seed).wait()
            app.sample_rates()
            await pilot.pause(0.3)
        app.drain_events()
        await _settle(app, pilot)

        def loose_counted() -> bool:
            screen = app.screen
            return isinstance(screen, OverviewScreen) and screen.facts.loose_on_disk is not None

        await _wait(pilot, loose_counted)
        await _settle(app, pilot)
        shoot("1-overview")

        await _press(app, pilot, "2")
        shoot("2-packs")

        # Sorted by size, largest first, then filtered to the packs holding an id.
        packs = app.screen
        await _press(app, pilot, "o", "o", "o", "O")
        view = getattr(packs, "view", None)
        if view:
            with app.core.lock:
                oid = view[0].handle.index.open().name_at(0).hex()
            await _press(app, pilot, "slash")
            await _press(app, pilot, *oid[:8], "enter")
            await _wait(pilot, lambda: getattr(packs, "filter", None) == oid[:8])
            await pilot.pause(0.3)
            shoot("2c-packs-sorted-filtered")
            await _press(app, pilot, "escape")

        await _press(app, pilot, "enter")
        screen = app.screen
        lst = screen.query_one(VirtualList)
        entries = screen.entries if isinstance(screen, PackScreen) else None
        rows = range(min(lst.row_count, 400)) if entries is not None else range(0)
        deltas = [k for k in rows if entries is not None and (entries.row(k).depth or 0) >= 2]
        if deltas:
            lst.move_to(deltas[0])
        await pilot.pause(0.2)
        shoot("2b-pack-entries")

        await _press(app, pilot, "enter")
        shoot("4-object")

        await _press(app, pilot, "3")
        cache = app.core.store.loose_cache()
        with app.core.lock:
            for n in range(0, 256, 3):
                cache.fill(n)
        app.drain_events()
        await _settle(app, pilot)
        shoot("3-loose")

        await _press(app, pilot, "question_mark")
        shoot("help")

        await _lab_screenshots(app, pilot, shoot, str(repo))
        await _history_health_screenshots(app, pilot, shoot)
    return written


async def _history_health_screenshots(app, pilot, shoot) -> None:
    """History (its walker waits for demand: no _settle from here on), a
    commit with its tree's last commits, and Health after a full check."""
    await pilot.press("7")
    await _wait(
        pilot, lambda: app.screen.history is not None and app.screen.history.loaded > 0 and app.screen.history.decor
    )
    await pilot.pause(0.3)
    shoot("7-history")

    await pilot.press("enter")
    await _wait(pilot, lambda: getattr(app.screen, "last_done", False), timeout=60)
    await pilot.pause(0.3)
    shoot("7b-commit")

    commit = app.screen
    await pilot.press("d", "enter")  # the changed files, then the first one's diff
    await _wait(pilot, lambda: app.screen is not commit, timeout=30)
    await pilot.pause(0.5)
    shoot("7c-diff")
    await pilot.press("escape")
    await blame_screenshot(app, pilot, shoot)

    await pilot.press("escape", "8")
    await _wait(pilot, lambda: app.screen.state.finished, timeout=120)
    app.screen.tick()
    await pilot.pause(0.3)
    shoot("8-health")

    await pilot.press("9")
    await _wait(pilot, lambda: getattr(app.screen, "doc", None) is not None, timeout=120)
    await pilot.pause(0.3)
    shoot("9-advice")
    await advice_whatif_screenshot(app, pilot, shoot)

    await refs_screenshot(app, pilot, shoot)


async def blame_screenshot(app, pilot, shoot) -> None:
    """From a commit's changed files, `b`: the Blame view of the first one
    once every line has its commit (then back to the commit)."""
    commit = app.screen
    await pilot.press("d", "b")
    await _wait(pilot, lambda: app.screen is not commit and getattr(app.screen, "done", False), timeout=60)
    await pilot.pause(0.3)
    shoot("7d-blame")
    await pilot.press("escape")


async def advice_whatif_screenshot(app, pilot, shoot) -> None:
    """Advice's what-if list, the cursor on the log -- PATH walk's row
    (Enter would replay its reads in the Lab)."""
    from packscope.inspector.widgets.virtual_list import VirtualList

    screen = app.screen
    whatifs = getattr(screen, "whatifs", [])
    row = next((i for i, w in enumerate(whatifs) if w.get("workload", "").startswith("walk: log -- ")), 0)
    lst = screen.query_one("#advice-whatif", VirtualList)
    lst.focus()
    lines = getattr(screen, "whatif_lines", [])
    lst.move_to(lines.index(row) if row in lines else 1)
    await pilot.pause(0.3)
    shoot("9c-advice-whatif")


async def refs_screenshot(app, pilot, shoot) -> None:
    """Refs (0) once every ahead/behind count is in; then its end, the stash list."""
    await pilot.press("0")
    await _wait(
        pilot,
        lambda: (
            getattr(app.screen, "snapshot", None) is not None and not app.screen.counting and not app.screen.reading
        ),
        timeout=60,
    )
    await pilot.pause(0.3)
    shoot("10-refs")
    await pilot.press("G")  # the stash list, after the refs
    await pilot.pause(0.3)
    shoot("10b-refs-stash")


async def _lab_screenshots(app, pilot, shoot, repo: str) -> None:
    """Fanout (with a lookup's bucket marked), and the Lookup lab: a
    finished lookup, a frame in the middle of a bucket search, a batch."""
    await _press(app, pilot, "escape", "5")
    await _wait(pilot, lambda: getattr(app.screen, "stats", None) is not None)
    await _press(app, pilot, "6")
    lab_screen = app.screen
    lab_screen.lookup("HEAD")
    await _settle(app, pilot)
    await _press(app, pilot, "5")
    await pilot.pause(0.5)  # a tick draws the lookup's bucket
    shoot("5-fanout")

    await _press(app, pilot, "6")
    shoot("6-lab-lookup")

    # The middle of the search: the biggest bucket searched, at its first probe.
    run = lab_screen.run
    searches = [i for i, s in enumerate(run.stages) if s.is_search]
    if searches:
        i = max(searches, key=lambda k: run.stages[k].steps)
        lab_screen.set_frame(run.frames().index((i, 1)) if run.stages[i].steps else 0)
    await pilot.pause(0.2)
    shoot("6b-lab-mid-search")

    # Presentation mode at the same frame: no live panels, big bars and
    # numbers, the last keys pressed in a corner.
    await _press(app, pilot, "z")
    shoot("6d-lab-presentation")
    await _press(app, pilot, "z")

    worker = lab_screen.start_batch(k=1000, mode="mixed", seed=1)
    await worker.wait()
    await _settle(app, pilot)
    shoot("6c-lab-batch")

    await _replay_screenshot(app, pilot, lab_screen, shoot, repo)


async def _replay_screenshot(app, pilot, lab_screen, shoot, repo: str) -> None:
    """A recorded trace (``packscope lookup --json`` of two revisions, made
    by the CLI as an operator would) replayed in the Lab, at its last frame."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory(prefix="packscope-trace-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        with open(path, "wb") as out:
            subprocess.run(
                [sys.executable, "-m", "packscope.inspector.cli", "-C", repo, "lookup", "--json", "HEAD~1", "HEAD"],
                stdout=out,
                check=True,
            )
        lab_screen.open_trace(str(path))
        await _settle(app, pilot)
        await _press(app, pilot, "end")
        shoot("6e-lab-replay")


def regenerate(out_dir: str | Path, repo: str | None = None, say=print) -> list[Path]:
    """Screenshots into ``out_dir``, from ``repo`` or a fresh demo repository."""
    import tempfile

    from packscope.inspector.demo_repo import build_demo

    if repo is not None:
        return asyncio.run(take_screenshots(repo, out_dir, say=say))
    with tempfile.TemporaryDirectory(prefix="packscope-shots-") as tmp:
        demo = build_demo(Path(tmp) / "demo.git", progress=say)
        return asyncio.run(take_screenshots(str(demo), out_dir, say=say))
