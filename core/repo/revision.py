"""Revision syntax: from text such as ``v1.0^{}~2:src/main.c`` to an object id.

Supported (``git help revisions``):

* a full object id (always an id, even if a ref has that name — git warns);
* a ref name, tried in git's order: ``X``, ``refs/X``, ``refs/tags/X``,
  ``refs/heads/X``, ``refs/remotes/X``, ``refs/remotes/X/HEAD``;
* ``git describe`` output ``…-gHEX`` (the HEX, a commit);
* an abbreviated id of 4 or more hex digits.  A ref of the same name wins,
  as in git (``git rev-parse deadbeef`` with a branch ``deadbeef`` names the
  branch).  Several candidates are narrowed like git does by what the next
  step needs (a commit for ``~``/``^``/``^{commit}``, a tree-ish for
  ``^{tree}`` and ``:path``); otherwise AmbiguousObjectError lists them all;
* ``@`` for HEAD; ``REV~N``, ``REV~``, ``REV^N``, ``REV^`` (``^0`` is the
  commit itself); ``REV^{commit|tree|blob|tag|object}`` and ``REV^{}``;
  chains of these (``HEAD~2^2~1``);
* ``REV:path`` — a path from the top of REV's tree (``REV:`` is the tree);
  ``./`` and ``../`` paths are relative to ``cwd_prefix``, the directory the
  user stands in relative to the top of the work tree, as in git.

Not supported (a clear BadRevisionError): reflog forms (``@{…}``), ``:path``
and ``:N:path`` (the index), ``^{/text}`` and ``:/text`` (message search),
and range notations (``A..B``, ``^A``, ``A^!``, ``A^@``, ``A^-``).

Errors: BadRevisionError when the text cannot name anything (bad syntax,
unknown name, wrong object type, no such parent or path), MissingObjectError
when a named or reached object is absent from the store (PromisedObjectError
in a partial clone when a promisor remote promises it), AmbiguousObjectError
for an abbreviation that stays ambiguous.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from stat import S_IFDIR
from typing import TYPE_CHECKING, NamedTuple, Protocol

from packscope.core.errors import (
    AmbiguousObjectError,
    BadObjectIdError,
    BadRefError,
    BadRevisionError,
    MissingObjectError,
    PackscopeError,
    PromisedObjectError,
    RepositoryError,
)
from packscope.core.oid import MIN_ABBREV, ObjectFormat, Prefix, is_hex, parse_prefix
from packscope.core.repo.ref_syntax import DWIM_RULES

if TYPE_CHECKING:
    from packscope.core.objects import Ident
    from packscope.core.repo.refs import RefStore
    from packscope.core.repo.repository import Repository

MAX_TAG_CHAIN = 64  # a tag of a tag of … deeper than this is surely damage

_PEEL_TYPES = ("", "object", "commit", "tree", "blob", "tag")
_TYPE_ORDER = {"tag": 0, "commit": 1, "tree": 2, "blob": 3}  # git's order in the ambiguity hint
_DESCRIBE = re.compile(r"-g([0-9a-fA-F]+)\Z")
_ABSENT = (MissingObjectError, PromisedObjectError)


class ObjectSource(Protocol):
    """What revision parsing needs from an object store."""

    fmt: ObjectFormat

    def read(self, oid: bytes) -> tuple[str, bytes]: ...

    def read_header(self, oid: bytes) -> tuple[str, int]: ...

    def resolve_prefix(self, prefix: Prefix) -> list[bytes]: ...


class Step(NamedTuple):
    """One suffix: ``~`` (n), ``^`` (n) or ``peel`` (type, "" for ``^{}``)."""

    op: str
    n: int = 1
    type: str = ""


# Disambiguation hints, weakest first (git: GET_OID_TREEISH < COMMITTISH < COMMIT).
NO_HINT, TREEISH, COMMITTISH, COMMIT_ONLY = 0, 1, 2, 3


def resolve_revision(
    text: str,
    *,
    repo: Repository | None,
    refs: RefStore,
    store: ObjectSource,
    verify: bool = True,
    cwd_prefix: str = "",
) -> bytes:
    """The object id ``text`` names.  With ``verify`` (the default) the
    result must exist in the store, as ``git rev-parse REV^{object}`` asks;
    without it a full id is returned unchecked, like ``git rev-parse REV``.
    A gitlink reached by ``REV:path`` is never checked: it names a commit of
    another repository (a submodule)."""
    if repo is not None and repo.object_format != store.fmt:
        raise RepositoryError(
            f"the object store reads {store.fmt.name} ids but the repository uses {repo.object_format.name}",
            path=str(repo.git_dir),
        )
    return _Resolver(text, refs, store, cwd_prefix).run(verify)


def split_revision(text: str) -> tuple[str, tuple[Step, ...], str | None]:
    """(base name, suffix steps, path or None).  BadRevisionError for
    syntax that is wrong or unsupported."""
    if not text:
        raise BadRevisionError("empty revision")
    if text.startswith(":"):
        raise BadRevisionError(
            f"{text!r}: index paths (:path, :N:path) and :/text searches are not supported",
            remedy="Name a commit or tree first, e.g. HEAD:path.",
        )
    if text.startswith("^"):
        raise BadRevisionError(f"{text!r}: a negative revision is a range, not one object")
    rev, path = _split_path(text)
    if ".." in rev:
        raise BadRevisionError(f"{text!r}: ranges (A..B, A...B) name several commits, not one object")
    cut = len(rev)
    for ch in "~^":
        i = rev.find(ch)
        if i >= 0:
            cut = min(cut, i)
    base = rev[:cut]
    if not base:
        raise BadRevisionError(f"{text!r}: nothing before {rev[:1]!r}")
    if "@{" in base:
        raise BadRevisionError(
            f"{text!r}: reflog forms (@{{…}}) are not supported",
            remedy="Resolve it with git: git rev-parse 'NAME@{…}'.",
        )
    return base, _parse_steps(text, rev[cut:]), path


def _split_path(text: str) -> tuple[str, str | None]:
    # The first colon outside ^{…} separates the path (git's rule).
    depth = 0
    for i, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif c == ":" and not depth:
            return text[:i], text[i + 1 :]
    return text, None


def _parse_steps(text: str, s: str) -> tuple[Step, ...]:
    steps: list[Step] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "^" and s.startswith("^{", i):
            end = s.find("}", i)
            if end < 0:
                raise BadRevisionError(f"{text!r}: unterminated ^{{…}}")
            inner = s[i + 2 : end]
            if inner.startswith("/"):
                raise BadRevisionError(f"{text!r}: ^{{/text}} message searches are not supported")
            if inner not in _PEEL_TYPES:
                raise BadRevisionError(
                    f"{text!r}: ^{{{inner}}} is not an object type (commit, tree, blob, tag, object, or empty)"
                )
            steps.append(Step("peel", type=inner))
            i = end + 1
            continue
        if c in "~^":
            j = i + 1
            while j < len(s) and s[j].isdigit() and s[j].isascii():
                j += 1
            if c == "^" and j == i + 1 and j < len(s) and s[j] in "!@-":
                raise BadRevisionError(f"{text!r}: ^{s[j]} is range notation, not one object")
            n = int(s[i + 1 : j]) if j > i + 1 else 1
            steps.append(Step(c, n))
            i = j
            continue
        raise BadRevisionError(f"{text!r}: unexpected {s[i:]!r} after the name")
    return tuple(steps)


def _base_hint(steps: tuple[Step, ...], has_path: bool) -> int:
    """What the object named by the base must be, for disambiguation:
    each step asks its operand for something (git passes these flags inward)."""
    hint = TREEISH if has_path else NO_HINT
    for step in reversed(steps):
        if step.op in "~^":
            hint = COMMITTISH
        elif step.type == "commit":
            hint = max(hint, COMMITTISH)
        elif step.type == "tree":
            hint = max(hint, TREEISH)
    return hint


class _Resolver:
    def __init__(self, text: str, refs: RefStore, store: ObjectSource, cwd_prefix: str) -> None:
        self.text = text
        self.refs = refs
        self.store = store
        self.fmt = store.fmt
        self.cwd_prefix = cwd_prefix.strip("/")

    def run(self, verify: bool) -> bytes:
        base, steps, path = split_revision(self.text)
        oid = self.base(base, _base_hint(steps, path is not None))
        shown = base
        for step in steps:
            oid = self.apply(step, oid, shown)
            shown += f"~{step.n}" if step.op == "~" else f"^{step.n}" if step.op == "^" else f"^{{{step.type}}}"
        gitlink = False
        if path is not None:
            oid, gitlink = self.walk_path(oid, path, self.text[: len(self.text) - len(path) - 1])
        if verify and not gitlink:
            self.header(oid)
        return oid

    # --- objects -------------------------------------------------------------

    def header(self, oid: bytes) -> str:
        try:
            return self.store.read_header(oid)[0]
        except _ABSENT as e:
            restated = self._absent(e, oid)
            if restated is e:
                raise
            raise restated from e

    def read(self, oid: bytes) -> tuple[str, bytes]:
        try:
            return self.store.read(oid)
        except _ABSENT as e:
            restated = self._absent(e, oid)
            if restated is e:
                raise
            raise restated from e

    def _absent(self, e: PackscopeError, oid: bytes) -> PackscopeError:
        """The store's miss, restated with the revision that led to it."""
        if type(e) is MissingObjectError:
            return MissingObjectError(f"{self.text}: object {oid.hex()} is missing", oid=oid.hex(), remedy=e.remedy)
        if type(e) is PromisedObjectError:
            return PromisedObjectError(
                f"{self.text}: object {oid.hex()} is missing, but a promisor remote promises it (partial clone)",
                oid=oid.hex(),
                remedy=e.remedy,
            )
        return e

    def peel_to(self, oid: bytes, want: str, shown: str, check: bool = True) -> bytes:
        """git's peel: follow tags, and commit → tree, until ``want``
        ("" = the first non-tag)."""
        from packscope.core.objects import commit_header_fast, parse_tag  # (objects load when a revision reads one)

        for _ in range(MAX_TAG_CHAIN):
            typ, data = self.parsed(oid) if check else self.read(oid)
            if typ == want or (want == "" and typ != "tag"):
                return oid
            if typ == "tag":
                oid = parse_tag(data, self.fmt, oid).object
            elif typ == "commit" and want != "commit":
                oid = commit_header_fast(data, self.fmt, oid)[0]
            else:
                raise BadRevisionError(
                    f"{shown}^{{{want}}}: expected {want} type, but the object dereferences to {typ} type",
                    oid=oid.hex(),
                )
        raise BadRevisionError(f"{shown}: more than {MAX_TAG_CHAIN} nested tags", oid=oid.hex())

    def commit(self, oid: bytes, shown: str) -> tuple[bytes, ...]:
        """Parents of the commit ``oid`` peels to."""
        from packscope.core.objects import commit_header_fast, parse_tag  # (objects load when a revision reads one)

        for _ in range(MAX_TAG_CHAIN):
            typ, data = self.read(oid)
            if typ == "commit":
                parents = commit_header_fast(data, self.fmt, oid)[1]
                # shallow and grafted commits: the parents git gives them (core.repo.object_view)
                table: Mapping[bytes, tuple[bytes, ...]] | None = getattr(self.store, "parent_table", None)
                return table.get(oid, parents) if table else parents
            if typ != "tag":
                raise BadRevisionError(f"{shown}: object {oid.hex()} is a {typ}, not a commit", oid=oid.hex())
            oid = parse_tag(data, self.fmt, oid).object
        raise BadRevisionError(f"{shown}: more than {MAX_TAG_CHAIN} nested tags", oid=oid.hex())

    def parsed(self, oid: bytes) -> tuple[str, bytes]:
        """``read``, checked as git's parse_object checks every object a step
        starts from: bytes that do not hash to their id (the replacement's,
        under a replace ref) make the object missing."""
        typ, data = self.read(oid)
        target: Callable[[bytes], bytes] | None = getattr(self.store, "target", None)
        expected = target(oid) if target is not None else oid
        if self.fmt.hash_object(typ, data) != expected:
            raise MissingObjectError(
                f"{self.text}: hash mismatch {expected.hex()} (its stored bytes hash to another id)",
                oid=expected.hex(),
                remedy="Replace the damaged object with a good copy from another clone (git fsck names it).",
            )
        return typ, data

    def apply(self, step: Step, oid: bytes, shown: str) -> bytes:
        if step.op == "peel":
            if step.type == "object":
                self.parsed(oid)
                return oid
            return self.peel_to(oid, step.type, shown)
        if step.n != 0:
            self.parsed(oid)  # git parses (and so checks) the commit it steps from
        if step.op == "^":
            if step.n == 0:
                return self.peel_to(oid, "commit", shown)
            parents = self.commit(oid, shown)
            if step.n > len(parents):
                raise BadRevisionError(f"{shown}^{step.n}: the commit has {len(parents)} parent(s)", oid=oid.hex())
            return parents[step.n - 1]
        if step.n == 0:
            return self.peel_to(oid, "commit", shown)
        for i in range(step.n):
            parents = self.commit(oid, shown)
            if not parents:
                raise BadRevisionError(f"{shown}~{step.n}: history ends after {i} first-parent step(s)", oid=oid.hex())
            oid = parents[0]
        return oid

    # --- names -------------------------------------------------------------------

    def base(self, name: str, hint: int) -> bytes:
        if name == "@":
            name = "HEAD"
        fmt = self.fmt
        if len(name) == fmt.hexsz and is_hex(name):
            return bytes.fromhex(name)  # a full id is never a ref name to git
        full = self.refs.dwim(name)
        if full is not None:
            return self.refs.resolve(full)
        m = _DESCRIBE.search(name)
        if m and len(m.group(1)) >= MIN_ABBREV:
            found = self.abbreviation(m.group(1), COMMIT_ONLY)
            if found is not None:
                return found
        if MIN_ABBREV <= len(name) <= fmt.hexsz and is_hex(name):
            found = self.abbreviation(name, hint)
            if found is not None:
                return found
        raise BadRevisionError(f"unknown revision {name!r}: no ref or object by that name{self._why(name)}")

    def _why(self, name: str) -> str:
        """Why a ref candidate did not count: dangling, looping, broken."""
        for rule in DWIM_RULES:
            full = rule.format(name)
            try:
                self.refs.follow(full)
            except BadRefError as e:
                if e.kind in ("ref-dangling", "ref-loop", "ref-too-deep") or (
                    e.kind == "ref-unparseable" and full.startswith("refs/")
                ):
                    return f" ({e.message})"
        return ""

    def abbreviation(self, hexpart: str, hint: int) -> bytes | None:
        try:
            prefix = parse_prefix(hexpart, self.fmt)
        except BadObjectIdError:
            return None
        found = sorted(set(self.store.resolve_prefix(prefix)))
        if len(found) <= 1:
            return found[0] if found else None
        if hint != NO_HINT:
            fitting = [oid for oid in found if self._fits(oid, hint)]
            if len(fitting) == 1:
                return fitting[0]
        raise self._ambiguous(prefix, found)

    def _fits(self, oid: bytes, hint: int) -> bool:
        from packscope.core.objects import parse_tag  # (objects load when a revision reads one)

        try:
            typ = self.header(oid)
        except _ABSENT:
            return False  # listed by an index but unreadable: not a candidate that fits
        if hint == COMMIT_ONLY:
            return typ == "commit"
        for _ in range(MAX_TAG_CHAIN):
            if typ != "tag":
                break
            oid = parse_tag(self.read(oid)[1], self.fmt, oid).object
            try:
                typ = self.header(oid)
            except _ABSENT:
                return False
        return typ == "commit" or (hint == TREEISH and typ == "tree")

    def _ambiguous(self, prefix: Prefix, found: list[bytes]) -> AmbiguousObjectError:
        rows = []
        for oid in found:
            try:
                typ = self.header(oid)
            except _ABSENT:
                typ = "unknown"
            rows.append((_TYPE_ORDER.get(typ, 4), oid, typ, self._describe(oid, typ)))
        rows.sort()
        width = 7
        while len({oid.hex()[:width] for _, oid, _, _ in rows}) < len(rows):
            width += 1
        lines = [f"  {oid.hex()[:width]} {typ}{' ' + desc if desc else ''}" for _, oid, typ, desc in rows]
        return AmbiguousObjectError(
            f"short object id {prefix.hex} is ambiguous; the candidates are:\n" + "\n".join(lines),
            candidates=tuple((oid.hex(), typ, desc) for _, oid, typ, desc in rows),
            remedy="Give more hex digits, or add ^{commit} / ^{tree} to say which type you mean.",
        )

    def _describe(self, oid: bytes, typ: str) -> str:
        """git's hint text: ``DATE - subject`` for commits, ``DATE - name`` for tags."""
        from packscope.core.objects import parse_commit, parse_tag  # (objects load when a revision reads one)

        try:
            if typ == "commit":
                c = parse_commit(self.read(oid)[1], self.fmt, oid)
                subject = c.message.split(b"\n", 1)[0].decode("utf-8", "replace")
                return f"{_short_date(c.author)} - {subject}".strip()
            if typ == "tag":
                t = parse_tag(self.read(oid)[1], self.fmt, oid)
                return f"{_short_date(t.tagger)} - {t.tag.decode('utf-8', 'replace')}".strip()
        except PackscopeError:  # a damaged candidate is still listed, without details
            return ""
        return ""

    # --- paths -------------------------------------------------------------------

    def walk_path(self, oid: bytes, path: str, rev_text: str) -> tuple[bytes, bool]:
        """(id at ``path`` in the tree of ``oid``, whether it is a gitlink)."""
        from packscope.core.objects import S_IFGITLINK, S_IFMT, tree_items  # (objects load when a revision reads one)

        tree = self.peel_to(oid, "tree", rev_text, check=False)  # git reads, not parses, here
        if path.startswith(("./", "../")) or path in (".", ".."):
            path = _relative(self.cwd_prefix, path, self.text)
        if path == "":
            return tree, False
        want_tree = path.endswith("/")
        parts = (path[:-1] if want_tree else path).split("/")
        current, mode = tree, S_IFDIR
        for part in parts:
            if (mode & S_IFMT) != S_IFDIR or not part:
                raise self._no_path(path, rev_text)
            typ, data = self.read(current)
            if typ != "tree":
                raise self._no_path(path, rev_text)
            name = part.encode("utf-8", "surrogateescape")
            for entry_mode, entry_name, entry_oid in tree_items(data, self.fmt, current):
                if entry_name == name:
                    current, mode = entry_oid, entry_mode
                    break
            else:
                raise self._no_path(path, rev_text)
        if want_tree and (mode & S_IFMT) != S_IFDIR:
            raise self._no_path(path, rev_text)
        return current, (mode & S_IFMT) == S_IFGITLINK

    def _no_path(self, path: str, rev_text: str) -> BadRevisionError:
        return BadRevisionError(
            f"path {path!r} does not exist in {rev_text!r}", remedy=f"List the tree: git ls-tree -r {rev_text}"
        )


def _relative(prefix: str, path: str, text: str) -> str:
    parts = [p for p in prefix.split("/") if p]
    for comp in path.split("/"):
        if comp in ("", "."):
            continue
        if comp == "..":
            if not parts:
                raise BadRevisionError(f"{text!r}: {path!r} leads outside the repository")
            parts.pop()
        else:
            parts.append(comp)
    return "/".join(parts) + ("/" if path.endswith("/") and parts else "")


def _short_date(ident: Ident | None) -> str:
    if ident is None:
        return ""
    t = ident.time + ident.tz_offset_minutes * 60  # the date as its author saw it
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(t))
    except (OverflowError, OSError, ValueError):
        return ""
