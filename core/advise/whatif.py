"""What-if: what a workload of object lookups would cost under another
layout, modeled from the indexes the store already reads.  Nothing is
written and git is not run.

The workload is a fixed sample of stored ids (seeded, drawn across every
index in proportion to its size) plus absent ids.  For each id, the model
replays the lookup as git does it — indexes in search order (the
multi-pack-index first, then the other packs newest first), in each a
binary search over the fanout bucket of the id's first byte, stopping at
the first index that holds it — and counts *probes* (names compared),
*pages* (distinct 4 KiB pages of the index touched: the fanout entry and
each probed name), *packs searched* (indexes consulted) and *rescans*
(git rereads the pack directory once after a miss, whatever the layout).

Current layouts are replayed on the real indexes.  A proposed index is one
that does not exist yet (one multi-pack-index over all packs, one pack, the
pack ``repack --geometric=2`` would write): its names are the union of the
packs' names, so an id's place in it is the sum of its places in each pack
(ids stored twice count twice; the model says so), and the binary search is
replayed over places alone, which decide every comparison.  The
commit-graph row models a walk's commit reads: without a graph each commit
is a lookup; with one, parents are positions in the graph and only the
record's page is read.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from packscope.core.errors import PackscopeError

if TYPE_CHECKING:
    from packscope.core.repo.session import Session

PAGE = 4096
SAMPLE = 2000
ABSENT = 200
SEED = 29


class Index(Protocol):
    @property
    def fanout(self) -> tuple[int, ...]: ...

    def name_at(self, i: int) -> bytes: ...

    def page_of(self, i: int) -> int: ...


class Cost(NamedTuple):
    probes_per_lookup: float
    pages_per_lookup: float
    packs_searched: float
    rescans: int

    def to_dict(self) -> dict[str, float | int]:
        return self._asdict()


class WhatIf(NamedTuple):
    layout: str  # "multi-pack-index", "one-pack", "geometric", "commit-graph"
    workload: str
    current: Cost
    proposed: Cost
    note: str

    def to_dict(self) -> dict[str, object]:
        return {
            "layout": self.layout,
            "workload": self.workload,
            "current": self.current.to_dict(),
            "proposed": self.proposed.to_dict(),
            "note": self.note,
        }


def _bucket(fanout: tuple[int, ...], first: int) -> tuple[int, int]:
    return (fanout[first - 1] if first else 0), fanout[first]


def search_real(index: Index, oid: bytes) -> tuple[int, int, int, bool]:
    """Replay git's binary search on a real index: (probes, pages, lower
    bound in the bucket, found)."""
    lo, hi = _bucket(index.fanout, oid[0])
    start = lo
    probes = 0
    pages = {-1 - oid[0] // 1024}  # the fanout entry's page (the table is 1 KiB: one page)
    while lo < hi:
        mid = (lo + hi) // 2
        probes += 1
        pages.add(index.page_of(mid))
        name = index.name_at(mid)
        if name == oid:
            return probes, len(pages), mid - start, True
        if name < oid:
            lo = mid + 1
        else:
            hi = mid
    return probes, len(pages), lo - start, False


def search_model(lo: int, hi: int, rank: int, found: bool, names_at: int, stride: int) -> tuple[int, int]:
    """The same search in an index that does not exist: the id's place
    ``rank`` in its bucket [lo, hi) decides each comparison."""
    target = lo + rank
    probes = 0
    pages = {-1}
    while lo < hi:
        mid = (lo + hi) // 2
        probes += 1
        pages.add((names_at + mid * stride) // PAGE)
        if found and mid == target:
            break
        if mid < target:
            lo = mid + 1
        else:
            hi = mid
    return probes, len(pages)


def workload_sample(session: Session) -> list[bytes]:
    """The seeded ids the what-if replays (present ones weighted by pack
    size, then absent ones): the same list for the same packs."""
    return _Model(session).sample()


class _Model:
    def __init__(self, session: Session) -> None:
        self.session = session
        store = session.store
        self.rawsz = session.fmt.rawsz
        self.midxs = list(store.midxs)
        for m in self.midxs:
            m.open()
        self.packs = []  # every pack's index, midx-covered included
        self.outside = []  # packs git searches one by one (not in a midx), in order
        # by name (the sample does not depend on the store's MRU order)
        for h in sorted(store.all_packs(), key=lambda h: h.files.base):
            try:
                h.index.map  # noqa: B018 - maps and parses the index
            except PackscopeError:
                continue
            self.packs.append(h)
            if not h.in_midx:
                self.outside.append(h)
        # git's order: local packs first, then the newest first
        self.outside.sort(key=lambda h: (not h.files.local, -h.files.mtime))

    def current_order(self) -> Sequence[Index]:
        return [*self.midxs, *(h.index for h in self.outside)]

    def sample(self) -> list[bytes]:
        rnd = random.Random(SEED)
        total = sum(h.index.num_objects for h in self.packs)
        ids: list[bytes] = []
        if total:
            weights = [h.index.num_objects for h in self.packs]
            for h in rnd.choices(self.packs, weights=weights, k=SAMPLE):
                ids.append(h.index.name_at(rnd.randrange(h.index.num_objects)))
        ids += [rnd.randbytes(self.rawsz) for _ in range(ABSENT)]
        return ids

    def replay_current(self, ids: list[bytes], order: Sequence[Index]) -> Cost:
        probes = pages = searched = misses = 0
        for oid in ids:
            hit = False
            for index in order:
                p, g, _, found = search_real(index, oid)
                probes += p
                pages += g
                searched += 1
                if found:
                    hit = True
                    break
            misses += not hit
        n = max(1, len(ids))
        return Cost(probes / n, pages / n, searched / n, misses)

    def places(self, oid: bytes, indexes: Sequence[Index]) -> tuple[int, bool]:
        """(the id's place in the union of ``indexes``' buckets, held by one)."""
        rank = 0
        found = False
        for index in indexes:
            _, _, r, f = search_real(index, oid)
            rank += r
            found = found or f
        return rank, found

    def merged(self, indexes: Sequence[Index]) -> tuple[tuple[int, ...], int]:
        """The fanout of the union, and where its names would start (a pack
        index's layout: 8-byte header, 1 KiB fanout)."""
        fan = [0] * 256
        for index in indexes:
            for i, v in enumerate(index.fanout):
                fan[i] += v
        return tuple(fan), 8 + 1024

    def replay_layout(self, ids: list[bytes], first: Sequence[Index] | None, rest: Sequence[Index]) -> Cost:
        """``first`` merged into one index searched first (or nothing merged),
        then ``rest`` searched one by one as they are."""
        probes = pages = searched = misses = 0
        fan, names_at = self.merged(first) if first else ((), 0)
        for oid in ids:
            hit = False
            if first:
                rank, found = self.places(oid, first)
                lo, hi = _bucket(fan, oid[0])
                p, g = search_model(lo, hi, rank, found, names_at, self.rawsz)
                probes += p
                pages += g
                searched += 1
                hit = found
            if not hit:
                for index in rest:
                    p, g, _, found = search_real(index, oid)
                    probes += p
                    pages += g
                    searched += 1
                    if found:
                        hit = True
                        break
            misses += not hit
        n = max(1, len(ids))
        return Cost(probes / n, pages / n, searched / n, misses)


def whatif(session: Session) -> list[WhatIf]:
    """current beside proposed, for each layout."""
    from packscope.core.advise.maintenance import GEOMETRIC_FACTOR, geometric_split

    model = _Model(session)
    ids = model.sample()
    workload = f"lookups: {SAMPLE} stored ids sampled across the indexes, {ABSENT} absent ids"
    current = model.replay_current(ids, model.current_order())
    all_packs: list[Index] = [h.index for h in model.packs]
    out = [
        WhatIf(
            "multi-pack-index",
            workload,
            current,
            model.replay_layout(ids, all_packs, []),
            "one multi-pack-index over every pack (git multi-pack-index write)",
        ),
        WhatIf(
            "one-pack",
            workload,
            current,
            model.replay_layout(ids, all_packs, []),
            "every object in one pack (git repack -a -d): one .idx, the same search as one midx",
        ),
    ]
    local = [h for h in model.packs if h.files.local and not h.files.keep]
    weighed = sorted(local, key=lambda h: h.index.num_objects)
    split = geometric_split([h.index.num_objects for h in weighed], GEOMETRIC_FACTOR)
    rolled = [h.index for h in weighed[:split]]
    kept = [h for h in model.packs if h.index not in rolled]
    kept.sort(key=lambda h: (not h.files.local, -h.files.mtime))
    out.append(
        WhatIf(
            "geometric",
            workload,
            current,
            model.replay_layout(ids, rolled or None, [h.index for h in kept]),
            f"repack --geometric={GEOMETRIC_FACTOR}: {split} packs rolled into one, searched first (newest);"
            f" {len(kept)} left as they are, without a multi-pack-index",
        )
    )
    out.append(_commit_graph(session, model, current))
    return out


def _commit_graph(session: Session, model: _Model, lookups: Cost) -> WhatIf:
    """A walk's commit reads: a lookup each without a graph; with one, a
    record in the graph (parents are positions: no search)."""
    from packscope.core.history.commit_graph import CommitGraph

    record = session.fmt.rawsz + 16
    graph_cost = Cost(0.0, record / PAGE, 0.0, 0)
    try:
        graph = CommitGraph.open(str(session.repo.objects_dir), session.fmt)
    except PackscopeError:
        graph = None
    has_bloom = bool(graph is not None and any(layer.has_bloom for layer in graph.layers))
    present = Cost(lookups.probes_per_lookup, lookups.pages_per_lookup, lookups.packs_searched, 0)
    current = graph_cost if graph is not None else present
    note = "commit-graph write --reachable --changed-paths: parents as positions"
    if graph is not None:
        note += "; a graph exists already" + (
            "" if has_bloom else " (without Bloom filters: log -- PATH diffs every tree)"
        )
    return WhatIf("commit-graph", "walk: one commit read per commit (log --all)", current, graph_cost, note)
