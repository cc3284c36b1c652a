"""Screen 8: the repository checked as ``git fsck --full`` checks it.

packscope.core.fsck.verify runs in a process forked from a thread worker
(inspector/health_run.py: a private read-only session; the memory of a run
leaves with the process, finished or cancelled), its object pass over one
worker process per core (packscope.core.fsck.parallel); progress and
findings come back over a pipe and drive the bar and the list; Esc asks
the check to stop (the workers are terminated at the next progress poll).
Findings are grouped by cause and kind, with counts (the grouping:
inspector/health_groups_model.py); Enter on one shows where it is
(file, offset, pack/idx, object id), whether the object exists elsewhere,
and the remedy.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label, ProgressBar

from packscope.core.face import CancelledError
from packscope.inspector.health_groups_model import (
    Entry,
    Group,
    group_entries,
    group_rows,
    ordered_groups,
    same_row,
    starts_open,
)
from packscope.inspector.health_state import LastRun, health_state
from packscope.inspector.plural import count
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.screens.finding_details import FindingScreen, severity_badge
from packscope.inspector.widgets.virtual_list import VirtualList

HELP = """
Health runs packscope's fsck (what `git fsck --full` checks) and groups
what it finds by cause: a damaged file first (a pack, an index, a loose
object), with the findings it causes below it ("N findings caused by
this": objects it makes unreadable, the commit-graph entries and refs
that name them); then what is left, by file or by kind, worst first.
Groups start closed when they are long; dangling objects are one closed
group with a count.

Phases: packs (every .idx/.pack pair: checksums, the index's copy of the
pack's checksum, each entry's CRC32, inflation, delta bases and object id,
then object syntax), loose objects (zlib, header, hash, syntax), stray
.idx/.pack files, connectivity (from HEAD, refs, reflogs and the index:
missing objects told apart from promised ones — a partial clone — and from
damaged ones), dangling objects (information only), then the commit-graph
and multi-pack-index against the object database.

Severity: error (git fsck would fail; the exit bits are git's: 1 objects,
2 reachability, 4 packs, 8 refs, 16 commit-graph, 32 multi-pack-index),
warning, info.  A bad object never stops the check: the other objects are
still checked.

Enter on a group opens or closes it.  Enter on a finding goes to it: the
pack entry at its offset (for a finding a damaged pack causes: the
object's entry in that pack), else the object.  i shows its details: the
file and byte offset, the pack and index, the object id, whether a good
copy exists elsewhere (another pack, loose, an alternate, promised by a
promisor remote) and the remedy.  Esc cancels a running check (through
core's cancel check, within a few hundred objects); r runs it again; c
runs the quicker connectivity-only check (no per-object reading).  x
writes the findings as `packscope fsck --json` prints them to a file in
the temporary directory (its path is copied).

The repository may change while the check runs (a commit, `git repack`,
`git gc`): its state (the pack files, refs, loose object directories, the
commit-graph and multi-pack-index) is recorded when the check starts and
ends (and compared once a second meanwhile: the title says "the
repository is changing" as soon as it is).  When they differ the list says
so first ("the repository changed during the check (a repack at 14:02)"): findings about files that are gone,
objects that are there now and refs that moved are dropped — the final
state has no such problem; those the final state confirms (damage in a
file nobody rewrote, a ref that still names a missing object) stand; the
rest are marked ~ (they may come from the change).  r runs it again.  The Overview's Health
panel shows the last run's counts.
"""


@dataclass
class RunState:
    running: bool = False
    phase: str = ""
    done: int = 0
    total: int = 0
    finished: bool = False
    cancelled: bool = False
    error: str | None = None
    summary: dict | None = None
    started: float = 0.0
    seconds: float = 0.0
    mode: str = "full"
    # the repository changed while it ran (core.fsck.changed_during): what
    # happened, and how many findings were dropped / marked
    changed: str | None = None
    dropped: int = 0
    marked: int = 0
    start_state: object = None  # the repository's state when the run began (RepoState)
    changing: str | None = None  # seen changing while the run goes on ("a repack at 14:02")
    looked: float = 0.0  # when the state was last compared during the run (monotonic)


LOOK_EVERY = 1.0  # seconds between two looks at the repository's state during a run


class _Source:
    search_hint = "text in the findings"

    def __init__(self, screen: HealthScreen) -> None:
        self.s = screen

    def row_count(self) -> int:
        return len(self.s.rows)

    def row_text(self, row: int) -> Text:
        _kind, value = self.s.rows[row]
        if isinstance(value, Group):
            g = value
            t = Text("   " * g.depth + ("▾ " if self.s.is_open(g) else "▸ "), style="bold")
            t.append_text(severity_badge(g.severity))
            t.append(" ")
            t.append_text(literal(g.title or g.kind, "bold"))
            if g.cause:
                kinds = sorted({e.finding.kind for e in g.findings})
                t.append("  ")
                t.append_text(literal(", ".join(kinds), "red"))
                caused = g.count() - len(g.findings)
                t.append(f"  — {caused:,} findings caused by this" if caused else "", style="bold yellow")
            else:
                t.append(f"  ×{g.count():,}", style="bold")
                if g.depth:
                    t.append("  caused by the damaged file above", style="dim")
                else:
                    area = sorted({e.finding.area for e in g.findings})
                    t.append(f"   ({', '.join(area)})", style="dim")
            return t
        if isinstance(value, Entry):
            e = value
            f = e.finding
            t = Text("     " + ("   " if e.cause and not e.is_cause else ""))
            if e.changed_during:
                t = Text("   ~ " + ("   " if e.cause and not e.is_cause else ""), style="yellow")
            t.append_text(literal(f.message))
            loc = f.location()
            if loc:
                t.append("  ")
                t.append_text(literal(short_location(loc), "dim"))
            if e.offset is not None and not e.is_cause:
                t.append(f"  → entry @{e.offset:,}", style="cyan")
            if e.changed_during:
                t.append("  (may come from the change during the check)", style="yellow")
            return t
        return value if isinstance(value, Text) else Text(str(value))


def short_location(loc: str, limit: int = 90) -> str:
    return loc if len(loc) <= limit else "…" + loc[-(limit - 1) :]


class HealthScreen(PackscopeScreen):
    HELP = HELP
    DEFAULT_CSS = """
    #health-title { height: 1; padding: 0 1; }
    #health-progress { height: 1; padding: 0 1; }
    #health-progress Bar { width: 1fr; }
    #health-list { padding: 0 1; }
    """
    TAB = "health"
    # The finding details pop-up's keys, for ? help (a pop-up has no help of its own).
    POPUP_KEYS = (
        ("o  (finding details)", "Open the finding's object"),
        ("Esc / q / Enter  (finding details)", "Close the details"),
    )

    BINDINGS = [
        Binding("r", "run_check('full')", "Check again", id="health.run"),
        Binding("c", "run_check('connectivity')", "Connectivity only", id="health.connectivity"),
        Binding("i", "details", "Finding details", id="health.details"),
        Binding("x", "export", "Export (fsck --json)", id="health.export"),
        Binding("escape", "cancel_or_back", "Cancel / back", id="health.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[str, Group] = {}
        self.findings: list = []
        self.entries: list[Entry] = []
        self.rows: list[tuple[str, Group | Entry | Text]] = []  # ("group" | "finding" | "text", it)
        self.state = RunState()
        self._cancel = threading.Event()
        self._dirty = False
        self._pending: list = []
        self._pending_lock = threading.Lock()
        self._open: dict[str, bool] = {}  # group key -> opened/closed by the user
        self._drop: set[int] = set()  # ids of findings a changed repository made moot
        self.exported: str | None = None  # the last export's file

    def compose_body(self) -> ComposeResult:
        yield Label("", id="health-title", markup=False)
        yield ProgressBar(total=100, show_eta=False, id="health-progress")
        yield VirtualList(width=240, id="health-list")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(VirtualList).set_source(_Source(self))
        self.query_one(VirtualList).focus()
        self.update_title()
        if self.app.core.ready:
            self.start_check("full")

    def core_ready(self) -> None:
        super().core_ready()
        if not self.state.running and not self.state.finished:
            self.start_check("full")

    def refresh_data(self) -> None:
        pass  # a check is started by r / c, not by every rescan

    # --- running -------------------------------------------------------------------

    def action_run_check(self, mode: str) -> None:
        if self.state.running:
            self.notify("a check is running: Esc cancels it", timeout=2)
            return
        self.start_check(mode)

    def start_check(self, mode: str) -> None:
        if not self.app.core.ready and self.app.core.error is None:
            return
        self.groups.clear()
        self.findings.clear()
        self.entries.clear()
        self._cancel.clear()
        self.state = RunState(running=True, started=time.monotonic(), mode=mode)
        self.rebuild_rows()
        self.update_title()
        self.check(mode)

    @work(thread=True, exclusive=True, group="health-fsck")
    def check(self, mode: str) -> None:
        """The check in a process of its own (inspector/health_run.py: its
        memory leaves with it), results streamed to this thread."""
        from packscope.core.face import default_jobs
        from packscope.inspector.health_run import CheckFailed, run_check

        state = self.state

        def progress(done: int, total: int, phase: str) -> None:
            state.done, state.total, state.phase = done, total, phase

        collected: list[Entry] = []

        def entry(e: Entry) -> None:
            collected.append(e)
            with self._pending_lock:
                self._pending.append(e)

        repository = self.app.core.repository  # the one the UI opened, however it was started
        start = None
        try:
            if repository is None:  # start_check waits for the core: not expected
                raise CheckFailed("no repository is open")
            start = state.start_state = repository_state(repository)
            state.summary = run_check(repository, mode, progress, entry, self._cancel.is_set, default_jobs())
            self._settle(state, repository, start, collected)
        except CancelledError:
            state.cancelled = True
        except CheckFailed as e:
            state.error = str(e)
        except Exception as e:  # a bug in a check must not take the UI down
            state.error = f"{type(e).__name__}: {e}"
        finally:
            if start is not None and state.summary is None:
                # failed or cancelled: still say whether the repository changed under it
                with contextlib.suppress(Exception):
                    state.changed = changed_since(repository, start)
            release_memory()  # without fork the check ran in this process
            state.running = False
            state.finished = True
            state.seconds = time.monotonic() - state.started
            with contextlib.suppress(RuntimeError):  # the app is closing
                self.app.call_from_thread(self._check_ended, state)

    def _settle(self, state: RunState, repository, start, collected: list[Entry]) -> None:
        """When the repository changed during the run: drop the findings
        the final state does not have and mark those that may come from
        the change (core/fsck/changed_during.py); the exit status is then
        that of what stands."""
        from packscope.inspector.health_run import settle_run

        settled = settle_run(repository, [e.finding for e in collected], start)
        if settled.change is None and not settled.dropped:
            return
        dropped = {id(f) for f in settled.dropped}
        marked = {id(f) for f in settled.changed}
        for e in collected:
            e.changed_during = id(e.finding) in marked
        if settled.change is not None:
            state.changed = settled.change.describe()
            state.dropped, state.marked = len(dropped), len(marked)
        state.summary = dict(state.summary or {}, exit=settled.exit_status())
        with self._pending_lock:
            # entries not taken yet and those already shown: both lose the dropped ones
            self._pending = [e for e in self._pending if id(e.finding) not in dropped]
            self._drop = dropped

    def _take_pending(self) -> bool:
        with self._pending_lock:
            batch, self._pending = self._pending, []
        for entry in batch:
            self.entries.append(entry)
            self.findings.append(entry.finding)
        if batch:
            self.regroup()
        return bool(batch)

    def regroup(self) -> None:
        self.groups = group_entries(self.entries)

    def _check_ended(self, state: RunState) -> None:
        if state is not self.state:
            return
        self._take_pending()
        drop = self._drop
        if drop:
            self._drop = set()
            self.entries = [e for e in self.entries if id(e.finding) not in drop]
            self.findings = [e.finding for e in self.entries]
            self.regroup()
        self.rebuild_rows()
        self.update_title()
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        health_state(self.app).record_run(
            LastRun(
                state.mode,
                time.time(),
                counts,
                None if state.cancelled or state.error else (state.summary or {}).get("exit", 0),
                state.cancelled,
                state.error,
                state.changed,
            ),
            # what stands of the run, per pack: the Packs badges and the Overview show it
            [e.finding for e in self.entries if not e.changed_during],
        )
        if state.cancelled:
            self.notify("check cancelled", timeout=2)

    def tick(self) -> None:
        if not self.is_mounted:
            return
        if self.state.running:
            if self._take_pending():
                self.rebuild_rows()
            self.look_for_changes()
            self.update_title()

    def look_for_changes(self) -> None:
        """While the check runs, once a second: has the repository changed
        since it began?  (A few hundred stats; the verdict on the findings
        waits for the end.)"""
        s = self.state
        now = time.monotonic()
        if s.start_state is None or s.changing or now - s.looked < LOOK_EVERY:
            return
        s.looked = now
        with contextlib.suppress(OSError):
            s.changing = changed_since(self.app.core.repo, s.start_state)

    def action_cancel_or_back(self) -> None:
        if self.state.running:
            self._cancel.set()
            self.state.phase = (self.state.phase or "") + " — cancelling"
            self.update_title()
        else:
            self.action_back()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "cancel_or_back":
            return True
        return super().check_action(action, parameters)

    # --- rows ------------------------------------------------------------------------

    def is_open(self, g: Group) -> bool:
        if g.kind in self._open:
            return self._open[g.kind]
        return starts_open(g)

    def ordered_groups(self) -> list[Group]:
        return ordered_groups(self.groups.values())

    def rebuild_rows(self) -> None:
        lst = self.query_one(VirtualList)
        keep = self.rows[lst.cursor] if self.rows and lst.cursor < len(self.rows) else None
        rows: list[tuple[str, Group | Entry | Text]] = list(group_rows(self.groups.values(), self.is_open))
        if self.state.changed:
            rows.insert(0, ("text", Text("  " + changed_sentence(self.state), style="bold yellow")))
        if not rows and self.state.finished and not self.state.error and not self.state.cancelled:
            rows.append(("text", Text("  no problems found", style="bold green")))
        self.rows = rows
        cursor = 0
        if keep is not None and lst.cursor > 0:  # at the top, stay there as groups arrive above
            cursor = next(
                (i for i, r in enumerate(rows) if r[0] == keep[0] and same_row(r[1], keep[1])),
                min(lst.cursor, max(0, len(rows) - 1)),
            )
        lst.reset(cursor)

    def update_title(self) -> None:
        s = self.state
        t = Text("Health ", style="bold")
        t.append("(connectivity only) " if s.mode != "full" else "(full check) ", style="dim")
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        bar = self.query_one(ProgressBar)
        if s.running:
            pct = f"{100 * s.done // s.total}% " if s.total else ""
            t.append(f"checking {s.phase or 'starting'}: {pct}({s.done:,}/{s.total:,})", style="yellow")
            t.append("  Esc cancels", style="dim")
            if s.changing:
                t.append(
                    f"  the repository is changing ({s.changing}): findings are checked against it at the end",
                    style="bold yellow",
                )
            bar.update(total=max(1, s.total), progress=min(s.done, s.total))
        elif s.cancelled:
            t.append("cancelled — r runs it again", style="yellow")
        elif s.error:
            t.append_text(literal(f"the check failed: {s.error}", "red"))
            if s.changed:
                t.append(f" — the repository changed during the check ({s.changed}): r runs it again", style="yellow")
        elif s.finished:
            bar.update(total=1, progress=1)
            status = (s.summary or {}).get("exit", 0)
            t.append("done", style="green" if status == 0 else "red")
            t.append(f" — exit status {status} (git fsck's bits)")
            if s.changed:
                t.append(" — the repository changed during the check: r runs it again", style="bold yellow")
        else:
            t.append("not run yet", style="dim")
        causes = sum(1 for g in self.groups.values() if g.cause)
        t.append(
            f"   {counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos"
            f" in {len(self.groups)} groups" + (f", {causes} damaged files" if causes else "")
        )
        self.query_one("#health-title", Label).update(t)

    # --- opening ----------------------------------------------------------------------

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if event.row >= len(self.rows):
            return
        _kind, value = self.rows[event.row]
        if isinstance(value, Group):
            self._open[value.kind] = not self.is_open(value)
            self.rebuild_rows()
        elif isinstance(value, Entry):
            self.go_to(value)

    def go_to(self, e: Entry) -> None:
        """The finding's place: the pack entry at its offset (or its
        object's entry in the damaged pack that explains it), else the
        object, else its details."""
        f = e.finding
        pack_path = e.cause if (e.offset is not None and e.cause and e.cause.endswith(".pack")) else None
        offset = e.offset
        if pack_path is None and f.pack and f.offset is not None:
            pack_path, offset = f.pack, f.offset
        if pack_path is not None:
            handle = self.app.core.pack_handle(pack_path)
            if handle is not None:
                from packscope.inspector.screens.pack_entries import PackScreen

                self.app.push_screen(PackScreen(handle, offset=offset))
                return
        if f.oid and f.area not in ("refs",):
            self.app.open_object(bytes.fromhex(f.oid))
            return
        self.app.push_screen(FindingScreen(f))

    def action_export(self) -> None:
        """The findings so far as `packscope fsck --json` prints them (one
        object per finding, then the summary when the run finished), into a
        file in the temporary directory — never into the repository."""
        import json
        import tempfile

        if not self.findings and not self.state.finished:
            self.notify("nothing to export yet", severity="warning", timeout=2)
            return
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = os.path.join(tempfile.gettempdir(), f"packscope-fsck-{stamp}.json")
        with open(path, "w", encoding="utf-8") as out:
            for f in self.findings:
                out.write(json.dumps(f.to_dict(), ensure_ascii=False) + "\n")
            if self.state.summary is not None and not self.state.running:
                out.write(json.dumps({"summary": self.state.summary}) + "\n")
        self.exported = path
        self.app.copy_to_clipboard(path)
        self.notify(f"{len(self.findings):,} findings written to {path} (path copied)", timeout=6)

    def action_details(self) -> None:
        lst = self.query_one(VirtualList)
        value = self.rows[lst.cursor][1] if lst.cursor < len(self.rows) else None
        if isinstance(value, Entry):
            self.app.push_screen(FindingScreen(value.finding))

    def current_id(self) -> str | None:
        lst = self.query_one(VirtualList)
        if lst.cursor < len(self.rows):
            _kind, value = self.rows[lst.cursor]
            if isinstance(value, Entry) and value.finding.oid:
                return value.finding.oid
        return None

    def on_unmount(self) -> None:
        self._cancel.set()


def changed_sentence(s: RunState) -> str:
    """ "the repository changed during the check (a repack at 14:02);
    findings about files that are gone were dropped — r runs it again"."""
    out = f"the repository changed during the check ({s.changed})"
    if s.dropped:
        out += f"; {count(s.dropped, 'finding')} about files, objects or refs that are gone or moved {'were' if s.dropped != 1 else 'was'} dropped"
    if s.marked:
        out += f"; {s.marked:,} may come from the change (marked ~)"
    return out + " — r runs it again"


def repository_state(repo):
    from packscope.core.face import state_of

    return state_of(repo)


def changed_since(repo, start) -> str | None:
    from packscope.core.face import compare_states as compare
    from packscope.core.face import state_of

    change = compare(start, state_of(repo))
    return None if change is None else change.describe()


def release_memory() -> None:
    """After a run (finished or cancelled): collect its cycles, then ask the
    C allocator to return free pages to the system.  Measured on the
    dulwich repository: after the session is closed, Python holds ~1 MB of
    what the check allocated, yet the process keeps ~155 MB resident —
    freed blocks malloc keeps for reuse; malloc_trim(0) brings it to ~36 MB."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to ask
        pass
