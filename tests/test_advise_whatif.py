"""What-if models held against the layouts git really writes: the model's
replay of a proposed index (one multi-pack-index, one pack, the geometric
roll-up) is compared with a replay on a copy where git wrote that layout."""

from __future__ import annotations

import json
import shutil

import pytest

from packscope.core.advise.whatif import _Model, search_real, whatif
from packscope.core.advise.whatif_walk import log_path_reads
from packscope.core.repo.session import open_session
from tests.cli import packscope_in
from tests.repos import (
    add_loose,
    build_many_packs,
    build_random_history_repo,
    fast_import_stream,
    git,
    git_env,
    git_text,
)

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("whatif")
    repo = build_many_packs(root, packs=12)
    git("repack", "-d", "-q", cwd=repo)  # the loose objects into one more pack
    return repo


def replay_after(repo, tmp_path, ids, *git_args):
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy)
    git(*git_args, cwd=copy)
    with open_session(str(copy)) as s:
        m = _Model(s)
        return m.replay_current(ids, m.current_order())


def test_the_real_replay_finds_what_the_index_finds(many):
    with open_session(str(many)) as s:
        m = _Model(s)
        for h in m.packs:
            for i in range(0, h.index.num_objects, 7):
                oid = h.index.name_at(i)
                _, _, rank, found = search_real(h.index, oid)
                lo = h.index.fanout[oid[0] - 1] if oid[0] else 0
                assert found and lo + rank == h.index.find(oid)


def test_one_midx_model_equals_the_midx_git_writes(many, tmp_path):
    with open_session(str(many)) as s:
        m = _Model(s)
        ids = m.sample()
        current = m.replay_current(ids, m.current_order())
        proposed = m.replay_layout(ids, [h.index for h in m.packs], [])
    real = replay_after(many, tmp_path, ids, "multi-pack-index", "write")
    assert proposed.probes_per_lookup == real.probes_per_lookup
    assert proposed.packs_searched == real.packs_searched == 1.0
    assert proposed.rescans == real.rescans == current.rescans
    assert current.packs_searched > 3  # 13 packs searched one by one before
    assert abs(proposed.pages_per_lookup - real.pages_per_lookup) < 0.5


def test_one_pack_model_equals_git_repack_a(many, tmp_path):
    with open_session(str(many)) as s:
        m = _Model(s)
        ids = m.sample()
        proposed = m.replay_layout(ids, [h.index for h in m.packs], [])
    real = replay_after(many, tmp_path, ids, "repack", "-a", "-d", "-q")
    assert proposed.probes_per_lookup == real.probes_per_lookup
    assert proposed.packs_searched == real.packs_searched == 1.0


def test_the_document_has_every_layout_current_beside_proposed(many):
    with open_session(str(many)) as s:
        rows = [w.to_dict() for w in whatif(s)]
    assert [r["layout"] for r in rows] == ["multi-pack-index", "one-pack", "geometric", "commit-graph"]
    for r in rows:
        assert set(r["current"]) == set(r["proposed"])
        assert {"probes_per_lookup", "pages_per_lookup", "packs_searched", "rescans", "loose_reads"} <= set(
            r["current"]
        )
    geo = rows[2]
    assert geo["proposed"]["packs_searched"] < geo["current"]["packs_searched"]


# --- loose objects in the workload ------------------------------------------------------


@pytest.fixture(scope="module")
def with_loose(tmp_path_factory):
    """Packs, loose objects a branch reaches (fast-import writes them loose)
    and loose blobs nothing reaches."""
    root = tmp_path_factory.mktemp("whatif-loose")
    repo = build_many_packs(root, packs=6)
    git("repack", "-d", "-q", cwd=repo)
    stream = fast_import_stream(8, seed=29, branch="refs/heads/loose", merges=False, tags=False)
    git("-c", "fastimport.unpackLimit=100000", "fast-import", "--quiet", cwd=repo, input=stream)
    unreachable = add_loose(repo, 300, seed=29)
    return repo, frozenset(bytes.fromhex(o) for o in unreachable)


def loose_count(repo) -> int:
    stored = git_text("count-objects", "-v", cwd=repo)
    return int(next(ln.split()[1] for ln in stored.splitlines() if ln.startswith("count:")))


def replay_on(repo, ids):
    with open_session(str(repo)) as s:
        m = _Model(s)
        return m.replay_current(ids, m.current_order())


def test_loose_objects_are_sampled_and_packing_them_saves_directory_reads(with_loose, tmp_path):
    repo, unreachable = with_loose
    with open_session(str(repo)) as s:
        m = _Model(s)
        ids = m.sample()
        rows = {w.layout: w for w in whatif(s, unreachable_loose=unreachable)}
    assert m.loose.num_objects == loose_count(repo) > len(unreachable)
    sampled_loose = sum(1 for oid in ids if oid in m.loose_set)
    assert sampled_loose > 0
    n, absent = len(ids), 200
    current = rows["one-pack"].current
    # today: a directory read for each loose id and for each absent one
    assert current.loose_reads == (sampled_loose + absent) / n
    # a multi-pack-index leaves them loose
    assert rows["multi-pack-index"].proposed.loose_reads == current.loose_reads
    # repack -a -d packs what is reachable: the unreachable loose blobs stay loose
    unreached = sum(1 for oid in ids if oid in unreachable)
    assert rows["one-pack"].proposed.loose_reads == (unreached + absent) / n
    copy = tmp_path / "one"
    shutil.copytree(repo, copy)
    git("repack", "-a", "-d", "-q", cwd=copy)
    assert loose_count(copy) == len(unreachable)
    assert replay_on(copy, ids) == rows["one-pack"].proposed
    # repack --geometric=2 -d packs every loose object
    copy = tmp_path / "geometric"
    shutil.copytree(repo, copy)
    git("repack", "--geometric=2", "-d", "-q", cwd=copy)
    assert loose_count(copy) == 0
    real = replay_on(copy, ids)
    assert real.loose_reads == rows["geometric"].proposed.loose_reads == absent / n
    assert real.packs_searched == rows["geometric"].proposed.packs_searched
    assert real.probes_per_lookup == rows["geometric"].proposed.probes_per_lookup


# --- a recorded lookup trace as the workload ------------------------------------------------


def test_a_recorded_lookup_trace_is_the_workload(with_loose, tmp_path):
    repo, _ = with_loose
    objs = git_text("rev-list", "--all", "--objects", cwd=repo).split()
    wanted = [*[o for o in objs if len(o) == 40][:30], "f" * 40]
    rec = packscope_in(repo, "lookup", "--json", *wanted, "no-such-rev")
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(rec.stdout)
    p = packscope_in(repo, "advise", "--json", "--whatif-trace", str(trace))
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    rows = [w for w in doc["whatif"] if w["kind"] == "trace"]
    assert [w["layout"] for w in rows] == ["multi-pack-index", "one-pack", "geometric"]
    assert rows[0]["workload"].startswith(f"lookups: {len(wanted)} recorded in ")
    assert "1 unresolved left out" in rows[0]["workload"]
    with open_session(str(repo)) as s:
        m = _Model(s)
        ids = [bytes.fromhex(o) for o in wanted]
        want = m.replay_current(ids, m.current_order())
    assert rows[0]["current"] == want.to_dict()
    assert rows[0]["current"]["rescans"] == 1  # the one absent id
    bad = tmp_path / "bad.json"
    bad.write_text("not json\n")
    p = packscope_in(repo, "advise", "--whatif-trace", str(bad))
    assert p.returncode == 128 and b"not JSON" in p.stderr


# --- log -- PATH: a path-limited walk, with and without a commit-graph and Bloom filters ----


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return build_random_history_repo(tmp_path_factory.mktemp("whatif-walk"), commits=400, seed=29)


def git_bloom_statistics(repo, path: str, tmp_path) -> tuple[int, dict]:
    """``git log --format=%H -- path``: the commits it shows, and its Bloom
    statistics from trace2."""
    events = tmp_path / "trace2.json"
    env = git_env({"GIT_TRACE2_EVENT": str(events)})
    import subprocess

    out = subprocess.run(
        ["git", "log", "--format=%H", "--", path], cwd=repo, env=env, capture_output=True, check=True
    ).stdout.split()
    stats = {}
    for line in events.read_text().splitlines():
        e = json.loads(line)
        if e.get("category") == "bloom" and e.get("key") == "statistics":
            stats = e["value"]
    events.unlink()
    return len(out), stats


@pytest.mark.parametrize("path", ["d1", "d2/e0", "d3/e1/f7.txt", "top.txt"])
def test_log_path_walk_reads_as_git_counts_them(history, tmp_path, path):
    shown, none = git_bloom_statistics(history, path, tmp_path)
    assert none == {}  # no graph: git asks no filter
    with open_session(str(history)) as s:
        now = log_path_reads(s, path, proposed=False)
        then = log_path_reads(s, path, proposed=True)
    assert now.commits_shown == then.commits_shown == shown > 0
    assert now.commits_parsed == now.commits_walked > 0 and now.graph_records == 0
    assert now.bloom_queries == now.bloom_answered == 0
    assert then.commits_parsed == 0 and then.graph_records == then.commits_walked
    assert then.trees_read < now.trees_read
    # git writes the graph and its filters; the real walk there asks as git asks
    copy = tmp_path / "copy.git"
    shutil.copytree(history, copy)
    git("commit-graph", "write", "--reachable", "--changed-paths", cwd=copy)
    shown_there, stats = git_bloom_statistics(copy, path, tmp_path)
    assert shown_there == shown
    with open_session(str(copy)) as s:
        real = log_path_reads(s, path, proposed=False)
    queries = stats["filter_not_present"] + stats["maybe"] + stats["definitely_not"]
    assert real.bloom_queries == then.bloom_queries == queries > 0
    assert real.bloom_answered == stats["definitely_not"]
    # the proposed filter answers exactly: git's false positives are the difference
    assert then.bloom_answered == stats["definitely_not"] + stats["false_positive"]
    assert real.commits_parsed == 0 and real.graph_records == real.commits_walked == then.commits_walked
    assert then.trees_read <= real.trees_read


def test_the_log_row_is_in_the_document_with_its_walk_reads(history):
    p = packscope_in(history, "advise", "--json", "--whatif-path", "d1")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    row = next(w for w in doc["whatif"] if w["workload"].startswith("walk: log -- d1"))
    assert row["layout"] == "commit-graph" and row["kind"] == "walk"
    shown = len(git_text("log", "--format=%H", "--", "d1", cwd=history).split())
    assert row["current"]["commits_shown"] == row["proposed"]["commits_shown"] == shown
    for key in ("commits_parsed", "trees_read", "bloom_queries", "bloom_answered", "graph_records"):
        assert key in row["current"] and key in row["proposed"]
    human = packscope_in(history, "advise", "--whatif-path", "d1").stdout.decode()
    assert "What-if, walk: log -- d1 from HEAD" in human and "trees read" in human


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    from tests.repos import init_bare

    repo = init_bare(tmp_path_factory.mktemp("whatif-linear") / "linear.git")
    git("fast-import", "--quiet", cwd=repo, input=fast_import_stream(60, seed=33, merges=False, tags=False))
    return repo


def git_tree_reads(repo, path: str) -> int:
    """The trees git reads for log -- path on a linear history, from git's
    own listings: per commit, both root trees, then at each component of
    path where the two sides differ, the side(s) that are trees (a root
    commit: its tree, and the first component's if it is a tree)."""
    listing = {}
    revs = [ln.split() for ln in git_text("rev-list", "--parents", "HEAD", cwd=repo).splitlines()]
    for c, *_ in revs:
        rows = git_text("ls-tree", "-r", "-t", c, cwd=repo).splitlines()
        listing[c] = {name: tuple(meta.split()) for meta, name in (r.split("\t", 1) for r in rows)}
    parts = path.split("/")
    total = 0
    for c, *ps in revs:
        if not ps:
            first = listing[c].get(parts[0])
            total += 1 + (first is not None and first[1] == "tree")
            continue
        total += 2
        for i in range(len(parts)):
            prefix = "/".join(parts[: i + 1])
            a, b = listing[ps[0]].get(prefix), listing[c].get(prefix)
            if a == b:
                break
            trees = (a is not None and a[1] == "tree") + (b is not None and b[1] == "tree")
            total += trees
            if trees < 2:
                break
    return total


@pytest.mark.parametrize("path", ["dir1", "dir2/file5.txt", "foo/inner", "big.bin", "nothing/here"])
def test_trees_read_are_those_git_compares(linear, path):
    with open_session(str(linear)) as s:
        now = log_path_reads(s, path, proposed=False)
    assert now.trees_read == git_tree_reads(linear, path)
    assert now.commits_shown == len(git_text("log", "--format=%H", "--", path, cwd=linear).split())
