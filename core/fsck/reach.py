"""fsck's reachability: git's roots, the walk, missing vs promised, dangling.

Roots are what git fsck starts from: HEAD of every worktree, every ref,
every reflog entry (old and new ids), and every index (entries, cache tree,
resolve-undo records), found by packscope.core.fsck.roots.  Each root is
checked where it is found (:meth:`Connectivity.root`), so a bad ref is
named as such; then the walk visits commits (tree, parents), trees
(entries; gitlinks are other repositories' commits and are skipped) and tags
(their target), reading every object except blobs, whose existence — and,
after a full check, type — the object table answers without reading.

An object that cannot be produced is one of:

* **missing** — no copy anywhere (exit bit 2);
* **promised** — missing, but referenced by an object of a promisor pack
  (a partial clone: git's ``is_promisor_object``); not an error;
* **unavailable** — only in a pack fsck refused (trailer/index mismatch);
* **unreadable** — stored, but every copy is damaged.

In a partial clone the walk stops, as git's does (``mark_object``), at every
*promisor object* — one in a promisor pack or referenced by an object of
one: it is reachable, but what it references is not followed, because the
promisor remote has all of it.  A local commit that was pushed and then
became the parent of a fetched commit is such an object; an absent blob under
it is not missing for git, nor here.  What stopped objects reference still
counts as used when dangling objects are sought.

The only memory that grows with the repository is ``seen``, one raw id per
reachable object, and the walk's stack.  Dangling objects are found
afterwards among the unreachable ones: an unreachable object that no other
unreachable object references (references from reachable objects are
impossible: they would make it reachable).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from stat import S_IFDIR, S_IFLNK, S_IFMT, S_IFREG
from typing import TYPE_CHECKING

from packscope.core import native
from packscope.core.errors import CorruptObjectError, PackscopeError
from packscope.core.fsck.findings import (
    ERROR,
    ERROR_OBJECT,
    ERROR_REACHABLE,
    ERROR_REFS,
    INFO,
    REMEDIES,
    Finding,
    Limiter,
    Ticker,
    from_error,
)
from packscope.core.fsck.objects import ObjectTable, PackSlot, Unreadable, Where, describe, references
from packscope.core.fsck.roots import root_finding_message
from packscope.core.objects import commit_header_fast, parse_tag, tree_items
from packscope.core.repo.grafts import parent_overrides
from packscope.core.store.promisor import PromisorSet

if TYPE_CHECKING:
    from packscope.core._native import IdSet
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository

# Who needs an object the walk visits: a root's label, or (type, id) of the
# object that names it.
Referrer = str | tuple[str, bytes]

VALID_TYPES = ("commit", "tree", "blob", "tag")

# role of a root -> (finding kind, area, exit bit) when its object cannot be produced
ROLES = {
    "ref": ("ref-broken", "refs", ERROR_REACHABLE),
    "branch": ("ref-broken", "refs", ERROR_REACHABLE),
    "reflog": ("reflog-broken", "reflog", ERROR_REACHABLE),
    "index": ("index-broken", "index", ERROR_REACHABLE),
    # git counts cache-tree and resolve-undo breakage as ref errors
    "cache-tree": ("index-broken", "index", ERROR_REFS),
    "resolve-undo": ("index-broken", "index", ERROR_REFS),
}


class Promised(PromisorSet):
    """git's is_promisor_object (packscope.core.store.promisor.PromisorSet) as fsck asks it:
    over the packs fsck did not refuse, and only in a partial clone (a
    promisor remote configured: the store knows).  Built on first use."""

    def __init__(self, table: ObjectTable, ticker: Ticker | None = None) -> None:
        slots = {s.handle.files.base: s for s in table.packs}
        # the build reports and honours cancel like every other fsck phase
        super().__init__(
            table.store,
            skip=lambda h: bool(getattr(slots.get(h.files.base), "rejected", None)),
            progress=ticker.progress if ticker else None,
            cancel=ticker.cancel if ticker else None,
        )
        self.enabled = bool(getattr(table.store, "partial_clone", False))

    def __bool__(self) -> bool:
        return self.enabled and super().__bool__()

    def is_promised(self, oid: bytes) -> bool:
        return self.enabled and super().is_promised(oid)

    __call__ = is_promised


class Connectivity:
    def __init__(
        self,
        table: ObjectTable,
        repo: Repository,
        refs: RefStore,
        ticker: Ticker,
        *,
        full: bool,
        promised: Promised,
        limiter: Limiter | None = None,
    ) -> None:
        self.table, self.repo, self.refs, self.ticker = table, repo, refs, ticker
        self.full = full
        self.promised = promised
        self.limiter = limiter or Limiter()
        self.fmt = table.fmt
        self.null = table.fmt.null
        # one raw id per reachable object: compiled, the ids inline (no object per id)
        compiled = native.backend
        self.seen: set[bytes] | IdSet = compiled.id_set(table.fmt.rawsz) if compiled is not None else set()
        self.rooted: set[bytes] = set()
        self.stack: list[tuple[bytes, str | None, Referrer]] = []
        self.stopped: list[bytes] = []  # reachable promisor objects the walk did not follow
        self.roots = 0
        # objects that could not be produced, by kind (missing, promised, unavailable, unreadable),
        # counted whether or not the limiter lets their findings through
        self.absent: dict[str, int] = {}
        self._absent_roots: set[bytes] = set()
        self._base_offsets: dict[int, set[int]] = {}  # per pack: the entries deltas build on
        # git reads shallow commits without parents and grafted ones with theirs
        self.grafted = parent_overrides(repo, self.fmt)[0] if repo is not None else {}

    # --- absent objects -----------------------------------------------------------------

    def usable(self, oid: bytes) -> Where | None:
        """A copy not known to be damaged, or None."""
        table = self.table
        where = table.find(oid)
        if where is None or not table.is_corrupt(where, oid):
            return where
        for other in table.copies(oid):
            if not table.is_corrupt(other, oid):
                return other
        return None

    def absence(self, oid: bytes, errors: Sequence[PackscopeError] = ()) -> tuple[str, str, tuple[str, ...]]:
        """(kind, why, copies) for an object that cannot be produced."""
        copies = self.table.copies(oid, include_rejected=True)
        if not copies:
            if self.promised(oid):
                return "promised", "is missing but promised by a promisor remote", ("promised",)
            return "missing", "is missing", ()
        described = tuple(
            describe(c)
            + (f" (refused pack: {c[0].rejected})" if isinstance(c[0], PackSlot) and c[0].rejected else " (damaged)")
            for c in copies
        )
        if all(isinstance(c[0], PackSlot) and c[0].rejected for c in copies):
            return "unavailable", "is only in a pack fsck refused", described
        why = f": {errors[0].message}" if errors else ""
        return "unreadable", f"is stored, but no copy can be read{why}", described

    def in_a_usable_pack(self, oid: bytes) -> bool:
        """Whether a pack fsck did not refuse lists ``oid``: git's walk then
        lets an unreadable copy be ("it is in pack - forget about it"; the
        pack check already failed on it, bit 4), where a ref or a reflog
        naming it is an error all the same."""
        for slot, pos in self.table.copies(oid):
            if not isinstance(slot, PackSlot) or pos is None:
                continue
            try:
                offset = slot.handle.index.offset_at(pos)
                bases = self._base_offsets.get(slot.no)
                if bases is None:
                    bases = self._base_offsets[slot.no] = slot.handle.pack.open().base_offsets()
            except PackscopeError:
                continue
            # a delta on it failed too: git then marks it bad, and bad
            # objects are no longer "in pack" for it (a broken link, bit 2)
            if offset not in bases:
                return True
        return False

    def _count_absent(self, oid: bytes, kind: str) -> None:
        if oid in self._absent_roots:
            return  # several roots (or a root and the walk) name it: one object
        if oid not in self.seen:  # the walk counts each object once by itself
            self._absent_roots.add(oid)
        self.absent[kind] = self.absent.get(kind, 0) + 1

    # --- roots ----------------------------------------------------------------------------

    def root(
        self,
        oid: bytes,
        label: str,
        role: str,
        *,
        expected: str | None = None,
        path: str | None = None,
        offset: int | None = None,
        line: int | None = None,
    ) -> Finding | None:
        """Check one root (packscope.core.fsck.roots finds them) and queue it
        for the walk; the finding when it names nothing usable."""
        if oid == self.null or (oid in self.rooted and role != "branch"):
            return None
        self.roots += 1
        where = self.usable(oid)
        if where is None:
            kind, why, copies = self.absence(oid)
            self._count_absent(oid, kind)
            if kind == "promised":
                return None
            if kind == "unreadable" and role == "index" and self.in_a_usable_pack(oid):
                return None  # git walks index entries as it walks trees (below)
            fkind, area, bit = ROLES[role]
            if not self.limiter.allow(path or label, fkind):
                return None
            return Finding(
                fkind,
                ERROR,
                root_finding_message(role, label, oid.hex(), expected or "object", why),
                area,
                bit,
                path=path,
                offset=offset,
                line=line,
                oid=oid.hex(),
                object_type=expected,
                elsewhere=copies,
                remedy=_remedy(role, kind),
                details={"object": kind, "root": label},
            )
        finding = None
        if role == "branch":
            try:
                type_name = self.table.read_header(oid, where)
            except PackscopeError:
                type_name = None
            if type_name is not None and type_name != "commit":
                finding = Finding(
                    "ref-not-commit",
                    ERROR,
                    f"{label}: a branch must point at a commit, not a {type_name} ({oid.hex()})",
                    "refs",
                    ERROR_REFS,
                    path=path,
                    line=line,
                    oid=oid.hex(),
                    object_type=type_name,
                    remedy=REMEDIES["ref-target"],
                )
        self.rooted.add(oid)
        self.stack.append((oid, expected, label))
        return finding

    # --- the walk ------------------------------------------------------------------------------

    def is_promisor_object(self, oid: bytes, where: Where) -> bool:
        """git's is_promisor_object for a copy found at ``where``: a copy in a
        promisor pack answers without building the promised set."""
        slot = where[0]
        if isinstance(slot, PackSlot) and slot.promisor:
            return True
        return self.promised(oid)

    def walk(self) -> Iterator[Finding]:
        table, fmt, seen, stack, tick = self.table, self.fmt, self.seen, self.stack, self.ticker.tick
        rawsz = fmt.rawsz
        compiled = native.backend
        tree_unseen = compiled.tree_unseen if compiled is not None else None
        limiter = self.limiter
        stop_at_promisor = bool(self.promised)  # a partial clone with promisor packs fsck did not refuse
        while stack:
            oid, expected, referrer = stack.pop()
            if oid in seen:
                continue
            seen.add(oid)
            tick()
            where = self.usable(oid)
            if where is None:
                f = self._broken(oid, expected, referrer)
                if f is not None and limiter.allow("walk", f.kind):
                    yield f
                continue
            if expected == "blob":
                actual = table.type_of(where, oid)
                if actual is not None and actual != "blob":
                    yield self._wrong_type(oid, expected, actual, referrer)
                continue
            if stop_at_promisor and self.is_promisor_object(oid, where):
                # git's mark_object: reachable, checked for its type, not followed
                try:
                    actual = table.read_header(oid, where)
                except PackscopeError:
                    actual = None  # a damaged copy: the pack checks report it
                if expected is not None and actual is not None and actual != expected:
                    yield self._wrong_type(oid, expected, actual, referrer)
                else:
                    self.stopped.append(oid)
                continue
            try:
                type_name, data, where = table.read(oid, where)
            except Unreadable as u:
                f = self._broken(oid, expected, referrer, u.errors)
                if f is not None and limiter.allow("walk", f.kind):
                    yield f
                continue
            if expected is not None and type_name != expected:
                yield self._wrong_type(oid, expected, type_name, referrer)
                continue
            try:
                if type_name == "commit":
                    tree, parents, _ = commit_header_fast(data, fmt, oid)
                    if oid in self.grafted:
                        parents = self.grafted[oid]
                    for p in parents:
                        if p not in seen:
                            stack.append((p, "commit", ("commit", oid)))
                    if tree not in seen:
                        stack.append((tree, "tree", ("commit", oid)))
                elif type_name == "tree":
                    ref = ("tree", oid)
                    # the compiled scan hands back only what the walk has not seen
                    # (a history's trees name the same ids again and again)
                    unseen = tree_unseen(data, rawsz, seen) if tree_unseen is not None else None
                    if unseen is not None:
                        stack.extend([(entry, "tree" if is_tree else "blob", ref) for entry, is_tree in unseen])
                        continue
                    for mode, _name, entry in tree_items(data, fmt, oid):
                        if entry in seen:
                            continue
                        kind = S_IFMT(mode)
                        if kind == S_IFDIR:
                            stack.append((entry, "tree", ref))
                        elif kind in (S_IFREG, S_IFLNK):
                            stack.append((entry, "blob", ref))
                elif type_name == "tag":
                    tag = parse_tag(data, fmt, oid)
                    if tag.object not in seen:
                        stack.append((tag.object, tag.type if tag.type in VALID_TYPES else None, ("tag", oid)))
            except CorruptObjectError as e:
                if not self.full:  # a full run reported it with git's message id already
                    yield from_error(
                        e,
                        "objects",
                        ERROR_OBJECT,
                        object_type=type_name,
                        message=f"{type_name} cannot be parsed: {e.message}",
                    )

    def _broken(
        self, oid: bytes, expected: str | None, referrer: Referrer, errors: Sequence[PackscopeError] = ()
    ) -> Finding | None:
        kind, why, copies = self.absence(oid, errors)
        self._count_absent(oid, kind)
        if kind == "promised":
            return None
        if kind == "unreadable" and self.in_a_usable_pack(oid):
            return None  # the pack's own check reported it; git's walk says nothing more
        what = expected or "object"
        return Finding(
            kind,
            ERROR,
            f"{what} {oid.hex()} {why} (needed by {_who(referrer)})",
            "reachability",
            ERROR_REACHABLE,
            oid=oid.hex(),
            object_type=expected,
            elsewhere=copies,
            remedy=REMEDIES[kind],
            details={"referrer": _who(referrer)},
        )

    def _wrong_type(self, oid: bytes, expected: str, actual: str, referrer: Referrer) -> Finding:
        return Finding(
            "wrong-type",
            ERROR,
            f"{_who(referrer)} names {oid.hex()} as a {expected}, but it is a {actual}",
            "reachability",
            ERROR_REACHABLE,
            oid=oid.hex(),
            object_type=actual,
            remedy=REMEDIES["wrong-type"],
            details={"referrer": _who(referrer), "expected": expected},
        )

    # --- dangling -------------------------------------------------------------------------------

    def dangling(self) -> Iterator[Finding]:
        table, seen = self.table, self.seen
        # One raw id per unreachable object, nothing more: the unreachable
        # part of a repository can be as large as its history.
        unreachable: set[bytes] = set()
        # promisor packs and alternates' objects too: git fsck lists every
        # object directory's unreachable objects
        slots = [s for s in table.packs if not s.rejected]
        for slot in slots:
            try:
                unreachable.update(name for name in slot.handle.index.names() if name not in seen)
            except PackscopeError:
                continue
        for d in table.loose:
            for sub in range(256):
                unreachable.update(oid for oid in d.cache.entries(sub) if oid not in seen)
        seen.clear()  # not needed any more: free it before reading
        stopped, self.stopped = self.stopped, []
        if not unreachable:
            return
        self.ticker.start("dangling objects", len(unreachable) + len(stopped))
        used: set[bytes] = set()
        readable: set[bytes] = set()

        # What the promisor objects the walk stopped at reference is used
        # (git --full marks the references of every object it reads).
        def mark_used(oid: bytes, where: Where) -> bool:
            """The unreachable objects ``oid`` names are used; False when it cannot be read."""
            try:
                if table.read_header(oid, where) != "blob":
                    type_name, data, _ = table.read(oid, where)
                    used.update(r for r in references(type_name, data, self.fmt, oid, self.grafted) if r in unreachable)
            except (PackscopeError, Unreadable):
                return False
            return True

        def verified(oid: bytes, where: Where) -> bool:
            # the object pass read this copy, and noted what it names (table.referenced)
            return table.references_noted and table.type_of(where, oid) is not None

        for oid in stopped:
            self.ticker.tick()
            where = self.usable(oid)
            if where is not None and not verified(oid, where):
                mark_used(oid, where)

        def visit(oid: bytes, where: Where) -> None:
            self.ticker.tick()
            if table.is_corrupt(where, oid):
                return
            if verified(oid, where):
                readable.add(oid)  # no second read: what it names is known
                if table.was_referenced(oid):
                    used.add(oid)
            elif mark_used(oid, where):
                readable.add(oid)

        # Pack order, as the delta-base cache likes it.
        for slot in slots:
            try:
                order = slot.handle.pack.pack_order()
                name_at = slot.handle.index.name_at
                for pos in order:
                    oid = name_at(pos)
                    if oid in unreachable and oid not in readable:
                        visit(oid, (slot, pos))
            except PackscopeError:
                continue
        for d in table.loose:
            for sub in range(256):
                for oid in d.cache.entries(sub):
                    if oid in unreachable and oid not in readable:
                        visit(oid, (d, None))
        for oid in sorted(readable - used):
            where = self.usable(oid)
            try:
                found = table.read_header(oid, where) if where is not None else None
            except PackscopeError:
                found = None
            if found is not None:
                yield Finding(
                    "dangling",
                    INFO,
                    f"dangling {found} {oid.hex()}",
                    "dangling",
                    0,
                    oid=oid.hex(),
                    object_type=found,
                    remedy=REMEDIES["dangling"],
                )
        self.ticker.finish()


def _who(referrer: Referrer) -> str:
    if isinstance(referrer, tuple):
        return f"{referrer[0]} {referrer[1].hex()}"
    return str(referrer)


def _remedy(role: str, kind: str) -> str:
    if role in ("ref", "branch"):
        return REMEDIES["ref-target"] + " " + REMEDIES[kind]
    if role == "reflog":
        return REMEDIES["reflog"]
    if role in ("index", "cache-tree", "resolve-undo"):
        return REMEDIES["index"]
    return REMEDIES[kind]
