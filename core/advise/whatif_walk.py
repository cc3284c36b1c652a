"""What-if for ``git log -- PATH``: the reads of a path-limited walk from
HEAD as the repository is, beside the same walk with a commit-graph and
changed-path Bloom filters.

Both are real walks (``history.walk``, git's default simplification) over
this repository, counted as they run:

* *commits parsed*: commit objects read from the packs (a lookup and an
  inflate each); with a graph, a commit's tree, parents and date come from
  its record instead (*graph records*);
* *trees read*: tree objects git reads to compare a commit with its
  parents under PATH, parent by parent until one has the same PATH (both
  root trees, then both subtrees at each PATH component where they differ;
  git keeps no tree cache between comparisons, so neither does the count;
  inside a changed directory PATH git reads on to the first changed file,
  not counted); a root commit's tree is read to see whether PATH is there;
* *Bloom queries*: first-parent comparisons asked of a changed-path filter,
  and *answered*: those the filter settled ("definitely not changed": no
  tree read).

The walk is made once and counted twice (git reads each comparison's
trees afresh, so the counts add up comparison by comparison).  The
current counts use what the repository has (its commit-graph and Bloom
filters, if any).  The proposed counts read commits as a graph would hand
them over (graph records, not parsed) and ask a filter that answers
exactly: a commit whose first parent has the same entries under PATH is
"definitely not changed".  git's filters (10 bits per changed path, 7
hashes) also let through a few unchanged commits, about 1 in 100, which
then cost their tree reads: the proposed trees are a lower bound by that
much.  Nothing is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from packscope.core.errors import CancelledError

if TYPE_CHECKING:
    from packscope.core.oid import ObjectFormat
    from packscope.core.repo.session import Session

REPLAY_IDS = 20_000  # the objects the current walk read, kept for the Lab's replay


class WalkReads(NamedTuple):
    commits_walked: int  # commits the walk met
    commits_parsed: int  # commit objects read from packs
    graph_records: int  # commits answered by a commit-graph record
    trees_read: int
    bloom_queries: int
    bloom_answered: int
    commits_shown: int

    def to_dict(self) -> dict[str, int]:
        return self._asdict()


class _PathCompare:
    """A comparison of two commits' trees under PATH as git makes it: both
    root trees read, then the entry of each PATH component looked up, and
    the two subtrees read where they differ (git's quick path-limited diff
    stops at the first difference; inside a directory PATH that changed it
    reads on to the first changed file, which is not counted here)."""

    def __init__(self, read: Callable[[bytes], tuple[str, bytes]], fmt: ObjectFormat, path: str) -> None:
        from packscope.core.history.tree_entries import TreeEntries

        self.trees = TreeEntries(read, fmt)
        self.parts = [p.encode() for p in path.strip("/").split("/") if p]
        self.read_ids: list[bytes] | None = None  # the trees counted, while someone keeps them

    def _kept(self, *ids: bytes | None) -> None:
        keep = self.read_ids
        if keep is not None and len(keep) < REPLAY_IDS:
            keep.extend(i for i in ids if i is not None)

    def compare(self, a: bytes | None, b: bytes | None) -> tuple[int, bool]:
        """(trees read, whether nothing under PATH differs)."""
        trees = self.trees
        reads = (a is not None) + (b is not None)
        self._kept(a, b)
        for name in self.parts:
            if a == b:
                return reads, True
            ea = trees.entry(a, name) if a is not None else None
            eb = trees.entry(b, name) if b is not None else None
            if ea == eb:
                return reads, True
            da = ea[2] if ea is not None and trees.is_dir(ea) else None
            db = eb[2] if eb is not None and trees.is_dir(eb) else None
            reads += (da is not None) + (db is not None)
            self._kept(da, db)
            if da is None or db is None:
                return reads, False  # a file changed, or a side has no such directory
            a, b = da, db
        return reads, a == b


class _CountingReader:
    """The walk's object reader; commits it reads are counted (parsed) and
    their facts handed to ``seen``."""

    def __init__(self, inner: Any, fmt: ObjectFormat, seen: Callable[[bytes, Any], None]) -> None:
        self.inner = inner
        self.fmt = fmt
        self.commits = 0
        self.seen = seen

    def read(self, oid: bytes) -> tuple[str, bytes]:
        typ, data = self.inner.read(oid)
        if typ == "commit":
            from packscope.core.objects import commit_header_fast

            self.commits += 1
            self.seen(oid, commit_header_fast(data, self.fmt, oid))
        return typ, data

    def read_header(self, oid: bytes) -> Any:
        return self.inner.read_header(oid)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def log_path_reads(
    session: Session,
    path: str,
    *,
    proposed: bool,
    cancel: Callable[[], bool] | None = None,
) -> WalkReads:
    """One side of :func:`log_path_walk`: the walk as it is, or (``proposed``)
    with a commit-graph and exact changed-path filters."""
    now, then = log_path_walk(session, path, cancel=cancel)
    return then if proposed else now


def log_path_walk(
    session: Session,
    path: str,
    *,
    cancel: Callable[[], bool] | None = None,
    keep: list[bytes] | None = None,
    commits: list[bytes] | None = None,
) -> tuple[WalkReads, WalkReads]:
    """Walk ``log -- path`` from HEAD once and count its reads twice: as the
    repository is, and as with a commit-graph and exact changed-path
    filters.  git reads a comparison's trees afresh each time, so the two
    differ only by the first-parent comparisons a filter settles: a filter
    that answers exactly settles every comparison where PATH is the same.
    ``keep`` collects the ids git would look up today (commits parsed,
    trees read; up to REPLAY_IDS), ``commits`` the commits the walk met."""
    from packscope.core.history.graph_walk import WalkSource
    from packscope.core.history.walk import walk
    from packscope.core.objects import commit_header_fast

    head = session.resolve("HEAD")
    source = WalkSource.open(session.repo, session.store, refs=session.refs)
    try:
        fmt = session.fmt
        counts = dict.fromkeys(("met", "graph", "parsed", "queries", "answered", "exact", "trees", "proposed_trees"), 0)
        facts: dict[bytes, tuple[bytes, tuple[bytes, ...]]] = {}  # commit -> (tree, parents)
        paths = _PathCompare(source.objects.read, fmt, path)
        packs_reader = source.reader

        def keep_id(oid: bytes) -> None:
            if keep is not None and len(keep) < REPLAY_IDS:
                keep.append(oid)

        def met(oid: bytes, info: Any) -> None:
            """A commit the walk read: a root is compared with nothing (git
            reads its tree to see whether PATH is there)."""
            parents = tuple(info[1])
            facts[oid] = (info[0], parents)
            if commits is not None and len(commits) < REPLAY_IDS:
                commits.append(oid)
            if not parents:
                paths.read_ids = keep
                reads = paths.compare(None, info[0])[0]
                paths.read_ids = None
                counts["trees"] += reads
                counts["proposed_trees"] += reads

        def seen_by_reader(oid: bytes, info: Any) -> None:
            counts["met"] += 1
            keep_id(oid)
            met(oid, info)

        reader = _CountingReader(source.objects, fmt, seen_by_reader)

        def facts_of(oid: bytes) -> tuple[bytes, tuple[bytes, ...]]:
            got = facts.get(oid)
            if got is None:  # a parent the walk has not read yet: looked at, not counted
                info = packs_reader(oid)
                if info is None:
                    info = commit_header_fast(source.objects.read(oid)[1], fmt, oid)
                got = facts[oid] = (info[0], tuple(info[1]))
            return got

        hook = source.walk_options([path])["commit_info"]

        def commit_info(oid: bytes) -> Any:
            info = hook(oid)
            if info is None:
                return None  # read through the reader (counted there)
            counts["met"] += 1
            if counts["met"] & 4095 == 0 and cancel is not None and cancel():
                raise CancelledError("stopped")
            if len(info) > 3:  # a graph record (generation included)
                counts["graph"] += 1
            else:
                counts["parsed"] += 1
                keep_id(oid)
            met(oid, info)
            return info

        bloom = source.walk_options([path])["first_parent_unchanged"]

        def compares(oid: bytes) -> bool:
            """The walk is about to compare ``oid`` with its parents: what the
            repository's filter answers for the first (if it has one), what
            an exact one would, and the trees git reads for the comparisons
            it makes (parent by parent, until one has the same PATH).  The
            answer given to the walk is exact too (it then compares only
            commits that changed PATH against their first parent)."""
            tree, parents = facts_of(oid)
            counts["queries"] += 1
            if bloom is not None:
                graph = source.graph
                if graph is not None and oid not in source._pos:
                    # The walk source knows the graph positions of the parents it
                    # handed out, not of the tips, so a tip's filter is never asked;
                    # git asks it.  (A history walk's own gap, left to its owners.)
                    pos = graph.lookup(oid)
                    if pos is not None:
                        source._pos[oid] = pos
                if bloom(oid):
                    counts["answered"] += 1
                    counts["exact"] += 1
                    return True
            paths.read_ids = keep
            try:
                reads, same = paths.compare(facts_of(parents[0])[0], tree)
                counts["trees"] += reads
                if same:
                    counts["exact"] += 1  # an exact filter settles it: no tree read
                    return True
                counts["proposed_trees"] += reads
                for p in parents[1:]:
                    reads, same = paths.compare(facts_of(p)[0], tree)
                    counts["trees"] += reads
                    counts["proposed_trees"] += reads
                    if same:
                        break
            finally:
                paths.read_ids = None
            return False

        shown = sum(
            1
            for _ in walk(
                reader,
                [head],
                paths=[path],
                commit_info=commit_info,
                first_parent_unchanged=compares,
                generation_numbers=False,
            )
        )
        queried = counts["queries"] if bloom is not None else 0
        now = WalkReads(
            counts["met"],
            counts["parsed"] + reader.commits,
            counts["graph"],
            counts["trees"],
            queried,
            counts["answered"],
            shown,
        )
        then = WalkReads(
            counts["met"], 0, counts["met"], counts["proposed_trees"], counts["queries"], counts["exact"], shown
        )
        return now, then
    finally:
        source.close()
