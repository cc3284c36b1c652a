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
name nor its bytes): an error, bit 16, as git's verify fails.  Which
layers git accepts is git's own, looser reading (:func:`git_chain_layers`:
a chunk table it pairs, the three chunks it needs, a BASE chunk naming the
layers below): a layer with a chunk offset moved, which packscope's
reading refuses, git loads and fails to verify (16); a layer git leaves
out (its BASE chunk's id damaged) is only a warning, whatever packscope
finds in it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from packscope.core.errors import BadCommitGraphError, CorruptObjectError, MissingObjectError, PackscopeError
from packscope.core.fsck.findings import ERROR_COMMIT_GRAPH, WARNING, Finding, Ticker, from_error
from packscope.core.fsck.objects import ObjectTable, Unreadable
from packscope.core.history.commit_graph import DAMAGED_LAYER, CommitGraph, CommitRecord
from packscope.core.objects import commit_header_fast
from packscope.core.oid import ObjectFormat, is_hex
from packscope.core.store.chunk_file import HASH_VERSIONS, ROW_SIZE, git_chunk_table

ReadObject = Callable[[bytes], "tuple[str, bytes]"]

GRAPH_HEADER = 8  # signature, version, hash version, chunk count, base graphs

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


def _git_parses_layer(data: bytes, fmt: ObjectFormat) -> dict[bytes, tuple[int, int]] | None:
    """The chunks of a commit-graph file git 2.39 loads (load_commit_graph_one,
    parse_commit_graph), or None where it reports the file and goes on
    without it.  Looser than packscope's GraphLayer: no chunk sizes, no
    fanout, no first chunk after the table — git checks those in verify."""
    rawsz = fmt.rawsz
    if len(data) < GRAPH_HEADER + 4 * ROW_SIZE + 1024 + rawsz:  # "commit-graph file is too small"
        return None
    if data[:4] != b"CGPH" or data[4] != 1 or data[5] != HASH_VERSIONS[fmt.name]:
        return None
    count = data[6]
    if len(data) < GRAPH_HEADER + (count + 1) * ROW_SIZE + 1024 + rawsz:
        return None
    chunks = git_chunk_table(data, GRAPH_HEADER, count, rawsz)
    if chunks is None or any(c not in chunks for c in (b"OIDF", b"OIDL", b"CDAT")):
        return None
    return chunks


def git_chain_layers(objects_dir: str, dirs: tuple[str, ...], fmt: ObjectFormat) -> dict[str, tuple[int, bool]]:
    """Each layer file of the split chain under ``objects_dir`` as git 2.39
    loads the chain (load_commit_graph_chain): path -> (its place in the
    chain, whether git loads it).  git stops at the first layer it cannot
    parse or that does not fit the layers below (a BASE chunk naming them,
    their trailers as the chain file names them), with a warning, and
    ``commit-graph verify`` (fsck's bit 16) checks only the layers it
    loaded.  Empty without a chain."""
    chain = os.path.join(objects_dir, "info", "commit-graphs", "commit-graph-chain")
    try:
        with open(chain, "rb") as f:
            lines = f.read().split(b"\n")
    except OSError:
        return {}
    out: dict[str, tuple[int, bool]] = {}
    hashes: list[bytes] = []  # the chain file's hashes of the layers so far
    trailers: list[bytes] = []  # the trailing hashes of the layers git loaded
    loading = True
    rawsz = fmt.rawsz
    for n, line in enumerate(x for x in lines if x):
        if len(line) != fmt.hexsz or not is_hex(line.decode("latin-1")):
            break  # "invalid commit-graph chain: line ... not a hash"
        loaded = False
        for d in dirs:  # the first object directory where the layer parses
            path = os.path.join(d, "info", "commit-graphs", f"graph-{line.decode()}.graph")
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            chunks = _git_parses_layer(data, fmt)
            if chunks is None:
                out[path] = (n, False)
                continue
            loaded = loading
            if loaded and n:
                base = chunks.get(b"BASE")
                loaded = base is not None and all(
                    trailers[k] == hashes[k] and data[base[0] + rawsz * k : base[0] + rawsz * (k + 1)] == hashes[k]
                    for k in range(n)
                )
            out[path] = (n, loaded)
            if loaded:
                trailers.append(data[len(data) - rawsz :])
            break
        loading = loaded
        hashes.append(bytes.fromhex(line.decode()))
    return out


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
    # A split chain: git verifies the layers it loads, by its looser reading,
    # and only those; damage in a layer it leaves out is a warning, damage in
    # one it loads (though packscope's reading drops it) an error.
    layers = (
        git_chain_layers(objects_dir, (objects_dir, *alternates), table.fmt) if graph is None or graph.is_chain else {}
    )

    def severity(e: PackscopeError, failing: bool) -> str:
        place = layers.get(e.path or "")
        if place is None:
            return "error" if failing else WARNING
        return "error" if place[1] and (failing or _damaged(e.path or "", table.fmt)) else WARNING

    for drop in dropped:
        yield from_error(
            drop, "commit-graph", ERROR_COMMIT_GRAPH, severity=severity(drop, drop.kind in FAILING_CHAIN_KINDS)
        )
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
        yield from_error(problem, "commit-graph", ERROR_COMMIT_GRAPH, severity=severity(problem, True))
    ticker.finish()


def _damaged(path: str, fmt: ObjectFormat) -> bool:
    """Whether the file's trailing hash is not the hash of its bytes."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return True
    h = fmt.new_hash()
    h.update(data[: len(data) - fmt.rawsz])
    return h.digest() != data[len(data) - fmt.rawsz :]
