"""Snapshot tests (pytest-textual-snapshot): Overview, Packs, History and
Health at 120×36, compared with the SVGs under tests/__snapshots__/.

Deterministic by construction: the repositories are built with fixed dates
at a fixed path (so the paths on screen are the same on every run), every
worker is awaited before the shot, the live panels (event log with its
clock times, rates) are hidden, and nothing on these screens blinks.

Another git or zlib writes other pack bytes: their names, sizes and
offsets are masked in the SVGs (tests/snapshot_mask.py), and what they
would otherwise decide on screen is fixed by content here — the order of
the packs (mtimes by the commit each holds; sizes 300 bytes apart, of
incompressible data), the kept pack (by its commit, not its name), and
where the truncated pack is cut (at an object's start, so the same
entries are lost whatever their compressed sizes).

Regenerate after a deliberate change with ``pytest tests/test_ui_snapshots.py
--snapshot-update`` (textual is pinned in the test extra for this).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import inspect
import os
import random
import shutil
from pathlib import Path

import pytest

from tests import ui_history_repos as hr
from tests.repos import git, git_text, init_bare, pack_files, show_index
from tests.snapshot_mask import masked_snap_compare
from tests.ui_support import fixed_snapshot_root, until

SIZE = (120, 36)
# One fixed path for every user: the paths on screen are part of the SVGs
# (a uid in the path would make every snapshot differ under another user).
ROOT = Path("/tmp/packscope-snapshots")
HERE = Path(__file__).resolve().parent
# What the cached repositories are made from: their builders' source.
BUILDER_SOURCES = (HERE / "ui_history_repos.py", *sorted((HERE / "repos").glob("*.py")))
EPOCH = 1_600_000_000


@pytest.fixture
def snap_compare(snap_compare, monkeypatch):
    """The plugin's snap_compare on SVGs with git's and zlib's bytes masked."""
    return masked_snap_compare(snap_compare, monkeypatch)


def _many_packs(root: Path, packs: int = 12) -> tuple[Path, list[str]]:
    """One pack per commit (fast-import checkpoints); commit k adds
    300·(k+1) bytes of incompressible data, so the packs' sizes are 300
    bytes apart whatever zlib does with them.  The repository and its
    commits, oldest first."""
    repo = init_bare(root / "many-packs.git")
    stream = []
    for k in range(packs):
        data = random.Random(k).randbytes(300 * (k + 1))
        t = EPOCH + 60 * k
        stream.append(b"blob\nmark :%d\ndata %d\n%s\n" % (2 * k + 1, len(data), data))
        msg = b"commit %d" % k
        stream.append(
            b"commit refs/heads/main\nmark :%d\nauthor A U Thor <author@example.com> %d +0000\n"
            b"committer C O Mitter <committer@example.com> %d +0000\ndata %d\n%s\n" % (2 * k + 2, t, t, len(msg), msg)
        )
        if k:
            stream.append(b"from :%d\n" % (2 * k))
        stream.append(b"M 100644 :%d blob%02d.bin\n\ncheckpoint\n\n" % (2 * k + 1, k))
    git("-c", "fastimport.unpackLimit=0", "fast-import", "--quiet", cwd=repo, input=b"".join(stream))
    return repo, git_text("rev-list", "--reverse", "main", cwd=repo).split()


def _truncate_at_an_object(repo: Path, part: float = 1 / 3) -> None:
    """Cut the repository's one pack inside the header of the object that
    starts a ``part`` of the way through its entries: which entries are
    lost depends on git's object order only, not on compressed sizes."""
    pack = pack_files(repo)[0]
    offsets = sorted(show_index(pack.with_suffix(".idx")).values())
    cut = offsets[int(len(offsets) * part)] + 1
    data = pack.read_bytes()
    pack.write_bytes(data[:cut])


def _build(root: Path) -> None:
    base = hr.build_history_repo(root, "snap.git")
    hr.corrupt_copies(base, root / "corrupt")
    truncated = root / "corrupt" / "truncated-pack.git"
    shutil.copy(pack_files(base)[0], pack_files(truncated)[0])  # whole again, then cut at an object
    _truncate_at_an_object(truncated)
    (root / "many").mkdir()
    many, commits = _many_packs(root / "many")
    # Each pack by the commit it holds (its place in history), not by its name.
    holds = {
        pack: next(k for k, c in enumerate(commits) if c in show_index(pack.with_suffix(".idx")))
        for pack in pack_files(many)
    }
    next(p for p, k in holds.items() if k == 4).with_suffix(".keep").write_text("")  # a K badge
    # Fixed, old mtimes: a pack directory written just now would make
    # the store's scan provisional (a badge on the Overview).
    for dirpath, dirs, files in os.walk(root):
        for name in files + dirs:
            os.utime(os.path.join(dirpath, name), (EPOCH, EPOCH))
    # The packs' search order (newest first) by the commit each holds.
    for pack, k in holds.items():
        for f in (pack, pack.with_suffix(".idx")):
            os.utime(f, (EPOCH + k, EPOCH + k))


def builder_key(sources=BUILDER_SOURCES) -> str:
    """The cache key of the built repositories: a hash of the builders'
    source (files and ``_build``) and of git's version, so any change to
    how they are made rebuilds them; nothing to bump by hand."""
    h = hashlib.sha256()
    for path in sources:
        h.update(Path(path).read_bytes())
    for builder in (_build, _many_packs, _truncate_at_an_object):
        h.update(inspect.getsource(builder).encode())
    h.update(git("--version"))
    return h.hexdigest()


@pytest.fixture(scope="session")
def snap_repos() -> dict[str, Path]:
    fixed_snapshot_root(ROOT)
    with open(ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers build it once
        marker = ROOT / "built"
        key = builder_key()
        if not marker.exists() or marker.read_text() != key:
            marker.unlink(missing_ok=True)  # a build that dies half-way is never trusted
            for old in (ROOT / "snap.git", ROOT / "corrupt", ROOT / "many"):
                shutil.rmtree(old, ignore_errors=True)
            _build(ROOT)
            marker.write_text(key)
    return {
        "base": ROOT / "snap.git",
        "corrupt": ROOT / "corrupt" / "garbage-loose.git",
        "truncated": ROOT / "corrupt" / "truncated-pack.git",
        "many": ROOT / "many" / "many-packs.git",
    }


def test_the_snapshot_repositories_are_rebuilt_when_their_builder_changes(tmp_path):
    builder = tmp_path / "builder.py"
    builder.write_text("def build(): return 1\n")
    before = builder_key([builder])
    assert builder_key([builder]) == before  # stable: the cache is reused
    builder.write_text("def build(): return 2\n")
    assert builder_key([builder]) != before
    # the real key covers the real builders
    assert builder_key() != builder_key([])


def _app(repo):
    from packscope.inspector.app import PackscopeApp

    return PackscopeApp(str(repo))


async def _quiet(app, pilot) -> None:
    from textual.worker import WorkerCancelled

    await until(pilot, lambda: app.core.ready, "the store to open", timeout=10)
    for _ in range(3):
        with contextlib.suppress(WorkerCancelled):  # an exclusive worker replaced by a newer one
            await app.workers.wait_for_complete()
        await pilot.pause(0.1)
    if app.show_log:
        await pilot.press("e")
    if app.show_rates:
        await pilot.press("s")
    await until(
        pilot,
        lambda: app.screen.facts.loose_on_disk is not None,
        "the Overview's count of loose objects on disk",
        timeout=10,
    )
    await pilot.pause(0.2)


async def _history_loaded(pilot) -> None:
    """History (7) open with its whole walk loaded."""
    app = pilot.app
    await _quiet(app, pilot)
    await pilot.press("7")
    await until(
        pilot, lambda: app.screen.history is not None and app.screen.history.done, "the whole history", timeout=30
    )


async def _packs_checked(pilot):
    """Packs (2) open with every pack's cheap checks done; the screen."""
    app = pilot.app
    await _quiet(app, pilot)
    await pilot.press("2")
    screen = app.screen
    await until(pilot, lambda: screen.view and all(r.objects is not None for r in screen.view), "packs checked")
    return screen


async def _health_finished(pilot) -> None:
    """Health (8) open with its check finished and drawn."""
    app = pilot.app
    await _quiet(app, pilot)
    await pilot.press("8")
    await until(pilot, lambda: app.screen.state.finished, "the health check to finish", timeout=20)
    app.screen.tick()
    await pilot.pause(0.3)


def test_overview_snapshot(snap_compare, snap_repos):
    async def before(pilot):
        await _quiet(pilot.app, pilot)
        pilot.app.screen.render_all()
        await pilot.pause(0.2)

    assert snap_compare(_app(snap_repos["base"]), terminal_size=SIZE, run_before=before)


def test_packs_snapshot(snap_compare, snap_repos):
    async def before(pilot):
        await _quiet(pilot.app, pilot)
        await pilot.press("2")
        await pilot.pause(0.5)

    assert snap_compare(_app(snap_repos["base"]), terminal_size=SIZE, run_before=before)


def test_packs_sorted_and_filtered_snapshot(snap_compare, snap_repos):
    """12 packs sorted by size, largest first (o o o O), then filtered (/) by
    an id the largest holds: the packs holding it, with the offset."""

    async def before(pilot):
        await _packs_checked(pilot)
        await pilot.press("o", "o", "o", "O")  # search order → problems → name → size, reversed
        await pilot.pause(0.2)

    assert snap_compare(_app(snap_repos["many"]), terminal_size=SIZE, run_before=before)


def test_packs_filtered_by_id_snapshot(snap_compare, snap_repos):
    async def before(pilot):
        app = pilot.app
        screen = await _packs_checked(pilot)
        with app.core.lock:
            oid = screen.view[3].handle.index.open().name_at(0).hex()
        await pilot.press("slash")
        await pilot.pause(0.2)
        await pilot.press(*oid[:8], "enter")
        await until(pilot, lambda: screen.filter == oid[:8], "the filter applied")
        await pilot.pause(0.3)

    assert snap_compare(_app(snap_repos["many"]), terminal_size=SIZE, run_before=before)


def test_health_grouped_by_cause_snapshot(snap_compare, snap_repos):
    """A truncated pack first, with what it causes folded below it."""
    assert snap_compare(_app(snap_repos["truncated"]), terminal_size=SIZE, run_before=_health_finished)


def test_history_snapshot(snap_compare, snap_repos):
    async def before(pilot):
        await _history_loaded(pilot)
        await pilot.press("j", "j")
        await pilot.pause(0.3)

    assert snap_compare(_app(snap_repos["base"]), terminal_size=SIZE, run_before=before)


def test_commit_snapshot(snap_compare, snap_repos):
    async def before(pilot):
        app = pilot.app
        await _history_loaded(pilot)
        await pilot.press("j", "j", "enter")
        await until(
            pilot,
            lambda: (
                getattr(app.screen, "last_done", False)
                and app.screen.changes is not None
                and all(pc.counting_done for pc in app.screen.changes)
            ),
            "the commit's last commits and changed files",
            timeout=30,  # a loaded CI machine: costs time only when it never comes
        )
        await pilot.pause(0.3)

    assert snap_compare(_app(snap_repos["base"]), terminal_size=SIZE, run_before=before)


def test_diff_snapshot(snap_compare, snap_repos):
    """A commit's changed file opened (d, Enter): the Diff screen."""

    async def before(pilot):
        app = pilot.app
        await _history_loaded(pilot)
        await pilot.press("j", "j", "enter")
        await until(
            pilot,
            lambda: getattr(app.screen, "changes", None) and all(pc.counting_done for pc in app.screen.changes),
            "the commit's changed files",
            timeout=30,
        )
        await pilot.press("d", "enter")
        await until(pilot, lambda: getattr(app.screen, "lines", None) is not None, "the file's diff", timeout=10)
        await pilot.pause(0.3)

    assert snap_compare(_app(snap_repos["base"]), terminal_size=SIZE, run_before=before)


def test_health_snapshot(snap_compare, snap_repos):
    assert snap_compare(_app(snap_repos["corrupt"]), terminal_size=SIZE, run_before=_health_finished)
