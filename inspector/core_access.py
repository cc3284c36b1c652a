"""The UI's handle on core: one session, one lock, and plain snapshots.

The object store is not thread-safe (its MRU list, caches and open-file LRU
change on every lookup) and the UI uses it from its own thread and from
workers.  Every call into core goes through ``CoreAccess.lock`` (reentrant);
workers take it in small pieces (per pack, per subdirectory) so the UI
thread never waits long.

Screens never poke at core's internals: they get snapshots (``PackRow``,
``Facts``) built here from core's public API.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError
from packscope.core.trace import Tracer

if TYPE_CHECKING:
    from packscope.core.repo.repository import Repository
    from packscope.core.repo.session import Session
    from packscope.core.store.location import PackHandle

BULK_DELTA_BASE_BUDGET = 16 * 1024 * 1024


@dataclass(slots=True)
class PackRow:
    name: str
    handle: PackHandle | None  # None for a lone .idx or .pack
    rank: int | None  # position in the search (MRU) order; None when the midx covers it
    in_midx: bool
    local: bool
    size: int
    keep: bool
    promisor: bool
    bitmap: bool
    rev: bool
    objects: int | None = None  # None until the index is opened (in a worker)
    idx_version: int | None = None
    error: str | None = None
    mtime: int = 0  # of the .pack, whole seconds (what git sorts by)
    # Cheap checks (check_pack): no read of the pack's data.
    max_offset: int | None = None  # the index's largest offset
    damage: list[str] = field(default_factory=list)  # what the cheap checks found
    checksum: str | None = None  # on demand: "ok" or what failed
    orphan: str | None = None  # a lone .idx/.pack: the partner that is missing
    holds: list[tuple[str, int]] = field(default_factory=list)  # (id, offset) matching a filter

    @property
    def flags(self) -> str:
        return " ".join(
            f
            for f, on in (("keep", self.keep), ("promisor", self.promisor), ("bitmap", self.bitmap), ("rev", self.rev))
            if on
        )

    @property
    def key(self) -> str:
        return self.handle.files.base if self.handle is not None else self.name


@dataclass(slots=True)
class Facts:
    """What the Overview shows; filled in by a worker, part by part."""

    repo: dict = field(default_factory=dict)
    midx: list[dict] = field(default_factory=list)
    midx_read: bool = False  # midx is what there is (an empty list: none), not "not read yet"
    commit_graph: dict | None = None
    commit_graph_error: str | None = None
    refs: dict | None = None
    refs_error: str | None = None
    rewrites: str | None = None  # shallow boundary, replace refs, grafts ("" when none; None: not read yet)
    pack_objects: int | None = None
    packs_counted: int = 0
    loose_on_disk: int | None = None
    loose_dirs_counted: int = 0


class CoreAccess:
    """``repository``: the repository the UI opened, found once however it
    was started (``packscope``, ``-C``, ``PATH``, ``lab``, ``demo``): every
    session of the UI — the main one, the bulk one, Health's check in its
    own process, the Lab's cold runs — opens this one and no other.  Given a
    path (or None: discover from the current directory) it is found when the
    store is opened, once.  ``absent`` says why there is none on purpose
    (``lab --replay`` outside a repository)."""

    def __init__(self, repository: Repository | str | None = None, *, absent: str | None = None) -> None:
        self.repository: Repository | None = None
        self.path: str | None = None  # the path asked for (None: discovered), for the top bar until it opens
        if isinstance(repository, str) or repository is None:
            self.path = repository
        else:
            self.repository = repository
            self.path = str(repository.git_dir)
        self.absent = absent
        self.tracer = Tracer()
        self.lock = threading.RLock()
        self.session: Session | None = None
        self.error: PackscopeError | None = None
        self._removed: dict[str, float] = {}  # pack base -> when a rescan first found it gone

    # --- opening ---------------------------------------------------------

    def find(self) -> Repository:
        """The repository (found on the first call, then always that one)."""
        with self.lock:
            if self.repository is None:
                from packscope.core.repo.session import find_repository

                self.repository = find_repository(self.path)
            return self.repository

    def open_session(self, **settings) -> Session:
        """A new session on the UI's repository (``settings``: the store's,
        as ``open_session`` takes them); the caller closes it."""
        from packscope.core.repo.session import open_session

        return open_session(repo=self.find(), **settings)

    def open(self) -> None:
        """Find the repository and open its store (call from a worker)."""
        with self.lock:
            # The views of packs and objects read past a pack git refuses
            # (cut, or not matching its .idx) to show where it is damaged;
            # History's walks (bulk) and Health's check read as git does.
            self.session = self.open_session(tracer=self.tracer, reads="triage")

    @property
    def ready(self) -> bool:
        return self.session is not None

    @property
    def store(self):
        return self.session.store if self.session is not None else None

    @property
    def repo(self):
        return self.session.repo if self.session is not None else None

    @property
    def bulk(self):
        """A second session on the same repository with no tracer, for walks
        that read tens of thousands of objects (History's log, last commits,
        searches): traced, each read would also be three events for the log.
        Opened on first use; guarded by the same lock as the main session."""
        with self.lock:
            if getattr(self, "_bulk", None) is None:
                self._bulk = self.open_session()
                # Walks read trees and commits once each: a small delta base cache
                # serves them as well as git's 96 MB (measured on git.git) for ~80 MB less.
                self._bulk.store.delta_cache.budget = BULK_DELTA_BASE_BUDGET
            return self._bulk

    def close(self) -> None:
        with self.lock:
            if self.session is not None:
                self.session.close()
            if getattr(self, "_bulk", None) is not None:
                self._bulk.close()

    # --- snapshots -------------------------------------------------------

    def pack_rows(self) -> list[PackRow]:
        """Every pack in search order (midx-covered ones last), without
        opening any index: cheap even with thousands of packs."""
        store = self.store
        if store is None:
            return []
        with self.lock:
            handles = store.packs
        rows = []
        rank = 0
        for h in handles:
            f = h.files
            rows.append(
                PackRow(
                    h.name,
                    h,
                    None if h.in_midx else rank,
                    h.in_midx,
                    f.local,
                    f.pack_size,
                    f.keep,
                    f.promisor,
                    f.bitmap,
                    f.rev,
                    mtime=f.mtime,
                )
            )
            if not h.in_midx:
                rank += 1
        for scan in store.directory_scans():
            for name in scan.orphans:
                _stem, ext = os.path.splitext(name)
                if ext not in (".idx", ".pack"):
                    continue
                path = os.path.join(scan.pack_dir, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                missing = ".pack" if ext == ".idx" else ".idx"
                rows.append(
                    PackRow(
                        name,
                        None,
                        None,
                        False,
                        scan.pack_dir.startswith(store.objects_dir),
                        st.st_size if ext == ".pack" else 0,
                        False,
                        False,
                        False,
                        False,
                        mtime=int(st.st_mtime),
                        orphan=missing,
                        damage=[f"no {missing}: git ignores this {ext}"],
                    )
                )
        return rows

    def count_pack(self, row: PackRow) -> None:
        """Open the pack's index (fanout only) to learn its object count."""
        self.check_pack(row)

    def check_pack(self, row: PackRow) -> None:
        """The cheap checks: the index (object count, largest offset) against
        the .pack's size, header and trailer — a few bytes of the .pack,
        never its entries.  A pack shorter than its index's largest offset is
        truncated; a trailer that differs from the checksum the index records
        means the end of the pack was cut or rewritten."""
        if row.handle is None:
            return
        try:
            with self.lock:
                idx = row.handle.index.open()
                row.objects, row.idx_version = idx.num_objects, idx.version
                offsets = idx.offsets() if idx.num_objects else None
                recorded = bytes(idx.pack_checksum)
                rawsz = idx.fmt.rawsz
            row.max_offset = max(offsets) if offsets is not None else None
            del offsets
        except PackscopeError as e:
            row.error = e.message
            return
        damage = []
        path = row.handle.files.pack_path
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                head = fh.read(12)
                fh.seek(max(0, size - rawsz))
                trailer = fh.read(rawsz)
        except OSError as e:
            row.error = f"cannot read the .pack: {e.strerror or e}"
            return
        data_end = size - rawsz
        if row.max_offset is not None and row.max_offset >= data_end:
            damage.append(
                f"truncated: the index has an entry at @{row.max_offset:,}, the data ends at @{max(0, data_end):,}"
            )
        if len(head) == 12 and head[:4] == b"PACK":
            count = int.from_bytes(head[8:12], "big")
            if count != row.objects:
                damage.append(f"the pack header says {count:,} objects, the index {row.objects:,}")
        else:
            damage.append("no PACK signature")
        if trailer != recorded:
            damage.append("trailer differs from the checksum the index records")
        row.damage = damage

    def verify_pack_checksum(self, row: PackRow) -> str:
        """Hash the whole .pack (on demand: reads every byte) and compare it
        with its trailer and the index's copy: "ok" or what differs."""
        if row.handle is None:
            return "no pack"
        try:
            with self.lock:
                pack = row.handle.pack
                pack.open()
            pack.verify_checksum()
            return "ok"
        except PackscopeError as e:
            return e.message
        except OSError as e:
            return f"cannot read: {e.strerror or e}"

    def verify_index_checksum(self, row: PackRow) -> str:
        """Hash the whole .idx (as git fsck does) and compare it with the
        checksum it ends with: "ok" or what differs."""
        if row.handle is None:
            return "no index"
        try:
            with self.lock:
                idx = row.handle.index.open()
                idx.verify_checksum()
            return "ok"
        except PackscopeError as e:
            return e.message
        except OSError as e:
            return f"cannot read: {e.strerror or e}"

    def packs_holding(self, prefix_hex: str, limit: int = 64) -> dict[str, list[tuple[str, int]]]:
        """Every pack (by handle key) whose index holds an id starting with
        ``prefix_hex``, with the ids and their offsets — duplicates across
        packs included, since each index is asked on its own."""
        from packscope.core.oid import parse_prefix

        store = self.store
        out: dict[str, list[tuple[str, int]]] = {}
        if store is None:
            return out
        prefix = parse_prefix(prefix_hex, store.fmt)
        with self.lock:
            handles = list(store.all_packs())
        for h in handles:
            with self.lock:
                try:
                    idx = h.index.open()
                    positions = idx.find_prefix(prefix, limit=limit)
                    hits = [(idx.name_at(p).hex(), idx.offset_at(p)) for p in positions]
                except PackscopeError:
                    continue
            if hits:
                out[h.files.base] = hits
        return out

    def repo_facts(self) -> dict:
        repo = self.repo
        if repo is None:
            return {}
        exts = ", ".join(k if v is None else f"{k}={v}" for k, v in repo.extensions) or "none"
        store = self.store
        return {
            "git dir": str(repo.git_dir),
            "work tree": str(repo.work_tree) if repo.work_tree else "(bare)" if repo.bare else "(none)",
            "object format": f"{repo.object_format.name} ({repo.object_format.rawsz}-byte ids)",
            "format version": str(repo.format_version),
            "extensions": exts,
            "objects": str(repo.objects_dir),
            "alternates": ", ".join(store.object_dirs[1:]) or "none",
        }

    def midx_facts(self) -> list[dict]:
        out = []
        with self.lock:
            for m in self.store.midxs:
                try:
                    m.open()
                    layers = len(m.layers) if hasattr(m, "layers") else 1
                    out.append(
                        {
                            "path": m.path,
                            "objects": m.num_objects,
                            "packs": m.num_packs,
                            "layers": layers,
                            "chain": bool(getattr(m, "is_chain", False)),
                        }
                    )
                except PackscopeError as e:
                    out.append({"path": m.path, "error": e.message})
        return out

    def commit_graph_facts(self) -> dict | None:
        from packscope.core.history.commit_graph import CommitGraph

        store = self.store
        g = CommitGraph.open(store.objects_dir, store.fmt)
        if g is None:
            return None
        try:
            return {
                "path": g.path,
                "commits": g.num_commits,
                "layers": len(g.layers),
                "chain": g.is_chain,
                "generation": "corrected commit dates" if g.uses_corrected_dates else "topological levels",
                "bloom": all(layer.has_bloom for layer in g.layers),
            }
        finally:
            g.close()

    def opened(self) -> Session:
        """The session, for work that runs once the store is open."""
        if self.session is None:
            raise RuntimeError("the repository is not open yet")
        return self.session

    def ref_facts(self) -> dict:
        refs = self.opened().refs
        with self.lock:
            all_refs = list(refs.iter_refs())
            head = refs.head()
            problems = list(refs.problems)
        kinds: dict[str, int] = {}
        for r in all_refs:
            parts = r.name.split("/")
            k = parts[1] if len(parts) > 2 else r.name
            kinds[k] = kinds.get(k, 0) + 1
        if head is None:
            head_text = "missing"
        elif head.symref:
            head_text = f"→ {head.symref}"
        else:
            head_text = f"detached at {head.oid.hex()[:12]}" if head.oid else "?"
        return {
            "total": len(all_refs),
            "by kind": kinds,
            "head": head_text,
            "packed": sum(1 for r in all_refs if r.source == "packed"),
            "storage": getattr(refs, "storage", "files"),  # extensions.refStorage
            "problems": problems,
        }

    def problems(self) -> list[PackscopeError]:
        store = self.store
        return list(store.problems) if store is not None else []

    def orphans(self) -> list[str]:
        store = self.store
        if store is None:
            return []
        return [os.path.join(s.pack_dir, o) for s in store.directory_scans() for o in s.orphans]

    def provisional_scans(self) -> int:
        store = self.store
        return sum(1 for s in store.directory_scans() if s.provisional) if store is not None else 0

    def counters(self) -> dict:
        store = self.store
        return store.counters.as_dict() if store is not None else {}

    def delta_stats(self):
        store = self.store
        return store.delta_cache.stats() if store is not None else None

    def loose_counts(self):
        """Per objects directory: core's LooseCacheCounts."""
        store = self.store
        if store is None:
            return []
        return [(d, store.loose_cache(d).counts()) for d in store.object_dirs]

    # --- packs deleted under open views (a concurrent repack) -----------------

    def removed_at(self, handle) -> str | None:
        """ "HH:MM" when the store first found ``handle``'s .pack gone (a
        rescan dropped it, or its file is missing now); None while it exists."""
        removed = self._removed
        base = handle.files.base
        if base not in removed:
            if os.path.exists(handle.files.pack_path):
                return None
            removed[base] = time.time()
        return time.strftime("%H:%M", time.localtime(removed[base]))

    def pack_handle(self, pack_path: str):
        """The store's handle of the pack at ``pack_path`` (None: not known)."""
        store = self.store
        if store is None:
            return None
        with self.lock:
            return next((h for h in store.all_packs() if h.files.pack_path == pack_path), None)

    def where_now(self, oid: bytes):
        """Where the store finds ``oid`` now (rescanning if it must): a
        core Location, or None."""
        with self.lock:
            return self.store.locate(oid)

    def rescan(self, reason: str) -> None:
        removed = self._removed
        with self.lock:
            before = {h.files.base for h in self.store.all_packs()}
            self.store.rescan(reason)
            gone = before - {h.files.base for h in self.store.all_packs()}
        now = time.time()
        for base in gone:
            removed.setdefault(base, now)
        with self.lock:
            if getattr(self, "_bulk", None) is not None:
                self._bulk.store.rescan(reason)
