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
from dataclasses import dataclass, field

from packscope.core.errors import PackscopeError
from packscope.core.trace import Tracer


@dataclass(slots=True)
class PackRow:
    name: str
    handle: object  # packscope.core.store.odb.PackHandle
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

    @property
    def flags(self) -> str:
        return " ".join(
            f
            for f, on in (("keep", self.keep), ("promisor", self.promisor), ("bitmap", self.bitmap), ("rev", self.rev))
            if on
        )


@dataclass(slots=True)
class Facts:
    """What the Overview shows; filled in by a worker, part by part."""

    repo: dict = field(default_factory=dict)
    midx: list[dict] = field(default_factory=list)
    commit_graph: dict | None = None
    commit_graph_error: str | None = None
    refs: dict | None = None
    refs_error: str | None = None
    pack_objects: int | None = None
    packs_counted: int = 0
    loose_on_disk: int | None = None
    loose_dirs_counted: int = 0


class CoreAccess:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.tracer = Tracer()
        self.lock = threading.RLock()
        self.session = None
        self.error: PackscopeError | None = None

    # --- opening ---------------------------------------------------------

    def open(self) -> None:
        """Discover the repository and open its store (call from a worker)."""
        from packscope.core.repo.session import open_session

        with self.lock:
            self.session = open_session(self.path, tracer=self.tracer)

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
                from packscope.core.repo.session import open_session

                self._bulk = open_session(self.path)
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
                    objects=h.index.num_objects if h.index.is_open else None,
                    idx_version=h.index.version if h.index.is_open else None,
                )
            )
            if not h.in_midx:
                rank += 1
        return rows

    def count_pack(self, row: PackRow) -> None:
        """Open the pack's index (fanout only) to learn its object count."""
        try:
            with self.lock:
                idx = row.handle.index.open()
                row.objects, row.idx_version = idx.num_objects, idx.version
        except PackscopeError as e:
            row.error = e.message

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

    def ref_facts(self) -> dict:
        refs = self.session.refs
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

    def rescan(self, reason: str) -> None:
        with self.lock:
            self.store.rescan(reason)
            if getattr(self, "_bulk", None) is not None:
                self._bulk.store.rescan(reason)
