"""One way in: however the UI is started, every screen sees the same open
repository.  Each launch mode builds its app as the command line does
(``packscope.inspector.cli.ui_app``: the same parsing, ``-C`` and the same
launch function), then opens every screen and runs its main action: Health
to the end, History → commit → diff, a Lab lookup and batch, a Packs filter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from packscope.inspector.cli import ui_app
from packscope.inspector.screens.commit import CommitScreen
from packscope.inspector.screens.diff import DiffScreen
from packscope.inspector.screens.health import HealthScreen
from packscope.inspector.screens.lab import LabScreen
from packscope.inspector.screens.overview import OverviewScreen
from packscope.inspector.screens.pack_list import PacksScreen
from packscope.inspector.widgets.virtual_list import VirtualList
from tests.repos import git, git_env, git_text
from tests.ui_support import SIZE, answer_prompt, list_text, open_history, open_screen, search, started, until


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A work tree with a subdirectory, three commits (the last edits a
    file in ``src/``), two packs and a loose object."""
    work = tmp_path_factory.mktemp("launch") / "work"
    git("init", "-q", "-b", "main", work)
    (work / "src").mkdir()
    for i in range(3):
        (work / "src" / "main.c").write_text("".join(f"line {n} of {i if n % 3 == 0 else 0}\n" for n in range(40)))
        (work / f"notes{i}.txt").write_text(f"note {i}\n")
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", f"change {i}", cwd=work)
        if i == 1:
            git("repack", "-q", "-d", cwd=work)
    git("repack", "-q", "-d", cwd=work)
    git("hash-object", "-w", "--stdin", cwd=work, input=b"a loose blob\n")
    return work


@pytest.fixture(scope="module")
def recording(work, tmp_path_factory) -> Path:
    """Lookups recorded with `packscope lookup --json --algorithm all`."""
    out = tmp_path_factory.mktemp("recording") / "t.jsonl"
    lookup = ["lookup", "--json", "--algorithm", "all", "HEAD", "HEAD~1"]
    p = subprocess.run(
        [sys.executable, "-m", "packscope.inspector.cli", "-C", str(work), *lookup],
        capture_output=True,
        env=git_env(),
        check=True,
    )
    out.write_bytes(p.stdout)
    return out


# mode -> (the directory it is started from, the arguments after `packscope`);
# "{work}" is the work tree, "{elsewhere}" a directory outside any repository.
MODES = {
    "no path, in the work tree": ("{work}", []),
    "no path, in a subdirectory": ("{work}/src", []),
    "-C PATH": ("{elsewhere}", ["-C", "{work}"]),
    "-C PATH from a subdirectory": ("{elsewhere}", ["-C", "{work}/src"]),
    ".": ("{work}", ["."]),
    "PATH": ("{elsewhere}", ["{work}"]),
    "the git directory as PATH": ("{elsewhere}", ["{work}/.git"]),
    "--present": ("{work}/src", ["--present"]),
    "lab": ("{work}/src", ["lab"]),
    "lab --replay": ("{work}", ["lab", "--replay", "{recording}"]),
    "-C PATH lab --present": ("{elsewhere}", ["-C", "{work}", "lab", "--present"]),
}


def _filled(text: str, **values) -> str:
    for k, v in values.items():
        text = text.replace("{" + k + "}", str(v))
    return text


@pytest.fixture
def launched(request, work, recording, tmp_path, monkeypatch):
    """The app for this mode, built the way `packscope ARGS` builds it, started
    in the mode's directory."""
    where, args = MODES[request.param]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    values = {"work": work, "elsewhere": elsewhere, "recording": recording}
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # (tmp_path is outside the work tree)
    monkeypatch.chdir(_filled(where, **values))
    return ui_app([_filled(a, **values) for a in args])


async def _health(app, pilot) -> None:
    screen = await open_screen(
        app, pilot, "8", HealthScreen, "Health's check to finish", lambda s: s.state.finished, timeout=30
    )
    assert screen.state.error is None, screen.state.error
    assert screen.state.summary["exit"] == 0


async def _history_commit_diff(app, pilot, work: Path) -> None:
    history = await open_history(app, pilot)
    head = git_text("rev-parse", "HEAD", cwd=work).strip()
    history.vlist.move_to([c.oid.hex() for c in history.history.rows].index(head))
    await pilot.press("enter")
    commit = await until(
        pilot,
        lambda: (
            isinstance(app.screen, CommitScreen)
            and app.screen.changes
            and all(c.counting_done for c in app.screen.changes)
            and app.screen
        ),
        "HEAD's commit screen with its changed files counted",
    )
    lst = commit.query_one(VirtualList)
    rows = list_text(lst)
    lst.move_to(next(i for i, (k, _) in enumerate(commit.rows) if k == "change" and " src/main.c" in rows[i]))
    await pilot.press("enter")
    diff = await until(
        pilot,
        lambda: isinstance(app.screen, DiffScreen) and app.screen.lines is not None and app.screen,
        "src/main.c's diff",
    )
    want = git_text("diff", "HEAD~1", "HEAD", "--", "src/main.c", cwd=work)
    removed = [line for line in want.splitlines() if line.startswith("-") and not line.startswith("---")]
    shown = "\n".join(list_text(diff.query_one(VirtualList)))
    assert removed and all(line[1:] in shown for line in removed)
    await pilot.press("escape", "escape")


async def _lab(app, pilot, work: Path) -> None:
    screen = await open_screen(app, pilot, "6", LabScreen, "the Lab")
    head = git_text("rev-parse", "HEAD", cwd=work).strip()
    await answer_prompt(app, pilot, "l", head[:10])
    await until(
        pilot,
        lambda: screen.run is not None and screen.run.oid is not None and screen.run.oid.hex() == head,
        "the Lab's lookup of HEAD",
    )
    assert screen.run.found
    await pilot.press("b")
    await until(pilot, lambda: screen.last_batch is not None, "the Lab's batch", timeout=30)
    assert screen.last_batch.lookups == screen.batch_k


async def _packs(app, pilot, work: Path) -> None:
    screen = await open_screen(
        app,
        pilot,
        "2",
        PacksScreen,
        "every pack's index read",
        lambda s: s.view and all(r.objects is not None for r in s.view),
    )
    packs = sorted((work / ".git" / "objects" / "pack").glob("*.pack"))
    assert len(screen.view) == len(packs) == 2
    head = git_text("rev-parse", "HEAD", cwd=work).strip()
    await search(app, pilot, head[:10])
    await until(pilot, lambda: len(screen.view) == 1, "the filter to leave the one pack that holds HEAD")
    holder = git_text("verify-pack", "-v", str(packs[0].with_suffix(".idx")), cwd=work)
    assert screen.view[0].name.startswith(packs[0 if head in holder else 1].stem)


@pytest.mark.parametrize("launched", list(MODES), indirect=True)
@pytest.mark.asyncio
async def test_every_screen_works_however_the_ui_is_started(launched, work):
    app = launched
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert app.core.repo.git_dir == (work / ".git")
        await open_screen(app, pilot, "1", OverviewScreen, "the Overview")
        await _health(app, pilot)
        await _history_commit_diff(app, pilot, work)
        await _lab(app, pilot, work)
        await _packs(app, pilot, work)
        await _the_other_screens(app, pilot)


async def _the_other_screens(app, pilot) -> None:
    """Every screen of the table not driven above opens on this repository
    (its notifications, if any, are not errors)."""
    from packscope.inspector.app import SCREEN_TABLE

    for spec in SCREEN_TABLE:
        if spec.name in ("overview", "packs", "lab", "history", "health"):
            continue
        await pilot.press(spec.key)
        await until(
            pilot,
            lambda spec=spec: app.current_mode == spec.name and app.screen.is_mounted,
            f"{spec.key} to open {spec.title}",
        )
        await pilot.pause(0.2)
    errors = [n.message for n in app._notifications if n.severity == "error"]
    assert errors == []


@pytest.mark.asyncio
async def test_demo_opens_every_screen_on_the_demo_repository(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    app = ui_app(["demo", str(tmp_path / "demo.git"), "--packs", "2", "--commits", "6", "--loose-n", "0"])
    async with app.run_test(size=SIZE) as pilot:
        await started(app, pilot)
        assert app.core.repo.git_dir == tmp_path / "demo.git"
        await _health(app, pilot)
        screen = await open_screen(app, pilot, "6", LabScreen, "the Lab")
        await answer_prompt(app, pilot, "l", "HEAD")
        await until(pilot, lambda: screen.run is not None and screen.run.found, "the Lab's lookup of HEAD")
        await open_history(app, pilot)


@pytest.mark.asyncio
async def test_lab_replay_needs_no_repository(recording, tmp_path, monkeypatch):
    """`packscope lab --replay FILE` outside any repository: the recording
    replays (the README: on any machine), and nothing says "not a git repository"."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    app = ui_app(["lab", "--replay", str(recording)])
    async with app.run_test(size=SIZE) as pilot:
        screen = await until(
            pilot,
            lambda: isinstance(app.screen, LabScreen) and app.screen.replay is not None and app.screen,
            "the Lab replaying the recording",
        )
        assert screen.run is not None and screen.run.found
        await until(pilot, lambda: "no repository" in app.status_text, "the status to say there is no repository")
        assert app.core.error is None and not app.core.ready
        assert "no repository" in str(screen.query_one("#lab-settings").render())
        await pilot.press("right_square_bracket")
        await until(pilot, lambda: screen.replay[2] == 1, "the second recorded lookup")


def test_lab_outside_a_repository_without_replay_is_an_error(tmp_path, monkeypatch):
    from packscope.core.errors import NotARepositoryError

    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotARepositoryError):
        ui_app(["lab"])
