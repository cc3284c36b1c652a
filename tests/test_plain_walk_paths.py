"""The plain walk's compiled loop (core/native_c/plain_walk.c walk_plain, and
commit_facts_many for the tips) against its Python loop
(PlainWalk.stream_plain): on every kind of repository the same commits in
git's order, with and without --first-parent; the compiled loop really runs
(and reads the deltified commits itself); a missing commit stops both after
the same commits with the same error; dates past 64 bits sort alike; and a
traced walk never takes the compiled loop."""

from __future__ import annotations

import pytest

from packscope.core.errors import PackscopeError
from packscope.core.history.commit_reader import CommitHeaderReader
from packscope.core.history.graph_walk import WalkSource
from packscope.core.history.rev_args import ALL, walk_starts
from packscope.core.history.walk import walk
from packscope.core.repo.session import open_session
from packscope.core.trace import Tracer
from tests.cli import packscope_in
from tests.delta_paths import NOT_BUILT, _native
from tests.repos import copy_repo, git, git_text, hash_literally, import_history, init_bare

pytestmark = NOT_BUILT


class Calls:
    """The compiled functions, counted: chunks walked, tips read in one call,
    and deltified commits read by the loop's delta reader."""

    def __init__(self, door, *, compiled: bool) -> None:
        self.chunks = self.tips = self.positions = 0
        if not compiled:
            door.use("pure")
            return
        door.use("compiled")

        def graph_walk_plain(*args):
            self.positions += 1
            return _native.graph_walk_plain(*args)

        door.stub("graph_walk_plain", graph_walk_plain)

        def walk_plain(*args):
            self.chunks += 1
            return _native.walk_plain(*args)

        def facts_many(*args):
            self.tips += len(args[2])  # (packs, graph, oids, hexsz, prefix)
            return _native.commit_facts_many(*args)

        door.stub("walk_plain", walk_plain)
        door.stub("commit_facts_many", facts_many)


def walked_ids(repo, door, *, compiled: bool, first_parent: bool = False, tracer=None, graph_reads=None, records=None):
    """``log --all``'s commits through core (the log command's calls), one
    path; ``graph_reads`` (a list) gets how many the commit-graph answered,
    ``records`` (a list) the walked commits themselves."""
    calls = Calls(door, compiled=compiled)
    session = open_session(str(repo), tracer=tracer)
    try:
        starts = walk_starts([ALL], repo=session.repo, refs=session.refs, store=session.objects, cwd_prefix="")
        source = WalkSource.open(session.repo, session.store, refs=session.refs)
        try:
            commits = walk(source.objects, starts, first_parent=first_parent, **source.walk_options(None))
            walked = list(commits)
            if graph_reads is not None:
                graph_reads.append(source.graph_commits)
            if records is not None:
                records.append(walked)  # with trees, parents and times: what the loops read, not only the order
            return [c.oid.hex() for c in walked], calls
        finally:
            source.close()
    finally:
        session.close()


def rev_list(repo, *args) -> list[str]:
    return git_text("rev-list", "--all", *args, cwd=repo).split()


@pytest.mark.parametrize(
    "fixture",
    [
        "packed_repo",
        "sha256_repo",
        "idxv1_repo",
        "ref_delta_repo",
        "deep_chain_repo",
        "many_packs_repo",
        "midx_repo",
        "random_history_repo",
        "odd_commits_repo",
    ],
)
@pytest.mark.parametrize("first_parent", [False, True])
def test_the_compiled_loop_walks_as_the_python_loop_and_git(request, fixture, first_parent, door):
    repo = request.getfixturevalue(fixture)
    expected = rev_list(repo, *(["--first-parent"] if first_parent else []))
    records: list[list] = []
    compiled, calls = walked_ids(repo, door, compiled=True, first_parent=first_parent, records=records)
    python, _ = walked_ids(repo, door, compiled=False, first_parent=first_parent, records=records)
    assert compiled == python == expected
    assert records[0] == records[1]  # trees, parents and times alike
    assert calls.chunks > 0  # the compiled loop ran (the Python loop is the stand-in otherwise)


@pytest.fixture(scope="module")
def deltified_commits_repo(tmp_path_factory):
    """80 commits with long, nearly equal messages, repacked: most are
    stored as deltas of each other."""
    repo = init_bare(tmp_path_factory.mktemp("deltified") / "deltified.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    parent = None
    text = "".join(f"line {k} of a long message that every commit repeats\n" for k in range(60))
    for k in range(80):
        body = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
        body += (
            f"author A <a@x> {1_600_000_000 + k} +0000\ncommitter A <a@x> {1_600_000_000 + k} +0000\n\nc{k}\n\n{text}"
        )
        parent = hash_literally(repo, "commit", body.encode())
    git("update-ref", "refs/heads/main", parent, cwd=repo)
    git("repack", "-adfq", cwd=repo)
    return repo


def test_deltified_commits_are_read_inside_the_compiled_loop(deltified_commits_repo, door):
    # A chunk ends after each read the loop hands back to Python; commits
    # stored as deltas are read by the pack's delta reader without ending it.
    repo = deltified_commits_repo
    rows = git_text("verify-pack", "-v", *map(str, repo.glob("objects/pack/*.idx")), cwd=repo)
    deltified = sum(1 for line in rows.splitlines() if " commit " in line and len(line.split()) >= 7)
    assert deltified > 40
    ids, calls = walked_ids(repo, door, compiled=True)
    assert ids == rev_list(repo)
    assert calls.chunks <= 4  # 16, 32, 64 commits...: not one chunk per deltified commit


def test_the_tips_are_read_in_one_call(random_history_repo, door):
    ids, calls = walked_ids(random_history_repo, door, compiled=True)
    refs = set(git_text("for-each-ref", "--format=%(objectname)", cwd=random_history_repo).split())
    assert ids == rev_list(random_history_repo)
    assert calls.tips == len(refs | {git_text("rev-parse", "HEAD", cwd=random_history_repo).strip()})


@pytest.fixture(scope="module")
def missing_parent_repo(tmp_path_factory):
    """A packed chain of 40 commits whose pack leaves out the 11th from the
    root: a walk reads 29 commits from the pack, then finds it missing."""
    repo = init_bare(tmp_path_factory.mktemp("missing") / "missing.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    parent = None
    chain = []
    for k in range(40):
        body = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
        body += (
            f"author A <a@x> {1_600_000_000 + 60 * k} +0000\ncommitter A <a@x> {1_600_000_000 + 60 * k} +0000\n\nc{k}\n"
        )
        parent = hash_literally(repo, "commit", body.encode())
        chain.append(parent)
    git("update-ref", "refs/heads/main", parent, cwd=repo)
    keep = "\n".join([tree, *(c for c in chain if c != chain[10])]) + "\n"
    git("pack-objects", "-q", str(repo / "objects/pack/pack"), cwd=repo, input=keep)
    git("prune-packed", cwd=repo)
    (repo / "objects" / chain[10][:2] / chain[10][2:]).unlink()  # the one loose object left
    return repo, chain


def test_a_missing_commit_stops_both_loops_after_the_same_commits(missing_parent_repo, tmp_path):
    repo, chain = missing_parent_repo
    compiled = packscope_in(repo, "log", "--all", "--format=%H")
    python = packscope_in(repo, "log", "--all", "--format=%H", env={"PACKSCOPE_PURE": "1"})
    assert compiled.returncode == python.returncode == 128
    assert compiled.stdout == python.stdout
    # every commit above the missing one's child: a commit shows after its parents are read, as in git
    assert compiled.stdout.decode().split() == chain[:11:-1]
    assert compiled.stderr == python.stderr
    assert chain[10] in compiled.stderr.decode()


def test_dates_past_64_bits_sort_alike(tmp_path, door):
    # the loop compares the queue's (-date, number) keys as C integers, and
    # falls back to Python's comparison when a date does not fit
    repo = init_bare(tmp_path / "far.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    tips = []
    for k, when in enumerate([1_600_000_000, 2**64 - 1, 2**63, 99_999_999_999_999_999_999, 1_600_000_060]):
        body = f"tree {tree}\nauthor A <a@x> {when} +0000\ncommitter A <a@x> {when} +0000\n\nroot {k}\n"
        root = hash_literally(repo, "commit", body.encode())
        child = f"tree {tree}\nparent {root}\nauthor A <a@x> 1 +0000\ncommitter A <a@x> 1 +0000\n\nchild {k}\n"
        tips.append(hash_literally(repo, "commit", child.encode()))
    for k, tip in enumerate(tips):
        git("update-ref", f"refs/heads/b{k}", tip, cwd=repo)
    git("repack", "-adq", cwd=repo)
    compiled, calls = walked_ids(repo, door, compiled=True)
    python, _ = walked_ids(repo, door, compiled=False)
    assert compiled == python == rev_list(repo)
    assert calls.chunks > 0


def test_a_traced_walk_never_takes_the_compiled_loop(packed_repo, monkeypatch, door):
    tracer = Tracer()
    events: list[object] = []
    tracer.subscribe(events.append)
    asks = 0
    walk_packs = CommitHeaderReader.walk_packs

    def counted(reader):
        nonlocal asks
        asks += 1
        return walk_packs(reader)

    monkeypatch.setattr(CommitHeaderReader, "walk_packs", counted)
    ids, calls = walked_ids(packed_repo, door, compiled=True, tracer=tracer)
    assert ids == rev_list(packed_repo)
    assert calls.chunks == 0 and calls.tips == 0
    assert len(events) > len(ids)  # every commit's lookup shows
    # the reader is asked again after a batch of commits, not at each one
    assert 2 <= asks <= 2 + len(ids) // 16


def test_a_repository_copy_with_loose_commits_walks_alike(packed_repo, tmp_path, door):
    # commits the packs do not hold are read by the Python fallback, each ending a chunk
    repo = copy_repo(packed_repo, tmp_path / "loose-too.git")
    tree = git_text("mktree", cwd=repo, input="").strip()
    parent = git_text("rev-parse", "HEAD", cwd=repo).strip()
    for k in range(5):
        body = f"tree {tree}\nparent {parent}\nauthor A <a@x> {2_000_000_000 + k} +0000\ncommitter A <a@x> {2_000_000_000 + k} +0000\n\nl{k}\n"
        parent = hash_literally(repo, "commit", body.encode())
    git("update-ref", "refs/heads/loose-top", parent, cwd=repo)
    compiled, calls = walked_ids(repo, door, compiled=True)
    python, _ = walked_ids(repo, door, compiled=False)
    assert compiled == python == rev_list(repo)
    assert calls.chunks >= 5


@pytest.fixture(scope="module")
def generation_v1_graph_repo(tmp_path_factory):
    """A one-file commit-graph without corrected dates (no GDA2)."""
    repo = init_bare(tmp_path_factory.mktemp("v1") / "v1-graph.git")
    import_history(repo, 40, seed=21)
    git("-c", "commitGraph.generationVersion=1", "commit-graph", "write", "--reachable", cwd=repo)
    return repo


@pytest.mark.parametrize(
    "fixture",
    [
        "graph_repo",  # octopus merges (EDGE), an offset in GDO2, a 34-bit time
        "graph_sha256_repo",
        "generation_v1_graph_repo",
        "split_graph_repo",  # three layers, an octopus in the middle one
        "mixed_generation_repo",  # two layers, GDA2 in the top one only
    ],
)
@pytest.mark.parametrize("first_parent", [False, True])
def test_the_compiled_loop_reads_a_commit_graph_as_the_python_loop(request, fixture, first_parent, door):
    repo = request.getfixturevalue(fixture)
    expected = rev_list(repo, *(["--first-parent"] if first_parent else []))
    compiled_reads: list[int] = []
    python_reads: list[int] = []
    records: list[list] = []
    compiled, calls = walked_ids(
        repo, door, compiled=True, first_parent=first_parent, graph_reads=compiled_reads, records=records
    )
    python, _ = walked_ids(
        repo, door, compiled=False, first_parent=first_parent, graph_reads=python_reads, records=records
    )
    assert compiled == python == expected
    assert records[0] == records[1]  # trees, parents (an octopus's all) and times alike
    assert compiled_reads == python_reads and python_reads[0] > 0  # the graph answered, as often on both
    assert calls.positions > 0  # one file or a chain of layers: the compiled loop over positions reads it


def chunk_offsets(data: bytes) -> dict[bytes, int]:
    """A commit-graph file's chunk table (gitformat-chunk), with the end mark."""
    return {
        bytes(data[8 + 12 * k : 12 + 12 * k]): int.from_bytes(data[12 + 12 * k : 20 + 12 * k], "big")
        for k in range(data[6] + 1)
    }


@pytest.mark.parametrize(
    "fixture, parent",
    [
        ("graph_repo", lambda commits: 0x0FFFFFFF),  # past the whole graph
        ("split_graph_repo", lambda commits: commits - 1),  # the base layer naming a commit of the top one
    ],
)
def test_a_damaged_graph_is_dropped_alike_by_both_loops(request, fixture, parent, tmp_path):
    # a parent position past what the commit's layer sees: the compiled loop
    # doubts, the reference drops the graph with a warning and reads the packs
    repo = copy_repo(request.getfixturevalue(fixture), tmp_path / "bad-graph.git")
    info = repo / "objects" / "info"
    files = [info / "commit-graph"] if (info / "commit-graph").exists() else sorted(info.glob("commit-graphs/*.graph"))
    commits = len(rev_list(repo))
    base = next(f for f in files if f.read_bytes()[7] == 0)  # the layer with no base graphs
    data = bytearray(base.read_bytes())
    cdat = chunk_offsets(data)[b"CDAT"]
    data[cdat + 20 : cdat + 24] = parent(commits).to_bytes(4, "big")  # its first commit's first parent
    base.chmod(0o644)
    base.write_bytes(bytes(data))
    compiled = packscope_in(repo, "log", "--all", "--format=%H")
    python = packscope_in(repo, "log", "--all", "--format=%H", env={"PACKSCOPE_PURE": "1"})
    assert compiled.stdout == python.stdout == git("-c", "core.commitGraph=false", "rev-list", "--all", cwd=repo)
    assert compiled.stderr == python.stderr
    assert b"commit-graph not used" in compiled.stderr


def graph_regions(data: bytes) -> list[tuple[int, int]]:
    """Where a commit-graph file's OIDL, CDAT and GDA2 chunks lie (GDA2 when
    it has one), from its chunk table (gitformat-chunk)."""
    table = chunk_offsets(data)
    starts = sorted(table.values())
    return [(table[c], starts[starts.index(table[c]) + 1]) for c in (b"OIDL", b"CDAT", b"GDA2") if c in table]


@pytest.mark.parametrize("fixture", ["graph_repo", "split_graph_repo"])
def test_mutated_commit_graphs_walk_alike_on_both_loops(request, fixture, tmp_path, door):
    # The compiled graph read answers only where the reference would answer
    # the same, whatever the graph's bytes: flipped bytes and boundary values
    # in the ids, the commit data and the generation offsets of each file of
    # the graph; both loops give the same records, or the same error.
    import random

    repo = copy_repo(request.getfixturevalue(fixture), tmp_path / "fuzzed.git")
    info = repo / "objects" / "info"
    files = [info / "commit-graph"] if (info / "commit-graph").exists() else sorted(info.glob("commit-graphs/*.graph"))
    originals = {path: path.read_bytes() for path in files}
    rnd = random.Random(2026)
    unmutated: list[list] = []
    walked_ids(repo, door, compiled=False, records=unmutated)
    changed = 0
    for case in range(60):
        path = files[case % len(files)]
        for other, data in originals.items():
            other.chmod(0o644)
            other.write_bytes(data)
        data = bytearray(originals[path])
        regions = graph_regions(data)
        lo, hi = regions[case % len(regions)]
        for _ in range(1 + case % 4):
            at = rnd.randrange(lo, hi - 4)
            if rnd.random() < 0.5:
                data[at] ^= 1 << rnd.randrange(8)
            else:
                data[at : at + 4] = rnd.choice([0, 1, 0x7FFFFFFF, 0x70000000, 0x80000000, 0xFFFFFFFF]).to_bytes(
                    4, "big"
                )
        path.write_bytes(bytes(data))
        results = []
        for compiled in (True, False):
            records: list[list] = []
            try:
                walked_ids(repo, door, compiled=compiled, records=records)
                results.append(("ok", records[0]))
            except PackscopeError as e:
                results.append(("error", type(e).__name__, str(e)))
        assert results[0] == results[1], f"case {case}: {path.name}"
        changed += results[0] != ("ok", unmutated[0])
    assert changed >= 20  # most mutations change what the walk answers
