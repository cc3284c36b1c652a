"""The adapter between core's tracer and the widgets.

core emits events on whatever thread does the work (the UI thread, or a
worker).  A widget must not be touched from another thread, and one Textual
message per probe would drown the event loop, so:

1. ``EventPump`` subscribes a listener that only appends to a deque
   (``deque.append`` is atomic: no lock on core's hot path);
2. the app drains the deque on a ~30 Hz timer, on the UI thread;
3. ``EventDigest`` turns each batch into a few log lines (one summary per
   lookup, not one line per pack searched; floods folded into totals);
4. ``LogBook`` keeps the last lines (bounded) for every event-log panel, and
   ``RateHistory`` samples the store's counters once a second for sparklines.
"""

from __future__ import annotations

import time
from collections import Counter, OrderedDict, deque
from dataclasses import dataclass

from rich.text import Text

from packscope.core import trace
from packscope.inspector.plural import count
from packscope.inspector.safe_text import human_bytes, literal

# Log kinds, in the order the filter shows them.
KINDS = ("lookup", "scan", "loose", "delta", "mru", "outside")
KIND_STYLES = {
    "lookup": "cyan",
    "scan": "yellow",
    "loose": "green",
    "delta": "magenta",
    "mru": "blue",
    "outside": "bold red",
}
# Beyond this many lines of one kind in one batch, the rest is folded into a
# single "… and N more" line: the log is for reading, the counters for totals.
PER_BATCH_LINES = 40


@dataclass(frozen=True, slots=True)
class LogEntry:
    kind: str
    text: Text
    when: float  # time.time()


class EventPump:
    """A tracer listener that only queues; drained on the UI thread."""

    def __init__(self, tracer: trace.Tracer, maxlen: int = 200_000) -> None:
        self._queue: deque = deque(maxlen=maxlen)
        self._unsubscribe = tracer.subscribe(self._queue.append)

    def __len__(self) -> int:
        return len(self._queue)

    def drain(self) -> list:
        q = self._queue
        pop = q.popleft
        # len() first: events appended meanwhile wait for the next tick.
        return [pop() for _ in range(len(q))]

    def close(self) -> None:
        self._unsubscribe()


class _Lookup:
    """Accumulates one lookup's steps until its LookupFinished."""

    __slots__ = ("loose", "negative", "pages", "probes", "searched")

    def __init__(self) -> None:
        self.searched = self.probes = self.pages = 0
        self.loose = ""
        self.negative = False


SHORT_ID = 12  # hex digits an id is shown with in the log
SHORT_IDS_KEPT = 20_000  # ids remembered (the log keeps 2,000 lines)


class ShortIds:
    """Ids shortened for the log, never two ids to the same text: an id
    whose first 12 digits another id shown before also has is shown whole
    (and so is that other one from then on)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[str, str] = OrderedDict()  # short -> the id first shown so
        self._clashed: set[str] = set()

    def short(self, oid: str) -> str:
        head = oid[:SHORT_ID]
        first = self._seen.get(head)
        if first is None:
            self._seen[head] = oid
            if len(self._seen) > SHORT_IDS_KEPT:
                old, _ = self._seen.popitem(last=False)
                self._clashed.discard(old)
        else:
            self._seen.move_to_end(head)
            if first != oid:
                self._clashed.add(head)
        return oid if head in self._clashed else head


class EventDigest:
    """Core events → log entries, with per-kind tallies for the rates panel."""

    def __init__(self) -> None:
        self._lookup: _Lookup | None = None
        self.tally: Counter = Counter()  # lifetime events per kind
        self.ids = ShortIds()

    def digest(self, events: list) -> list[LogEntry]:
        now = time.time()
        out: list[LogEntry] = []
        per_kind: Counter = Counter()
        folded: Counter = Counter()
        for e in events:
            entry = self._one(e)
            if entry is None:
                continue
            kind, text = entry
            self.tally[kind] += 1
            per_kind[kind] += 1
            if per_kind[kind] > PER_BATCH_LINES:
                folded[kind] += 1
                continue
            out.append(LogEntry(kind, text, now))
        for kind, n in folded.items():
            out.append(LogEntry(kind, Text(f"… and {n} more {kind} events in this batch", style="dim"), now))
        return out

    def _one(self, e) -> tuple[str, Text] | None:
        if isinstance(e, trace.LookupStarted):
            self._lookup = _Lookup()
            return None
        if isinstance(e, trace.PackSearched):
            lk = self._lookup
            if lk is not None:
                lk.searched += 1
                lk.probes += len(e.path.probes)
                lk.pages += len(e.path.pages)
            return None
        if isinstance(e, trace.LooseChecked):
            if self._lookup is not None:
                self._lookup.loose = f"loose {e.subdir}/ by {e.method}"
            return None
        if isinstance(e, trace.NegativeCacheHit):
            if self._lookup is not None:
                self._lookup.negative = True
            return None
        if isinstance(e, trace.NullOidShortcut):
            return "lookup", Text("null id: missing without a probe", style="dim")
        if isinstance(e, trace.LookupFinished):
            return "lookup", self._finished(e)
        if isinstance(e, trace.PackDirScanned):
            t = Text()
            t.append("rescan " if e.reason != "startup" else "scan ", style=KIND_STYLES["scan"])
            t.append(f"({e.reason}) ")
            t.append(count(e.packs, "pack"))
            if e.added:
                t.append(f"  +{len(e.added)} ", style="green")
                t.append_text(literal(", ".join(e.added[:3]) + (" …" if len(e.added) > 3 else "")))
            if e.removed:
                t.append(f"  -{len(e.removed)} ", style="red")
                t.append_text(literal(", ".join(e.removed[:3]) + (" …" if len(e.removed) > 3 else "")))
            t.append(f"  {e.seconds * 1e3:.1f} ms", style="dim")
            return "scan", t
        if isinstance(e, trace.RescanSkipped):
            t = Text("rescan skipped: ", style="dim")
            t.append_text(literal(e.reason))
            return "scan", t
        if isinstance(e, trace.LooseCacheFilled):
            t = Text(f"loose cache fill {e.subdir}/ ", style=KIND_STYLES["loose"])
            t.append(f"+{count(e.added, 'name')}  {e.seconds * 1e6:.0f} µs  ({e.strategy})")
            return "loose", t
        if isinstance(e, trace.LooseCacheFlushed):
            t = Text("loose cache flushed ", style=KIND_STYLES["loose"])
            t.append_text(literal(f"({e.reason})"))
            return "loose", t
        if isinstance(e, trace.DeltaBaseCacheEvent):
            t = Text(f"delta-base {e.action} ", style=KIND_STYLES["delta"])
            t.append_text(literal(e.pack[:18]))
            t.append(f" @{e.offset}  {human_bytes(e.size)}")
            return "delta", t
        if isinstance(e, trace.MruMoved):
            t = Text("MRU ", style=KIND_STYLES["mru"])
            t.append_text(literal(e.pack[:18]))
            t.append(f" rank {e.from_rank} → 0")
            return "mru", t
        return None

    def _finished(self, e: trace.LookupFinished) -> Text:
        lk = self._lookup or _Lookup()
        self._lookup = None
        t = Text("lookup ", style=KIND_STYLES["lookup"])
        t.append(self.ids.short(e.oid))
        if e.source is None:
            t.append(" missing", style="red")
        else:
            t.append(f" → {e.source} ")
            where = str(e.where)
            t.append_text(literal(where if len(where) <= 48 else "…" + where[-47:]))
        details = []
        if lk.negative:
            details.append("negative cache")
        if lk.searched:
            details.append(f"{lk.searched} idx, {lk.probes} probes, {lk.pages} pages")
        if lk.loose:
            details.append(lk.loose)
        if e.rescans:
            details.append(f"{e.rescans} rescan{'s' if e.rescans > 1 else ''}")
        if details:
            t.append("  " + "; ".join(details), style="dim")
        t.append(f"  {e.seconds * 1e6:.0f} µs", style="dim")
        return t


class LogBook:
    """The last log lines, shared by every event-log panel (one per screen)."""

    def __init__(self, maxlen: int = 2000) -> None:
        self.maxlen = maxlen
        self.entries: deque[LogEntry] = deque(maxlen=maxlen)
        self.version = 0  # bumps on every change, so panels know when to redraw
        self.paused = False
        self.held = 0  # lines not shown while paused
        self._held: list[LogEntry] = []
        self.enabled: set[str] = set(KINDS)

    def extend(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        if self.paused:
            self._held.extend(entries)
            del self._held[: max(0, len(self._held) - self.maxlen)]
            self.held = len(self._held)
            self.version += 1
            return
        self.entries.extend(entries)
        self.version += 1

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        if not paused and self._held:
            self.entries.extend(self._held)
            self._held.clear()
            self.held = 0
        self.version += 1

    def clear(self) -> None:
        self.entries.clear()
        self._held.clear()
        self.held = 0
        self.version += 1

    def set_kinds(self, kinds) -> None:
        self.enabled = set(kinds)
        self.version += 1

    def visible(self) -> list[LogEntry]:
        if len(self.enabled) == len(KINDS):
            return list(self.entries)
        return [e for e in self.entries if e.kind in self.enabled]

    def add(self, kind: str, text: Text | str) -> None:
        self.extend([LogEntry(kind, text if isinstance(text, Text) else literal(text), time.time())])


# --- rates ---------------------------------------------------------------------


RATE_SERIES = (
    ("lookups", "lookups/s"),
    ("hit_rate", "hit %"),
    ("delta_hit_rate", "delta-base hit %"),
    ("rescans", "rescans/s"),
    ("dir_reads", "dir reads/s"),
)


class RateHistory:
    """Once a second: differences of the store's counters, last ``points``."""

    def __init__(self, points: int = 60) -> None:
        self.series: dict[str, deque[float]] = {k: deque([0.0] * points, maxlen=points) for k, _ in RATE_SERIES}
        self._last: dict | None = None
        self._last_t = 0.0

    def sample(self, counters: dict, delta_stats, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        cur = dict(counters)
        if delta_stats is not None:
            cur["delta_hits"] = delta_stats.hits
            cur["delta_misses"] = delta_stats.misses
        last, self._last = self._last, cur
        dt, self._last_t = (now - self._last_t), now
        if last is None or dt <= 0:
            return

        def diff(k: str) -> int:
            return max(0, cur.get(k, 0) - last.get(k, 0))

        lookups = diff("lookups")
        hits = diff("hits_midx") + diff("hits_pack") + diff("hits_loose")
        dh, dm = diff("delta_hits"), diff("delta_misses")
        self.series["lookups"].append(lookups / dt)
        self.series["hit_rate"].append(100.0 * hits / lookups if lookups else 0.0)
        self.series["delta_hit_rate"].append(100.0 * dh / (dh + dm) if dh + dm else 0.0)
        self.series["rescans"].append(diff("rescans") / dt)
        self.series["dir_reads"].append(diff("dir_reads") / dt)

    def latest(self, key: str) -> float:
        return self.series[key][-1]
