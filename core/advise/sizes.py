"""git-sizer's metrics, with on-disk sizes, the largest blobs and paths,
and what the store holds beside reachable objects.

The walk covers what ``git rev-list --objects --all`` lists: every object
reachable from every ref and HEAD, parents as git sees them (shallow
boundaries and grafts cut history, replace refs are read through).  Each
object is read once: commits and trees for their contents, blobs only for
their type and size (and the bytes their stored copy takes: the entry in
its pack, up to the next entry, or the loose file, as
``%(objectsize:disk)``).

The metrics keep git-sizer's names and meanings:

* ``unique*``: counts and summed sizes of distinct objects; tree entries
  summed over distinct trees.
* ``max*``: the largest single commit, tree (entries), blob, the most
  parents, the longest chain of commits (a root commit has depth 1), the
  longest chain of tags (a tag of a commit has depth 1).
* ``maxCheckout*``: over every commit's root tree, what a checkout would
  hold, each repeated subtree counted each time it appears: directories
  (the root included), the deepest path (components) and the longest path
  (bytes, ``a/b/c``), blobs (regular files and executables), their summed
  size, symbolic links and submodules.

Each maximum is named where the walk first met it: ``<commit>:<path>``
(a tree or blob), ``<commit>^{tree}`` (a checkout), or the object's id.
Memory grows with the distinct trees (one index per tree and a row of
compact arrays) and the distinct commits and blobs (one id and a few
integers each); blob contents are never read.
"""

from __future__ import annotations

import contextlib
import heapq
import os
from array import array
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from packscope.core import native
from packscope.core.advise import stored_files
from packscope.core.errors import CancelledError, LookupFailedError, PackscopeError, PromisedObjectError
from packscope.core.objects import commit_header_fast, parse_tag, tree_items

if TYPE_CHECKING:
    from packscope.core._native import IdSet
    from packscope.core.repo.session import Session
    from packscope.core.store.location import Location

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
RELEASE_MASK = (1 << 15) - 1  # objects between releases of mapped pages
# the walk reads each tree and commit once: a small delta-base cache serves it
DELTA_BASE_BUDGET = 16 * MiB

# git-sizer's reference values: a value of 1.0 is "worth looking at"
REFERENCES: dict[str, float] = {
    "uniqueCommitCount": 500_000,
    "uniqueCommitSize": 250 * MiB,
    "uniqueTreeCount": 1_500_000,
    "uniqueTreeSize": 2 * GiB,
    "uniqueTreeEntries": 50_000_000,
    "uniqueBlobCount": 1_500_000,
    "uniqueBlobSize": 10 * GiB,
    "uniqueTagCount": 25_000,
    "referenceCount": 25_000,
    "maxCommitSize": 50 * KiB,
    "maxCommitParentCount": 10,
    "maxTreeEntries": 1_000,
    "maxBlobSize": 10 * MiB,
    "maxHistoryDepth": 500_000,
    "maxTagDepth": 1.001,
    "maxCheckoutTreeCount": 2_000,
    "maxCheckoutPathDepth": 10,
    "maxCheckoutPathLength": 100,
    "maxCheckoutBlobCount": 50_000,
    "maxCheckoutBlobSize": 1 * GiB,
    "maxCheckoutLinkCount": 25_000,
    "maxCheckoutSubmoduleCount": 100,
}
METRICS = tuple(REFERENCES)

# ref groups, as git-sizer names them
REF_GROUPS = (
    ("branches", "refs/heads/"),
    ("tags", "refs/tags/"),
    ("remotes", "refs/remotes/"),
    ("notes", "refs/notes/"),
    ("stash", "refs/stash"),
    ("pulls", "refs/pull/"),
    ("changes", "refs/changes/"),
)

# a tree being summed: [id, path prefix, entries, next entry, depth, length, trees, blobs, size, links, submodules]
_Frame = list[Any]

TREE, LINK, GITLINK = 0o40000, 0o120000, 0o160000
CHECKOUT = (
    "maxCheckoutPathDepth",
    "maxCheckoutPathLength",
    "maxCheckoutTreeCount",
    "maxCheckoutBlobCount",
    "maxCheckoutBlobSize",
    "maxCheckoutLinkCount",
    "maxCheckoutSubmoduleCount",
)


class Metric(NamedTuple):
    value: int
    reference: float
    object: str | None  # where the maximum is, for max* metrics

    @property
    def level(self) -> float:
        return self.value / self.reference

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "reference": self.reference, "level": self.level, "object": self.object}


class Largest(NamedTuple):
    oid: str
    path: str  # commit:path where first met
    size: int
    disk_size: int
    delta_depth: int

    def to_dict(self) -> dict[str, object]:
        return self._asdict()


class PathTotal(NamedTuple):
    path: str
    blobs: int  # distinct blobs first met at this path
    size: int
    disk_size: int

    def to_dict(self) -> dict[str, object]:
        return self._asdict()


class Stored(NamedTuple):
    """What the store holds besides the reachable objects (bytes on disk)."""

    reachable_objects: int
    reachable_disk: int
    unreachable_objects: int  # stored, not reachable from refs or HEAD
    unreachable_disk: int
    cruft_packs: int  # packs with .mtimes
    cruft_bytes: int  # their .pack, .idx, .mtimes, .rev
    temporary_files: int  # tmp_pack_*, tmp_idx_*, .tmp-*, tmp_obj_*
    temporary_bytes: int
    garbage_files: int  # as git count-objects -v counts garbage
    garbage_bytes: int
    pack_bytes: int  # every .pack file
    loose_objects: int
    loose_bytes: int

    def to_dict(self) -> dict[str, object]:
        return self._asdict()


class Sizes(NamedTuple):
    object_format: str
    metrics: dict[str, Metric]
    disk: dict[str, int]  # uniqueCommitDisk, uniqueTreeDisk, uniqueBlobDisk, uniqueTagDisk
    largest_blobs: list[Largest]  # by size
    largest_blobs_on_disk: list[Largest]
    largest_paths: list[PathTotal]  # by size
    largest_paths_on_disk: list[PathTotal]
    shallow: bool
    partial: bool
    promised: dict[str, int]  # missing objects a promisor remote holds, by type
    missing: dict[str, int]  # missing and not promised
    stored: Stored | None
    unreachable_loose: frozenset[bytes] = frozenset()  # loose objects nothing reaches (not in the document)


def _hex(oid: bytes) -> str:
    return oid.hex()


class _TreeRows:
    """Per distinct tree, the checkout aggregates, in compact arrays."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}
        self.depth = array("I")
        self.length = array("I")
        self.trees = array("Q")
        self.blobs = array("Q")
        self.blob_size = array("Q")
        self.links = array("Q")
        self.submodules = array("Q")

    def add(self, oid: bytes, row: tuple[int, int, int, int, int, int, int]) -> int:
        i = len(self.depth)
        self.index[oid] = i
        d, ln, t, b, bs, lk, sm = row
        self.depth.append(d)
        self.length.append(ln)
        self.trees.append(t)
        self.blobs.append(b)
        self.blob_size.append(bs)
        self.links.append(lk)
        self.submodules.append(sm)
        return i

    def row(self, i: int) -> tuple[int, int, int, int, int, int, int]:
        return (
            self.depth[i],
            self.length[i],
            self.trees[i],
            self.blobs[i],
            self.blob_size[i],
            self.links[i],
            self.submodules[i],
        )


class SizeWalk:
    """One walk over everything reachable; :meth:`run` gives :class:`Sizes`."""

    def __init__(
        self,
        session: Session,
        *,
        top: int = 20,
        cancel: Callable[[], bool] | None = None,
        progress: Callable[[str, int], None] | None = None,
        stored: bool = True,
    ) -> None:
        self.session = session
        self.view = session.objects
        self.store = session.store
        self.fmt = session.fmt
        self.top = top
        self.cancel = cancel
        self.progress = progress
        self.want_stored = stored
        cache = getattr(self.store, "delta_cache", None)
        if cache is not None and cache.budget > DELTA_BASE_BUDGET:
            cache.budget = DELTA_BASE_BUDGET
        self.ticks = 0
        self.max: dict[str, tuple[int, str | None]] = {m: (0, None) for m in METRICS if m.startswith("max")}
        self.count = dict.fromkeys(("commit", "tree", "blob", "tag"), 0)
        self.size = dict.fromkeys(("commit", "tree", "blob", "tag"), 0)
        self.disk = dict.fromkeys(("commit", "tree", "blob", "tag"), 0)
        self.unreachable_loose: list[bytes] = []  # filled by the stored pass
        self.tree_entries = 0
        self.trees = _TreeRows()
        self.blob_size: dict[bytes, int] = {}
        self.commit_depth: dict[bytes, int] = {}
        self.tags: set[bytes] = set()
        self.promised = dict.fromkeys(("commit", "tree", "blob", "tag"), 0)
        self.missing = dict.fromkeys(("commit", "tree", "blob", "tag"), 0)
        self.absent: set[bytes] = set()
        # top blobs: heaps of (size, oid, path, disk)
        self.big: list[tuple[int, bytes, str, int]] = []
        self.big_disk: list[tuple[int, bytes, str, int]] = []
        self.paths: dict[str, list[int]] = {}
        parents = self.view.parent_table
        self.parent_override = parents

    # --- helpers -------------------------------------------------------------------

    def _tick(self, phase: str, *, every: int = 255) -> None:
        """Count an object; ask ``cancel`` at the first and then every
        ``every + 1``-th (every commit: commits are the walk's slow steps)."""
        self.ticks += 1
        if self.ticks & RELEASE_MASK == 0:
            # the pages of the packs read so far back to the kernel: a walk
            # over a whole pack would otherwise keep all of it resident
            self.store.release_mapped_pages()
        if self.ticks & every == 1 or every == 0:
            if self.cancel is not None and self.cancel():
                raise CancelledError("advise stopped on request")
            if self.progress is not None and self.ticks & 1023 == 1:
                self.progress(phase, self.ticks)

    def _max(self, name: str, value: int, where: str | None) -> None:
        if value > self.max[name][0]:
            self.max[name] = (value, where)

    def _read(self, oid: bytes, kind: str) -> bytes | None:
        """The object's bytes, or None when it is absent (promised or missing);
        counts it, with the bytes its stored copy takes."""
        target = self.view.target(oid)
        try:
            loc = self.store.locate(target)
            if loc is None:
                raise self.store.missing_error(target)
            got, data = self.store.read(target, loc)
        except LookupFailedError as e:
            self._absent(oid, kind, e)
            return None
        self.count[got] += 1
        self.size[got] += len(data)
        self.disk[got] += _disk_of(loc)
        return data

    def _absent(self, oid: bytes, kind: str, e: Exception) -> None:
        if oid not in self.absent:
            self.absent.add(oid)
            (self.promised if isinstance(e, PromisedObjectError) else self.missing)[kind] += 1

    def _info(self, oid: bytes) -> tuple[str, int, int]:
        """(type, size, bytes on disk) without reading the object."""
        from packscope.core.store.loose import read_loose_header

        target = self.view.target(oid)
        loc = self.store.locate(target)
        if loc is None:
            raise self.store.missing_error(target)
        entry = loc.pack_entry()
        if entry is None:
            path = loc.loose_path()
            kind, size = read_loose_header(path, target)
            return kind, size, stored_files.file_size(path)
        handle, offset = entry
        kind, size = handle.pack.info_at(offset)
        return kind, size, handle.pack.disk_size(offset)

    # --- roots ---------------------------------------------------------------------------

    def roots(self) -> tuple[list[tuple[str, bytes]], dict[str, int]]:
        refs = self.session.refs
        out: list[tuple[str, bytes]] = []
        groups = {name: 0 for name, _ in REF_GROUPS}
        groups["other"] = 0
        total = 0
        for ref in refs.iter_refs("refs/"):
            total += 1
            for name, prefix in REF_GROUPS:
                if ref.name.startswith(prefix) or ref.name == prefix:
                    groups[name] += 1
                    break
            else:
                groups["other"] += 1
            try:
                oid = ref.oid if ref.symref is None else refs.resolve(ref.name)
            except PackscopeError:
                continue
            if oid is not None:
                out.append((ref.name, oid))
        try:
            head = refs.resolve("HEAD")
        except PackscopeError:
            head = None
        if head is not None:
            out.append(("HEAD", head))
        groups["total"] = total
        return out, groups

    # --- the walk -----------------------------------------------------------------------

    def run(self) -> Sizes:
        roots, groups = self.roots()
        commits: list[bytes] = []
        for name, oid in roots:
            self._root(name, oid, commits)
        self._commits(commits)
        metrics = self._metrics(groups)
        stored = self._stored() if self.want_stored else None
        return Sizes(
            self.fmt.name,
            metrics,
            {
                "uniqueCommitDisk": self.disk["commit"],
                "uniqueTreeDisk": self.disk["tree"],
                "uniqueBlobDisk": self.disk["blob"],
                "uniqueTagDisk": self.disk["tag"],
            },
            self._largest(self.big),
            self._largest(self.big_disk),
            self._paths(lambda t: t.size),
            self._paths(lambda t: t.disk_size),
            bool(self.parent_override) and _is_shallow(self.session),
            bool(getattr(self.store, "partial_clone", False)),
            {k: v for k, v in self.promised.items() if v},
            {k: v for k, v in self.missing.items() if v},
            stored,
            frozenset(self.unreachable_loose),
        )

    def _kind(self, oid: bytes) -> str | None:
        try:
            return self.view.read_header(oid)[0]
        except PackscopeError:
            return None

    def _root(self, name: str, oid: bytes, commits: list[bytes]) -> None:
        """A ref's target: tags followed (their depth), then the object."""
        depth = 0
        first_tag: bytes | None = None
        while True:
            kind = self._kind(oid)
            if kind != "tag":
                break
            depth += 1
            first_tag = first_tag or oid
            if oid in self.tags:
                data = self.view.read(oid)[1]
            else:
                self.tags.add(oid)
                got = self._read(oid, "tag")
                if got is None:
                    return
                data = got
            try:
                oid = parse_tag(data, self.fmt, oid).object
            except PackscopeError:
                return
        if first_tag is not None:
            self._max("maxTagDepth", depth, _hex(first_tag))
        if kind == "commit":
            commits.append(oid)
        elif kind == "tree":
            self._tree(oid, name + ":")
        elif kind == "blob":
            self._blob(oid, name, 0)
        elif kind is None:
            self._read(oid, "commit")  # counted as absent

    def _commits(self, tips: list[bytes]) -> None:
        """Every commit once, depth-first from the tips; history depth in post-order."""
        depth = self.commit_depth
        for tip in tips:
            if tip in depth:
                continue
            stack: list[tuple[bytes, tuple[bytes, ...] | None]] = [(tip, None)]
            while stack:
                oid, parents = stack[-1]
                if parents is None:
                    if oid in depth:
                        stack.pop()
                        continue
                    parents = self._commit(oid)
                    if parents is None:
                        depth[oid] = 0
                        stack.pop()
                        continue
                    stack[-1] = (oid, parents)
                    pending = [p for p in parents if p not in depth]
                    if pending:
                        stack.extend((p, None) for p in reversed(pending))
                        continue
                d = 1 + max((depth.get(p, 0) for p in parents), default=0)
                depth[oid] = d
                self._max("maxHistoryDepth", d, _hex(oid))
                stack.pop()

    def _commit(self, oid: bytes) -> tuple[bytes, ...] | None:
        self._tick("commits", every=0)
        data = self._read(oid, "commit")
        if data is None:
            return None
        try:
            tree, parents, _ = commit_header_fast(data, self.fmt, oid)
        except PackscopeError:
            return ()
        parents = self.parent_override.get(oid, parents)
        name = _hex(oid)
        self._max("maxCommitSize", len(data), name)
        self._max("maxCommitParentCount", len(parents), name)
        row = self._tree(tree, name + ":")
        if row is not None:
            for metric, value in zip(CHECKOUT, row, strict=True):
                self._max(metric, value, name + "^{tree}")
        return parents

    def _tree(self, root: bytes, where: str) -> tuple[int, int, int, int, int, int, int] | None:
        """The checkout aggregates of ``root`` (each distinct tree read once)."""
        rows = self.trees
        if root in rows.index:
            return rows.row(rows.index[root])
        data = self._read(root, "tree")
        if data is None:
            return None
        # frames: [oid, path prefix, items, next item, depth, length, trees, blobs, size, links, subs]
        frames: list[_Frame] = [self._frame(root, where, data)]
        result: tuple[int, int, int, int, int, int, int] | None = None
        index = rows.index
        sizes = self.blob_size
        absent = self.absent
        blob = self._blob
        while frames:
            f = frames[-1]
            items = f[2]
            i = f[3]
            n = len(items)
            descended = False
            depth, length, blobs, blob_bytes, links, subs = f[4], f[5], f[7], f[8], f[9], f[10]
            while i < n:
                mode, name, oid = items[i]
                i += 1
                if mode == TREE:
                    j = index.get(oid)
                    if j is None:
                        if oid in absent:
                            continue
                        sub = self._read(oid, "tree")
                        if sub is None:
                            continue
                        f[3] = i - 1  # come back to this entry
                        descended = True
                        break
                    f[4], f[5], f[7], f[8], f[9], f[10] = depth, length, blobs, blob_bytes, links, subs
                    _fold(f, name, rows.row(j))
                    depth, length, blobs, blob_bytes, links, subs = f[4], f[5], f[7], f[8], f[9], f[10]
                    continue
                if depth < 1:
                    depth = 1
                if len(name) > length:
                    length = len(name)
                if mode == GITLINK:
                    subs += 1
                    continue
                size = sizes.get(oid)
                if size is None:
                    size = blob(oid, f[1] + name.decode("utf-8", "surrogateescape"), mode) if oid not in absent else 0
                if mode == LINK:
                    links += 1
                else:
                    blobs += 1
                    blob_bytes += size
            f[4], f[5], f[7], f[8], f[9], f[10] = depth, length, blobs, blob_bytes, links, subs
            if descended and sub is not None:
                frames.append(self._frame(oid, f[1] + name.decode("utf-8", "surrogateescape") + "/", sub))
                continue
            frames.pop()
            row = (f[4], f[5], f[6], f[7], f[8], f[9], f[10])
            rows.add(f[0], row)
            if frames:
                # the parent resumes at the subtree entry, now known
                p = frames[-1]
                _, pname, _ = p[2][p[3]]
                _fold(p, pname, row)
                p[3] += 1
            else:
                result = row
        return result

    def _frame(self, oid: bytes, prefix: str, data: bytes) -> _Frame:
        """A tree's frame for the loop in :meth:`_tree`: [id, path prefix,
        entries left to visit, next one, depth, length, trees, blobs, size,
        links, submodules].  With the compiled module the tree's own
        entries are summed in one call (``tree_sums``) and only its
        subtrees are left to visit; else every entry is."""
        self._tick("trees")
        b = native.backend
        sums = b.tree_sums(data, self.fmt.rawsz, self.blob_size) if b is not None else None
        if sums is None:
            items = tree_items(data, self.fmt, oid)
            self.tree_entries += len(items)
            self._max("maxTreeEntries", len(items), prefix[:-1] if prefix.endswith("/") else prefix)
            return [oid, prefix, items, 0, 0, 0, 1, 0, 0, 0, 0]
        n, subtrees, blob_bytes = sums.entries, sums.subtrees, sums.blob_bytes
        self.tree_entries += n
        self._max("maxTreeEntries", n, prefix[:-1] if prefix.endswith("/") else prefix)
        for mode, name, blob in sums.unseen:
            if blob in self.absent:
                continue
            size = self._blob(blob, prefix + name.decode("utf-8", "surrogateescape"), mode)
            if mode != LINK:
                blob_bytes += size
        depth = 1 if n > len(subtrees) else 0
        return [oid, prefix, subtrees, 0, depth, sums.length, 1, sums.blobs, blob_bytes, sums.links, sums.gitlinks]

    def _blob(self, oid: bytes, path: str, mode: int) -> int:
        size = self.blob_size.get(oid)
        if size is not None:
            return size
        if oid in self.absent:
            return 0
        self._tick("blobs")
        try:
            _, size, disk = self._info(oid)
        except LookupFailedError as e:
            self._absent(oid, "blob", e)
            return 0
        except PackscopeError:
            return 0
        self.blob_size[oid] = size
        self.count["blob"] += 1
        self.size["blob"] += size
        self.disk["blob"] += disk
        self._max("maxBlobSize", size, path)
        _push(self.big, self.top, (size, oid, path, disk))
        _push(self.big_disk, self.top, (disk, oid, path, size))
        _, colon, file = path.partition(":")
        if not colon or not file:
            return size  # a blob a ref names directly: no path
        t = self.paths.get(file)
        if t is None:
            self.paths[file] = [1, size, disk]
        else:
            t[0] += 1
            t[1] += size
            t[2] += disk
        return size

    # --- results ---------------------------------------------------------------------------

    def _metrics(self, groups: dict[str, int]) -> dict[str, Metric]:
        values: dict[str, tuple[int, str | None]] = {
            "uniqueCommitCount": (self.count["commit"], None),
            "uniqueCommitSize": (self.size["commit"], None),
            "uniqueTreeCount": (self.count["tree"], None),
            "uniqueTreeSize": (self.size["tree"], None),
            "uniqueTreeEntries": (self.tree_entries, None),
            "uniqueBlobCount": (self.count["blob"], None),
            "uniqueBlobSize": (self.size["blob"], None),
            "uniqueTagCount": (self.count["tag"], None),
            "referenceCount": (groups["total"], None),
            **self.max,
        }
        out = {m: Metric(values[m][0], REFERENCES[m], values[m][1]) for m in METRICS}
        for name, _ in (*REF_GROUPS, ("other", "")):
            out[f"referenceCount.{name}"] = Metric(groups[name], REFERENCES["referenceCount"], None)
        return out

    def _largest(self, heap: list[tuple[int, bytes, str, int]]) -> list[Largest]:
        out = []
        by_size = heap is self.big
        for first, oid, path, other in sorted(heap, key=lambda t: (-t[0], t[1])):
            size, disk = (first, other) if by_size else (other, first)
            out.append(Largest(_hex(oid), path, size, disk, self._delta_depth(oid)))
        return out

    def _delta_depth(self, oid: bytes) -> int:
        from packscope.core.store.pack_chain import delta_chain

        try:
            loc = self.store.locate(oid)
            entry = loc.pack_entry() if loc is not None else None
            if entry is None:
                return 0
            handle, offset = entry
            return len(delta_chain(handle.pack, offset)) - 1
        except PackscopeError:
            return 0

    def _paths(self, key: Callable[[PathTotal], int]) -> list[PathTotal]:
        totals = (PathTotal(p, t[0], t[1], t[2]) for p, t in self.paths.items())
        return heapq.nlargest(self.top, totals, key=lambda t: (key(t), t.path))

    # --- what else the store holds ------------------------------------------------------------

    def _reachable(self, oid: bytes) -> bool:
        return oid in self.blob_size or oid in self.trees.index or oid in self.commit_depth or oid in self.tags

    def _stored(self) -> Stored:
        store = self.store
        objects_dir = str(self.session.repo.objects_dir)
        reach_n = un_n = un_disk = 0
        reach_disk = sum(self.disk.values())
        counted = _id_set(self.fmt.rawsz)
        pack_bytes = 0
        handles = [h for h in store.all_packs() if h.files.local]
        loose_files = list(stored_files.loose_files(objects_dir, self.fmt.hexsz))
        # an id is looked for among those counted only when it may be stored twice
        dedupe = len(handles) + bool(loose_files) > 1
        for h in handles:
            pack_bytes += h.files.pack_size
            if os.path.exists(h.files.base + ".mtimes"):
                continue  # counted as cruft below
            try:
                names = h.index.names()
                for oid in names:
                    self._tick("store")
                    if dedupe:
                        if oid in counted:
                            continue
                        counted.add(oid)
                    if self._reachable(oid):
                        reach_n += 1
                        continue
                    un_n += 1
                    with contextlib.suppress(PackscopeError):
                        un_disk += h.pack.disk_size(h.index.offset_at(h.index.find(oid)))
            except PackscopeError:
                continue
        loose_n = loose_b = 0
        for oid, path in loose_files:
            loose_n += 1
            try:
                size = os.lstat(path).st_size
            except OSError:
                continue
            loose_b += size
            if oid in counted:
                continue
            counted.add(oid)
            if self._reachable(oid):
                reach_n += 1
            else:
                un_n += 1
                un_disk += size
                self.unreachable_loose.append(oid)
        cruft_n, cruft_b = stored_files.cruft_packs(objects_dir)
        tmp_n, tmp_b = stored_files.temporary_files(objects_dir)
        garbage_n, garbage_b = stored_files.count_garbage(objects_dir, self.fmt)
        return Stored(
            reach_n,
            reach_disk,
            un_n,
            un_disk,
            cruft_n,
            cruft_b,
            tmp_n,
            tmp_b,
            garbage_n,
            garbage_b,
            pack_bytes,
            loose_n,
            loose_b,
        )


def _id_set(rawsz: int) -> set[bytes] | IdSet:
    b = native.backend
    return b.id_set(rawsz) if b is not None else set()


def _disk_of(loc: Location) -> int:
    """Bytes the copy at ``loc`` takes: its pack entry, or its loose file."""
    entry = loc.pack_entry()
    if entry is None:
        return stored_files.file_size(loc.loose_path())
    handle, offset = entry
    try:
        return handle.pack.disk_size(offset)
    except PackscopeError:
        return 0


def _fold(f: _Frame, name: bytes, row: tuple[int, int, int, int, int, int, int]) -> None:
    d, ln, t, b, bs, lk, sm = row
    if d + 1 > f[4]:
        f[4] = d + 1
    length = len(name) + 1 + ln if ln else len(name)
    if length > f[5]:
        f[5] = length
    f[6] += t
    f[7] += b
    f[8] += bs
    f[9] += lk
    f[10] += sm


def _leaf(f: _Frame, name: bytes) -> None:
    if f[4] < 1:
        f[4] = 1
    if len(name) > f[5]:
        f[5] = len(name)


def _push(heap: list[tuple[Any, ...]], top: int, item: tuple[Any, ...]) -> None:
    if len(heap) < top:
        heapq.heappush(heap, item)
    elif item > heap[0]:
        heapq.heapreplace(heap, item)


def _is_shallow(session: Session) -> bool:
    from packscope.core.repo.shallow import is_shallow

    return is_shallow(session.repo)


def sizes(session: Session, **kw: object) -> Sizes:
    return SizeWalk(session, **kw).run()  # type: ignore[arg-type]
