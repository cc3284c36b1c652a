"""Snapshot tests of the Lookup lab (pytest-textual-snapshot): a recorded
trace replayed, and presentation mode in the middle of a bucket search.

Deterministic by construction: the repository is built at a fixed path
with fixed mtimes (a real history plus a synthetic pack whose bucket 5a
holds 3,400 names), and the replayed trace's timings are fixed after
recording (a replay shows the recorded numbers).  The pack names, which
another git or zlib would change, are masked (tests/snapshot_mask.py).
Regenerate after a
deliberate change with ``pytest tests/test_ui_lab_snapshots.py
--snapshot-update``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from tests import repos
from tests.cli import packscope
from tests.snapshot_mask import masked_snap_compare
from tests.test_ui_lab_demo import write_bucket_pack
from tests.ui_support import fixed_snapshot_root, until

SIZE = (120, 36)
# One fixed path for every user: the paths on screen are part of the SVGs
# (a uid in the path would make every snapshot differ under another user).
ROOT = Path("/tmp/packscope-lab-snapshots")
HERE = Path(__file__).resolve().parent


@pytest.fixture
def snap_compare(snap_compare, monkeypatch):
    """The plugin's snap_compare on SVGs with git's and zlib's bytes masked."""
    return masked_snap_compare(snap_compare, monkeypatch)


def _key() -> str:
    h = hashlib.sha256()
    for path in (
        *sorted((HERE / "repos").glob("*.py")),
        HERE / "test_ui_lab_demo.py",
        HERE / "test_ui_lab_snapshots.py",
    ):
        h.update(path.read_bytes())
    h.update(repos.git("--version"))
    return h.hexdigest()


def _fixed_times(doc: dict) -> dict:
    """The recording with every timing set to a fixed value."""
    doc["seconds"] = 0.000123
    for e in doc.get("events", ()):
        if "seconds" in e:
            e["seconds"] = 0.000045 if e["event"] != "LookupFinished" else 0.000123
    return doc


@pytest.fixture(scope="session")
def lab_snap() -> dict:
    fixed_snapshot_root(ROOT)
    with open(ROOT / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        marker = ROOT / "built"
        if not marker.exists() or marker.read_text() != _key():
            marker.unlink(missing_ok=True)
            shutil.rmtree(ROOT / "repo", ignore_errors=True)
            (ROOT / "repo").mkdir()
            repo = repos.build_packed(ROOT / "repo", commits=20)
            names = write_bucket_pack(repo, 0x5A, 3400)
            for dirpath, dirs, files in os.walk(ROOT / "repo"):
                for name in files + dirs:
                    os.utime(os.path.join(dirpath, name), (1_600_000_000, 1_600_000_000))
            out = packscope("-C", repo, "lookup", "--json", "--algorithm", "all", names[1234].hex(), "main").stdout
            docs = [_fixed_times(json.loads(line)) for line in out.splitlines()]
            (ROOT / "trace.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
            (ROOT / "repo-path").write_text(str(repo))
            marker.write_text(_key())
    return {"repo": Path((ROOT / "repo-path").read_text()), "trace": ROOT / "trace.jsonl"}


def _app(lab_snap, present: bool = False):
    from packscope.inspector.app import PackscopeApp

    app = PackscopeApp(str(lab_snap["repo"]), present=present, start="lab", poll_seconds=3600)
    app.lab_replay = str(lab_snap["trace"])
    app.show_log = app.show_rates = False  # clock times and live rates never repeat
    return app


async def _replayed(pilot) -> None:
    app = pilot.app
    await until(pilot, lambda: app.core.ready, "the store to open")
    await until(pilot, lambda: app.screen.replay is not None, "the trace replayed")
    await pilot.pause(0.3)


def test_lab_replay_snapshot(snap_compare, lab_snap):
    """The first recorded lookup, finished: replay 1/2, all three algorithms."""

    async def before(pilot):
        await _replayed(pilot)

    assert snap_compare(_app(lab_snap), terminal_size=SIZE, run_before=before)


def test_lab_presentation_snapshot(snap_compare, lab_snap):
    """Presentation mode, three probes into the 3,400-name bucket: tall
    bars, frame and speed in large digits, the keys pressed in the corner."""

    async def before(pilot):
        await _replayed(pilot)
        await pilot.press("home", "right", "right", "right")
        await pilot.pause(0.3)

    assert snap_compare(_app(lab_snap, present=True), terminal_size=SIZE, run_before=before)
