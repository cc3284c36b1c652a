"""Screen 8: the repository checked as ``git fsck --full`` checks it.

packscope.core.fsck.verify runs in a worker on a private read-only session (its own store,
no tracer: the check reads every object once, and neither the shared
store's lock nor the event log should be held by it for minutes); its
progress callback drives the bar and its cancel check answers Esc.
Findings are grouped by kind, with counts; Enter on one shows where it is
(file, offset, pack/idx, object id), whether the object exists elsewhere,
and the remedy.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Label, ProgressBar, Static

from packscope.core.errors import CancelledError, PackscopeError
from packscope.inspector.commit_text import name_text
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import VirtualList

HELP = """
Health runs packscope's fsck (what `git fsck --full` checks) and groups
what it finds by kind, worst first, with counts.

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

Enter on a group opens or closes it; on a finding, its details: the file
and byte offset, the pack and index, the object id, whether a good copy
exists elsewhere (another pack, loose, an alternate, promised by a promisor
remote) and the remedy.  Esc cancels a running check (through core's
cancel check, within a few hundred objects); r runs it again; c runs the
quicker connectivity-only check (no per-object reading).
"""

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}
SEVERITY_STYLE = {"error": "bold white on red", "warning": "bold black on yellow", "info": "bold black on cyan"}
EXPAND_LIMIT = 30  # groups larger than this start closed


@dataclass
class Group:
    kind: str
    severity: str
    findings: list = field(default_factory=list)
    open: bool | None = None  # None: decided by size


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


def severity_badge(severity: str) -> Text:
    return Text(f" {severity.upper():<7}", style=SEVERITY_STYLE.get(severity, "reverse"))


class _Source:
    search_hint = "text in the findings"

    def __init__(self, screen: HealthScreen) -> None:
        self.s = screen

    def row_count(self) -> int:
        return len(self.s.rows)

    def row_text(self, row: int) -> Text:
        kind, value = self.s.rows[row]
        if kind == "group":
            g: Group = value
            t = Text("▾ " if self.s.is_open(g) else "▸ ", style="bold")
            t.append_text(severity_badge(g.severity))
            t.append(" ")
            t.append_text(literal(g.kind, "bold"))
            t.append(f"  ×{len(g.findings):,}", style="bold")
            area = sorted({f.area for f in g.findings})
            t.append(f"   ({', '.join(area)})", style="dim")
            return t
        if kind == "finding":
            f = value
            t = Text("     ")
            t.append_text(literal(f.message))
            loc = f.location()
            if loc:
                t.append("  ")
                t.append_text(literal(short_location(loc), "dim"))
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

    BINDINGS = [
        Binding("r", "run_check('full')", "Check again", id="health.run"),
        Binding("c", "run_check('connectivity')", "Connectivity only", id="health.connectivity"),
        Binding("escape", "cancel_or_back", "Cancel / back", id="health.cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.groups: dict[str, Group] = {}
        self.findings: list = []
        self.rows: list[tuple[str, object]] = []
        self.state = RunState()
        self._cancel = threading.Event()
        self._dirty = False
        self._pending: list = []
        self._pending_lock = threading.Lock()

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
        self._cancel.clear()
        self.state = RunState(running=True, started=time.monotonic(), mode=mode)
        self.rebuild_rows()
        self.update_title()
        self.check(mode)

    @work(thread=True, exclusive=True, group="health-fsck")
    def check(self, mode: str) -> None:
        from packscope.core.fsck.verify import Fsck
        from packscope.core.repo.session import open_session

        state = self.state
        core = self.app.core
        session = None
        try:
            session = open_session(core.path)  # private: see the module's docstring

            def progress(done: int, total: int, phase: str) -> None:
                state.done, state.total, state.phase = done, total, phase

            checker = Fsck(
                session.repo,
                session.store,
                session.refs,
                connectivity_only=mode != "full",
                progress=progress,
                cancel=self._cancel.is_set,
            )
            for finding in checker.run():
                with self._pending_lock:
                    self._pending.append(finding)
            state.summary = checker.summary()
        except CancelledError:
            state.cancelled = True
        except PackscopeError as e:
            state.error = e.message + (f" [{e.location()}]" if e.location() else "")
        except Exception as e:  # a bug in a check must not take the UI down
            state.error = f"{type(e).__name__}: {e}"
        finally:
            if session is not None:
                session.close()
            state.running = False
            state.finished = True
            state.seconds = time.monotonic() - state.started
            try:
                self.app.call_from_thread(self._check_ended, state)
            except RuntimeError:
                pass

    def _take_pending(self) -> bool:
        with self._pending_lock:
            batch, self._pending = self._pending, []
        for f in batch:
            g = self.groups.get(f.kind)
            if g is None:
                g = self.groups[f.kind] = Group(f.kind, f.severity)
            elif SEVERITY_ORDER.get(f.severity, 3) < SEVERITY_ORDER.get(g.severity, 3):
                g.severity = f.severity
            g.findings.append(f)
            self.findings.append(f)
        return bool(batch)

    def _check_ended(self, state: RunState) -> None:
        if state is not self.state:
            return
        self._take_pending()
        self.rebuild_rows()
        self.update_title()
        if state.cancelled:
            self.notify("check cancelled", timeout=2)

    def tick(self) -> None:
        if not self.is_mounted:
            return
        if self.state.running:
            if self._take_pending():
                self.rebuild_rows()
            self.update_title()

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
        return g.open if g.open is not None else len(g.findings) <= EXPAND_LIMIT

    def ordered_groups(self) -> list[Group]:
        return sorted(self.groups.values(), key=lambda g: (SEVERITY_ORDER.get(g.severity, 3), -len(g.findings), g.kind))

    def rebuild_rows(self) -> None:
        lst = self.query_one(VirtualList)
        keep = self.rows[lst.cursor] if self.rows and lst.cursor < len(self.rows) else None
        rows: list[tuple[str, object]] = []
        for g in self.ordered_groups():
            rows.append(("group", g))
            if self.is_open(g):
                rows.extend(("finding", f) for f in g.findings)
        if not rows and self.state.finished and not self.state.error and not self.state.cancelled:
            rows.append(("text", Text("  no problems found", style="bold green")))
        self.rows = rows
        cursor = 0
        if keep is not None:
            cursor = next((i for i, r in enumerate(rows) if r[1] is keep[1]), min(lst.cursor, max(0, len(rows) - 1)))
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
            bar.update(total=max(1, s.total), progress=min(s.done, s.total))
        elif s.cancelled:
            t.append("cancelled — r runs it again", style="yellow")
        elif s.error:
            t.append_text(literal(f"the check failed: {s.error}", "red"))
        elif s.finished:
            bar.update(total=1, progress=1)
            status = (s.summary or {}).get("exit", 0)
            t.append("done", style="green" if status == 0 else "red")
            t.append(f" — exit status {status} (git fsck's bits)")
        else:
            t.append("not run yet", style="dim")
        t.append(
            f"   {counts['error']} errors, {counts['warning']} warnings, {counts['info']} infos"
            f" in {len(self.groups)} kinds"
        )
        self.query_one("#health-title", Label).update(t)

    # --- opening ----------------------------------------------------------------------

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if event.row >= len(self.rows):
            return
        kind, value = self.rows[event.row]
        if kind == "group":
            value.open = not self.is_open(value)
            self.rebuild_rows()
        elif kind == "finding":
            self.app.push_screen(FindingScreen(value))

    def current_id(self) -> str | None:
        lst = self.query_one(VirtualList)
        if lst.cursor < len(self.rows):
            kind, value = self.rows[lst.cursor]
            if kind == "finding" and value.oid:
                return value.oid
        return None

    def on_unmount(self) -> None:
        self._cancel.set()


def finding_table(f) -> Table:
    t = Table(box=None, show_header=False, pad_edge=False, expand=True)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")
    t.add_row("severity", severity_badge(f.severity))
    t.add_row("kind", literal(f.kind + (f"  (git: {f.msg_id})" if f.msg_id else "")))
    t.add_row("area", literal(f.area + (f", exit bit {f.exit_bit}" if f.exit_bit else "")))
    t.add_row("message", literal(f.message))
    t.add_row("file", literal(name_text(f.path)) if f.path else Text("–", style="dim"))
    t.add_row("offset", Text(f"{f.offset:,} (0x{f.offset:x})") if f.offset is not None else Text("–", style="dim"))
    if f.pack:
        t.add_row("pack", literal(name_text(f.pack)))
    if f.idx:
        t.add_row("index", literal(name_text(f.idx)))
    t.add_row("object", Text(f.oid, style="cyan") if f.oid else Text("–", style="dim"))
    if f.object_type:
        t.add_row("type", literal(f.object_type))
    if f.elsewhere:
        t.add_row("elsewhere", literal(", ".join(f.elsewhere), "green"))
    elif f.oid:
        t.add_row("elsewhere", Text("no other copy known", style="yellow"))
    t.add_row("remedy", literal(f.remedy) if f.remedy else Text("–", style="dim"))
    for k, v in (f.details or {}).items():
        t.add_row(literal(str(k)).plain, literal(str(v), "dim"))
    return t


class FindingScreen(ModalScreen[None]):
    """One finding's details (Enter on a finding in Health)."""

    BINDINGS = [
        Binding("escape,q,enter", "close", "Close", id="finding.close"),
        Binding("o", "open_object", "Open object", id="finding.object"),
    ]

    def __init__(self, finding) -> None:
        super().__init__(classes="help-screen")
        self.finding = finding

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Static(Text("Finding", style="bold"), id="help-title")
            yield Static(finding_table(self.finding), id="finding-detail")

    def action_close(self) -> None:
        self.dismiss(None)

    def action_open_object(self) -> None:
        if self.finding.oid:
            oid = bytes.fromhex(self.finding.oid)
            self.dismiss(None)
            self.app.open_object(oid)
