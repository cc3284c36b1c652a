"""Trace events and the Tracer.

core emits frozen, slotted dataclasses describing each step of its work; the
inspector's adapter, the CLI's ``--json`` and the tests all consume the very
same objects, so they cannot disagree.

Tracing costs nothing when nobody listens: callers test ``tracer.active``
once per lookup and take an untraced path otherwise.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Probe:
    """One step of a bucket search: the window [lo, hi), the slot probed,
    the comparison of the name at ``mi`` with the target (-1, 0, 1) and the
    4 KiB page of the index file holding that name."""

    lo: int
    mi: int
    hi: int
    cmp: int
    page: int


@dataclass(frozen=True, slots=True)
class SearchPath:
    """A whole search inside one fanout bucket."""

    algorithm: str
    bucket: tuple[int, int]
    probes: tuple[Probe, ...]
    pages: tuple[int, ...]  # distinct pages, in first-touch order
    found: int | None  # position in the table, or None
    insert_at: int  # where the target would go when absent


# --- lookup-level events ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class LookupStarted:
    oid: str
    quick: bool


@dataclass(frozen=True, slots=True)
class NullOidShortcut:
    """The null id is 'missing' at once, with no probe (git does the same)."""

    oid: str


@dataclass(frozen=True, slots=True)
class PackSearched:
    """One pack index (or multi-pack-index) consulted during a lookup."""

    pack: str  # file name of the .idx / multi-pack-index
    source: str  # "pack" or "midx"
    path: SearchPath
    offset: int | None  # pack offset when found


@dataclass(frozen=True, slots=True)
class LooseChecked:
    """The loose store consulted: through the name cache or by stat()."""

    objects_dir: str
    subdir: str
    method: str  # "cache" or "stat"
    found: bool


@dataclass(frozen=True, slots=True)
class LooseCacheFilled:
    objects_dir: str
    subdir: str
    added: int
    seconds: float
    strategy: str  # "per-subdir" or "global-resort"


@dataclass(frozen=True, slots=True)
class LooseCacheFlushed:
    objects_dir: str
    reason: str


@dataclass(frozen=True, slots=True)
class PackDirScanned:
    """objects/pack/ was (re)read.  reason: startup, miss, changed, outside-change, request."""

    objects_dir: str
    reason: str
    packs: int
    added: tuple[str, ...]
    removed: tuple[str, ...]
    seconds: float


@dataclass(frozen=True, slots=True)
class RescanSkipped:
    """A miss under the gated policy that did not rescan, and why."""

    objects_dir: str
    reason: str


@dataclass(frozen=True, slots=True)
class NegativeCacheHit:
    oid: str


@dataclass(frozen=True, slots=True)
class MruMoved:
    pack: str
    from_rank: int


@dataclass(frozen=True, slots=True)
class DeltaBaseCacheEvent:
    action: str  # "fill", "hit", "evict"
    pack: str
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class LookupFinished:
    oid: str
    source: str | None  # "midx", "pack", "loose", "alternate-…", or None when missing
    where: str | None  # pack name or loose path
    seconds: float
    rescans: int


Event = object  # any of the dataclasses above
Listener = Callable[[Event], None]


class Tracer:
    """Listeners for trace events.  ``active`` is the one cheap flag."""

    __slots__ = ("_listeners", "active")

    def __init__(self) -> None:
        self._listeners: list[Listener] = []
        self.active = False

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        self.active = True

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):  # unsubscribed twice
                self._listeners.remove(listener)
            self.active = bool(self._listeners)

        return unsubscribe

    def emit(self, event: Event) -> None:
        for listener in tuple(self._listeners):
            listener(event)


class Recorder:
    """A listener that keeps every event (tests, the CLI, the lookup lab)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list[Event]:
        return [e for e in self.events if isinstance(e, kind)]


def event_to_dict(event: Event) -> dict[str, object]:
    """JSON-ready form: the class name as ``event`` plus every field."""
    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not a trace event: {event!r}")
    d: dict[str, object] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        d[f.name] = _jsonable(getattr(event, f.name))
    return d


def _jsonable(v: object) -> object:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (tuple, list)):
        return [_jsonable(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    return v
