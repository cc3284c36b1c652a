"""The Tracer: listeners for core's trace events.

core emits trace events (packscope.core.trace_events: frozen, slotted
dataclasses describing each step of its work) to a ``Tracer``.  Tracing
costs nothing when nobody listens: callers test ``tracer.active`` once per
lookup and take an untraced path otherwise — and import the event classes
only on the traced path, so an untraced command never builds them.

The event classes are importable from here too (``trace.LookupFinished``,
``from packscope.core.trace import Probe``), loaded on first use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # for the type checker; at run time __getattr__ below loads them
    from packscope.core.trace_events import (
        DeltaBaseCacheEvent,
        LookupFinished,
        LookupStarted,
        LooseCacheFilled,
        LooseCacheFlushed,
        LooseChecked,
        MruMoved,
        NegativeCacheHit,
        NullOidShortcut,
        PackDirScanned,
        PackSearched,
        Probe,
        RescanSkipped,
        SearchPath,
    )

# The event classes (packscope.core.trace_events) are named here too, loaded on first use.
__all__ = [
    "DeltaBaseCacheEvent",
    "Event",
    "Listener",
    "LookupFinished",
    "LookupStarted",
    "LooseCacheFilled",
    "LooseCacheFlushed",
    "LooseChecked",
    "MruMoved",
    "NegativeCacheHit",
    "NullOidShortcut",
    "PackDirScanned",
    "PackSearched",
    "Probe",
    "Recorder",
    "RescanSkipped",
    "SearchPath",
    "Tracer",
    "event_to_dict",
]


def __getattr__(name: str) -> object:
    # PEP 562: an event class, loaded when first named (and kept here, so
    # that later uses find it without this call; the module's own names
    # never get here).
    if name in __all__:
        from packscope.core import trace_events

        value = globals()[name] = getattr(trace_events, name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Event = object  # any class of packscope.core.trace_events
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
    import dataclasses  # (loaded already: the event is one)

    if not dataclasses.is_dataclass(event) or isinstance(event, type):
        raise TypeError(f"not a trace event: {event!r}")
    d: dict[str, object] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        d[f.name] = jsonable(getattr(event, f.name))
    return d


def jsonable(v: object) -> object:
    import dataclasses

    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (tuple, list)):
        return [jsonable(x) for x in v]
    if isinstance(v, bytes):
        return v.hex()
    return v
