"""Verification of a repository, as ``git fsck --full`` does it — streamed.

::

    checker = Fsck(repo, store, progress=cb, cancel=should_stop)
    for finding in checker.run():      # one packscope.core.fsck.findings.Finding at a time
        show(finding)
    checker.exit_status                # git fsck's bit set (0 = healthy)

Phases, in order (``progress(done, total, phase)`` names them):

1. ``packs`` — every pack/idx pair (packscope.core.fsck.pack_checks.check_pack); with
   full checks every entry is read, CRC- and hash-checked and its syntax
   checked (with ``jobs`` > 1 by worker processes, each a range of a large
   pack: packscope.core.fsck.parallel); stray ``.idx``/``.pack`` files are
   reported;
2. ``loose objects`` — inflate, header, hash and syntax of each;
3. ``connectivity`` — roots (HEADs, refs, reflogs, indexes) and the walk
   (packscope.core.fsck.reach), telling missing from promised, unavailable and
   unreadable; in a partial clone the walk stops at promisor objects, as
   git's does;
4. ``dangling objects`` — information, never failure;
5. ``commit-graph`` and ``multi-pack-index`` — checksums and agreement
   with the object database.

``connectivity_only`` skips the per-object reading of phases 1–2 (as git's
``--connectivity-only``): packs are still opened and matched with their
indexes, blobs are only checked for existence.

Damage stays local: a bad object is a finding, never an exception; the
checks go on with every other object.  The memory that grows with the
repository is one byte per packed object (its verified type) and one raw
id per reachable object.

``summary()`` counts what the walk reached: ``reachable`` objects (a
promisor object ends the walk, so in a partial clone that is little more than
the refs' targets and the local history), and the reachable objects that
could not be produced — ``missing``, ``promised``, ``unavailable``,
``unreadable`` — all of them, also those whose findings the per-file limit
left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypedDict, Unpack

from packscope.core.errors import PackscopeError
from packscope.core.fsck.findings import ERROR, ERROR_FATAL, Finding, Limiter, Ticker
from packscope.core.fsck.objects import ObjectTable, PackSlot, new_id_set
from packscope.core.fsck.reach import Connectivity, Promised
from packscope.core.fsck.resident import ResidentSetKeeper
from packscope.core.fsck.roots import Roots

if TYPE_CHECKING:
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository
    from packscope.core.store.odb import ObjectStore

Progress = Callable[[int, int, str], None]


class FsckOptions(TypedDict, total=False):
    """The keyword arguments of :class:`Fsck` (for :func:`fsck`)."""

    refs: RefStore | None
    connectivity_only: bool
    dangling: bool
    progress: Progress | None
    cancel: Callable[[], bool] | None
    severities: dict[str, str] | None
    limit_per_file: int
    jobs: int


class Fsck:
    def __init__(
        self,
        repo: Repository,
        store: ObjectStore,
        refs: RefStore | None = None,
        *,
        connectivity_only: bool = False,
        dangling: bool = True,
        progress: Progress | None = None,
        cancel: Callable[[], bool] | None = None,
        severities: dict[str, str] | None = None,
        limit_per_file: int = 100,
        jobs: int = 1,
    ) -> None:
        self.repo = repo
        self.store = store
        if refs is None:
            from packscope.core.repo.refs import RefStore

            refs = RefStore(repo)
        self.refs = refs
        self.full = not connectivity_only
        self.show_dangling = dangling
        self.severities = severities
        # every caller's check gives back the pages it read (packscope.core.fsck.resident)
        self.ticker = Ticker(ResidentSetKeeper(store, progress), cancel)
        self.limiter = Limiter(limit_per_file)
        self.jobs = max(1, jobs)
        self.exit_status = 0
        self.counts: dict[str, int] = {"error": 0, "warning": 0, "info": 0}
        self.objects_checked = 0
        self.reachable = 0
        self.absent: dict[str, int] = {}  # reachable objects that cannot be produced, by kind

    def run(self) -> Iterator[Finding]:
        """Every finding, as soon as it is known."""
        for finding in self._phases():
            if finding.severity == ERROR and self.exit_status != ERROR_FATAL:
                # git dies at a fatal finding: its status replaces the bits
                self.exit_status = (
                    ERROR_FATAL if finding.exit_bit == ERROR_FATAL else self.exit_status | finding.exit_bit
                )
            self.counts[finding.severity] = self.counts.get(finding.severity, 0) + 1
            yield finding

    def _phases(self) -> Iterator[Finding]:
        from packscope.core.fsck.commit_graph_checks import check_commit_graph
        from packscope.core.fsck.loose_checks import check_loose
        from packscope.core.fsck.midx_checks import check_midx
        from packscope.core.fsck.pack_checks import check_directories, check_pack
        from packscope.core.fsck.syntax_findings import check_special_blobs

        table = ObjectTable(self.store)
        if self.full and self.show_dangling:
            from packscope.core.repo.grafts import parent_overrides

            table.referenced = new_id_set(table.fmt.rawsz)  # what each object names, for the dangling phase
            table.grafted = parent_overrides(self.repo, table.fmt)[0] if self.repo is not None else {}
        promised = Promised(table, self.ticker)
        ticker, limiter = self.ticker, self.limiter
        yield from check_directories(self.store)
        total = sum(_count(s) for s in table.packs)
        ticker.start("packs", total)
        from packscope.core.fsck.parallel import ObjectPass

        with ObjectPass(table, self.jobs, limiter, promised, self.severities) as object_pass:
            for slot in table.packs:
                yield from check_pack(
                    table,
                    slot,
                    ticker,
                    full=self.full,
                    limiter=limiter,
                    promised=promised,
                    severities=self.severities,
                    object_pass=object_pass,
                )
        ticker.finish()
        self.objects_checked = ticker.done if self.full else 0
        if self.full:
            loose_total = sum(len(d.cache.entries(sub)) for d in table.loose for sub in range(256))
            ticker.start("loose objects", loose_total)
            yield from check_loose(table, ticker, limiter=limiter, promised=promised, severities=self.severities)
            ticker.finish()
            self.objects_checked += loose_total
            yield from check_special_blobs(table, self.store, promised, self.severities)
        table.seal()
        walk = Connectivity(table, self.repo, self.refs, ticker, full=self.full, promised=promised, limiter=limiter)
        ticker.start("connectivity", table.total_objects())
        roots = Roots(walk)
        yield from roots.heads()
        yield from roots.all_refs()
        yield from roots.reflogs()
        yield from roots.indexes()
        yield from walk.walk()
        ticker.finish()
        self.reachable = len(walk.seen)
        self.absent = dict(walk.absent)
        if self.show_dangling:
            yield from walk.dangling()  # frees walk.seen once it knows what is unreachable
        walk.seen.clear()  # the largest structure of the run: free it before the last phases
        alternates = tuple(str(d.path) for d in table.loose if not d.local)
        yield from check_commit_graph(table, str(self.repo.objects_dir), ticker, alternates)
        yield from check_midx(table, self.store, ticker, limiter)
        yield from limiter.suppressed("objects", 0)

    def summary(self) -> dict[str, int]:
        return {
            "exit": self.exit_status,
            "errors": self.counts.get("error", 0),
            "warnings": self.counts.get("warning", 0),
            "infos": self.counts.get("info", 0),
            "objects_checked": self.objects_checked,
            "reachable": self.reachable,
            **{kind: self.absent.get(kind, 0) for kind in ("missing", "promised", "unavailable", "unreadable")},
        }


def _count(slot: PackSlot) -> int:
    try:
        return slot.handle.index.open().num_objects
    except PackscopeError:  # reported by check_pack with its location
        return 0


def fsck(repo: Repository, store: ObjectStore, **options: Unpack[FsckOptions]) -> Iterator[Finding]:
    """Shorthand: the findings of ``Fsck(repo, store, **options).run()``."""
    return Fsck(repo, store, **options).run()
