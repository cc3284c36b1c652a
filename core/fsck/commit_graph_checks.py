"""fsck's commit-graph phase: the graph checked on its own and against the
commit objects, as ``git commit-graph verify`` (which ``git fsck`` runs)
checks it.

Per layer: the checksum, ids sorted and inside their fanout buckets.  Per
commit: parent positions inside the layers the commit can see, Bloom index
bounds, generation numbers above the parents', and — given the objects —
tree, parents and commit date as the commit object states them.  The date
is compared whole, as git compares it: the graph keeps 34 bits, so a
commit dated at or beyond 2^34 seconds, or before the epoch (git reads
``-5`` as 2^64 - 5), never agrees with its graph entry, and git says so in
the words :func:`date_message` repeats.

A split chain that breaks partway keeps its valid base layers
(packscope.core.history.commit_graph); the layers it drops are warnings,
as git's "unable to find all commit-graph files" is, except a layer git
itself would have accepted and then failed on (more base graphs than the
chain has below it; a fanout that goes down; a header counting base graphs
the BASE chunk does not hold; a trailer that matches neither the layer's
name nor its bytes): an error, bit 16, as git's verify fails.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from packscope.core.errors import BadCommitGraphError, CorruptObjectError, MissingObjectError, PackscopeError
from packscope.core.fsck.findings import ERROR_COMMIT_GRAPH, WARNING, Finding, Ticker, from_error
from packscope.core.fsck.objects import ObjectTable, Unreadable
from packscope.core.history.commit_graph import DAMAGED_LAYER, CommitGraph, CommitRecord
from packscope.core.objects import commit_header_fast
from packscope.core.oid import ObjectFormat

ReadObject = Callable[[bytes], "tuple[str, bytes]"]

# chain problems git answers with an error (its verify fails) rather than a warning
FAILING_CHAIN_KINDS = frozenset({"commit-graph-chain-base", DAMAGED_LAYER})


def date_message(oid: bytes, graph_date: int, object_date: int) -> str:
    """git 2.39's words for a commit date the graph does not hold."""
    return f"commit date for commit {oid.hex()} in commit-graph is {graph_date} != {object_date}"


def commit_graph_problems(
    graph: CommitGraph, read_object: ReadObject | None = None, *, limit: int = 100, fmt: ObjectFormat | None = None
) -> list[PackscopeError]:
    """Every inconsistency found (up to ``limit``); empty when the graph is sound.

    ``read_object(oid) -> (type, data)`` adds the comparison with the commit
    objects themselves."""
    out: list[PackscopeError] = []

    def add(e: PackscopeError) -> bool:
        out.append(e)
        return len(out) >= limit

    for layer in graph.layers:
        if layer.computed_checksum() != layer.checksum:
            bad = layer.problem(
                "commit-graph checksum does not match its contents", layer.trailer_offset, "commit-graph-checksum"
            )
            if add(bad):
                return out
        prev = None
        for i in range(layer.num_commits):
            name = layer.name_at(i)
            if prev is not None and name <= prev:
                bad = layer.problem(
                    f"commit ids out of order at position {i}", layer.id_offset(i), "commit-graph-order"
                )
                if add(bad):
                    return out
            b = name[0]
            if not ((layer.fanout[b - 1] if b else 0) <= i < layer.fanout[b]):
                bad = layer.problem(
                    f"commit {name.hex()} at position {i} lies outside its fanout bucket",
                    layer.id_offset(i),
                    "commit-graph-fanout",
                )
                if add(bad):
                    return out
            prev = name
    fmt = fmt or (graph.layers[0].fmt if graph.layers else None)
    for pos in range(graph.num_commits):
        try:
            rec = graph.commit_at(pos)
            layer = graph.layer_of(pos)
            layer.bloom_bytes(pos - layer.commit_base)
        except BadCommitGraphError as e:
            if add(e):
                return out
            continue
        for p in rec.parent_positions:
            parent = graph.commit_at(p)
            if not rec.generation > parent.generation or not rec.topo_level > parent.topo_level:
                message = (
                    f"generation {rec.generation} (level {rec.topo_level}) is not above parent "
                    f"{parent.oid.hex()}'s {parent.generation} (level {parent.topo_level})"
                )
                if add(_at(graph, pos, message, "commit-graph-generation")):
                    return out
        if read_object is not None and fmt is not None:
            problem = _compare_with_object(rec, read_object, fmt)
            if problem is not None:
                message, kind = problem
                if add(_at(graph, pos, message, kind)):
                    return out
    return out


def _at(graph: CommitGraph, pos: int, message: str, kind: str) -> BadCommitGraphError:
    layer = graph.layer_of(pos)
    i = pos - layer.commit_base
    e = layer.problem(message, layer.record_offset(i), kind)
    e.oid = layer.name_at(i).hex()
    return e


def _compare_with_object(rec: CommitRecord, read_object: ReadObject, fmt: ObjectFormat) -> tuple[str, str] | None:
    """(why, kind) when the record disagrees with the commit object, or None."""
    try:
        kind, data = read_object(rec.oid)
    except PackscopeError as e:
        return f"the graph lists a commit the object store cannot read: {e.message}", "commit-graph-mismatch"
    if kind != "commit":
        return f"the graph lists a {kind}, not a commit", "commit-graph-mismatch"
    try:
        # git's own reading: its parse_commit_date, whatever the syntax checks say
        tree, parents, date = commit_header_fast(data, fmt, rec.oid)
    except CorruptObjectError:
        return "the commit object is malformed, so the graph cannot agree with it", "commit-graph-mismatch"
    if tree != rec.tree:
        return f"tree {rec.tree.hex()} in the graph, {tree.hex()} in the commit", "commit-graph-mismatch"
    if parents != rec.parents:
        return (
            f"parents {[p.hex() for p in rec.parents]} in the graph, {[p.hex() for p in parents]} in the commit",
            "commit-graph-mismatch",
        )
    if date != rec.commit_time:
        return date_message(rec.oid, rec.commit_time, date), "commit-graph-date"
    return None


def check_commit_graph(
    table: ObjectTable, objects_dir: str, ticker: Ticker, alternates: tuple[str, ...] = ()
) -> Iterator[Finding]:
    """The findings of the commit-graph phase."""
    dropped: list[BadCommitGraphError] = []
    try:
        graph = CommitGraph.open(objects_dir, table.fmt, alternates=alternates, problems=dropped)
    except BadCommitGraphError as e:
        yield from_error(e, "commit-graph", ERROR_COMMIT_GRAPH)
        return
    for drop in dropped:
        failing = drop.kind in FAILING_CHAIN_KINDS
        yield from_error(drop, "commit-graph", ERROR_COMMIT_GRAPH, severity="error" if failing else WARNING)
    if graph is None:
        return
    ticker.start("commit-graph", graph.num_commits)

    def read_object(oid: bytes) -> tuple[str, bytes]:
        ticker.tick()
        try:
            type_name, data, _ = table.read(oid)
        except Unreadable:
            raise MissingObjectError("no readable copy of the commit", oid=oid.hex()) from None
        return type_name, data

    try:
        problems = commit_graph_problems(graph, read_object, fmt=table.fmt)
    except BadCommitGraphError as e:
        problems = [e]
    finally:
        graph.close()
    for problem in problems:
        yield from_error(problem, "commit-graph", ERROR_COMMIT_GRAPH)
    ticker.finish()
