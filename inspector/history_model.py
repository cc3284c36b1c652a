"""The History screen's data: a commit walk loaded on demand.

:class:`HistoryLog` owns one ``packscope.core.history.walk.walk`` iterator.  One worker
thread (``HistoryLog.run``) advances it, a chunk at a time under the core
lock, only while the screen wants more rows (``demand(n)``): scrolling near
the end asks for the next few pages, ``G`` asks for everything, a search
asks as it goes.  What is kept per commit is what the walk gave (id,
tree, parents, time) in compact arrays (:class:`Rows`) — never a widget,
nor a tuple per row: rows are drawn by a virtual list,
and a row's subject, author and date are read when the row is drawn
(:class:`SummaryCache`, an LRU).

The walk reads commit headers only (the commit-graph, else core's pack
header reader): ``--topo-order`` without a commit-graph must see every
commit before its first row, and reading 80k whole commits then cost more
than the walk.  Search lines need the whole commit: the same worker reads
them for the loaded rows after they are shown — when no rows are wanted,
or first while a search waits (:attr:`HistoryLog.indexed` says how far).

Decorations (branches, tags, HEAD) are read once per walk.  The total is
estimated from the commit-graph's commit count when there is one.
"""

from __future__ import annotations

import threading
import time
from array import array
from collections import OrderedDict

from packscope.core.errors import PackscopeError
from packscope.core.history.walked import WalkedCommit
from packscope.inspector.collector import collector_paused
from packscope.inspector.commit_text import Summary, summarize
from packscope.inspector.history_search import SearchIndex, index_line

CHUNK = 400  # commits per hold of the core lock
FIRST_CHUNK = 80
HOLD_SECONDS = 0.03  # longest hold of the core lock: the UI draws rows with it
NOTIFY_SECONDS = 0.1
SHED_EVERY = 4096  # commits read between two releases of the packs' mapped pages
SHED_TAGS_EVERY = 64  # tags read for decorations between two releases (scattered: ~170 KB mapped each)


class Rows:
    """The loaded rows, in walk order, held compactly: ids, trees and
    parents in byte arrays, dates in an int array — about 70 bytes a row
    where a ``WalkedCommit`` with its bytes, tuple and int was about 270
    (250,000 rows: ~18 MB instead of ~68).  ``rows[i]`` (and slices,
    iteration) gives the ``WalkedCommit`` back.

    One thread extends it (the walk's worker); others read the first
    ``len(rows)``: the count grows last, so a row below it is complete."""

    __slots__ = ("_big", "_dates", "_n", "_oids", "_parents", "_pstart", "_rawsz", "_trees")

    def __init__(self) -> None:
        self._oids = bytearray()
        self._trees = bytearray()
        self._parents = bytearray()
        self._pstart = array("Q", [0])  # row i's parents: _parents[_pstart[i]:_pstart[i + 1]]
        self._dates = array("q")
        self._big: dict[int, int] = {}  # dates outside 64 bits (git's are unsigned), by row
        self._rawsz = 0
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def extend(self, commits) -> None:
        oids, trees, parents, pstart, dates = self._oids, self._trees, self._parents, self._pstart, self._dates
        n = self._n
        for c in commits:
            oid = c.oid
            if not self._rawsz:
                self._rawsz = len(oid)
            oids += oid
            trees += c.tree
            for p in c.parents:
                parents += p
            pstart.append(len(parents))
            try:
                dates.append(c.commit_time)
            except OverflowError:
                dates.append(0)
                self._big[n] = c.commit_time
            n += 1
        self._n = n  # (last: readers see whole rows only)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._n))]
        n = self._n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("row out of range")
        r = self._rawsz
        at = i * r
        ps, a, b = self._parents, self._pstart[i], self._pstart[i + 1]
        date = self._dates[i] if not self._big or i not in self._big else self._big[i]
        return WalkedCommit(
            bytes(self._oids[at : at + r]),
            bytes(self._trees[at : at + r]),
            tuple(bytes(ps[k : k + r]) for k in range(a, b, r)),
            date,
        )

    def __iter__(self):
        for i in range(self._n):
            yield self[i]


class SummaryCache:
    """Row summaries by commit id (read under the core lock, LRU)."""

    def __init__(self, core, size: int = 4096) -> None:
        self.core = core
        self.size = size
        self._d: OrderedDict[bytes, Summary] = OrderedDict()

    def get(self, oid: bytes) -> Summary:
        s = self._d.get(oid)
        if s is not None:
            self._d.move_to_end(oid)
            return s
        s = read_summary(self.core, oid)
        self._d[oid] = s
        if len(self._d) > self.size:
            self._d.popitem(last=False)
        return s


def read_summary(core, oid: bytes) -> Summary:
    store = core.bulk.store
    try:
        with core.lock:
            typ, data = store.read(oid)
    except PackscopeError as e:
        return Summary("", "", "", "", error=e.message)
    except OSError as e:
        return Summary("", "", "", "", error=str(e))
    if typ != "commit":
        return Summary("", "", "", "", error=f"not a commit: a {typ}")
    return summarize(data, store.fmt, oid)


def decorations(core) -> dict[bytes, list[tuple[str, str]]]:
    """Commit id -> [(label, kind)] as ``git log``'s ``%d`` lists them
    (packscope.core.history.decorate: git's default decoration filter and
    order, ``HEAD -> main`` where HEAD stands, tags peeled); kind "head",
    "branch", "remote", "tag", "stash", "replaced" or "ref"."""
    from packscope.core.history.decorate import ref_decorations
    from packscope.core.objects import parse_tag

    session = core.bulk
    store = session.store
    fmt = store.fmt

    reads = [0]

    def read(oid: bytes) -> tuple[str, bytes]:
        # Tags lie all over the pack and each read maps a read-around of
        # pages: shed them often (2,500 tags of a 250k-commit history held
        # 425 MB of the pack resident otherwise).
        with core.lock:
            reads[0] += 1
            if reads[0] % SHED_TAGS_EVERY == 0:
                store.release_mapped_pages()
            return store.read(oid)

    with core.lock:
        try:
            replace = bool(session.replace_refs)
        except PackscopeError:
            replace = False
        found = ref_decorations(
            session.refs,
            read,
            lambda data: parse_tag(data, fmt).object,
            session.repo.config,
            replace_refs=replace,
        )
        store.release_mapped_pages()
    return {oid: [(d.label, d.kind) for d in entries] for oid, entries in found.items()}


def rewrite_marks(source) -> dict[bytes, list[tuple[str, str]]]:
    """Commit id -> [(label, "rewrite")] for what makes the walk differ from
    the stored commits: a shallow clone's boundary, a graft, a replace ref
    (source: the walk's packscope.core.history.graph_walk.WalkSource)."""
    out: dict[bytes, list[tuple[str, str]]] = {}
    rewrites = source.rewrites if source is not None else None
    if rewrites is None:
        return out
    grafted = source.grafts.parents if source.grafts is not None else {}
    for oid, parents in rewrites.parents.items():
        # (the shallow file wins over a graft line for the same commit)
        label = "grafted" if oid in grafted and grafted[oid] == parents else "shallow"
        out.setdefault(oid, []).append((label, "rewrite"))
    if rewrites.replace is not None:
        for oid, by in rewrites.replace.mapping.items():
            out.setdefault(oid, []).append((f"replaced by {by.hex()[:10]}", "rewrite"))
    return out


class LockedReads:
    """The store as a walk sees it, each read under the core lock: a walk
    that must read everything before its first row (``--topo-order``
    without generation numbers) never holds the lock for seconds.

    The walk asks for commit headers through :meth:`locked` hooks (counted
    in ``reads``); whole objects (``whole_reads``) only for what the header
    reader leaves to the store (tags at the tips, loose or odd commits) and
    for search lines (:meth:`search_line`), which are read as the index
    catches up with the rows, never before a row is shown."""

    def __init__(self, core, store, capture: bool) -> None:
        self.lock = core.lock
        self.core_store = core.bulk.store  # whose mapped pages are shed now and then
        self.store = store
        self.fmt = store.fmt
        self.reads = 0  # commits (headers or objects) the walk asked for
        self.whole_reads = 0  # whole objects read, by the walk or for search lines
        # commit id -> its search line, from the (rare) whole commits the walk reads anyway
        self.captured: dict[bytes, str] | None = {} if capture else None

    def _count(self) -> None:
        # (under the lock) the pack pages read so far need not stay resident
        self.reads += 1
        if self.reads % SHED_EVERY == 0:
            self.core_store.release_mapped_pages()

    def _count_whole(self) -> None:
        # (under the lock) as _count, for whole objects
        self.whole_reads += 1
        if self.whole_reads % SHED_EVERY == 0:
            self.core_store.release_mapped_pages()

    def read(self, oid: bytes):
        with self.lock:
            self._count()
            self._count_whole()
            typ, data = self.store.read(oid)
        if self.captured is not None and typ == "commit":
            self.captured[oid] = index_line(data)
        return typ, data

    def read_header(self, oid: bytes):
        with self.lock:
            return self.store.read_header(oid)

    def search_line(self, oid: bytes) -> str:
        """The commit's search line: captured as the walk read it, or read now."""
        if self.captured is not None:
            line = self.captured.pop(oid, None)
            if line is not None:
                return line
        try:
            with self.lock:
                self._count_whole()
                typ, data = self.store.read(oid)
        except (PackscopeError, OSError):
            return ""
        return index_line(data) if typ == "commit" else ""

    def locked(self, fn, compiled: tuple[str, ...] = ()):
        """``fn`` (a walk hook taking a commit id) called under the core lock, counted;
        ``compiled``: the hook's methods the walk may also use (each called
        under the lock), which let it run a compiled loop in place of calls."""
        if fn is None:
            return None
        lock, shed = self.lock, self.core_store.release_mapped_pages

        def call(oid: bytes):
            # (the walk calls this once per commit: _count inlined)
            with lock:
                n = self.reads = self.reads + 1
                if n % SHED_EVERY == 0:
                    shed()
                return fn(oid)

        for name in compiled:
            method = getattr(fn, name, None)
            if method is not None:
                setattr(call, name, self._under_lock(method))
        return call

    def _under_lock(self, method):
        lock = self.lock

        def call(*args):
            with lock:
                return method(*args)

        return call


class HistoryLog:
    """One walk: ``revs`` (revision words; ``--all``), ``paths`` (literal).
    ``graph``: walk in ``--topo-order`` (as ``git log --graph`` does) and
    assign graph lanes (:class:`LaneIndex`) as commits load."""

    def __init__(self, core, revs: list[str], paths: list[str] | None = None, graph: bool = False) -> None:
        from packscope.inspector.history_graph import LaneIndex

        self.core = core
        self.revs = list(revs)
        self.paths = list(paths or [])
        self.graph = graph
        self.lanes = LaneIndex(self) if graph else None
        self.reads: LockedReads | None = None
        # one line per loaded row, for instant search: filled after the rows
        # (by the worker when no rows are wanted, or first while a search waits)
        self.index = SearchIndex()
        self.searching = False
        self._last_notify = 0.0
        self.rows = Rows()  # WalkedCommit, in walk order (held compactly)
        self.want: float = 0  # rows wanted (inf: all)
        self.done = False
        self.started = False
        self.error: str | None = None
        self.estimate: int | None = None
        self.decor: dict[bytes, list[tuple[str, str]]] = {}
        self.summaries = SummaryCache(core)
        self.cond = threading.Condition()
        self.cancelled = False
        self.problems: list[str] = []
        # the repository's state when the walk began (core/repo/repo_state.py),
        # and what changed by the time it ended ("a repack at 14:02"), if anything
        self.start_state = None
        self.changed: str | None = None

    # --- what the screen asks --------------------------------------------------

    @property
    def loaded(self) -> int:
        return len(self.rows)

    @property
    def indexed(self) -> int:
        """Rows a search covers: the first ``indexed`` loaded rows."""
        return len(self.index)

    @property
    def index_behind(self) -> bool:
        return len(self.index) < len(self.rows)

    def search_started(self) -> None:
        """A search is on: the index keeps up with the rows from now on."""
        with self.cond:
            self.searching = True
            self.cond.notify_all()

    def demand(self, n: float) -> None:
        """Keep loading until ``n`` rows (``float('inf')``: all)."""
        with self.cond:
            if n > self.want:
                self.want = n
                self.cond.notify_all()

    def cancel(self) -> None:
        with self.cond:
            self.cancelled = True
            self.cond.notify_all()

    def wait_for(self, n: int, timeout: float = 0.5) -> bool:
        """From a worker: ask for ``n`` rows and wait (a while) for them."""
        self.demand(n)
        with self.cond:
            end = time.monotonic() + timeout
            while len(self.rows) < n and not self.done and not self.cancelled:
                left = end - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(left)
        return len(self.rows) >= n

    def describe(self) -> str:
        what = " ".join(self.revs) or "HEAD"
        if self.paths:
            what += " -- " + " ".join(self.paths)
        return what

    # --- the worker ---------------------------------------------------------------

    def open_walk(self):
        from packscope.core.history.graph_walk import WalkSource
        from packscope.core.history.rev_args import ALL, walk_starts
        from packscope.core.history.walk import graph_walk, walk
        from packscope.core.repo.repo_state import state_of
        from packscope.inspector.pathspecs import repo_paths

        core = self.core
        session = core.bulk
        self.start_state = state_of(session.repo)
        with core.lock:
            revs = [ALL if r == "--all" else r for r in self.revs]
            # revisions through replace refs, as git reads them
            starts = walk_starts(revs, repo=session.repo, refs=session.refs, store=session.objects)
            paths = repo_paths(session.repo, self.paths, literal=True) if self.paths else None
            source = WalkSource.open(session.repo, session.store, refs=session.refs)
            if source.graph is not None and not paths:
                self.estimate = source.graph.num_commits
            # Headers come from the commit-graph, else from the packs' header
            # reader (core.history.commit_reader: a commit's first bytes, not
            # the whole object) -- with shallow boundaries, grafts and replace
            # refs applied (source.reader).  Each hook call and every read
            # of the view below takes the core lock.
            options = dict(source.walk_options(paths))
            # a path-limited walk reads many commits it does not show: read the shown ones again instead
            reads = self.reads = LockedReads(core, source.objects, capture=not paths)
            order = "topo" if self.graph else "default"
            # With generation numbers and no paths the graph's order streams
            # (git's incremental topological walk), compiled over the
            # commit-graph's positions: it reads the graph file alone, which
            # this walk's source owns, so only its setup takes the lock and
            # nothing is held per commit (a 250k-commit history in a few MB).
            compiled = ("walk_graph", "walk_packs", "count_graph_answers")
            on_graph = order == "topo" and not paths and bool(options.get("generation_numbers"))
            for hook in ("commit_info", "first_parent_unchanged"):
                if options.get(hook) is not None:
                    options[hook] = reads.locked(options[hook], compiled if on_graph and hook == "commit_info" else ())
            if self.graph and paths and self.lanes is not None:
                # git log --graph's walk under paths: parents rewritten, edges only to shown commits
                # (without paths every commit shows: the streaming walk above serves)
                gw = graph_walk(reads, starts, paths=paths, **options)
                self.lanes.shows = gw.shows
                it = gw.commits
            else:
                it = walk(reads, starts, paths=paths, order=order, **options)
        return source, it, reads

    def run(self, notify, is_cancelled) -> None:
        """Advance the walk while rows are wanted, and index the loaded rows
        for search when none are (call in a worker thread); ``notify()``
        tells the screen (throttled, and whenever a demand is met)."""
        source = None
        try:
            try:
                source, it, reads = self.open_walk()
            except PackscopeError as e:
                self.error = e.message
                self.done = True
                notify()
                return
            self.started = True
            self._last_notify = time.monotonic()
            rows = self.rows
            chunk_size = FIRST_CHUNK  # the first screenful, at once
            while True:
                with self.cond:
                    while not self._stopped(is_cancelled) and not self._walk_wanted() and not self.index_behind:
                        if self.done:
                            return  # every row loaded and indexed
                        self.cond.wait(0.25)
                    if self._stopped(is_cancelled):
                        return
                    target = self.want
                    # rows first; the index first only while a search waits on it
                    walk_now = self._walk_wanted() and not (self.searching and self.index_behind)
                if not walk_now:
                    self._index_some(reads, notify)
                    continue
                chunk, ended = self._walk_chunk(it, chunk_size)
                # before the rows are seen: a drawn row has its lanes
                if self.lanes is not None:
                    self.lanes.feed(chunk)
                if ended:
                    self._compare_state()
                with self.cond:
                    rows.extend(chunk)
                    # (done only once its last rows are in: a reader of done sees them all)
                    self.done = self.done or ended
                    self.cond.notify_all()
                now = time.monotonic()
                if (
                    self.done
                    or len(rows) >= target
                    or now - self._last_notify >= NOTIFY_SECONDS
                    or chunk_size == FIRST_CHUNK
                ):
                    self._last_notify = now
                    notify()
                if chunk_size == FIRST_CHUNK:
                    chunk_size = CHUNK
                    try:  # after the first rows: refs are read once, then rows redraw
                        decor = decorations(self.core)
                        for oid, marks in rewrite_marks(source).items():
                            # ("replaced by X" says more than git's "replaced")
                            kept = [d for d in decor.get(oid, ()) if d[1] != "replaced"]
                            decor[oid] = kept + marks
                        self.decor = decor
                    except PackscopeError as e:
                        self.problems.append(f"decorations: {e.message}")
                    notify()
        finally:
            if source is not None:
                for p in source.problems:
                    self.problems.append(f"commit-graph not used: {p.message}")
                source.close()
            with self.cond:
                self.done = self.done or self.cancelled
                self.cond.notify_all()

    def _compare_state(self) -> None:
        """At the walk's end: did the repository change since it began?"""
        from packscope.core.repo.repo_state import compare, state_of

        if self.start_state is None:
            return
        change = compare(self.start_state, state_of(self.core.bulk.repo))
        self.changed = None if change is None else change.describe()

    def _stopped(self, is_cancelled) -> bool:
        return self.cancelled or is_cancelled()

    def _walk_wanted(self) -> bool:
        return not self.done and self.want > len(self.rows)

    def _walk_chunk(self, it, chunk_size: int) -> tuple[list, bool]:
        """The walk's next commits (and whether it ended), at most ``chunk_size`` or HOLD_SECONDS'
        worth (each read takes the core lock: the UI draws between them)."""
        chunk: list = []
        ended = False
        # The cyclic collector off meanwhile (as for `packscope log`): a walk
        # makes a node per commit and no cycles, and in the app each pass
        # would rescan the UI's own objects too (~0.13 s of a --topo-order
        # walk's first rows on git.git).
        with collector_paused():
            try:
                until = time.monotonic() + HOLD_SECONDS
                for c in it:
                    chunk.append(c)
                    if len(chunk) >= chunk_size or (len(chunk) & 31 == 0 and time.monotonic() > until):
                        break
                else:
                    ended = True
            except PackscopeError as e:
                self.error = f"the walk stopped: {e.message}" + (f" [{e.location()}]" if e.location() else "")
                ended = True
            except (OSError, ValueError) as e:
                self.error = f"the walk stopped: {e}"
                ended = True
        return chunk, ended

    def _index_some(self, reads: LockedReads, notify) -> None:
        """Search lines for the next loaded rows (HOLD_SECONDS' worth);
        tells the screen when the index has caught up, or now and then."""
        rows, index = self.rows, self.index
        n, end = len(index), len(rows)
        until = time.monotonic() + HOLD_SECONDS
        while n < end:
            oid = rows[n].oid
            index.add(oid, reads.search_line(oid))
            n += 1
            if n & 15 == 0 and time.monotonic() > until:
                break
        now = time.monotonic()
        if n >= len(rows) or now - self._last_notify >= NOTIFY_SECONDS:
            self._last_notify = now
            notify()
