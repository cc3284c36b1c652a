"""History's reads on a history without a commit-graph: the walk reads
commit headers only, search lines are read after the rows, and a search
never misses a row whose line is not indexed yet."""

from __future__ import annotations

import time

import pytest

from packscope.core.store.pack import Pack
from packscope.inspector.history_model import HistoryLog
from tests.repos import git, init_bare
from tests.ui_support import open_history, running, until

COMMITS = 2000


@pytest.fixture(scope="module")
def plain_repo(tmp_path_factory):
    """COMMITS commits on main (subjects "step N", one by "Odd One" at
    row 1500 of the log), one pack without deltas, no commit-graph."""
    repo = init_bare(tmp_path_factory.mktemp("reads") / "plain.git")
    parts = []
    for n in range(COMMITS):
        who = "Odd One <odd@example.com>" if n == COMMITS - 1 - 1500 else "L Ong <long@example.com>"
        msg = f"step {n}\n"
        parts.append(
            f"commit refs/heads/main\nmark :{n + 1}\ncommitter {who} {1_500_000_000 + n * 60} +0000\n"
            f"data {len(msg)}\n{msg}" + (f"from :{n}\n" if n else "") + f"M 100644 inline f\ndata {len(str(n))}\n{n}\n"
        )
    git("fast-import", "--quiet", cwd=repo, input="".join(parts).encode())
    # one pack, no deltas: every commit is a plain entry the header reader answers
    git("repack", "-a", "-d", "-f", "--window=0", "-q", cwd=repo)
    assert not (repo / "objects" / "info" / "commit-graph").exists()
    return repo


@pytest.fixture
def commit_reads(monkeypatch):
    """Whole commits read from packs (Pack.read_at answering a commit)."""
    count = [0]
    read_at = Pack.read_at

    def counted(self, offset, *a, **kw):
        typ, data = read_at(self, offset, *a, **kw)
        if typ == "commit":
            count[0] += 1
        return typ, data

    monkeypatch.setattr(Pack, "read_at", counted)
    return count


@pytest.mark.asyncio
async def test_graph_mode_reads_headers_for_the_walk_and_whole_commits_only_for_loaded_rows(plain_repo, commit_reads):
    # --topo-order without a commit-graph visits every commit before the
    # first row; the rows shown need whole commits (subject, search line),
    # the walk only headers.
    async with running(plain_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        log = screen.history
        assert log.graph
        await until(pilot, lambda: log.indexed == log.loaded, "the loaded rows indexed")
        await pilot.pause(0.3)  # the worker, idle now, must read nothing more
        assert 0 < log.loaded < COMMITS // 4
        assert commit_reads[0] <= 2 * log.loaded, (commit_reads[0], log.loaded)


class Gate:
    """Holds History's indexing back while closed (the worker skips it)."""

    def __init__(self, monkeypatch) -> None:
        self.open = False
        index_some = HistoryLog._index_some

        def gated(log, reads, notify):
            if not self.open:
                time.sleep(0.01)
                return
            index_some(log, reads, notify)

        monkeypatch.setattr(HistoryLog, "_index_some", gated)


def title(screen) -> str:
    return str(screen.query_one("#history-title").render())


@pytest.mark.asyncio
async def test_a_search_finds_rows_loaded_before_the_index_reached_them(plain_repo, monkeypatch):
    gate = Gate(monkeypatch)
    odd_row = 1500
    oids = git("rev-list", "--topo-order", "main", cwd=plain_repo).decode().split()
    async with running(plain_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        log = screen.history
        lst = screen.vlist
        await pilot.press("G")
        await until(pilot, lambda: log.done, "G to load the whole history")
        assert [c.oid.hex() for c in log.rows] == oids
        assert log.indexed == 0 and lst.cursor == COMMITS - 1
        # backward from the last row: the match is among rows not indexed yet
        screen.start_search("odd one", -1, restart=True)
        await pilot.pause()
        assert "no match" not in title(screen) and "indexing" in title(screen)
        assert lst.cursor == COMMITS - 1  # waiting, not gone anywhere
        gate.open = True
        await until(pilot, lambda: lst.cursor == odd_row, "N to reach the one match once indexed")
        assert screen.matches == [odd_row]
        await until(pilot, lambda: "match 1/1" in title(screen), "the counter 'match 1/1'")
        assert "wrapped" not in title(screen)
        # forward from there: the one match again, after wrapping
        await pilot.press("n")
        await until(pilot, lambda: "wrapped to the top" in title(screen), "n to wrap to the top")
        assert lst.cursor == odd_row


@pytest.mark.asyncio
async def test_a_forward_search_waits_for_the_index_rather_than_saying_no_match(plain_repo, monkeypatch):
    gate = Gate(monkeypatch)
    oids = git("rev-list", "--topo-order", "main", cwd=plain_repo).decode().split()
    async with running(plain_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        log = screen.history
        lst = screen.vlist
        await pilot.press("G")
        await until(pilot, lambda: log.done, "G to load the whole history")
        await pilot.press("g")
        assert log.indexed == 0
        root = oids[-1]
        screen.start_search(root[:10], 1, restart=True)
        await pilot.pause()
        assert "no match" not in title(screen) and lst.cursor == 0
        gate.open = True
        await until(pilot, lambda: lst.cursor == COMMITS - 1, "an id search to reach the root once indexed")
        await until(pilot, lambda: "match 1/1" in title(screen), "the counter 'match 1/1'")
        assert log.indexed == COMMITS


@pytest.mark.asyncio
async def test_a_backward_search_says_it_looked_only_at_the_loaded_rows_and_n_loads_on(plain_repo):
    async with running(plain_repo) as (app, pilot):
        screen = await open_history(app, pilot)
        log = screen.history
        lst = screen.vlist
        assert not log.done and log.loaded < 1500
        await until(pilot, lambda: log.indexed == log.loaded, "the loaded rows indexed")
        screen.start_search("odd one", -1, restart=True)
        await until(pilot, lambda: "no match" in title(screen), "'no match' for a backward search")
        assert f"in the {log.loaded:,} loaded" in title(screen) and lst.cursor == 0
        await pilot.press("n")
        await until(pilot, lambda: lst.cursor == 1500, "n to load on to the match")
        assert "match 1/1" in title(screen)
