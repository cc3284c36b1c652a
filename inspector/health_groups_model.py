"""Health's findings grouped by cause: the rows' data, no widgets.

A damaged file (a pack or its index, a loose object's file) is a cause:
its own findings, then what it causes (the objects it makes unreadable
and what names them), by kind.  What is left is grouped by file
(commit-graph, multi-pack-index) or by kind.  ``Attributor`` runs in the
check's worker and ties each finding to the damaged file that explains it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from packscope.core.errors import PackscopeError

if TYPE_CHECKING:
    from packscope.core.fsck.findings import Finding
    from packscope.core.store.pack_index import PackIndex

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
EXPAND_LIMIT = 5  # groups with more findings than this start closed
# Findings about a file's own damage: the cause of what its objects then do.
CAUSE_AREAS = ("packs", "loose")


@dataclass
class Entry:
    """A finding and, when a damaged file explains it, that file (a cause
    finding's own file, or the damaged pack holding its object) and the
    object's offset in it."""

    finding: Finding
    cause: str | None = None
    offset: int | None = None
    is_cause: bool = False
    # the repository changed while the check ran and this finding may come
    # from the change (packscope.core.fsck.changed_during): shown marked
    changed_during: bool = False


@dataclass
class Group:
    kind: str  # the key: a file path, or a finding kind
    severity: str
    findings: list[Entry] = field(default_factory=list)
    open: bool | None = None  # None: decided by size
    title: str = ""
    cause: bool = False  # a damaged file: its own findings, then what it causes
    depth: int = 0
    subgroups: dict[str, Group] = field(default_factory=dict)  # kind -> Group (what this cause causes)

    def count(self) -> int:
        return len(self.findings) + sum(g.count() for g in self.subgroups.values())

    def worsen(self, severity: str) -> None:
        if SEVERITY_ORDER.get(severity, 3) < SEVERITY_ORDER.get(self.severity, 3):
            self.severity = severity


def is_cause(f) -> bool:
    """A finding about a damaged file (a pack or its index, a loose
    object's file) rather than about what that damage does elsewhere."""
    if f.severity != "error" or not (f.pack or f.path):
        return False
    return f.area in CAUSE_AREAS or f.kind.startswith("loose-")


class Attributor:
    """In the check's worker: which damaged file explains a finding.  A
    damaged pack explains every finding about an object its index holds; a
    damaged loose object, the findings about that object."""

    def __init__(self, store) -> None:
        self.store = store
        self.packs: list[tuple[str, PackIndex]] = []  # (pack path, its index)
        self.loose: dict[str, str] = {}  # oid -> path

    def entry(self, f) -> Entry:
        if is_cause(f):
            key = f.pack or f.path
            if f.pack and all(p != f.pack for p, _ in self.packs):
                idx = self._index(f.pack)
                if idx is not None:
                    self.packs.append((f.pack, idx))
            elif f.oid and not f.pack:
                self.loose[f.oid] = f.path
            return Entry(f, key, f.offset, True)
        if f.oid:
            if f.oid in self.loose:
                return Entry(f, self.loose[f.oid])
            raw = bytes.fromhex(f.oid)
            for path, idx in self.packs:
                try:
                    pos = idx.find(raw)
                    if pos >= 0:
                        return Entry(f, path, idx.offset_at(pos))
                except PackscopeError:
                    continue
        return Entry(f)

    def _index(self, pack_path: str):
        for h in self.store.all_packs():
            if h.files.pack_path == pack_path:
                try:
                    return h.index.open()
                except PackscopeError:
                    return None
        return None


def group_entries(entries: Iterable[Entry]) -> dict[str, Group]:
    """Groups: each damaged file (its own findings, then what it causes,
    by kind), then the rest by file (commit-graph, midx, a ref) or by
    kind; dangling objects in one group."""
    entries = list(entries)
    groups: dict[str, Group] = {}
    for e in entries:
        if e.is_cause and e.cause is not None:  # a cause entry is keyed by its file
            g = groups.get(e.cause)
            if g is None:
                g = groups[e.cause] = Group(e.cause, e.finding.severity, title=file_title(e.cause), cause=True)
            g.findings.append(e)
            g.worsen(e.finding.severity)
    for e in entries:
        if e.is_cause:
            continue
        f = e.finding
        parent = groups.get(e.cause) if e.cause else None
        if parent is not None:
            sub = parent.subgroups.get(f.kind)
            if sub is None:
                sub = parent.subgroups[f.kind] = Group(f"{e.cause}\0{f.kind}", f.severity, title=f.kind, depth=1)
            sub.findings.append(e)
            sub.worsen(f.severity)
            parent.worsen(f.severity)
            continue
        key = f.kind
        title = f.kind
        if f.area in ("commit-graph", "midx", "multi-pack-index") and f.path:
            key, title = f.path, f"{file_title(f.path)}: {f.kind}"
        g = groups.get(key)
        if g is None:
            g = groups[key] = Group(key, f.severity, title=title)
        g.findings.append(e)
        g.worsen(f.severity)
    return groups


def starts_open(g: Group) -> bool:
    """Whether a group shows its findings before the user opens or closes it."""
    if g.cause:
        return True  # the cause itself shows; what it causes stays folded
    return g.count() <= EXPAND_LIMIT and g.severity != "info"


def ordered_groups(groups: Iterable[Group]) -> list[Group]:
    """Damaged files first, then worst first, then largest."""
    return sorted(groups, key=lambda g: (not g.cause, SEVERITY_ORDER.get(g.severity, 3), -g.count(), g.kind))


def group_rows(groups: Iterable[Group], is_open: Callable[[Group], bool]) -> list[tuple[str, Group | Entry]]:
    """The list's rows: ("group", it) or ("finding", it), open groups' findings
    (and a cause's subgroups) below their group."""
    rows: list[tuple[str, Group | Entry]] = []
    for g in ordered_groups(groups):
        rows.append(("group", g))
        if not is_open(g):
            continue
        rows.extend(("finding", e) for e in g.findings)
        for sub in sorted(g.subgroups.values(), key=lambda x: (SEVERITY_ORDER.get(x.severity, 3), x.kind)):
            rows.append(("group", sub))
            if is_open(sub):
                rows.extend(("finding", e) for e in sub.findings)
    return rows


def same_row(a, b) -> bool:
    """Whether two rows show the same thing (a group rebuilt keeps its key)."""
    if isinstance(a, Group) and isinstance(b, Group):
        return a.kind == b.kind
    return a is b


def file_title(path: str) -> str:
    parent = os.path.basename(os.path.dirname(path))
    return f"{parent}/{os.path.basename(path)}" if len(parent) == 2 else os.path.basename(path)
