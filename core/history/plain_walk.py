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
from operator import itemgetter
from typing import TYPE_CHECKING

from packscope.core.errors import CorruptObjectError
from packscope.core.history.walked import CommitFacts, CommitInfo, WalkedCommit, tuple_new
from packscope.core.objects import ObjectReader, commit_header_fast, parse_tag

if TYPE_CHECKING:
    from packscope.core.oid import ObjectFormat

# A commit waiting in stream_plain's queue: (-date, insertion number, id, tree, parents).
_Entry = tuple[int, int, bytes, bytes, tuple[bytes, ...]]


class PlainWalk:
    """``run_plain`` and its queue, mixed into the walk."""

    if TYPE_CHECKING:  # what the walk provides
        store: ObjectReader
        fmt: ObjectFormat
        commit_info: CommitInfo | None
        first_parent: bool
        declined: set[bytes]
        tag_data: dict[bytes, bytes]

        def parsed(self, oid: bytes) -> tuple[bytes, tuple[bytes, ...], int]: ...

    def run_plain(self, tips: Sequence[tuple[bytes, bool]]) -> Iterator[WalkedCommit]:
        """:meth:`run` for the default order without paths or exclusions
        (never limited: it ends in :meth:`stream_plain`), keeping each
        commit's facts in a dict instead of a node: the same reads in the
        same order (every tip, then the tags peeled in argument order), and
        the same starts."""
        facts: dict[bytes, _Entry] = {}  # (-date, 0, id, tree, parents) of each commit met
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
        return self.stream_plain(queue, seen)

    def _keep(self, oid: bytes, got: CommitFacts, facts: dict[bytes, _Entry]) -> None:
        parents = got[1]
        facts[oid] = (-got[2], 0, oid, got[0], parents if type(parents) is tuple else tuple(parents))

    def tip_facts(self, oid: bytes, facts: dict[bytes, _Entry]) -> str:
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

    def peel_plain(self, oid: bytes, facts: dict[bytes, _Entry]) -> bytes | None:
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

    def stream_plain(self, queue: list[_Entry], seen: set[bytes]) -> Iterator[WalkedCommit]:
        """The unlimited walk without paths: :meth:`stream` with nothing to
        simplify, so each commit is needed only while it waits in the queue.
        The queue holds the commit's facts themselves and a set of ids stands
        for the SEEN flag: no node per commit, no flags (every commit is
        queued once, so shown once).  This loop runs once per commit of the
        history; the order and the reads are stream's."""
        info = self.commit_info
        first_parent = self.first_parent
        counter = len(queue)
        new = tuple_new
        while queue:
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
            yield new(WalkedCommit, (oid, tree, parents, -date))
