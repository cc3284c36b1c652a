"""The repository report: what the repository holds, at a glance.

Object format; packs (count, objects, sizes, index versions, .keep,
.promisor, .bitmap and .rev companions, orphaned files); loose objects per
subdirectory; the multi-pack-index; the commit-graph (single file or chain,
layers, commits, Bloom filters, generation data); alternates; partial-clone
promisor remotes and packs; refs by namespace and HEAD; worktrees; what
rewrites history (a shallow clone's boundary, replace refs, grafts).  Damage
(bad refs, unreadable indexes, broken alternates, …) is listed under
``problems``, never fatal.

:func:`repository_report` builds it as plain JSON values, the document
``packscope info --json`` prints (its schema in the README; ``schema`` is
its version) and the Overview's problems and history-rewrite line come from.
It reads every layer of core, so it sits above them all, in the face.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from packscope.core.errors import BadRefError, PackscopeError
from packscope.core.native import describe

if TYPE_CHECKING:
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository
    from packscope.core.repo.session import Session
    from packscope.core.store.location import PackHandle
    from packscope.core.store.odb import ObjectStore
    from packscope.core.store.pack_directory import DirectoryScan

Doc = dict[str, Any]  # a JSON object of the report

SCHEMA_VERSION = 2  # 2: shallow, replace_refs, grafts
PRUNE_PACKABLE_BUDGET = 2_000_000  # loose ids × packs searched for "also_packed"; above it, not computed


class _Problems:
    def __init__(self) -> None:
        self.items: list[Doc] = []
        self._seen: set[tuple[object, ...]] = set()

    def add(
        self,
        area: str,
        e: PackscopeError | None = None,
        *,
        kind: str | None = None,
        message: str | None = None,
        path: str | None = None,
        remedy: str | None = None,
        severity: str = "error",
    ) -> None:
        row = {
            "area": area,
            "severity": severity,
            "kind": kind or (e.kind if e is not None else "problem"),
            "message": message or (e.message if e is not None else ""),
            "path": path if path is not None else (e.path if e is not None else None),
            "offset": e.offset if e is not None else None,
            "oid": e.oid if e is not None else None,
            "remedy": remedy or (e.remedy if e is not None else None),
        }
        key = (row["area"], row["kind"], row["message"], row["path"])
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(row)


def repository_report(session: Session, *, promised: bool = False) -> Doc:
    """Everything ``info --json`` prints, as plain JSON values; with
    ``promised``, the promised-object count too (slow on big partial clones)."""
    repo, store = session.repo, session.store
    problems = _Problems()
    for e in store.problems:
        problems.add(_area(e), e)
    packs = _packs(store, problems)
    info = {
        "schema": SCHEMA_VERSION,
        "object_format": repo.object_format.name,
        "repository": _repository(repo),
        "packs": packs,
        "loose": _loose(store, problems),
        "multi_pack_index": _midx(store, problems),
        "commit_graph": _commit_graph(store, problems),
        "alternates": _alternates(session, problems),
        "promisor": _promisor(repo, store, problems, promised),
        "refs": _refs(session, problems),
        "worktrees": _worktrees(session, problems),
        "shallow": _shallow(repo, problems),
        "replace_refs": _replace_refs(session, problems),
        "grafts": _grafts(repo, problems),
        "implementation": describe(),  # which path runs: the compiled module or pure Python
    }
    info["problems"] = problems.items
    return info


def _area(e: PackscopeError) -> str:
    from packscope.core.errors import BadMultiPackIndexError, BadPackError, BadPackIndexError

    if e.kind.startswith("alternates"):
        return "alternates"
    if isinstance(e, BadMultiPackIndexError):
        return "multi-pack-index"
    if isinstance(e, (BadPackError, BadPackIndexError)):
        return "packs"
    return "objects"


def _hex(oid: bytes | None) -> str | None:
    return None if oid is None else oid.hex()


def _path(p: object) -> str | None:
    return None if p is None else str(p)


def _repository(repo: Repository) -> Doc:
    return {
        "git_dir": _path(repo.git_dir),
        "common_dir": _path(repo.common_dir),
        "work_tree": _path(repo.work_tree),
        "bare": repo.bare,
        "objects_dir": _path(repo.objects_dir),
        "format_version": repo.format_version,
        "extensions": {name: value for name, value in repo.extensions},
    }


def _local_scan(store: ObjectStore) -> DirectoryScan | None:
    for scan in store.directory_scans():
        if os.path.dirname(scan.pack_dir) == store.objects_dir:
            return scan
    return None


def _file_size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _pack_row(h: PackHandle, problems: _Problems) -> Doc:
    f = h.files
    row = {
        "name": f.name,
        "objects": None,
        "pack_bytes": f.pack_size,
        "index_bytes": _file_size(f.idx_path),
        "index_version": None,
        "keep": f.keep,
        "promisor": f.promisor,
        "bitmap": f.bitmap,
        "rev": f.rev,
        "in_midx": h.in_midx,
    }
    try:
        index = h.index.open()
        row["objects"] = index.num_objects
        row["index_version"] = index.version
    except PackscopeError as e:
        problems.add("packs", e)
    return row


def _packs(store: ObjectStore, problems: _Problems) -> Doc:
    """Local packs (as git count-objects counts them: one pack's objects
    each time, duplicates across packs included)."""
    local = sorted((h for h in store.packs if h.files.local), key=lambda h: h.files.name)
    rows = [_pack_row(h, problems) for h in local]
    versions: dict[str, int] = {}
    for r in rows:
        if r["index_version"] is not None:
            versions[str(r["index_version"])] = versions.get(str(r["index_version"]), 0) + 1
    scan = _local_scan(store)
    orphans = list(scan.orphans) if scan is not None else []
    pack_dir = scan.pack_dir if scan is not None else os.path.join(store.objects_dir, "pack")
    for name in orphans:
        problems.add(
            "packs",
            kind="pack-orphan",
            severity="warning",
            message=f"{name} has no {'.pack' if name.endswith('.idx') else '.idx'} beside it; not used",
            path=os.path.join(pack_dir, name),
            remedy="Remove the stray file, or restore its partner (git index-pack PACK writes an .idx).",
        )
    return {
        "count": len(rows),
        "objects": sum(r["objects"] or 0 for r in rows),
        "pack_bytes": sum(r["pack_bytes"] for r in rows),
        "index_bytes": sum(r["index_bytes"] or 0 for r in rows),
        "index_versions": dict(sorted(versions.items())),
        "keep": sum(r["keep"] for r in rows),
        "promisor": sum(r["promisor"] for r in rows),
        "bitmap": sum(r["bitmap"] for r in rows),
        "rev": sum(r["rev"] for r in rows),
        "orphans": orphans,
        "list": rows,
    }


def _also_packed(store: ObjectStore, ids: list[bytes]) -> int | None:
    """Loose objects that a pack holds too (git count-objects' prune-packable)."""
    packs = store.packs
    if len(ids) * max(1, len(packs)) > PRUNE_PACKABLE_BUDGET:
        return None
    n = 0
    for oid in ids:
        for h in packs:
            try:
                if h.index.find(oid) >= 0:
                    n += 1
                    break
            except PackscopeError:
                continue
    return n


def _loose(store: ObjectStore, problems: _Problems) -> Doc:
    from packscope.core.store.loose import count_loose_files

    files = count_loose_files(store.objects_dir, store.fmt)  # git count-objects' census
    counts = files.counts
    used = [c for c in counts if c]
    total = sum(counts)
    busiest = max(range(256), key=lambda i: counts[i]) if total else None
    return {
        "objects": total,
        "subdirectories_used": len(used),
        "per_subdirectory": {
            "min": min(counts),
            "max": max(counts),
            "mean": round(total / 256, 3),
            "min_used": min(used) if used else 0,
        },
        "busiest": f"{busiest:02x}" if busiest is not None else None,
        "also_packed": _also_packed(store, files.ids),
        "garbage": len(files.garbage),
    }


def _midx(store: ObjectStore, problems: _Problems) -> Doc | None:
    from packscope.core.store.midx import MultiPackIndex

    pack_dir = os.path.join(store.objects_dir, "pack")
    try:
        m = MultiPackIndex.discover(pack_dir, store.fmt)
    except PackscopeError as e:
        problems.add("multi-pack-index", e)
        return None
    if m is None:
        return None
    out: dict[str, object] = {
        "path": m.path,
        "chain": m.is_chain,
        "layers": None,
        "packs": None,
        "objects": None,
        "packs_missing": [],
        "used_by_store": any(x.path.startswith(pack_dir + os.sep) for x in store.midxs),
    }
    try:
        m.open()
        out.update(layers=len(m.layers), packs=m.num_packs, objects=m.num_objects)
        present = set(os.listdir(pack_dir))
        missing = [n for n in m.pack_names if (n.removesuffix(".idx")) + ".pack" not in present]
        out["packs_missing"] = missing
        for n in missing:
            problems.add(
                "multi-pack-index",
                kind="midx-pack-missing",
                severity="warning",
                message=f"the multi-pack-index covers {n}, which is not in the pack directory",
                path=m.path,
                remedy="Rewrite it: git multi-pack-index write.",
            )
    except (PackscopeError, OSError) as e:
        if isinstance(e, PackscopeError):
            problems.add("multi-pack-index", e)
    finally:
        m.close()
    return out


def _commit_graph(store: ObjectStore, problems: _Problems) -> Doc:
    from packscope.core.history.commit_graph import CommitGraph

    out: dict[str, object] = {
        "present": False,
        "kind": None,
        "path": None,
        "layers": 0,
        "commits": 0,
        "bloom_filters": False,
        "bloom_layers": 0,
        "bloom_settings": None,
        "generation_data": False,
    }
    single = os.path.join(store.objects_dir, "info", "commit-graph")
    chain = os.path.join(store.objects_dir, "info", "commit-graphs", "commit-graph-chain")
    if not (os.path.isfile(single) or os.path.isfile(chain)):
        return out
    out.update(
        present=True,
        kind="single" if os.path.isfile(single) else "chain",
        path=single if os.path.isfile(single) else chain,
    )
    try:
        graph = CommitGraph.open(store.objects_dir, store.fmt)
    except PackscopeError as e:
        problems.add("commit-graph", e)
        return out
    if graph is None:
        return out
    try:
        bloom = [layer for layer in graph.layers if layer.has_bloom]
        settings = bloom[-1].bloom_settings if bloom else None
        out.update(
            layers=len(graph.layers),
            commits=graph.num_commits,
            bloom_filters=bool(bloom),
            bloom_layers=len(bloom),
            bloom_settings=None
            if settings is None
            else {
                "hash_version": settings.hash_version,
                "num_hashes": settings.num_hashes,
                "bits_per_entry": settings.bits_per_entry,
            },
            generation_data=graph.uses_corrected_dates,
        )
        for layer in graph.layers:
            if getattr(layer, "bloom_unusable", None):
                problems.add(
                    "commit-graph",
                    kind="commit-graph-bloom",
                    severity="warning",
                    path=layer.path,
                    message=f"Bloom filters ignored: {layer.bloom_unusable}",
                    remedy="Rewrite it: git commit-graph write --reachable --changed-paths.",
                )
    finally:
        graph.close()
    return out


def _alternates(session: Session, problems: _Problems) -> list[Doc]:
    from packscope.core.store.loose import count_loose_files

    store, repo = session.store, session.repo
    from_env = {os.path.realpath(str(p)) for p in repo.env_alternates}
    out = []
    for d in store.object_dirs[1:]:
        packs = [h for h in store.packs if os.path.dirname(os.path.dirname(h.files.base)) == d]
        objects = 0
        for h in packs:
            try:
                objects += h.index.open().num_objects
            except PackscopeError as e:
                problems.add("alternates", e)
        out.append(
            {
                "path": d,
                "source": "environment" if os.path.realpath(d) in from_env else "objects/info/alternates",
                "packs": len(packs),
                "packed_objects": objects,
                "loose_objects": sum(count_loose_files(d, store.fmt).counts),
            }
        )
    return out


def _promised_counts(store: ObjectStore) -> Doc | None:
    """How many ids the promisor packs reference from outside themselves,
    and how many of those the store lacks (git would fetch them on demand)."""
    import time

    promisor = store.promisor
    if promisor is None:
        return None
    t0 = time.perf_counter()
    promisor.build()
    absent = sum(1 for oid in promisor.referenced() if not store.contains(oid, quick=True))
    return {
        "referenced": len(promisor),
        "absent": absent,
        "skipped": promisor.stats.skipped,
        "seconds": round(time.perf_counter() - t0, 3),
    }


def _promisor(repo: Repository, store: ObjectStore, problems: _Problems, promised: bool = False) -> Doc:
    from packscope.core.errors import ConfigError

    try:
        names = repo.promisor_remotes()
    except ConfigError as e:
        problems.add("promisor", e)
        names = []
    remotes = [
        {
            "name": n,
            "url": repo.config.get("remote", "url", n),
            "filter": repo.config.get("remote", "partialclonefilter", n),
        }
        for n in names
    ]
    packs = sorted(h.files.name for h in store.packs if h.files.promisor)
    if packs and not names:
        problems.add(
            "promisor",
            kind="promisor-without-remote",
            severity="warning",
            message=f"{len(packs)} pack(s) are marked .promisor but no promisor remote is configured: "
            "objects they reference count as missing, as in git",
            path=os.path.join(store.objects_dir, "pack"),
            remedy="Set remote.NAME.promisor = true (and extensions.partialClone) if this is a partial clone.",
        )
    return {
        "partial_clone": bool(names),
        "remotes": remotes,
        "packs": packs,
        "promised": _promised_counts(store) if promised else None,
    }


def _namespace(name: str) -> str:
    parts = name.split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else name


def _head(refs: RefStore, name: str, problems: _Problems, label: str) -> Doc:
    out: dict[str, object] = {"symref": None, "oid": None, "detached": False, "unborn": False}
    try:
        head = refs.read(name)
        if head is None:
            raise BadRefError(f"{label} does not exist", kind="ref-not-found", path=_path(refs.ref_path(name)))
        if head.symref is None:
            out.update(oid=_hex(head.oid), detached=True)
            return out
        out["symref"] = head.symref
        if refs.read(head.symref) is None:
            out["unborn"] = True
            return out
        out["oid"] = _hex(refs.follow(name)[-1].oid)
    except BadRefError as e:
        problems.add("refs", e, message=f"{label}: {e.message}")
    return out


def _refs(session: Session, problems: _Problems) -> Doc:
    refs = session.refs
    total = loose = packed = symbolic = 0
    namespaces: dict[str, int] = {}
    for ref in refs.iter_refs("refs/"):
        if ref.symref is not None:
            try:
                refs.follow(ref.name)
            except BadRefError as e:
                problems.add("refs", e, message=f"{ref.name}: {e.message}")
                continue  # git for-each-ref leaves out what does not resolve
            symbolic += 1
        total += 1
        if ref.source == "packed":
            packed += 1
        elif ref.source == "loose":
            loose += 1
        ns = _namespace(ref.name)
        namespaces[ns] = namespaces.get(ns, 0) + 1
    for problem in refs.problems:
        problems.add("refs", problem)
    return {
        "total": total,
        "loose": loose,
        "packed": packed,
        "symbolic": symbolic,
        "namespaces": dict(sorted(namespaces.items())),
        "packed_refs": {"present": refs.packed_path.is_file(), "traits": sorted(refs.packed_traits)},
        "head": _head(refs, "HEAD", problems, "HEAD"),
        "storage": refs.storage,  # "files" or "reftable" (extensions.refStorage)
        "reftable_tables": refs.reftable_tables() if refs.storage == "reftable" else None,
    }


def _worktrees(session: Session, problems: _Problems) -> list[Doc]:
    repo, refs = session.repo, session.refs
    if repo.is_linked_worktree:
        common = repo.common_dir
        main_path = common.parent if common.name == ".git" else common
        main_bare = False
    else:
        main_path = repo.work_tree if repo.work_tree is not None else repo.git_dir
        main_bare = repo.bare
    main_ref = "main-worktree/HEAD" if repo.is_linked_worktree else "HEAD"
    out = [
        {
            "name": None,
            "path": str(main_path),
            "main": True,
            "bare": main_bare,
            "current": not repo.is_linked_worktree,
            "head": None if main_bare else _head(refs, main_ref, problems, "HEAD of the main worktree"),
            "locked": False,
            "prunable": False,
        }
    ]
    for wt in repo.worktrees():
        out.append(
            {
                "name": wt.name,
                "path": _path(wt.work_tree),
                "main": False,
                "bare": False,
                "current": repo.git_dir == wt.git_dir,
                "head": _head(refs, f"worktrees/{wt.name}/HEAD", problems, f"HEAD of worktree {wt.name}"),
                "locked": wt.locked,
                "prunable": wt.prunable,
            }
        )
        if wt.prunable:
            problems.add(
                "worktrees",
                kind="worktree-prunable",
                severity="warning",
                path=str(wt.git_dir),
                message=f"worktree {wt.name}: its work tree is gone ({_path(wt.work_tree)})",
                remedy="git worktree prune removes its administrative files.",
            )
    return out


# --- what rewrites history ------------------------------------------------------------


def _shallow(repo: Repository, problems: _Problems) -> Doc:
    from packscope.core.repo.shallow import is_shallow, read_shallow, shallow_path

    out: dict[str, object] = {"present": is_shallow(repo), "path": None, "commits": 0}
    if out["present"]:
        out["path"] = _path(shallow_path(repo))
        try:
            out["commits"] = len(read_shallow(repo))
        except PackscopeError as e:
            out["commits"] = None
            problems.add("shallow", e)
    return out


def _replace_refs(session: Session, problems: _Problems) -> Doc:
    from packscope.core.repo.replace_refs import ReplaceRefs

    try:
        replace = ReplaceRefs.load(session.repo, session.refs)
    except PackscopeError as e:
        problems.add("replace-refs", e)
        return {"count": 0, "base": None, "used": False, "list": []}
    for text in replace.complaints:
        problems.add("replace-refs", kind="bad-replace-ref", message=text, severity="warning")
    return {
        "count": len(replace),
        "base": replace.base,
        "used": replace.enabled,  # false: GIT_NO_REPLACE_OBJECTS or core.useReplaceRefs=false
        "list": [{"original": a.hex(), "replacement": b.hex()} for a, b in sorted(replace.mapping.items())],
    }


def _grafts(repo: Repository, problems: _Problems) -> Doc:
    from packscope.core.repo.grafts import read_grafts

    grafts = read_grafts(repo)
    for text in grafts.complaints:
        problems.add("grafts", kind="bad-graft", message=text, path=str(grafts.path), severity="warning")
    return {"present": grafts.path.is_file(), "path": _path(grafts.path), "commits": len(grafts.parents)}
