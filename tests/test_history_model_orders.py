"""History's rows in git's orders, with and without a commit-graph, and
what its walk holds: with generation numbers the graph mode (git log
--topo-order) streams over the commit-graph's positions without a read per
commit; decorations give the packs' pages back as they read tags."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from packscope.core.store.odb import ObjectStore
from packscope.inspector import history_model
from packscope.inspector.core_access import CoreAccess
from packscope.inspector.history_model import HistoryLog, decorations
from tests import repos
from tests.repos import git, git_text


def _graph_v1(repo: Path) -> None:
    git("-c", "commitGraph.generationVersion=1", "commit-graph", "write", "--reachable", cwd=repo)


def _graph_v2_bloom(repo: Path) -> None:
    git("commit-graph", "write", "--reachable", "--changed-paths", cwd=repo)


def _split_chain(repo: Path) -> None:
    # a base layer for an old branch, then the rest on top of it
    old = git("rev-list", "refs/heads/quarter", cwd=repo)
    git("commit-graph", "write", "--stdin-commits", "--split=no-merge", cwd=repo, input=old)
    git("commit-graph", "write", "--reachable", "--split=no-merge", cwd=repo)
    chain = repo / "objects" / "info" / "commit-graphs" / "commit-graph-chain"
    assert len(chain.read_text().split()) == 2


GRAPHS = {"no-graph": None, "gen-v1": _graph_v1, "gen-v2-bloom": _graph_v2_bloom, "split-chain": _split_chain}


@pytest.fixture(scope="module")
def random_history(tmp_path_factory) -> Path:
    return repos.build_random_history_repo(tmp_path_factory.mktemp("orders"), commits=500, seed=28)


@pytest.fixture(scope="module", params=sorted(GRAPHS))
def history(request, random_history, tmp_path_factory) -> tuple[str, Path]:
    repo = repos.copy_repo(random_history, tmp_path_factory.mktemp(request.param) / "copy.git")
    write = GRAPHS[request.param]
    if write is not None:
        write(repo)
    return request.param, repo


def walk_all(repo: Path, graph: bool) -> HistoryLog:
    core = CoreAccess(str(repo))
    core.open()
    try:
        log = HistoryLog(core, ["--all"], graph=graph)
        log.demand(float("inf"))
        worker = threading.Thread(target=log.run, args=(lambda: None, lambda: False))
        worker.start()
        worker.join(60)
        assert log.done and log.error is None, log.error
        log.cancel()
        return log
    finally:
        core.close()


def test_graph_mode_lists_git_logs_topo_order(history, backend_path):
    name, repo = history
    log = walk_all(repo, graph=True)
    assert [c.oid.hex() for c in log.rows] == git_text("log", "--all", "--topo-order", "--format=%H", cwd=repo).split()
    if name != "no-graph" and backend_path == "compiled":
        # streamed over the graph's positions: only the tips were asked for one by one
        tips = len(git_text("for-each-ref", "--format=%(objectname)", cwd=repo).split()) + 1
        assert log.reads is not None and log.reads.reads <= tips, (log.reads.reads, tips)


def test_graph_hidden_lists_git_logs_default_order(history, backend_path):
    _name, repo = history
    log = walk_all(repo, graph=False)
    assert [c.oid.hex() for c in log.rows] == git_text("log", "--all", "--format=%H", cwd=repo).split()


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    repo = repos.init_bare(tmp_path_factory.mktemp("tags") / "tags.git")
    repos.import_history(repo, 120, seed=3)  # an annotated tag every 25 commits
    return repo


def test_decorations_give_pack_pages_back_while_reading_tags(tagged, monkeypatch):
    released = []
    original = ObjectStore.release_mapped_pages

    def counting(self):
        released.append(self)
        original(self)

    monkeypatch.setattr(ObjectStore, "release_mapped_pages", counting)
    monkeypatch.setattr(history_model, "SHED_TAGS_EVERY", 2)
    core = CoreAccess(str(tagged))
    core.open()
    try:
        found = decorations(core)
        store = core.bulk.store
    finally:
        core.close()
    tags = git_text("for-each-ref", "--format=%(objectname) %(objecttype)", "refs/tags", cwd=tagged).split("\n")
    annotated = sum(1 for line in tags if line.endswith(" tag"))
    assert annotated >= 4
    assert len(released) >= annotated // 2 and all(s is store for s in released)
    # and the labels are still git's
    for line in git_text("log", "--all", "--format=%H %D", "--decorate-refs=refs/tags", cwd=tagged).splitlines():
        oid, _, labels = line.partition(" ")
        want = sorted(x for x in labels.split(", ") if x)
        got = sorted(label for label, kind in found.get(bytes.fromhex(oid), ()) if kind == "tag")
        assert got == want, oid


def test_rows_give_back_every_walked_commit_as_it_was_given():
    from packscope.core.history.walked import WalkedCommit
    from packscope.inspector.history_model import Rows

    for rawsz in (20, 32):

        def oid(k: int, rawsz: int = rawsz) -> bytes:
            return k.to_bytes(4, "big") * (rawsz // 4)

        walked = [
            WalkedCommit(oid(1), oid(101), (oid(2), oid(3)), 1_700_000_000),  # a merge
            WalkedCommit(oid(2), oid(102), (oid(4),), 0),
            WalkedCommit(oid(3), oid(103), (oid(4), oid(5), oid(6)), -5),  # an octopus, a date before 1970
            WalkedCommit(oid(4), oid(104), (), 2**64 - 1),  # a root, git's largest date
        ]
        rows = Rows()
        assert not rows and len(rows) == 0
        rows.extend(walked[:1])
        rows.extend(walked[1:])
        assert len(rows) == 4 and list(rows) == walked
        assert rows[-1] == walked[-1] and rows[1:3] == walked[1:3]
        assert [rows[k].parents for k in range(4)] == [c.parents for c in walked]
        with pytest.raises(IndexError):
            rows[4]
