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

Loose objects are part of the workload in proportion to their number: git
looks for an object in every pack index first, then reads the loose file
(a directory read: one ``stat``/``open`` in objects/xx per object
directory); an absent id costs that loose check in every layout.  One pack
and the geometric roll-up pack the loose objects (``repack -a -d``,
``--geometric`` packs ``--unpacked``), so their lookups become searches in
the new index; a multi-pack-index leaves them loose.  ``loose_reads`` is
the directory reads per lookup.

The workload is the built-in sample, or the ids of a recorded ``packscope
lookup --json`` trace (``ids=``).  The ``log -- PATH`` row is a walk, not a
lookup sample: see packscope.core.advise.whatif_walk.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple, Protocol

from packscope.core.advise.whatif_walk import WalkReads
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
    loose_reads: float = 0.0  # loose-object directory reads per lookup

    def to_dict(self) -> dict[str, float | int]:
        return self._asdict()


class WhatIf(NamedTuple):
    layout: str  # "multi-pack-index", "one-pack", "geometric", "commit-graph"
    workload: str
    current: Cost
    proposed: Cost
    note: str
    ids: Sequence[bytes] = ()  # the workload's object ids (for the Lab; not in the document)
    walk_current: WalkReads | None = None  # the log -- PATH row's walk reads
    walk_proposed: WalkReads | None = None
    kind: str = "lookups"  # "lookups", "trace" or "walk"

    def to_dict(self) -> dict[str, object]:
        current: dict[str, object] = dict(self.current.to_dict())
        proposed: dict[str, object] = dict(self.proposed.to_dict())
        if self.walk_current is not None and self.walk_proposed is not None:
            current.update(self.walk_current.to_dict())
            proposed.update(self.walk_proposed.to_dict())
        return {
            "layout": self.layout,
            "workload": self.workload,
            "current": current,
            "proposed": proposed,
            "note": self.note,
            "kind": self.kind,
        }


class LooseIndex:
    """The loose objects as an index would hold them (sorted, with a
    fanout): what they become in a pack that takes them in."""

    def __init__(self, ids: Sequence[bytes], rawsz: int) -> None:
        self.names = sorted(ids)
        fan = [0] * 256
        for oid in self.names:
            fan[oid[0]] += 1
        total = 0
        for i in range(256):
            total += fan[i]
            fan[i] = total
        self.fanout = tuple(fan)
        self.rawsz = rawsz
        self.num_objects = len(self.names)

    def name_at(self, i: int) -> bytes:
        return self.names[i]

    def page_of(self, i: int) -> int:
        return (8 + 1024 + i * self.rawsz) // PAGE


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
        from packscope.core.store.loose import count_loose_files

        self.loose = LooseIndex(count_loose_files(str(session.repo.objects_dir), session.fmt).ids, self.rawsz)
        self.loose_set = frozenset(self.loose.names)
        # git checks the loose file in each object directory (alternates too) before it gives up
        self.object_dirs = max(1, len(getattr(store, "object_dirs", None) or [store.objects_dir]))

    def current_order(self) -> Sequence[Index]:
        return [*self.midxs, *(h.index for h in self.outside)]

    def sample(self) -> list[bytes]:
        """SAMPLE stored ids, drawn across the indexes (and the loose
        objects) in proportion to their sizes, then ABSENT absent ids."""
        rnd = random.Random(SEED)
        held: list[Index] = [h.index for h in self.packs]
        weights = [h.index.num_objects for h in self.packs]
        if self.loose.num_objects:
            held.append(self.loose)
            weights.append(self.loose.num_objects)
        ids: list[bytes] = []
        if sum(weights):
            for index, n in rnd.choices(list(zip(held, weights, strict=True)), weights=weights, k=SAMPLE):
                ids.append(index.name_at(rnd.randrange(n)))
        ids += [rnd.randbytes(self.rawsz) for _ in range(ABSENT)]
        return ids

    def replay_current(self, ids: Sequence[bytes], order: Sequence[Index]) -> Cost:
        probes = pages = searched = misses = loose = 0
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
            if not hit:
                hit = oid in self.loose_set
                loose += 1 if hit else self.object_dirs
            misses += not hit
        n = max(1, len(ids))
        return Cost(probes / n, pages / n, searched / n, misses, loose / n)

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

    def replay_layout(
        self,
        ids: Sequence[bytes],
        first: Sequence[Index] | None,
        rest: Sequence[Index],
        *,
        packs_loose: LooseIndex | None = None,
    ) -> Cost:
        """``first`` merged into one index searched first (or nothing merged),
        then ``rest`` searched one by one as they are; ``packs_loose``: the
        loose objects the merged index takes in (the others stay loose)."""
        if packs_loose is not None and packs_loose.num_objects:
            first = [*(first or ()), packs_loose]
        probes = pages = searched = misses = loose = 0
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
            if not hit:
                hit = oid in self.loose_set  # (not taken in: those were found above)
                loose += 1 if hit else self.object_dirs
            misses += not hit
        n = max(1, len(ids))
        return Cost(probes / n, pages / n, searched / n, misses, loose / n)


def whatif(
    session: Session,
    *,
    ids: Sequence[bytes] | None = None,
    workload: str | None = None,
    log_path: str | None = None,
    cancel: Callable[[], bool] | None = None,
    unreachable_loose: frozenset[bytes] = frozenset(),
) -> list[WhatIf]:
    """current beside proposed, for each layout.  ``ids``: the lookups of a
    recorded trace instead of the built-in sample (``workload`` says what
    they are); ``log_path``: add the ``log -- PATH`` walk row;
    ``unreachable_loose``: loose objects ``repack -a -d`` leaves loose
    (nothing reaches them; ``--geometric`` packs them too)."""
    from packscope.core.advise.maintenance import GEOMETRIC_FACTOR, geometric_split

    model = _Model(session)
    kind = "lookups"
    if ids is None:
        ids = model.sample()
        loose = f" and the loose objects ({model.loose.num_objects:,} in the store)" if model.loose.num_objects else ""
        workload = f"lookups: {SAMPLE:,} stored ids sampled across the indexes{loose}, {ABSENT} absent ids"
    else:
        kind = "trace"
        workload = workload or f"lookups: {len(ids):,} recorded ids"
    current = model.replay_current(ids, model.current_order())
    all_packs: list[Index] = [h.index for h in model.packs]
    reachable_loose = (
        LooseIndex([o for o in model.loose.names if o not in unreachable_loose], model.rawsz)
        if unreachable_loose
        else model.loose
    )
    loose_note = f"; the {model.loose.num_objects:,} loose objects stay loose" if model.loose.num_objects else ""
    out = [
        WhatIf(
            "multi-pack-index",
            workload,
            current,
            model.replay_layout(ids, all_packs, []),
            "one multi-pack-index over every pack (git multi-pack-index write)" + loose_note,
            ids,
            kind=kind,
        ),
        WhatIf(
            "one-pack",
            workload,
            current,
            model.replay_layout(ids, all_packs, [], packs_loose=reachable_loose),
            "every object in one pack (git repack -a -d): one .idx, the same search as one midx"
            + (
                f"; {reachable_loose.num_objects:,} reachable loose objects packed too"
                f" ({model.loose.num_objects - reachable_loose.num_objects:,} unreachable stay loose)"
                if model.loose.num_objects
                else ""
            ),
            ids,
            kind=kind,
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
            model.replay_layout(ids, rolled or None, [h.index for h in kept], packs_loose=model.loose),
            f"repack --geometric={GEOMETRIC_FACTOR}: {_count(split, 'pack')}"
            + (f" and {model.loose.num_objects:,} loose objects" if model.loose.num_objects else "")
            + f" rolled into one, searched first (newest); {_count(len(kept), 'pack')} left as"
            " they are, without a multi-pack-index",
            ids,
            kind=kind,
        )
    )
    walked = _log_path(session, model, log_path, cancel) if log_path else None
    out.append(_commit_graph(session, model, current, walked[1] if walked else None))
    if walked is not None:
        out.append(walked[0])
    return out


def _spread(ids: Sequence[bytes], n: int = SAMPLE) -> Sequence[bytes]:
    """At most ``n`` of ``ids``, evenly spaced: a walk's per-lookup costs
    are averages, which a few thousand of its lookups settle."""
    if len(ids) <= n:
        return ids
    step = len(ids) / n
    return [ids[int(i * step)] for i in range(n)]


def _count(n: int, word: str) -> str:
    from packscope.core.advise.wording import count

    return count(n, word)


def _log_path(
    session: Session, model: _Model, path: str, cancel: Callable[[], bool] | None
) -> tuple[WhatIf, list[bytes]] | None:
    """The ``log -- PATH`` row: the walk as it is beside the walk with a
    commit-graph and Bloom filters; and the commits it met."""
    from packscope.core.advise.whatif_walk import log_path_walk

    read: list[bytes] = []
    commits: list[bytes] = []
    try:
        now, then = log_path_walk(session, path, cancel=cancel, keep=read, commits=commits)
    except PackscopeError as e:
        if e.kind == "cancelled":
            raise
        return None
    lookups = model.replay_current(_spread(read), model.current_order()) if read else Cost(0.0, 0.0, 0.0, 0)
    note = (
        "commit-graph write --reachable --changed-paths: commits from graph records, and a filter"
        " per commit that settles unchanged first-parent comparisons (modeled as exact; git's also"
        " lets about 1 unchanged commit in 100 through)"
    )
    if now.bloom_queries:
        note = "the repository's own commit-graph and Bloom filters; " + note
    row = WhatIf(
        "commit-graph",
        f"walk: log -- {path} from HEAD ({_count(now.commits_shown, 'commit')} shown)",
        lookups,
        lookups,
        note,
        read,
        now,
        then,
        "walk",
    )
    return row, commits


def _commit_graph(session: Session, model: _Model, lookups: Cost, commits: Sequence[bytes] | None) -> WhatIf:
    """A walk's commit reads: a lookup each without a graph; with one, a
    record in the graph (parents are positions: no search).  ``commits``:
    the commits a walk met (their lookups replace the sample's)."""
    from packscope.core.history.commit_graph import CommitGraph

    record = session.fmt.rawsz + 16
    graph_cost = Cost(0.0, record / PAGE, 0.0, 0)
    try:
        graph = CommitGraph.open(str(session.repo.objects_dir), session.fmt)
    except PackscopeError:
        graph = None
    has_bloom = bool(graph is not None and any(layer.has_bloom for layer in graph.layers))
    if commits:
        lookups = model.replay_current(_spread(commits), model.current_order())
    present = Cost(lookups.probes_per_lookup, lookups.pages_per_lookup, lookups.packs_searched, 0, lookups.loose_reads)
    current = graph_cost if graph is not None else present
    note = "commit-graph write --reachable --changed-paths: parents as positions"
    if graph is not None:
        note += "; a graph exists already" + (
            "" if has_bloom else " (without Bloom filters: log -- PATH diffs every tree)"
        )
    return WhatIf(
        "commit-graph",
        "walk: one commit read per commit (log --all)",
        current,
        graph_cost,
        note,
        commits or (),
        kind="walk",
    )
