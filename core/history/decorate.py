"""Ref decorations as ``git log``'s ``%d`` prints them (``git log --decorate``).

Which refs decorate (git's decoration filter, when no ``--decorate-refs``
is given): ``HEAD`` and the namespaces git decorates by default —
``refs/heads/``, ``refs/tags/``, ``refs/remotes/``, ``refs/stash`` and
``refs/replace/`` (shown as ``replaced`` on the object replaced).  Other
namespaces (``refs/pull/…``, ``refs/notes/…``, ``refs/prefetch/…``) do not,
unless ``log.initialDecorationSet = all``; ``log.excludeDecoration``
patterns (a glob, or a ref name that matches itself and what is under it)
turn the defaults off and leave every ref but the excluded ones, as in git.

Order: git adds each ref's decoration in ref-name order, then ``HEAD``'s,
and lists an object's decorations newest first: so ``HEAD`` first, then the
refs in reverse name order.  When ``HEAD`` names a branch that decorates
the same commit, the two are one entry, ``HEAD -> main``, where ``HEAD``
stood.  A tag decorates the tag object and every object its chain peels
to, as ``tag: NAME``.  Names are short (``refs/heads/``, ``refs/tags/``,
``refs/remotes/`` dropped) unless ``log.decorate = full``.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import PackscopeError

if TYPE_CHECKING:
    from packscope.core.repo.config import Config
    from packscope.core.repo.refs import RefStore

# (prefix or exact name, kind) — git's namespaces with a decoration type, in its order.
NAMESPACES = (
    ("HEAD", "head", True),
    ("refs/heads/", "branch", False),
    ("refs/tags/", "tag", False),
    ("refs/remotes/", "remote", False),
    ("refs/stash", "stash", True),
    ("refs/replace/", "replaced", False),
)
SHORT_PREFIXES = ("refs/heads/", "refs/tags/", "refs/remotes/")
MAX_TAG_CHAIN = 16


class Decoration(NamedTuple):
    """One entry of ``%d``: ``label`` as git prints it ("HEAD -> main",
    "tag: v1.0", "origin/main", "replaced") and its ``kind`` ("head",
    "branch", "tag", "remote", "stash", "replaced" or "ref")."""

    label: str
    kind: str


class _Pattern(NamedTuple):
    text: str
    glob: bool


def _pattern(text: str) -> _Pattern:
    """git's normalize_glob_ref: ``refs/`` prepended unless given (or
    HEAD), a trailing slash dropped; a glob only with glob characters."""
    name = text if text.startswith("refs/") or text == "HEAD" else "refs/" + text
    glob = any(c in text for c in "*?[\\")
    return _Pattern(name.removesuffix("/"), glob)


def _matches(name: str, p: _Pattern) -> bool:
    if p.glob:
        return fnmatch.fnmatchcase(name, p.text)
    return name == p.text or name.startswith(p.text + "/")


class DecorationFilter:
    """Which refs decorate, from the repository's config (git's default set)."""

    def __init__(self, config: Config | None = None) -> None:
        excluded = config.get_all("log", "excludeDecoration") if config is not None else []
        every = config is not None and (config.get("log", "initialDecorationSet") or "") == "all"
        self.exclude = [_pattern(t) for t in excluded if t]
        self.include = [] if (self.exclude or every) else [_pattern(ns) for ns, _kind, _exact in NAMESPACES]
        self.full = config is not None and (config.get("log", "decorate") or "").lower() == "full"

    def wants(self, name: str) -> bool:
        if any(_matches(name, p) for p in self.exclude):
            return False
        return not self.include or any(_matches(name, p) for p in self.include)


def _kind(name: str) -> str:
    for ns, kind, exact in NAMESPACES:
        if (name == ns) if exact else name.startswith(ns):
            return kind
    return "ref"


def ref_decorations(
    refs: RefStore,
    read: Callable[[bytes], tuple[str, bytes]],
    tag_target: Callable[[bytes], bytes],
    config: Config | None = None,
    *,
    replace_refs: bool = True,
) -> dict[bytes, list[Decoration]]:
    """Object id -> its ``%d`` entries, in git's order.  ``read(oid)`` gives
    (type, data) and ``tag_target(data)`` the id a tag names (for peeling);
    ``replace_refs``: whether replace refs apply (git: ``replaced``)."""
    filt = DecorationFilter(config)
    # (name, kind, object) in the order git adds them; listed newest first.
    added: list[tuple[str, str, bytes]] = []

    def add(name: str, oid: bytes) -> None:
        kind = _kind(name)
        if kind == "replaced":
            if replace_refs:
                try:
                    original = bytes.fromhex(name[len("refs/replace/") :])
                except ValueError:
                    return
                added.append(("replaced", "replaced", original))
            return
        try:
            typ, data = read(oid)
        except PackscopeError:
            return  # git skips a ref whose object it cannot read
        added.append((name, kind, oid))
        for _ in range(MAX_TAG_CHAIN):
            if typ != "tag":
                break
            try:
                oid = tag_target(data)
                added.append((name, "tag", oid))
                typ, data = read(oid)
            except PackscopeError:
                break

    for r in refs.iter_refs():
        if not filt.wants(r.name):
            continue
        try:
            oid = r.oid if r.symref is None else refs.resolve(r.name)
        except PackscopeError:
            continue  # a dangling symbolic ref decorates nothing
        if oid is not None:
            add(r.name, oid)
    head_branch: str | None = None
    if filt.wants("HEAD"):
        try:
            chain = refs.follow("HEAD")
            head_oid = chain[-1].oid
        except PackscopeError:
            chain, head_oid = (), None
        if head_oid is not None:
            add("HEAD", head_oid)
            if len(chain) > 1 and chain[-1].name.startswith("refs/"):
                head_branch = chain[-1].name

    out: dict[bytes, list[Decoration]] = {}
    listed: dict[bytes, list[tuple[str, str]]] = {}
    for name, kind, oid in reversed(added):
        listed.setdefault(oid, []).append((name, kind))
    for oid, entries in listed.items():
        has_head = any(kind == "head" for _n, kind in entries)
        current = head_branch if has_head and (head_branch, "branch") in entries else None
        shown: list[Decoration] = []
        for name, kind in entries:
            if kind == "branch" and name == current:
                continue  # shown as HEAD -> it
            label = name if (filt.full or kind in ("head", "replaced")) else _short(name)
            if kind == "tag":
                label = "tag: " + label
            if kind == "head" and current is not None:
                label += " -> " + (current if filt.full else _short(current))
            shown.append(Decoration(label, kind))
        out[oid] = shown
    return out


def _short(name: str) -> str:
    for prefix in SHORT_PREFIXES:
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def format_decorations(entries: list[Decoration]) -> str:
    """``%d``: `` (a, b)``, or nothing."""
    return f" ({', '.join(d.label for d in entries)})" if entries else ""
