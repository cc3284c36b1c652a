"""The object store: where is an object, and what happened on the way.

Lookup order follows git's ``oid_object_info_extended``:

1. the null id is missing at once, with no probe;
2. multi-pack-indexes, then the packs they do not cover (alternates' packs
   included), most recently used first — a hit moves its pack to the front;
3. loose objects: local, then each alternate (by ``stat``, or through the
   loose name cache when the caller said *quick*);
4. on a miss without *quick*, the miss policy decides whether to rescan the
   pack directories and search the packs again:

   * ``git`` — always (what git, libgit2 and dulwich do);
   * ``gated`` (default) — only when a pack directory changed since its last
     scan, or that scan was provisional; known-missing ids are remembered in
     a negative cache whose entries die when ``objects/pack`` or their own
     ``objects/xx`` changes.  A rescan repeats until it sees an unchanged
     directory (bounded), so a concurrent repack cannot yield a false miss.

Each step is a trace event when ``tracer.active`` (checked once per lookup).

In a partial clone (``partial_clone=True``: the repository has a promisor
remote), reading an absent object that a promisor pack promises raises
PromisedObjectError rather than MissingObjectError (packscope.core.store.promisor); other
stores never build that set.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, TypeVar

from packscope.core import trace
from packscope.core.errors import (
    PackscopeError,
)
from packscope.core.oid import ObjectFormat, Prefix
from packscope.core.store.alternates import resolve_alternates
from packscope.core.store.batch_lookup import BatchLookups
from packscope.core.store.location import Location, PackHandle, changed_under_us, explain_vanished
from packscope.core.store.loose import LooseCache
from packscope.core.store.object_reads import ObjectReads
from packscope.core.store.pack_directory import DirectoryScan, PackFiles, dir_mtime_ns, git_pack_order, scan_pack_dir
from packscope.core.store.search import ALGORITHMS
from packscope.core.store.store_state import (
    MAX_RESCAN_ROUNDS,
    POLICIES,
    READ_MODES,
    ObjectDir,
    Stamps,
    StoreCounters,
    StoreSettings,
)

if TYPE_CHECKING:  # imported when first needed (start-up time), named here for types
    from packscope.core.store.midx import MultiPackIndex
    from packscope.core.store.pack import Pack
    from packscope.core.store.promisor import PromisorSet

T = TypeVar("T")


# A pack git refuses to open: none of its objects exists for git.
REFUSED_PACK_KINDS = frozenset(
    {"pack-index-mismatch", "pack-count", "pack-truncated", "pack-signature", "pack-version"}
)


def _pack_usable(handle: PackHandle) -> bool:
    try:
        handle.pack.open()
    except PackscopeError as e:
        return e.kind not in REFUSED_PACK_KINDS
    return True


class ObjectStore(ObjectReads, BatchLookups):
    def __init__(
        self,
        objects_dir: str,
        fmt: ObjectFormat,
        *,
        tracer: trace.Tracer | None = None,
        policy: str = "gated",
        quick: bool = False,
        algorithm: str = "binary",
        loose_strategy: str = "per-subdir",
        alternates: bool = True,
        env_alternates: list[str] | None = None,
        open_files_limit: int | None = None,
        partial_clone: bool = False,
        reads: str = "git",
    ) -> None:
        from packscope.core.store.cache import DeltaBaseCache, OpenFiles

        self.fmt = fmt
        # git always has the empty tree (a "cached object"), stored or not,
        # and answers it before looking: size 0, 0 bytes on disk, no base.
        self.empty_tree = fmt.empty_tree
        self.objects_dir = str(objects_dir)
        self.tracer = tracer or trace.Tracer()
        self.counters = StoreCounters()
        self.settings = StoreSettings()
        if reads not in READ_MODES:
            raise ValueError(f"unknown read mode {reads!r}; choose one of {', '.join(READ_MODES)}")
        self.settings.reads = reads  # fixed for the store's life: its packs are opened so
        self.delta_cache = DeltaBaseCache(tracer=self.tracer)
        self.open_files = OpenFiles(open_files_limit)
        dirs = [self.objects_dir]
        self.problems: list[PackscopeError] = []
        # what git 2.39 dies on when it opens this object store (set by each scan)
        self.git_fatal: PackscopeError | None = None
        if alternates:
            alt, alternates_problems = resolve_alternates(self.objects_dir, env_alternates)
            self.problems.extend(alternates_problems)
            dirs += alt
        self._dirs = [
            ObjectDir(d, i == 0, loose=LooseCache(d, fmt, strategy=loose_strategy, tracer=self.tracer))
            for i, d in enumerate(dirs)
        ]
        self.counters.loose_caches = tuple(d.loose for d in self._dirs)
        self._mru: list[PackHandle] = []
        # each multi-pack-index with the handles of the packs it covers (None: not on disk)
        self._midxs: list[tuple[MultiPackIndex, list[PackHandle | None]]] = []
        self._negative: dict[bytes, Stamps] = {}
        self._stale = False  # a file changed under us since the last scan: the next miss rescans
        self._loose_stamps: list[int | None] = []  # objects/xx mtimes seen by the last stat-based loose check
        # (pack, id) being read around damage: damaged_reads' loop guard
        self.repairing: set[tuple[str, bytes]] = set()
        self.max_repaired_bases = 8  # damaged bases replaced in one chain before giving up
        self.partial_clone = bool(partial_clone)
        self._promisor: PromisorSet | None = None
        self.set_policy(policy)
        self.set_algorithm(algorithm)
        self.settings.quick = quick
        self.settings.loose_strategy = loose_strategy
        self._scan_all("startup")

    # --- settings, switchable at run time --------------------------------

    def set_policy(self, policy: str) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown miss policy {policy!r}; choose git or gated")
        self.settings.policy = policy
        self._negative.clear()

    def set_algorithm(self, algorithm: str) -> None:
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown search algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
        self.settings.algorithm = algorithm

    def set_quick(self, quick: bool) -> None:
        self.settings.quick = bool(quick)

    def set_loose_strategy(self, strategy: str) -> None:
        for d in self._dirs:
            d.loose.set_strategy(strategy)
        self.settings.loose_strategy = strategy

    # --- packs -------------------------------------------------------------

    @property
    def packs(self) -> list[PackHandle]:
        """Every pack, in the current search (MRU) order; midx-covered ones last."""
        return list(self._mru) + [h for h in self.all_packs() if h.in_midx]

    def release_mapped_pages(self) -> None:
        """Every open pack's mapped pages back to the kernel: long walks call
        this now and then so that resident memory does not grow with the
        part of the packs they read."""
        for h in self.all_packs():
            h.release_pages()

    def all_packs(self) -> Iterator[PackHandle]:
        """Every pack handle once: the MRU list, then packs known only through a midx."""
        seen = set()
        for h in self._mru:
            seen.add(h.files.base)
            yield h
        for _midx, handles in self._midxs:
            for covered in handles:
                if covered is not None and covered.files.base not in seen:
                    yield covered

    @property
    def midxs(self) -> list[MultiPackIndex]:
        return [m for m, _ in self._midxs]

    @property
    def object_dirs(self) -> list[str]:
        return [d.path for d in self._dirs]

    def loose_paths(self, oid: bytes) -> list[str]:
        """Where ``oid``'s loose file would be in each object directory
        (local first, then alternates), whether or not it exists."""
        rest = oid.hex()[2:]
        return [os.path.join(d.subdirs[oid[0]], rest) for d in self._dirs]

    def loose_cache(self, objects_dir: str | None = None) -> LooseCache:
        for d in self._dirs:
            if objects_dir is None or d.path == objects_dir:
                return d.loose
        raise KeyError(objects_dir)

    def directory_scans(self) -> list[DirectoryScan]:
        return [d.scan for d in self._dirs if d.scan is not None]

    def _open_pack(self, handle: PackHandle) -> Pack:
        self.counters.opens += 1
        return self._new_pack(handle, check_trailer=self.settings.reads == "git")

    def _new_pack(self, handle: PackHandle, *, check_trailer: bool) -> Pack:
        from packscope.core.store.pack import Pack

        return Pack(
            handle.files.pack_path,
            handle.index,
            fmt=self.fmt,
            resolve_ref=self._read_for_delta,
            resolve_ref_info=self._header_for_delta,
            cache=self.delta_cache,
            open_files=self.open_files,
            check_trailer=check_trailer,
        )

    def pack_read_past(self, handle: PackHandle) -> Pack:
        """``handle``'s pack read past git's refusal of a pack whose trailer
        is not the one its .idx records (READ_MODES' "triage"), whatever this
        store's mode: for a check that must say how such a pack is damaged
        (fsck's pack pass).  The handle's own pack when the store reads past
        anyway; else a mapping of its own, which the caller closes."""
        if self.settings.reads == "triage":
            return handle.pack
        return self._new_pack(handle, check_trailer=False)

    def _note_git_fatal_midx(self, pack_dir: str) -> None:
        """A multi-pack-index packscope refused: when git 2.39 dies loading
        it (every command that reads objects exits 128), say so in
        ``git_fatal`` — the commands that answer as git do (log, cat-file)
        stop there; the UI and fsck read the packs and report it."""
        from packscope.core.errors import BadMultiPackIndexError
        from packscope.core.store.midx import git_dies_loading

        path = os.path.join(pack_dir, "multi-pack-index")
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return
        message = git_dies_loading(data, self.fmt)
        if message is not None and self.git_fatal is None:
            self.git_fatal = BadMultiPackIndexError(message, path=path, kind="midx-git-dies")

    def _scan_all(self, reason: str) -> None:
        t0 = time.perf_counter()
        self.git_fatal = None
        old = {h.files.base: h for h in self.all_packs()}
        found: list[PackFiles] = []
        midxs: list[tuple[str, MultiPackIndex]] = []  # (pack directory, its multi-pack-index)
        for d in self._dirs:
            for _ in range(MAX_RESCAN_ROUNDS):
                scan = scan_pack_dir(d.path, d.local)
                self.counters.pack_dir_reads += 1
                if dir_mtime_ns(scan.pack_dir) == scan.mtime_ns:
                    break  # nobody wrote while we listed
            d.scan = scan
            d.midx = None
            if scan.midx:
                from packscope.core.store.midx import MultiPackIndex  # only when there is one: ~4 ms to import

                for _ in range(MAX_RESCAN_ROUNDS):
                    try:  # the single file, else an incremental chain (multi-pack-index.d/)
                        d.midx = MultiPackIndex.discover(scan.pack_dir, self.fmt)
                        if d.midx is not None:
                            d.midx.open()
                        break
                    except PackscopeError as e:
                        d.midx = None
                        if not changed_under_us(e):  # damage; else rewritten under us: look again
                            self.problems.append(e)
                            self._note_git_fatal_midx(scan.pack_dir)
                            break
                else:
                    self._stale = True  # still changing: the next miss rescans
            found.extend(scan.packs)
            if d.midx is not None:
                midxs.append((scan.pack_dir, d.midx))
        handles: dict[str, PackHandle] = {}
        for f in found:
            h = old.get(f.base)
            if h is None or h.files != f:
                if h is not None:
                    h.close()
                h = PackHandle(f, self.fmt, self.open_files, self._open_pack)
            h.in_midx = False
            handles[f.base] = h
        self._midxs = []
        for pack_dir, m in midxs:
            covered: list[PackHandle | None] = []
            for name in m.pack_names:
                base = os.path.join(pack_dir, name[:-4] if name.endswith(".idx") else name)
                h = handles.get(base)
                if h is not None:
                    h.in_midx = True
                covered.append(h)
            self._midxs.append((m, covered))
        ordered = git_pack_order([f for f in found if not handles[f.base].in_midx])
        # Keep the MRU order of packs we already knew; new ones in git's order.
        rank = {h.files.base: i for i, h in enumerate(self._mru)}
        known = sorted((f for f in ordered if f.base in rank), key=lambda f: rank[f.base])
        fresh = [f for f in ordered if f.base not in rank]
        self._mru = [handles[f.base] for f in (known + fresh if reason != "startup" else ordered)]
        gone = [b for b in old if b not in handles]
        for b in gone:
            old[b].close()
        if self.tracer.active:
            self.tracer.emit(
                trace.PackDirScanned(
                    self.objects_dir,
                    reason,
                    len(handles),
                    tuple(sorted(os.path.basename(b) for b in handles if b not in old)),
                    tuple(sorted(os.path.basename(b) for b in gone)),
                    time.perf_counter() - t0,
                )
            )

    def rescan(self, reason: str = "request") -> None:
        """Re-read every pack directory (and flush the loose caches, as git does)."""
        self.counters.rescans += 1
        self._stale = False
        self._scan_all(reason)
        for d in self._dirs:
            d.loose.flush(reason)
        self._negative.clear()

    def _pack_dirs_moving(self) -> bool:
        """Whether a pack directory changed again since its last scan (a
        repack in progress): what earns a miss another round of rescans."""
        return self._stale or any(
            d.scan is None or dir_mtime_ns(d.scan.pack_dir) != d.scan.mtime_ns for d in self._dirs
        )

    def _pack_dirs_changed(self) -> str | None:
        if self._stale:
            return "changed"
        for d in self._dirs:
            self.counters.stats += 1
            if d.scan is None or dir_mtime_ns(d.scan.pack_dir) != d.scan.mtime_ns:
                return "changed"
            if d.scan.provisional:
                return "provisional"
        return None

    # --- lookup ------------------------------------------------------------

    def locate(self, oid: bytes, quick: bool | None = None) -> Location | None:
        """Where ``oid`` is, or None; traced when someone listens."""
        if quick is None:
            quick = self.settings.quick
        self.counters.lookups += 1
        tracer = self.tracer
        traced = tracer.active
        if oid == self.fmt.null:
            self.counters.null_lookups += 1
            self.counters.misses += 1
            if traced:
                tracer.emit(trace.NullOidShortcut(oid.hex()))
                tracer.emit(trace.LookupFinished(oid.hex(), None, None, 0.0, 0))
            return None
        t0 = time.perf_counter() if traced else 0.0
        if traced:
            tracer.emit(trace.LookupStarted(oid.hex(), quick))
        neg = self._negative.get(oid) if self._negative else None
        if neg is not None:
            if self._negative_valid(oid, neg):
                self.counters.negative_hits += 1
                self.counters.misses += 1
                if traced:
                    tracer.emit(trace.NegativeCacheHit(oid.hex()))
                    tracer.emit(trace.LookupFinished(oid.hex(), None, None, time.perf_counter() - t0, 0))
                return None
            self._negative.pop(oid, None)
        rescans = 0
        loc = self._find_packed(oid, traced)
        if loc is None:
            loc = self._find_loose(oid, quick, traced)
        if loc is None and not quick:
            reason = "miss" if self.settings.policy == "git" else self._pack_dirs_changed()
            if reason is None:
                self.counters.rescans_skipped += 1
                if traced:
                    tracer.emit(trace.RescanSkipped(self.objects_dir, "pack directories unchanged since last scan"))
                self._remember_missing(oid)
            else:
                for _ in range(MAX_RESCAN_ROUNDS):
                    self.rescan(reason)
                    rescans += 1
                    loc = self._find_packed(oid, traced)
                    if loc is not None or self.settings.policy == "git":
                        break
                    # Only a directory that changed again while we looked
                    # (a repack in progress) earns another round.
                    if not self._pack_dirs_moving():
                        break
                    reason = "changed"
        if loc is None:
            self.counters.misses += 1
        elif loc.source == "loose":
            self.counters.hits_loose += 1
        elif loc.source == "midx":
            self.counters.hits_midx += 1
        else:
            self.counters.hits_pack += 1
        if traced:
            tracer.emit(
                trace.LookupFinished(
                    oid.hex(),
                    loc.source if loc else None,
                    loc.where if loc else None,
                    time.perf_counter() - t0,
                    rescans,
                )
            )
        return loc

    def _find_packed(self, oid: bytes, traced: bool) -> Location | None:
        algorithm = self.settings.algorithm
        for m, handles in self._midxs:
            if traced:
                path = m.find_traced(oid, algorithm)
                pos = -1 if path.found is None else path.found
            else:
                pos = m.find(oid, algorithm)
            if pos < 0:
                if traced:
                    self.tracer.emit(trace.PackSearched(os.path.basename(m.path), "midx", path, None))
                continue
            pack_id, offset = m.entry_at(pos)
            if traced:
                self.tracer.emit(trace.PackSearched(os.path.basename(m.path), "midx", path, offset))
            h = handles[pack_id] if pack_id < len(handles) else None
            if h is not None:
                return Location("midx", h.objects_dir, h.files.local, h, offset)
        b = oid[0]
        for rank, h in enumerate(self._mru):
            if not traced:
                # An empty fanout bucket answers "not here" without a search;
                # most small packs hold nothing in most buckets.
                fan = h.index.fanout
                if fan and fan[b] == (fan[b - 1] if b else 0):
                    continue
            try:
                if traced:
                    path = h.index.find_traced(oid, algorithm)
                    pos = -1 if path.found is None else path.found
                else:
                    pos = h.index.find(oid, algorithm)
            except PackscopeError as e:
                # A vanished or damaged index: skip it; a rescan will drop it.
                self.skip_or_note(e)
                continue
            if traced:
                self.tracer.emit(
                    trace.PackSearched(h.index.name, "pack", path, h.index.offset_at(pos) if pos >= 0 else None)
                )
            if pos >= 0:
                if rank:
                    self._mru.insert(0, self._mru.pop(rank))
                    self.counters.mru_moves += 1
                    if traced:
                        self.tracer.emit(trace.MruMoved(h.name, rank))
                return Location("pack", h.objects_dir, h.files.local, h, h.index.offset_at(pos))
        return None

    def _find_loose(self, oid: bytes, quick: bool, traced: bool) -> Location | None:
        stamps: list[int | None] = []
        self._loose_stamps = stamps
        b = oid[0]
        for d in self._dirs:
            if quick:
                found = d.loose.contains(oid)
                method = "cache"
            else:
                # The directory first: when objects/xx does not exist (the
                # common case in a packed repository) that one stat answers,
                # and its mtime is what a negative-cache entry needs anyway.
                self.counters.stats += 1
                mtime = dir_mtime_ns(d.subdirs[b])
                stamps.append(mtime)
                if mtime is None:
                    found = False
                else:
                    self.counters.stats += 1
                    # Any file system entry of that name, as git's access(F_OK):
                    # a directory named like an object exists (its read fails).
                    found = os.path.exists(os.path.join(d.subdirs[b], oid.hex()[2:]))
                method = "stat"
            if traced:
                self.tracer.emit(trace.LooseChecked(d.path, f"{b:02x}", method, found))
            if found:
                return Location("loose", d.path, d.local, path=os.path.join(d.subdirs[b], oid.hex()[2:]))
        return None

    def _remember_missing(self, oid: bytes) -> None:
        if len(self._negative) > 1_000_000:
            self._negative.clear()  # bound memory on pathological input
        # The loose check just stamped every objects/xx it looked at.
        stamps = self._loose_stamps
        if len(stamps) != len(self._dirs):
            stamps = [dir_mtime_ns(d.subdirs[oid[0]]) for d in self._dirs]
        self._negative[oid] = tuple(stamps)

    def _negative_valid(self, oid: bytes, entry: Stamps) -> bool:
        if self._pack_dirs_changed() is not None:
            self._negative.clear()
            return False
        self.counters.stats += len(self._dirs)
        return entry == tuple(dir_mtime_ns(d.subdirs[oid[0]]) for d in self._dirs)

    def note_problem(self, e: PackscopeError) -> None:
        """Remember a problem met while answering (shown by info and the UI)."""
        explain_vanished(e)
        if len(self.problems) < 1000 and all(str(p) != str(e) for p in self.problems[-20:]):
            self.problems.append(e)

    def skip_or_note(self, e: PackscopeError) -> None:
        """An index or pack that failed while answering: a file that changed
        under us (packscope.core.store.location.changed_under_us) is no
        problem — it marks the scan stale, so that the next miss rescans and
        looks again whatever the directory's mtime says; anything else is
        noted (``note_problem``)."""
        if changed_under_us(e):
            self._stale = True
        else:
            self.note_problem(e)

    def contains(self, oid: bytes, quick: bool | None = None) -> bool:
        if oid == self.empty_tree:
            return True
        loc = self.locate(oid, quick)
        if loc is None:
            return False
        if loc.pack is None or self.settings.reads != "git" or _pack_usable(loc.pack):
            return True
        # git skips a pack it refuses to open (a cut pack, one that does not
        # match its .idx): only another copy makes the object exist.
        for h in self.all_packs():
            if h is not loc.pack and h.files.pack_path != loc.pack.files.pack_path:
                try:
                    if h.index.find(oid) >= 0 and _pack_usable(h):
                        return True
                except PackscopeError:
                    continue
        return any(os.path.exists(path) for path in self.loose_paths(oid))

    # --- abbreviations -----------------------------------------------------

    def resolve_prefix(self, prefix: Prefix, limit: int | None = None) -> list[bytes]:
        """Every id starting with ``prefix``, sorted, each once."""
        algorithm = self.settings.algorithm
        found = self._from_indexes(
            lambda h: [h.index.name_at(i) for i in h.index.find_prefix(prefix, algorithm)], self._mru
        )
        for m, _ in self._midxs:
            found.update(m.name_at(i) for i in m.find_prefix(prefix, algorithm))
        for d in self._dirs:
            found.update(d.loose.matches(prefix))
        out = sorted(found)
        return out[:limit] if limit else out

    def _from_indexes(
        self, names: Callable[[PackHandle], Iterable[bytes]], handles: list[PackHandle] | None
    ) -> set[bytes]:
        """The union of ``names(h)`` over the packs (``handles``, or every
        pack).  An index that changed under us (a concurrent repack) means
        its objects are in a pack the last scan did not see: rescan and ask
        every index again (bounded); a damaged index is noted and skipped."""
        found: set[bytes] = set()
        for _ in range(MAX_RESCAN_ROUNDS):
            found = set()
            changed = False
            for h in list(self.all_packs()) if handles is None else list(handles):
                try:
                    found.update(names(h))
                except PackscopeError as e:
                    if changed_under_us(e):
                        changed = True
                    else:
                        self.note_problem(e)
            if not changed:
                break
            self.rescan("changed")
            if handles is not None:
                handles = self._mru
        return found

    # --- partial clones -------------------------------------------------------

    @property
    def promisor(self) -> PromisorSet | None:
        """The promised objects (a packscope.core.store.promisor.PromisorSet, built on first
        question) when this is a partial clone's store, else None."""
        if self._promisor is None and self.partial_clone:
            from packscope.core.store.promisor import PromisorSet

            self._promisor = PromisorSet(self)
        return self._promisor

    def is_promised(self, oid: bytes) -> bool:
        """git's is_promisor_object; always False outside partial clones."""
        promised = self.promisor
        return promised is not None and promised.is_promised(oid)

    def all_object_ids(self) -> list[bytes]:
        """Every id in every pack, midx and loose directory (alternates too),
        sorted and each once — what git's --batch-all-objects walks."""
        ids = self._from_indexes(lambda h: h.index.names(), None)
        for m, _ in self._midxs:
            ids.update(m.name_at(i) for i in range(m.num_objects))
        for d in self._dirs:
            for sub in range(256):
                ids.update(d.loose.entries(sub))
        return sorted(ids)

    def close(self) -> None:
        for h in self.all_packs():
            h.close()
        for m, _ in self._midxs:
            m.close()


if TYPE_CHECKING:
    from packscope.core.store.batch_lookup import BatchLookupsHost
    from packscope.core.store.object_reads import ObjectReadsHost

    def _mixins_hosted(store: ObjectStore) -> None:
        """ObjectStore checked against what its mixins' methods use of it (never runs)."""
        reads: ObjectReadsHost = store  # noqa: F841
        batches: BatchLookupsHost = store  # noqa: F841
