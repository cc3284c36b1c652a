"""What a history walk needs from a repository, commit-graph first.

:class:`WalkSource` gives ``history.walk`` its three hooks:

* ``commit_info(oid)`` — ``(tree, parents, commit_time, generation)`` from
  the commit-graph when it holds the commit, else ``(tree, parents,
  commit_time)`` straight from the packs (packscope.core.history.commit_reader), else None
  (the walk reads the object through the store);
* ``first_parent_unchanged(paths)`` — a predicate built from the graph's
  changed-path Bloom filters: True only when the commit's filter proves
  that none of the paths changed against its first parent (a filter
  answering "definitely not" for a path and its leading directories);
* ``generation_numbers`` — git's generation_numbers_enabled(): the walk
  then streams ``--topo-order``/``--date-order`` as git does with a graph.

The graph is used when git would use it: ``core.commitGraph`` is not false,
and nothing rewrites commits behind the graph's back — no grafts in
``info/grafts``, no ``shallow`` file, no replace refs git reads (git's
commit_graph_compatible()).  When something does, commits are read through
packscope.core.history.commit_rewrites (shallow commits without parents,
grafted parents, replacements).  Bloom filters are read unless
``commitGraph.readChangedPaths`` is false.

A graph that cannot be read — at open, or on any commit later — is dropped
once: the error is recorded in :attr:`WalkSource.problems` and the walk goes
on parsing objects, so a damaged cache never stops a log.

Commit times come from the graph when it knows the commit (34 bits, as git
reads them), so ordering follows git's even for dates it truncates.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypedDict

from packscope.core import native
from packscope.core.errors import BadCommitGraphError, PackscopeError
from packscope.core.history.commit_reader import CommitHeaderReader, CommitReader, WalkTables

if TYPE_CHECKING:
    from packscope.core.history.bloom import BloomFilter, BloomSettings
    from packscope.core.history.commit_graph import CommitGraph
    from packscope.core.history.commit_rewrites import RewrittenReader
    from packscope.core.history.walked import CommitFacts, CommitInfo
    from packscope.core.native_api import WalkGraph
    from packscope.core.repo.grafts import Grafts
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.replace_refs import ReplaceRefs
    from packscope.core.repo.repository import Repository
    from packscope.core.store.odb import ObjectStore

# per layer: (map, commits, BIDX offset or -1, filter data offset, its size, hashes of each key per path)
BloomSpec = tuple[tuple[object, int, int, int, int, tuple[tuple[tuple[int, ...], ...], ...]], ...]

# (parent table of grafted and shallow commits, the grafts file, replace refs)
Rewrites = tuple[dict[bytes, tuple[bytes, ...]], "Grafts | None", "ReplaceRefs | None"]


class WalkOptions(TypedDict):
    """The keyword arguments :meth:`WalkSource.walk_options` gives ``history.walk``."""

    commit_info: CommitInfo
    first_parent_unchanged: Callable[[bytes], bool] | None
    generation_numbers: bool


# commit_graph and bloom are imported when a graph is there: a log in a
# repository without one should not pay for loading them.


class WalkSource:
    """Commit data for walks: the commit-graph when usable, packs otherwise."""

    def __init__(
        self,
        store: ObjectStore,
        graph: CommitGraph | None = None,
        *,
        bloom: bool = True,
        problems: list[PackscopeError] | None = None,
    ) -> None:
        self.store = store
        self.graph = graph
        self.bloom = bloom
        self.problems: list[PackscopeError] = list(problems or ())
        self.reader: CommitReader = CommitHeaderReader(store)
        self.rewrites: RewrittenReader | None = None  # when in use
        self.grafts: Grafts | None = None  # when a grafts file was read
        self.replace: ReplaceRefs | None = None  # when git reads some
        self._pos: dict[bytes, int] = {}  # graph position of commits met so far
        self._single = graph.layers[0] if graph is not None and len(graph.layers) == 1 else None
        self.generation_numbers = graph is not None and _generations_enabled(graph)
        if graph is not None:
            from packscope.core.history.commit_graph import PARENT_NONE

            self._parent_none = PARENT_NONE
        self.graph_commits = 0  # answered by the graph
        self.reasons: list[str] = []  # why the graph is not used, if it is not
        # (the graph checked for the compiled walk over positions, its layers' EDGE spans or None)
        self.position_walk: tuple[CommitGraph, tuple[tuple[int, int], ...] | None] | None = None

    # --- opening ------------------------------------------------------------------------

    @classmethod
    def open(cls, repo: Repository | None, store: ObjectStore, *, refs: RefStore | None = None) -> WalkSource:
        """The repository's walk source; ``refs`` (a packscope.core.repo.refs.RefStore) lets
        replace refs be seen (without it, only the loose refs/replace/ directory is)."""
        parents, grafts, replace = _rewrites(repo, refs, store)
        reasons = _graph_unusable(repo, parents, grafts, replace)
        problems: list[PackscopeError] = []
        graph = None
        if not reasons:
            # Like git: the first object directory (local, then alternates) that has one.
            for objects_dir in getattr(store, "object_dirs", None) or [store.objects_dir]:
                info = os.path.join(str(objects_dir), "info")
                if not (
                    os.path.isfile(os.path.join(info, "commit-graph"))
                    or os.path.isfile(os.path.join(info, "commit-graphs", "commit-graph-chain"))
                ):
                    continue
                from packscope.core.history.commit_graph import CommitGraph

                try:
                    # a split chain's lower layers may live in an alternate (git looks there too)
                    others = tuple(str(d) for d in getattr(store, "object_dirs", None) or () if d != objects_dir)
                    graph = CommitGraph.open(str(objects_dir), store.fmt, alternates=others)
                except BadCommitGraphError as e:
                    problems.append(e)
                    continue
                if graph is not None:
                    break
        bloom = repo.config.get_bool("commitgraph", "readchangedpaths", default=True) if repo is not None else True
        source = cls(store, graph, bloom=bool(bloom), problems=problems)
        source.reasons = reasons
        source.grafts = grafts
        source.replace = replace
        if parents or replace:
            from packscope.core.history.commit_rewrites import RewrittenReader

            source.reader = source.rewrites = RewrittenReader(source.reader, store, parents, replace)
        return source

    def close(self) -> None:
        if self.graph is not None:
            self.graph.close()

    @property
    def objects(self) -> CommitReader:
        """A store-like view for ``history.walk`` (``fmt``, ``read``,
        ``read_header``) that finds objects by the quick pack lookups of
        packscope.core.history.commit_reader: tags at the tips and trees of path-limited
        walks are read faster than through the store's traced lookups."""
        return self.reader

    def walk_options(self, paths: Iterable[bytes | str] | None = None) -> WalkOptions:
        """Keyword arguments for ``history.walk`` (commit_info, the Bloom
        hook for ``paths``, generation_numbers)."""
        # Without a graph the packs' reader is the hook itself (one call less per commit).
        return {
            "commit_info": GraphCommitInfo(self) if self.graph is not None else self.reader,
            "first_parent_unchanged": self.first_parent_unchanged(paths) if paths else None,
            "generation_numbers": self.generation_numbers,
        }

    # --- commits --------------------------------------------------------------------------

    def _drop_graph(self, e: BadCommitGraphError) -> None:
        """Once: record why, stop reading the graph (the walk goes on with
        the packs; commits already read keep the graph's answers)."""
        self.problems.append(e)
        if self.graph is not None:
            self.graph.close()
        self.graph = None
        self._single = None

    def commit_info(self, oid: bytes) -> CommitFacts | None:
        g = self.graph
        if g is not None:
            try:
                pos = self._pos.get(oid)
                if pos is None:
                    pos = g.lookup(oid)
                if pos is not None:
                    self.graph_commits += 1
                    return self._at(g, pos)
            except BadCommitGraphError as e:
                self._drop_graph(e)
        return self.reader(oid)

    def _at(self, g: CommitGraph, pos: int) -> tuple[bytes, tuple[bytes, ...], int, int]:
        layer = self._single or g.layer_of(pos)
        i = pos - layer.commit_base
        tree, p1, p2, level, time = layer.cdat(i)
        remember = self._pos
        none = self._parent_none
        if p1 == none or p2 != none or p1 >= layer.commit_base + layer.num_commits:
            # roots, merges and anything odd: the graph's own (checked) reading
            positions = g.parent_positions(pos)
        else:
            positions = (p1,)
        parents = []
        for pp in positions:
            poid = g.oid_at(pp)
            remember[poid] = pp  # the walk asks for the parents next: no search then
            parents.append(poid)
        generation = time + layer.generation_offset(i) if g.uses_corrected_dates else level
        return tree, tuple(parents), time, generation

    # --- changed-path filters ---------------------------------------------------------------

    def changed_path_filter(self, oid: bytes) -> BloomFilter | None:
        """The Bloom filter of a commit this source read from the graph
        (packscope.core.history.bloom.BloomFilter), or None: not from the graph, no filter."""
        pos = self._pos.get(oid)
        if pos is None or self.graph is None or not self.bloom:
            return None
        try:
            return self.graph.bloom_filter(pos)
        except BadCommitGraphError as e:
            self._drop_graph(e)
            return None

    def first_parent_unchanged(self, paths: Iterable[bytes | str]) -> Callable[[bytes], bool] | None:
        """A predicate for ``history.walk``: True when the commit's Bloom
        filter says no path in ``paths`` changed against its first parent.
        None when no filter can help (no graph, no Bloom data, or a
        pathspec that matches everything)."""
        g = self.graph
        if g is None or not self.bloom or not any(layer.has_bloom for layer in g.layers):
            return None
        from packscope.core.history.bloom import path_hashes, with_leading_dirs
        from packscope.core.history.tree_diff import normalize_paths

        specs = normalize_paths(paths)
        if not specs or b"" in specs:
            return None
        keys = [with_leading_dirs([s]) for s in specs]
        hashes: dict[
            BloomSettings, list[list[tuple[int, ...]]]
        ] = {}  # per Bloom settings (layers may differ): [[hashes of each key] per path]

        def unchanged(oid: bytes) -> bool:
            f = self.changed_path_filter(oid)
            if f is None:
                return False  # not from the graph, or no filter: nothing to consult
            per_path = hashes.get(f.settings)
            if per_path is None:
                per_path = hashes[f.settings] = [[path_hashes(k, f.settings) for k in ks] for ks in keys]
            # unchanged unless some path (all its keys) may have changed
            return not any(all(f.contains_hashes(h) for h in path_keys) for path_keys in per_path)

        b = native.backend
        if b is None:
            return unchanged
        # The same answer from the compiled check (the Python above is its
        # reference, and answers whatever the check doubts).
        blooms = tuple(
            (
                *layer.bloom_table(),
                tuple(tuple(path_hashes(k, layer.bloom_settings) for k in ks) for ks in keys)
                if layer.bloom_settings is not None
                else (),
            )
            for layer in g.layers
        )
        memo = self._pos
        check = b.graph_bloom_unchanged

        def unchanged_compiled(oid: bytes) -> bool:
            if self.graph is g and self.bloom:
                got = check(blooms, memo, oid)
                if got is not None:
                    return got
            return unchanged(oid)

        return BloomHint(unchanged_compiled, blooms)


class BloomHint:
    """:meth:`WalkSource.first_parent_unchanged`'s compiled predicate, with
    the filters as the compiled path-limited walk asks them by position
    (``blooms``: graph_walk_paths' argument, core/native_c/graph_plain.c)."""

    __slots__ = ("_check", "blooms")

    def __init__(self, check: Callable[[bytes], bool], blooms: BloomSpec) -> None:
        self._check = check
        self.blooms = blooms

    def __call__(self, oid: bytes) -> bool:
        return self._check(oid)


class GraphCommitInfo:
    """The walk's ``commit_info`` while a commit-graph answers: the source's
    :meth:`WalkSource.commit_info`, and what the compiled walk loop
    (core/native_c/plain_walk.c) reads with in its place: the packs' reader's
    tables and the graph's layers (graph_read.c answers as ``_at`` does,
    and leaves to it what it doubts)."""

    __slots__ = ("_graph", "_spec", "source")

    def __init__(self, source: WalkSource) -> None:
        self.source = source
        self._graph: CommitGraph | None = None  # the graph _spec reads
        self._spec: tuple[WalkGraph, int] | None = None  # (its walk tables, hexsz) for graph_commit

    def __call__(self, oid: bytes) -> CommitFacts | None:
        source = self.source
        graph = source.graph
        b = native.backend
        if graph is not None and b is not None:
            if graph is not self._graph:
                self._graph = graph
                self._spec = (
                    (tuple(layer.walk_table() for layer in graph.layers), graph.uses_corrected_dates, source._pos),
                    source.store.fmt.hexsz,
                )
            spec = self._spec
            if spec is not None:
                got = b.graph_commit(spec[0], oid, spec[1])
                if type(got) is tuple:
                    source.graph_commits += 1
                    return got
                if got is False:  # not in the graph: the packs
                    return source.reader(oid)
        return source.commit_info(oid)  # (doubt: the reference reads, and drops a broken graph)

    def walk_packs(self) -> WalkTables | None:
        source = self.source
        reader_packs = getattr(source.reader, "walk_packs", None)  # (not when history is rewritten)
        packs: WalkTables | None = reader_packs() if reader_packs is not None else None
        graph = source.graph
        if packs is None or graph is None:
            return packs  # (a graph dropped on damage: the packs answer alone, as commit_info does)
        tables, hexsz, prefix, _ = packs
        layers = tuple(layer.walk_table() for layer in graph.layers)
        return tables, hexsz, prefix, (layers, graph.uses_corrected_dates, source._pos)

    def walk_graph(self) -> tuple[tuple[int, int], ...] | None:
        """Each layer's EDGE (offset, entries) for the compiled loop over
        graph positions (core/native_c/graph_plain.c), when every commit of
        the graph reads without doubt (checked once); else None, and the
        loop reads commit by commit (graph_read.c, doubts left to
        :meth:`WalkSource.commit_info`)."""
        source = self.source
        graph = source.graph
        if graph is None:
            return None
        if source.position_walk is None or source.position_walk[0] is not graph:
            b = native.backend
            packs = self.walk_packs()
            spans = tuple(layer.edge_table() for layer in graph.layers)
            ok = (
                b is not None
                and packs is not None
                and packs[3] is not None
                and b.graph_walk_check(packs[3], spans, packs[1])
            )
            source.position_walk = (graph, spans if ok else None)
        return source.position_walk[1]

    def count_graph_answers(self, n: int) -> None:
        """The compiled loop's answers from the graph, in ``graph_commits``."""
        self.source.graph_commits += n


def _generations_enabled(graph: CommitGraph) -> bool:
    """git's generation_numbers_enabled(): the top layer's first commit has
    a non-zero topological level."""
    top = graph.layers[-1]
    if not top.num_commits:
        return False
    try:
        return top.cdat(0)[3] != 0
    except (BadCommitGraphError, ValueError):
        return False


def _rewrites(repo: Repository | None, refs: RefStore | None, store: ObjectStore) -> Rewrites:
    """(parent table of grafts and shallow commits, the grafts file read or
    None, the replace refs git reads or None)."""
    if repo is None:
        return {}, None, None
    from packscope.core.repo.grafts import parent_overrides
    from packscope.core.repo.replace_refs import ReplaceRefs

    parents, grafts = parent_overrides(repo, store.fmt)
    replace = ReplaceRefs.load(repo, refs) if refs is not None else _loose_replace_refs(repo)
    return parents, grafts, (replace if replace else None)


def _loose_replace_refs(repo: Repository) -> ReplaceRefs | None:
    """Without a ref store: the replace refs of the loose refs/replace/ directory."""
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.replace_refs import ReplaceRefs

    try:
        return ReplaceRefs.load(repo, RefStore(repo))
    except PackscopeError:
        return None


def _graph_unusable(
    repo: Repository | None,
    parents: dict[bytes, tuple[bytes, ...]],
    grafts: Grafts | None,
    replace: ReplaceRefs | None,
) -> list[str]:
    """Why git would not use a commit-graph here (empty: it would)."""
    if repo is None:
        return []
    reasons = []
    if repo.config.get_bool("core", "commitgraph", default=True) is False:
        reasons.append("core.commitGraph is false")
    if grafts is not None and grafts.parents:
        reasons.append("info/grafts lists grafts")
    if os.path.exists(os.path.join(str(repo.common_dir), "shallow")):
        reasons.append("the repository is shallow")
    if replace:
        reasons.append("refs/replace/ refs exist")
    return reasons
