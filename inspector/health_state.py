"""One health state for the whole UI.

What is known about the repository's health, each piece with when and how
it was learnt:

* what opening the repository found (the problems ``packscope info``
  reports: it reads the indexes' headers, refs, the commit-graph and the
  multi-pack-index, and verifies no checksum);
* per pack (:class:`PackHealth`): the Packs screen's cheap checks (sizes,
  header, trailer against the index's record), ``t`` (the .pack's and the
  .idx's checksums, each hashed in full) and what the last full Health run
  reported about the pack or its index;
* the last Health run (:class:`LastRun`).

The Overview's Health panel, the Packs screen's badges and the Health
screen read and write this one record, so they cannot disagree; and what
nobody checked is never called healthy (:func:`opening_text`).

Kept on the app object (``health_state(app)``), created on first use.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field


@dataclass(slots=True)
class LastRun:
    mode: str  # "full" or "connectivity"
    ended: float  # wall clock
    counts: dict[str, int]  # by severity: error, warning, info
    exit: int | None  # git fsck's exit bits; None when cancelled or failed
    cancelled: bool = False
    error: str | None = None
    changed: str | None = None  # the repository changed during the run: what ("a repack at 14:02")


def pack_key(path: str) -> str:
    """One key for a pack and its index: the path without its extension."""
    base, ext = os.path.splitext(os.path.normpath(path))
    return base if ext in (".pack", ".idx", ".rev", ".bitmap", ".keep", ".promisor") else os.path.normpath(path)


def _temporary(path: str) -> bool:
    from packscope.core.store.temporary_files import is_git_temporary

    return is_git_temporary(path)


def _stamps(key: str) -> tuple:
    from packscope.core.repo.repo_state import stamp_of

    return (stamp_of(key + ".pack"), stamp_of(key + ".idx"))


@dataclass(slots=True)
class PackHealth:
    """What is known about one pack/idx pair, and from where."""

    cheap: list[str] = field(default_factory=list)  # what the cheap checks found (Packs)
    cheap_error: str | None = None  # the cheap checks could not run: why
    pack_checksum: str | None = None  # t: "ok" or what differs; None: not verified
    idx_checksum: str | None = None  # t: "ok" or what differs; None: not verified
    verified_at: float | None = None  # when t hashed it
    findings: dict[str, int] = field(default_factory=dict)  # the last full Health run: kind -> count
    run_at: float | None = None  # when that run ended
    files: tuple = ()  # the .pack's and .idx's stamps when t or the run looked: a rewrite makes both moot

    def problems(self) -> list[str]:
        """What is wrong, each with where it was learnt."""
        out = list(self.cheap)
        if self.cheap_error:
            out.append(self.cheap_error)
        if self.pack_checksum not in (None, "ok"):
            out.append(f"pack checksum: {self.pack_checksum} (t)")
        if self.idx_checksum not in (None, "ok"):
            out.append(f"idx checksum: {self.idx_checksum} (t)")
        if self.findings:
            kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(self.findings.items()))
            out.append(f"Health: {kinds}")
        return out

    def verified_text(self) -> str | None:
        """ "checksums ok (pack and idx)" after a clean t; None before any."""
        if self.pack_checksum is None and self.idx_checksum is None:
            return None
        if self.pack_checksum == "ok" and self.idx_checksum == "ok":
            return "checksums ok (pack and idx)"
        return None


@dataclass(slots=True)
class HealthState:
    opening: list[dict] | None = None  # info's problems; None until gathered
    opened: float = 0.0
    last_run: LastRun | None = None
    runs: int = 0
    packs: dict[str, PackHealth] = field(default_factory=dict)  # pack_key -> what is known
    version: int = 0  # bumped at every change: readers redraw when it moves
    listeners: list = field(default_factory=list)  # callables: the state changed

    def set_opening(self, problems: list[dict]) -> None:
        self.opening = problems
        self.opened = time.time()
        self._changed()

    def pack(self, path: str) -> PackHealth:
        key = pack_key(path)
        ph = self.packs.get(key)
        if ph is None:
            ph = self.packs[key] = PackHealth()
        return ph

    def known(self, path: str) -> PackHealth | None:
        """What is known of the pack at ``path`` — forgotten (t's verdicts,
        the run's findings) once its files were rewritten since (a repack
        that wrote a pack of the same name)."""
        key = pack_key(path)
        ph = self.packs.get(key)
        if ph is None:
            return None
        now = _stamps(key)
        if now == (None, None):  # gone: nothing to say about it any more
            del self.packs[key]
            self._changed()
            return None
        if ph.files and ph.files != now:
            ph.pack_checksum = ph.idx_checksum = ph.verified_at = None
            ph.cheap, ph.cheap_error = [], None
            ph.findings, ph.run_at, ph.files = {}, None, ()
            self._changed()
        return ph

    def record_cheap(self, path: str, damage: list[str], error: str | None) -> None:
        if _temporary(path):  # git's work in progress is never a pack with problems
            return
        self.known(path)  # (what a rewrite made moot goes first)
        ph = self.pack(path)
        if not ph.files:
            ph.files = _stamps(pack_key(path))
        if (ph.cheap, ph.cheap_error) != (list(damage), error):
            ph.cheap, ph.cheap_error = list(damage), error
            self._changed()

    def record_checksums(self, path: str, pack_result: str, idx_result: str) -> None:
        if _temporary(path):
            return
        ph = self.pack(path)
        ph.pack_checksum, ph.idx_checksum, ph.verified_at = pack_result, idx_result, time.time()
        ph.files = _stamps(pack_key(path))
        self._changed()

    def record_run(self, run: LastRun, findings: list | None = None) -> None:
        """A Health run ended; ``findings`` (what stands of a finished full
        run) replace what the previous run said about each pack."""
        self.last_run = run
        self.runs += 1
        if findings is not None and run.mode == "full" and not run.cancelled and not run.error:
            for ph in self.packs.values():
                ph.findings, ph.run_at = {}, run.ended
            for f in findings:
                where = f.pack or f.idx or (f.path if f.area == "packs" and f.path else None)
                if where is None or f.severity != "error" or _temporary(where):
                    continue
                ph = self.pack(where)
                ph.findings[f.kind] = ph.findings.get(f.kind, 0) + 1
                ph.run_at = run.ended
                ph.files = _stamps(pack_key(where))
        self._changed()

    def damaged_packs(self) -> list[tuple[str, list[str]]]:
        """(pack key, problems) of every pack something found wrong with."""
        for key in list(self.packs):
            self.known(key)  # (what a rewrite made moot is forgotten first)
        return [(k, p) for k, ph in sorted(self.packs.items()) if (p := ph.problems())]

    def _changed(self) -> None:
        self.version += 1
        for fn in list(self.listeners):
            fn()


def health_state(app) -> HealthState:
    state = getattr(app, "_packscope_health", None)
    if state is None:
        state = HealthState()
        app._packscope_health = state
    return state


def age_text(seconds: float) -> str:
    s = max(0, int(seconds))
    if s < 60:
        return f"{s} s ago"
    if s < 3600:
        return f"{s // 60} min ago"
    if s < 86400:
        return f"{s // 3600} h ago"
    return f"{s // 86400} d ago"


def describe_run(run: LastRun, now: float | None = None) -> str:
    """ "last Health run (full check) at 12:40, 3 min ago: 2 errors, …"."""
    now = time.time() if now is None else now
    when = time.strftime("%H:%M", time.localtime(run.ended))
    head = f"last Health run ({'full check' if run.mode == 'full' else 'connectivity only'}) at {when}, "
    head += age_text(now - run.ended)
    moved = f"; the repository changed during the run ({run.changed}): 8 then r runs it again" if run.changed else ""
    if run.error:
        return f"{head}: the check failed ({run.error}){moved}"
    c = run.counts
    body = f"{c.get('error', 0)} errors, {c.get('warning', 0)} warnings, {c.get('info', 0)} infos"
    if run.cancelled:
        return f"{head}: cancelled after {body}{moved}"
    return f"{head}: {body}, exit status {run.exit}{moved}"


def full_run_clean(state: HealthState) -> bool:
    """The last Health run was a finished full check that found no error."""
    run = state.last_run
    return bool(
        run is not None
        and run.mode == "full"
        and not run.error
        and not run.cancelled
        and run.exit == 0
        and not run.counts.get("error")
        and not run.changed  # the repository changed under it: not a verdict on what is there now
    )


def opening_text(state: HealthState, now: float | None = None) -> tuple[str, str]:
    """(level, text) for what opening found, said as what was checked and
    when — never "no problems" about what was not checked."""
    now = time.time() if now is None else now
    age = now - state.opened
    when = "just now" if age < 60 else age_text(age)
    if full_run_clean(state) and not state.damaged_packs():
        run = state.last_run
        assert run is not None
        at = time.strftime("%H:%M", time.localtime(run.ended))
        return "ok", f"opened without errors ({when}); the full check at {at} verified every checksum and object"
    return (
        "info",
        f"opened without errors {when} (refs, index headers, commit-graph, multi-pack-index read); "
        "checksums not verified — 8 runs the full check",
    )
