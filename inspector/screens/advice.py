"""The Advice screen: what git's maintenance would do here and why,
git-sizer's metrics with on-disk sizes, the what-if rows (Enter replays a
row's workload in the Lookup lab) and the largest blobs (Enter opens one in
the Object view: its pack entry and delta chain).

The work runs in a thread worker on a session of its own (so it never holds
the UI's core lock), reports progress and ends in a message; leaving the
screen stops it, and coming back starts it again.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import ListSource, VirtualList

HELP = """
What git would do on its own now, and why; how big the repository is by
git-sizer's measures; what the biggest objects are.

Maintenance: one row per task git may run by itself — `gc --auto` (loose
objects estimated from objects/17, the pack count against
gc.autoPackLimit), the `git maintenance` tasks' auto conditions
(loose-objects, incremental-repack, commit-graph), pack-refs (only when gc
runs) and which packs `repack --geometric=2` would roll up.  Each trigger
shows the value here, the threshold, where the threshold came from (a
config file and line, or git's default) and whether it fires.

Sizes: git-sizer's metrics over everything reachable from refs and HEAD.
Level = value / git-sizer's reference; stars mark levels of 1 and more.
Bytes on disk are the pack entries (or loose files) git would read.

What-if: a seeded sample of lookups (loose objects included) replayed on
the current indexes and on proposed ones (one multi-pack-index, one pack,
the geometric roll-up): probes, index pages, packs searched, loose-object
directory reads and rescans per lookup, current → proposed; a walk's
commit reads with a commit-graph; and `log -- PATH` (the largest path)
walked as it is and with a commit-graph and Bloom filters: commits parsed,
trees read, Bloom queries answered.  Enter on a what-if row replays its
workload in the Lookup lab (a walk's row: the objects the walk read, as
lookups).

Largest paths: the blobs first met at each path, summed (every version
of a file that was edited often), by size and on disk.

Largest blobs: by size, with their size on disk and delta depth.  Enter
opens the blob in the Object view (pack entry, delta chain).

w does the same for the what-if row under the cursor (the sample's row
when none is chosen), on the store as it is now (what the "current"
column models).

The walk reads every commit and tree once: on a large repository it takes
a while; leaving the screen stops it, R starts it again.
"""

TASK_STYLE = {True: "bold yellow", False: "dim"}


class AdviceScreen(PackscopeScreen):
    HELP = HELP
    TAB = "advice"

    DEFAULT_CSS = """
    AdviceScreen #advice-scroll { height: 1fr; }
    AdviceScreen #advice-whatif { height: 9; border-top: solid $primary-darken-2; }
    AdviceScreen #advice-largest { height: 9; border-top: solid $primary-darken-2; }
    AdviceScreen .advice-panel { padding: 0 1; margin-bottom: 1; }
    """

    BINDINGS = [
        Binding("x", "stop", "Stop", id="advice.stop"),
        Binding("w", "replay_workload", "Workload → Lab", id="advice.workload"),
    ]

    phase: reactive[str] = reactive("waiting for the repository")

    class Maintenance(Message):
        def __init__(self, rows: list[dict[str, Any]]) -> None:
            super().__init__()
            self.rows = rows

    class Progress(Message):
        def __init__(self, phase: str, count: int) -> None:
            super().__init__()
            self.phase = phase
            self.count = count

    class Finished(Message):
        """The walk's end: the document, or why there is none."""

        def __init__(self, doc: dict[str, Any] | None, error: str | None = None, stopped: bool = False) -> None:
            super().__init__()
            self.doc = doc
            self.error = error
            self.stopped = stopped

    def __init__(self) -> None:
        super().__init__()
        self.doc: dict[str, Any] | None = None
        self.maintenance_rows: list[dict[str, Any]] | None = None
        self.largest: list[dict[str, Any]] = []
        self.workload: list[bytes] = []  # the sample's lookups, for the Lab
        self.whatifs: list[dict[str, Any]] = []  # the what-if rows, as in the document
        self.workloads: list[list[bytes]] = []  # each what-if row's ids, for the Lab
        self.whatif_lines: list[int] = []  # the what-if row of each line of the list
        self._stop = threading.Event()
        self.running = False

    def compose_body(self) -> ComposeResult:
        with VerticalScroll(id="advice-scroll"):
            yield Static("", id="advice-status", classes="advice-panel", markup=False)
            yield Static("", id="advice-maintenance", classes="advice-panel", markup=False)
            yield Static("", id="advice-sizes", classes="advice-panel", markup=False)
            yield Static("", id="advice-paths", classes="advice-panel", markup=False)
        yield VirtualList(ListSource(), id="advice-whatif", searchable=False)
        yield VirtualList(ListSource(), id="advice-largest", searchable=False)

    # --- the worker ------------------------------------------------------------------------

    def refresh_data(self) -> None:
        if self.running:
            return
        self.start()

    def start(self) -> None:
        self._stop = threading.Event()
        self.running = True
        self.phase = "reading maintenance settings"
        self.compute(self._stop)

    @work(thread=True, exclusive=True, group="advice")
    def compute(self, stop: threading.Event) -> None:
        from packscope.core.face import CancelledError, PackscopeError, SizeWalk, maintenance, open_session, whatif_rows
        from packscope.core.face import advice_document as build

        last = [0.0]

        def progress(phase: str, count: int) -> None:
            now = time.monotonic()
            if now - last[0] > 0.2:
                last[0] = now
                self.post_message(self.Progress(phase, count))

        try:
            session = open_session(self.app.core.path)
        except PackscopeError as e:
            self.post_message(self.Finished(None, e.message))
            return
        try:
            tasks = maintenance(session)
            self.post_message(self.Maintenance([t.to_dict() for t in tasks]))
            result = SizeWalk(session, cancel=stop.is_set, progress=progress).run()
            self.post_message(self.Progress("what-if: walking log -- PATH", 0))
            rows = whatif_rows(session, result, cancel=stop.is_set)
            doc = build(tasks, result, [w.to_dict() for w in rows])
            doc["_workloads"] = [list(w.ids) for w in rows]
        except CancelledError:
            self.post_message(self.Finished(None, stopped=True))
            return
        except PackscopeError as e:
            self.post_message(self.Finished(None, e.message))
            return
        finally:
            session.close()
        self.post_message(self.Finished(doc))

    def on_advice_screen_maintenance(self, message: Maintenance) -> None:
        self.maintenance_rows = message.rows
        self.query_one("#advice-maintenance", Static).update(maintenance_text(message.rows))
        self.phase = "walking every reachable object"

    def on_advice_screen_progress(self, message: Progress) -> None:
        if self.running:
            self.phase = f"walking: {message.count:,} objects ({message.phase})" if message.count else message.phase

    def on_advice_screen_finished(self, message: Finished) -> None:
        self.running = False
        if message.stopped:
            self.phase = "stopped (R starts again)"
            return
        if message.doc is None:
            self.phase = f"failed: {message.error}"
            return
        self.workloads = message.doc.pop("_workloads", [])
        self.workload = self.workloads[0] if self.workloads else []
        self.doc = message.doc
        self.phase = "done"
        self.query_one("#advice-maintenance", Static).update(maintenance_text(message.doc["maintenance"]))
        self.query_one("#advice-sizes", Static).update(sizes_text(message.doc))
        self.query_one("#advice-paths", Static).update(paths_text(message.doc["largest"]["paths"]))
        self.whatifs = message.doc["whatif"]
        lines, owners = whatif_lines(self.whatifs)
        self.whatif_lines = owners
        self.query_one("#advice-whatif", VirtualList).set_source(ListSource(lines), cursor=1 if owners else 0)
        self.largest = message.doc["largest"]["blobs"]
        rows = [Text("size        on disk    depth  blob          where", style="bold")]
        rows += [largest_row(b) for b in self.largest]
        self.query_one("#advice-largest", VirtualList).set_source(ListSource(rows), cursor=1 if self.largest else 0)

    def watch_phase(self, phase: str) -> None:
        if self.ready:
            self.query_one("#advice-status", Static).update(Text(f"Advice: {phase}", style="italic"))

    def on_mount(self) -> None:
        super().on_mount()
        self.watch_phase(self.phase)

    def on_screen_suspend(self) -> None:
        """Left: the walk stops (it starts again when the screen is shown)."""
        if self.running:
            self._stop.set()

    def action_stop(self) -> None:
        if self.running:
            self._stop.set()
            self.phase = "stopping"

    def action_replay_workload(self) -> None:
        """The what-if row's workload (the row under the what-if list's
        cursor, else the sample's) runs as a batch in the Lab."""
        cursor = self.query_one("#advice-whatif", VirtualList).cursor
        row = self.whatif_lines[cursor] if 0 <= cursor < len(self.whatif_lines) else -1
        self.replay_whatif(max(row, 0))

    def replay_whatif(self, row: int) -> None:
        """Row ``row``'s lookups run as a batch in the Lab, on the store as it
        is (the current column, live)."""
        if not self.workloads:
            self.notify("no workload yet: the what-if models come at the end of the walk", timeout=3)
            return
        ids = list(self.workloads[row]) if 0 <= row < len(self.workloads) else []
        if not ids:
            self.notify("this row has no lookups to replay", timeout=3)
            return
        w = self.whatifs[row] if row < len(self.whatifs) else {}
        what = w.get("workload", "what-if")
        source = f"advise's what-if: {w.get('layout', '')} · {what} ({len(ids):,} ids)"
        app = self.app
        app.switch_mode("lab")

        def start() -> None:
            lab = app.screen
            if hasattr(lab, "start_batch"):
                lab.start_batch(ids=ids, source=source)

        app.call_after_refresh(start)

    # --- opening an object -------------------------------------------------------------------

    def on_virtual_list_opened(self, message: VirtualList.Opened) -> None:
        if message.vlist.id == "advice-whatif":
            message.stop()
            if 0 <= message.row < len(self.whatif_lines) and self.whatif_lines[message.row] >= 0:
                self.replay_whatif(self.whatif_lines[message.row])
            return
        row = message.row - 1
        if 0 <= row < len(self.largest):
            message.stop()
            self.app.open_object(bytes.fromhex(self.largest[row]["oid"]))

    def current_id(self) -> str | None:
        row = self.query_one("#advice-largest", VirtualList).cursor - 1
        return self.largest[row]["oid"] if 0 <= row < len(self.largest) else None


# --- drawing -----------------------------------------------------------------------------------


def human_bytes(n: float) -> str:
    for name, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {name}"
    return f"{int(n)} B"


def maintenance_text(rows: list[dict[str, Any]]) -> Text:
    t = Text("Maintenance, as git would decide it now\n", style="bold")
    for r in rows:
        t.append(f"{'▶ RUNS' if r['would_run'] else '  no  '}  ", style=TASK_STYLE[r["would_run"]])
        t.append(f"{r['task']:<19}", style="bold" if r["would_run"] else "")
        t.append(f"{r['why']}\n")
        for trig in r["triggers"]:
            sentence = trig.get("sentence") or f"{trig['setting']}: {trig['value']} against {trig['threshold']}"
            t.append(f"          {sentence}\n", style="yellow" if trig["fires"] else "dim")
        if r["would_run"]:
            t.append(f"          → {r['command']}\n", style="green")
    return t


def sizes_text(doc: dict[str, Any]) -> Text:
    t = Text("Sizes (git-sizer's metrics; level = value / reference)\n", style="bold")
    for name, m in doc["sizes"].items():
        level = m["level"]
        stars = "*" * min(int(level), 30) if level >= 1 else ""
        style = "bold red" if level >= 1 else ("yellow" if level >= 0.5 else "")
        t.append(f"  {name:<28}{m['value']:>14,}  {level:>8.3f} {stars:<6}", style=style)
        t.append(f" {m['object'] or ''}\n", style="dim")
    disk = doc.get("disk") or {}
    if disk:
        t.append("On disk: " + ", ".join(f"{k} {human_bytes(v)}" for k, v in disk.items()) + "\n")
    stored = doc.get("stored")
    if stored:
        t.append(
            f"Beside the reachable: {stored['unreachable_objects']:,} unreachable objects"
            f" ({human_bytes(stored['unreachable_disk'])}), {stored['cruft_packs']} cruft packs"
            f" ({human_bytes(stored['cruft_bytes'])}), {stored['temporary_files']} temporary files,"
            f" {stored['garbage_files']} garbage files\n"
        )
    if doc.get("promised"):
        t.append(
            "Promised (absent, partial clone): " + ", ".join(f"{v} {k}s" for k, v in doc["promised"].items()) + "\n"
        )
    return t


def paths_text(rows: list[dict[str, Any]]) -> Text:
    t = Text("Largest paths (the distinct blobs first met at each path)\n", style="bold")
    for p in rows[:10]:
        t.append(f"  {human_bytes(p['size']):>10}  {human_bytes(p['disk_size']):>10} on disk  {p['blobs']:>6} blobs  ")
        t.append(f"{p['path']}\n", style="cyan")
    return t


WALK_READS = (
    ("commits_parsed", "commits parsed"),
    ("trees_read", "trees read"),
    ("bloom_answered", "answered by Bloom"),
    ("graph_records", "graph records"),
)


def whatif_lines(rows: list[dict[str, Any]]) -> tuple[list[Text], list[int]]:
    """The what-if list: a heading, then each row's lines; and for each
    line the row it belongs to (-1: the heading)."""
    lines = [Text("What-if: current → proposed (Enter replays the row's workload in the Lab)", style="bold")]
    owners = [-1]
    for i, w in enumerate(rows):
        c, p = w["current"], w["proposed"]
        walk = "commits_parsed" in c
        if walk:
            better = p["trees_read"] + p["commits_parsed"] < c["trees_read"] + c["commits_parsed"]
            text = Text(f"  {w['layout']:<18}", style="bold green" if better else "bold")
            text.append("  ".join(f"{label} {c[k]:,} → {p[k]:,}" for k, label in WALK_READS))
        else:
            better = p["probes_per_lookup"] + p["packs_searched"] + p.get("loose_reads", 0) < (
                c["probes_per_lookup"] + c["packs_searched"] + c.get("loose_reads", 0)
            )
            text = Text(f"  {w['layout']:<18}", style="bold green" if better else "bold")
            text.append(
                f"probes {c['probes_per_lookup']:.1f} → {p['probes_per_lookup']:.1f}  "
                f"pages {c['pages_per_lookup']:.1f} → {p['pages_per_lookup']:.1f}  "
                f"packs {c['packs_searched']:.2f} → {p['packs_searched']:.2f}  "
                f"loose reads {c.get('loose_reads', 0):.2f} → {p.get('loose_reads', 0):.2f}  "
                f"rescans {c['rescans']} → {p['rescans']}"
            )
        lines.append(text)
        owners.append(i)
        lines.append(Text(f"      {w['workload']}; {w.get('note', '')}", style="dim"))
        owners.append(i)
    return lines, owners


def largest_row(b: dict[str, Any]) -> Text:
    return Text(
        f"{human_bytes(b['size']):>10}  {human_bytes(b['disk_size']):>10}  {b['delta_depth']:>5}  {b['oid'][:12]}  {b['path']}"
    )
