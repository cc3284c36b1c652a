"""fsck's findings when the repository changed while the check ran.

A check reads the pack directory, then every pack, then the loose objects,
then the refs — over seconds or minutes.  A ``git repack -a -d`` meanwhile
deletes the packs the check listed, a commit moves a branch to an object the
check never saw, ``git gc --prune=now`` removes loose objects: the check then
reports an index it cannot open, a ref naming a missing object, a pack
without its index, none of which is damage.

:func:`settle` takes the findings, the repository's state at the start and
end of the run (``packscope.core.repo.repo_state``) and a session opened on
the final state, and sorts each finding into one of three piles:

* **dropped** — about a file that is gone (or a temporary file git was still
  writing), about an object that is there now, about a ref that has moved:
  the final state does not have the problem;
* **kept** — confirmed against the final state: damage in a file that was
  not rewritten during the run, a ref that still names a missing object, a
  loose object file that is still there, what an object's content breaks
  (git's fsck message ids: the same in any copy) while the object is there;
* **changed** — everything else (a missing object named by another object,
  a dangling object while refs moved…): it may be real, it may come from
  the change; the UI marks it, and running the check again tells.

When the state did not change, every finding is kept.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from packscope.core.errors import PackscopeError
from packscope.core.fsck.findings import ERROR, ERROR_FATAL, Finding
from packscope.core.repo.repo_state import Change, RepoState, compare, stamp_of
from packscope.core.store.temporary_files import is_git_temporary

if TYPE_CHECKING:
    from packscope.core.repo.session import Session

ABSENT = ("missing", "unavailable", "unreadable")


class Settled(NamedTuple):
    kept: list[Finding]
    changed: list[Finding]  # may come from the change: marked as such
    dropped: list[Finding]
    change: Change | None  # None: the state did not change

    def exit_status(self) -> int:
        """git fsck's bits over what was not dropped."""
        status = 0
        for f in self.kept + self.changed:
            if f.severity == ERROR:
                if f.exit_bit == ERROR_FATAL:
                    return ERROR_FATAL
                status |= f.exit_bit
        return status

    def sentence(self) -> str:
        """ "the repository changed during the check (a repack at 14:02);
        3 findings about files that are gone were dropped" — empty when
        nothing changed."""
        if self.change is None:
            return ""
        out = f"the repository changed during the check ({self.change.describe()})"
        if self.dropped:
            n = len(self.dropped)
            out += f"; {n} finding{'s' if n != 1 else ''} about files, objects or refs that changed {'were' if n != 1 else 'was'} dropped"
        if self.changed:
            n = len(self.changed)
            out += f"; {n} may come from the change (marked ~)"
        return out


def _files(f: Finding) -> list[str]:
    return [p for p in (f.path, f.pack, f.idx) if p]


class _FinalState:
    """The final state's answers, asked once per object or ref."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._objects: dict[str, bool] = {}
        self._refs: dict[str, str | None] = {}

    def readable(self, oid_hex: str) -> bool:
        known = self._objects.get(oid_hex)
        if known is None:
            try:
                self.session.store.read_header(bytes.fromhex(oid_hex))
                known = True
            except (PackscopeError, OSError, ValueError):
                known = False
            self._objects[oid_hex] = known
        return known

    def has_refs(self) -> bool:
        try:
            return any(True for _ in self.session.refs.iter_refs("refs/"))
        except (PackscopeError, OSError, ValueError):
            return False

    def ref(self, name: str) -> str | None:
        if name not in self._refs:
            try:
                self._refs[name] = self.session.refs.resolve(name).hex()
            except (PackscopeError, OSError, ValueError):
                self._refs[name] = None
        return self._refs[name]


def _verdict(f: Finding, start: RepoState, change: Change, final: _FinalState) -> str:
    """ "kept", "changed" or "dropped" for one finding of a changed run."""
    files = _files(f)
    objects_moved = bool(change.packs_added or change.packs_removed or change.packs_rewritten or change.loose)
    if f.msg_id and f.oid and f.area in ("objects", "special-blobs", "loose"):
        # what an object's content says (git's fsck message ids) is the same in
        # any copy: it stands while the object is there, whichever file holds it now
        return "kept" if final.readable(f.oid) else "dropped"
    if any(is_git_temporary(p) for p in files):
        return "dropped"
    if any(not os.path.exists(p) for p in files):
        return "dropped"  # a file that is gone: the final state has no such problem
    if f.kind in ("orphan-idx", "orphan-pack") and f.path:
        # Half of a pair: git writes and deletes a pack's files one at a
        # time, so a half seen while packs came and went may be one of them.
        other = f.path[: -len(".idx")] + (".pack" if f.path.endswith(".idx") else ".idx")
        if os.path.exists(other):
            return "dropped"  # the pair is whole now
        if objects_moved:
            return "changed"
    absent = f.kind in ABSENT or f.details.get("object") in ABSENT
    if f.oid and absent:
        if final.readable(f.oid):
            return "dropped"  # there now: written while the check ran
        root = f.details.get("root")
        if isinstance(root, str) and f.area == "refs":
            now = final.ref(root)
            return "kept" if now == f.oid else "dropped"  # still naming the missing object, or moved
        return "changed"
    if f.area == "dangling":
        return "changed" if f.oid and final.readable(f.oid) else "dropped"
    if f.kind == "no-refs":
        return "dropped" if final.has_refs() else "kept"
    if f.area in ("commit-graph", "midx") and f.oid and objects_moved:
        # the graph or index compared with objects that were moving
        if "cannot read" in f.message and final.readable(f.oid):
            return "dropped"
        return "changed"
    if f.area in ("packs", "loose", "objects", "commit-graph", "midx") and files:
        # damage in a file the change did not rewrite stands
        same = all(start.stamp(p) is not None and start.stamp(p) == stamp_of(p) for p in files)
        if same or f.area == "loose":  # a loose object's file is never rewritten in place
            return "kept"
    return "changed"


def unchanged(findings: list[Finding]) -> Settled:
    """A run the repository did not change under: every finding stands but
    those about git's temporary files (a repack that was under way from
    before the run to after it: its work in progress is not damage)."""
    temporary = [f for f in findings if any(is_git_temporary(p) for p in _files(f))]
    if not temporary:
        return Settled(list(findings), [], [], None)
    return Settled([f for f in findings if f not in temporary], [], temporary, None)


def settle(findings: list[Finding], start: RepoState, end: RepoState, session: Session) -> Settled:
    """Sort ``findings`` of a run that began at ``start`` and ended at
    ``end``; ``session`` is open on the final state (asked only when the
    two differ)."""
    change = compare(start, end)
    if change is None:
        return unchanged(findings)
    final = _FinalState(session)
    piles: dict[str, list[Finding]] = {"kept": [], "changed": [], "dropped": []}
    shown: dict[tuple[str, str | None], set[str]] = {}  # (kind, file) -> the verdicts of its findings
    summaries = []
    for f in findings:
        if "suppressed" in f.details:  # "N more 'kind' findings in this file not shown"
            summaries.append(f)
            continue
        verdict = _verdict(f, start, change, final)
        shown.setdefault((f.kind, f.path), set()).add(verdict)
        piles[verdict].append(f)
    for f in summaries:
        # the findings not shown are like those shown: all dropped, the summary goes too
        verdicts = shown.get((f.kind, f.path), set())
        piles["dropped" if verdicts == {"dropped"} else "changed"].append(f)
    return Settled(piles["kept"], piles["changed"], piles["dropped"], change)
