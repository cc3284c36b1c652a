"""The default-order walk without paths or exclusions — every plain
``log`` and ``log --all`` — as a mixin of the walk (packscope.core.history.walk):
git's ``--all`` walk in date order with nothing to simplify, so each
commit is needed only while it waits in the queue.  The queue holds the
commit's facts themselves and a set of ids stands for the SEEN flag: no
node per commit, no flags.  The reads and their order are the full walk's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from heapq import heappop, heappush
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Protocol, cast

from packscope.core import native
from packscope.core.errors import CorruptObjectError
from packscope.core.history.walked import CommitFacts, CommitInfo, WalkedCommit, tuple_new
from packscope.core.objects import ObjectReader, commit_header_fast, parse_tag

if TYPE_CHECKING:
    from packscope.core.native_api import WalkGraph
    from packscope.core.oid import ObjectFormat

# The compiled forms of stream_plain's loop and of packed_tips' reads are
# ``walk_plain`` and ``commit_facts_many`` of core/native.py's backend
# (core/native_c/plain_walk.c).

# The loop over a commit-graph's positions, once every queued commit is in
# the graph, is the backend's graph_walk_enter / graph_walk_plain
# (core/native_c/graph_plain.c).

# A commit waiting in stream_plain's queue: (-date, insertion number, id, tree, parents).
_Entry = tuple[int, int, bytes, bytes, tuple[bytes, ...]]
# What _plain_runs hands out: a batch of walked commits, or (ids=True) their raw ids concatenated.
_Run = Sequence[WalkedCommit] | bytes


if TYPE_CHECKING:
    # Type-only: the host is checked against it by mypy, nothing of it runs.
    class PlainWalkHost(Protocol):
        """What PlainWalk's methods use of their host, the walk (core/history/walk.py _RevWalk): its methods are
        typed ``self: PlainWalkHost``, so the host is checked against this (a
        rename on either side fails mypy) instead of the mixin re-declaring it."""

        store: ObjectReader
        fmt: ObjectFormat
        commit_info: CommitInfo | None
        first_parent: bool
        declined: set[bytes]
        tag_data: dict[bytes, bytes]

        def parsed(self, oid: bytes) -> tuple[bytes, tuple[bytes, ...], int]: ...

        # and PlainWalk' own methods that call one another
        def packed_tips(self, tips: Sequence[tuple[bytes, bool]], facts: dict[bytes, _Entry]) -> None: ...
        def _count_graph_answers(self, n: int) -> None: ...
        def _keep(self, oid: bytes, got: CommitFacts, facts: dict[bytes, _Entry]) -> None: ...
        def tip_facts(self, oid: bytes, facts: dict[bytes, _Entry]) -> str: ...
        def peel_plain(self, oid: bytes, facts: dict[bytes, _Entry]) -> bytes | None: ...
        def plain_start(self, tips: Sequence[tuple[bytes, bool]]) -> tuple[list[_Entry], set[bytes]]: ...
        def stream_plain(self, queue: list[_Entry], seen: set[bytes]) -> Iterator[WalkedCommit]: ...
        def _plain_runs(self, queue: list[_Entry], seen: set[bytes], ids: bool) -> Iterator[_Run]: ...
        def read_facts(self, oid: bytes) -> CommitFacts: ...
        def _stream_positions(
            self,
            heap: bytearray,
            bits: bytearray,
            counter: int,
            graph: WalkGraph,
            edges: tuple[tuple[int, int], ...],
            hexsz: int,
            batch: int,
            ids: bool,
        ) -> Iterator[_Run]: ...


class PlainWalk:
    """``run_plain`` and its queue, mixed into the walk."""

    def run_plain(self: PlainWalkHost, tips: Sequence[tuple[bytes, bool]]) -> Iterator[WalkedCommit]:
        """:meth:`run` for the default order without paths or exclusions
        (never limited: it ends in :meth:`stream_plain`), keeping each
        commit's facts in a dict instead of a node: the same reads in the
        same order (every tip, then the tags peeled in argument order), and
        the same starts."""
        queue, seen = self.plain_start(tips)
        return self.stream_plain(queue, seen)

    def run_plain_ids(self: PlainWalkHost, tips: Sequence[tuple[bytes, bool]]) -> Iterator[bytes]:
        """:meth:`run_plain`'s commits' ids alone, in runs: each item the raw
        ids of one or more commits concatenated, in the walk's order (what
        ``log --format=%H`` prints).  Over a commit-graph's positions a run
        is one compiled call's commits, with no object made per commit."""
        queue, seen = self.plain_start(tips)
        return cast("Iterator[bytes]", self._plain_runs(queue, seen, True))

    def plain_start(self: PlainWalkHost, tips: Sequence[tuple[bytes, bool]]) -> tuple[list[_Entry], set[bytes]]:
        """The queue and the seen set :meth:`stream_plain` starts from."""
        facts: dict[bytes, _Entry] = {}  # (-date, 0, id, tree, parents) of each commit met
        self.packed_tips(tips, facts)
        typed = [(oid, "commit" if oid in facts else self.tip_facts(oid, facts)) for oid, _ in tips]
        start: list[_Entry] = []
        seen: set[bytes] = set()
        for oid, typ in typed:
            if typ == "tag":
                peeled = self.peel_plain(oid, facts)
                if peeled is None:
                    continue
                oid = peeled
            elif typ != "commit":
                continue  # trees and blobs have no history
            if oid not in seen:
                seen.add(oid)
                start.append(facts[oid])
        start.sort(key=itemgetter(0))  # by date, stably, like git's merge sort
        # numbered in that order: already a heap of (-date, number)
        queue = [(e[0], k, e[2], e[3], e[4]) for k, e in enumerate(start)]
        return queue, seen

    def packed_tips(self: PlainWalkHost, tips: Sequence[tuple[bytes, bool]], facts: dict[bytes, _Entry]) -> None:
        """Keep in ``facts`` what :meth:`tip_facts` would for the tips that the
        commit reader's compiled lines answer, read in one call (a walk of
        every ref has thousands of tips); the others are left to it."""
        compiled = native.backend
        walk_packs = getattr(self.commit_info, "walk_packs", None) if compiled is not None else None
        packs = walk_packs() if walk_packs is not None else None
        if packs is None or compiled is None:
            return
        tables, hexsz, prefix, graph = packs
        oids = list(dict.fromkeys(oid for oid, _ in tips))
        found, graph_answers = compiled.commit_facts_many(tables, graph, oids, hexsz, prefix)
        for oid, got in zip(oids, found, strict=True):
            if got is not None:
                self._keep(oid, got, facts)
        self._count_graph_answers(graph_answers)

    def _count_graph_answers(self: PlainWalkHost, n: int) -> None:
        count = getattr(self.commit_info, "count_graph_answers", None) if n else None
        if count is not None:  # (only a graph's hook passes a graph)
            count(n)

    def _keep(self: PlainWalkHost, oid: bytes, got: CommitFacts, facts: dict[bytes, _Entry]) -> None:
        parents = got[1]
        facts[oid] = (-got[2], 0, oid, got[0], parents if type(parents) is tuple else tuple(parents))

    def tip_facts(self: PlainWalkHost, oid: bytes, facts: dict[bytes, _Entry]) -> str:
        """:meth:`tip_type` keeping a commit's facts in ``facts``."""
        got = self.commit_info(oid) if self.commit_info is not None else None
        if got is None:
            self.declined.add(oid)
            typ, data = self.store.read(oid)
            if typ == "tag":
                self.tag_data[oid] = data  # peel_plain() needs it next
            if typ != "commit":
                return typ
            got = commit_header_fast(data, self.fmt, oid)
        self._keep(oid, got, facts)
        return "commit"

    def peel_plain(self: PlainWalkHost, oid: bytes, facts: dict[bytes, _Entry]) -> bytes | None:
        """:meth:`peel` of a tag that is not excluded: the commit it names
        (its facts in ``facts``), or None when it names a tree or a blob."""
        info = self.commit_info
        for _ in range(64):
            data = self.tag_data.pop(oid, None)
            if data is not None:
                typ = "tag"
            elif oid in facts:
                return oid  # a commit met already (a tip, or another tag's)
            else:
                # The hook answers commits only: a commit it knows needs no
                # whole read to learn its type (peel reads it whole, then
                # asks the hook: the same facts).
                got = info(oid) if info is not None and oid not in self.declined else None
                if got is not None:
                    self._keep(oid, got, facts)
                    return oid
                self.declined.add(oid)
                typ, data = self.store.read(oid)
            if typ == "tag":
                oid = parse_tag(data, self.fmt, oid).object
                continue
            if typ != "commit":
                return None
            self._keep(oid, commit_header_fast(data, self.fmt, oid), facts)
            return oid
        raise CorruptObjectError("tag chain too long (a loop?)", oid=oid.hex())

    def stream_plain(self: PlainWalkHost, queue: list[_Entry], seen: set[bytes]) -> Iterator[WalkedCommit]:
        """The unlimited walk without paths: :meth:`stream` with nothing to
        simplify, so each commit is needed only while it waits in the queue.
        The queue holds the commit's facts themselves and a set of ids stands
        for the SEEN flag: no node per commit, no flags (every commit is
        queued once, so shown once).  The order and the reads are stream's.

        The loop below runs once per commit of the history; when the commit
        reader can (``walk_packs``), the compiled loop runs it instead,
        reading with the reader's own compiled lines and calling
        :meth:`read_facts` for anything they leave: the same reads in the
        same order, from a few commits at first (a ``-n 1`` reads little
        more) to 1,024 at a time.

        The commits come in batches from :meth:`_plain_runs`, chained at C
        speed: no generator frame is resumed per commit."""
        return chain.from_iterable(cast("Iterator[Sequence[WalkedCommit]]", self._plain_runs(queue, seen, False)))

    def _plain_runs(self: PlainWalkHost, queue: list[_Entry], seen: set[bytes], ids: bool) -> Iterator[_Run]:
        """:meth:`stream_plain`'s loop, handing out batches of walked
        commits, or with ``ids`` their raw ids concatenated (``bytes``)."""
        info = self.commit_info
        first_parent = self.first_parent
        counter = len(queue)
        new = tuple_new
        walk_c = native.backend
        compiled = getattr(info, "walk_packs", None) if walk_c is not None else None
        on_graph = getattr(info, "walk_graph", None) if walk_c is not None else None
        batch = 16
        python_steps = 0  # commits this loop takes before the reader is asked again
        while queue:
            if python_steps == 0 and compiled is not None and walk_c is not None:
                packs = compiled()
                if packs is not None:
                    tables, hexsz, prefix, graph = packs
                    edges = on_graph() if on_graph is not None and graph is not None else None
                    if edges is not None and graph is not None:
                        heap, bits = bytearray(), bytearray()
                        if walk_c.graph_walk_enter(queue, seen, graph, heap, bits, hexsz):
                            yield from self._stream_positions(heap, bits, counter, graph, edges, hexsz, batch, ids)
                            return
                        on_graph = None  # not every queued commit is in the graph: at the next call
                    done = walk_c.walk_plain(
                        queue,
                        seen,
                        counter,
                        tables,
                        graph,
                        self.read_facts,
                        first_parent,
                        WalkedCommit,
                        hexsz,
                        prefix,
                        batch,
                    )
                    if done is not None:
                        walked, counter, error, graph_answers = done
                        self._count_graph_answers(graph_answers)
                        if walked:
                            yield b"".join([w[0] for w in walked]) if ids else walked
                        if error is not None:
                            raise error
                        batch = min(2 * batch, 1024)
                        on_graph = getattr(info, "walk_graph", None)
                        continue
                    compiled = None  # a queue it does not take: this loop from here on
                # (traced, or packs it cannot map): asking costs a pass over the packs
                python_steps = batch
            python_steps = max(python_steps - 1, 0)
            date, _, oid, tree, parents = heappop(queue)
            for p in parents:
                if p not in seen:
                    seen.add(p)
                    got = info(p) if info is not None else None
                    if got is None:
                        got = self.parsed(p)
                    grand = got[1]
                    heappush(queue, (-got[2], counter, p, got[0], grand if type(grand) is tuple else tuple(grand)))
                    counter += 1
                if first_parent:
                    break
            yield oid if ids else (new(WalkedCommit, (oid, tree, parents, -date)),)

    def _stream_positions(
        self: PlainWalkHost,
        heap: bytearray,
        bits: bytearray,
        counter: int,
        graph: WalkGraph,
        edges: tuple[tuple[int, int], ...],
        hexsz: int,
        batch: int,
        ids: bool,
    ) -> Iterator[_Run]:
        """The rest of :meth:`_plain_runs` once every queued commit is in
        the commit-graph (and so is all that follows): the compiled loop over
        graph positions (``heap``: the queue's records, ``bits``: the commits
        met), the same pops, numbers and records as the loop above; with
        ``ids``, the same commits' ids alone (``graph_walk_ids``)."""
        b = native.backend
        assert b is not None  # (the caller entered the loop through it)
        first_parent = self.first_parent
        while heap:
            run: _Run
            if ids:
                run, counter, graph_answers = b.graph_walk_ids(
                    heap, bits, counter, graph, edges, first_parent, hexsz, batch
                )
            else:
                run, counter, graph_answers = b.graph_walk_plain(
                    heap, bits, counter, graph, edges, first_parent, WalkedCommit, hexsz, batch
                )
            self._count_graph_answers(graph_answers)
            yield run
            batch = min(2 * batch, 1024)

    def read_facts(self: PlainWalkHost, oid: bytes) -> CommitFacts:
        """A commit's facts as the loop of :meth:`stream_plain` reads them:
        the hook's answer, else the walk's own read."""
        info = self.commit_info
        got = info(oid) if info is not None else None
        return got if got is not None else self.parsed(oid)
