"""Screen 2: every pack, in the order a lookup searches them — a virtual
list built for thousands of packs: sortable, filterable by name or by an id
a pack holds, with badges from cheap checks."""

from __future__ import annotations

import time

from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.reactive import var
from textual.widgets import Label

from packscope.core.face import PackscopeError, trace
from packscope.inspector.core_access import PackRow
from packscope.inspector.health_state import HealthState, PackHealth, health_state
from packscope.inspector.safe_text import human_bytes, literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import SearchRefused, VirtualList

HELP = """
Packs, in the order a lookup searches them.

A lookup asks the multi-pack-index first (if there is one): it covers many
packs with one sorted table.  Then it searches the remaining packs one by
one, most recently used first ("MRU rank" 0 is searched first); a hit moves
its pack to the front, so a run of lookups in one pack stays cheap.  Packs
the multi-pack-index covers have no rank: they are reached through it.

Columns: MRU rank; a mark (✗ a cheap check found damage, ? not checked
yet); the pack's name; objects (from the .idx); size of the .pack file; age
(since the .pack was last written; its date when over a day); midx (covered by the
multi-pack-index); files: K .keep (git repack leaves the pack alone),
P .promisor (from a partial clone's promisor remote), B .bitmap
(reachability bitmaps), R .rev (reverse index: objects in pack order);
then what the checks found, or the ids a filter matched.

Cheap checks (no read of the pack's entries): the index's largest offset
against the .pack's size (an entry past the end: the pack is truncated),
the pack header's object count against the index's, the .pack's trailer
against the checksum its index records, and a lone .idx or .pack whose
partner is missing (git ignores it).  t hashes the selected pack and its
index (reads both whole) and compares each with the checksum it ends with
(and the pack's with the one its index records): "checksum ok (pack and
idx)", or what differs for each.  A full Health run's findings about a pack
or its index show here too ("Health: idx-checksum"): the Overview, this
list and Health share one health state.

o changes the sort: search order, problems (what the checks flagged
first), name, size, objects, age, midx coverage; O reverses it; a click on a column header sorts by it (again:
reversed).  / filters: by a part of the name, or by an id or id prefix
(4+ hex digits): every pack holding it, duplicates included, with the
offsets ("name:TEXT" filters by name only).  Esc clears the filter.
Enter opens a pack: its entries in pack order (at the held id, when a
filter found one).
"""

SORTS = ("search order", "problems", "name", "size", "objects", "age", "midx")
NAME_WIDTH = 45  # "pack-" and 40 hex digits
SHORT_NAME_WIDTH = 18  # "pack-" and 12 hex digits and "…": still unique among thousands of packs
CHECKS_ROOM = 14  # cells the checks column keeps before the names are shortened


def columns(name_width: int = NAME_WIDTH) -> tuple[tuple[str, int, str | None], ...]:
    """(title, width, sort) of each column: the header and the click targets."""
    return (
        ("rank", 4, "search order"),
        ("", 1, None),
        ("pack", name_width, "name"),
        ("objects", 9, "objects"),
        ("size", 9, "size"),
        ("age", 10, "age"),
        ("midx", 4, "midx"),
        ("files", 5, None),
        ("checks / matches", 40, None),
    )


COLUMNS = columns()
RIGHT = ("rank", "objects", "size", "age")


def header(name_width: int = NAME_WIDTH) -> str:
    return " ".join(t.rjust(w) if t in RIGHT else t.ljust(w) for t, w, _s in columns(name_width))


HEADER = header()


def name_width_for(cells: int) -> int:
    """The pack column's width in a screen ``cells`` wide: the whole name
    when it fits with the other columns and some room for checks, else the
    name shortened (80 columns: every column still shows)."""
    others = sum(w + 1 for t, w, _s in COLUMNS if t not in ("pack", "checks / matches"))
    return max(SHORT_NAME_WIDTH, min(NAME_WIDTH, cells - others - CHECKS_ROOM - 3))


def shown_name(name: str, width: int) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def age_text(mtime: float, now: float) -> str:
    """How long ago a pack was written: "42s", "17m", "5h" within a day,
    else the date (which, unlike "812d", does not change while you look)."""
    s = max(0, int(now - mtime))
    if s >= 86400:
        return time.strftime("%Y-%m-%d", time.localtime(mtime))
    for unit, n in (("h", 3600), ("m", 60)):
        if s >= n:
            return f"{s // n}{unit}"
    return f"{s}s"


def files_text(r: PackRow) -> str:
    return "".join(c if on else "·" for c, on in (("K", r.keep), ("P", r.promisor), ("B", r.bitmap), ("R", r.rev)))


def sort_key(name: str, state: HealthState | None = None):
    if name == "name":
        return lambda r: r.name
    if name == "size":
        return lambda r: r.size
    if name == "objects":
        return lambda r: -1 if r.objects is None else r.objects
    if name == "age":
        return lambda r: -r.mtime  # youngest first
    if name == "midx":
        return lambda r: (not r.in_midx, r.name)  # covered packs first
    order = lambda r: (r.orphan is not None, r.rank is None, r.rank or 0, r.name)  # noqa: E731 (search order)
    if name == "problems":
        return lambda r: (not is_damaged(r, state), order(r))  # damaged packs (and orphans) first
    return order


def known(r: PackRow, state: HealthState | None) -> PackHealth | None:
    """What the shared health state knows of the row's pack (t, Health)."""
    if state is None or r.handle is None:
        return None
    return state.known(r.handle.files.pack_path)


def is_damaged(r: PackRow, state: HealthState | None = None) -> bool:
    ph = known(r, state)
    return bool(r.damage or r.error or r.orphan or (ph is not None and ph.problems()))


def checksum_notes(ph: PackHealth | None) -> list[tuple[str, str]]:
    """t's verdicts on the .pack and the .idx, as the row shows them."""
    if ph is None or (ph.pack_checksum is None and ph.idx_checksum is None):
        return []
    if ph.pack_checksum == "ok" and ph.idx_checksum == "ok":
        return [("checksum ok (pack and idx)", "green")]
    out = []
    for what, result in (("checksum", ph.pack_checksum), ("idx checksum", ph.idx_checksum)):
        if result is not None:
            out.append((f"{what} ok" if result == "ok" else f"{what}: {result}", "green" if result == "ok" else "red"))
    return out


class _Source:
    search_hint = "part of a pack name, or an id / id prefix (4+ hex digits) a pack holds"

    def __init__(self, screen: PacksScreen) -> None:
        self.s = screen

    def row_count(self) -> int:
        return len(self.s.view)

    def row_text(self, k: int) -> Text:
        r = self.s.view[k]
        state = health_state(self.s.app)
        ph = known(r, state)
        bad = is_damaged(r, state)
        checked = r.objects is not None or r.orphan is not None or r.error
        t = Text(f"{'–' if r.rank is None else r.rank:>4} ", style="dim")
        t.append("✗" if bad else " " if checked else "?", style="bold red" if bad else "dim")
        t.append(" ")
        width = self.s.name_width
        t.append_text(literal(shown_name(r.name, width).ljust(width), "bold red" if r.orphan else "bold"))
        t.append(f" {'?' if r.objects is None else f'{r.objects:,}':>9}")
        t.append(f" {human_bytes(r.size):>9}")
        t.append(f" {age_text(r.mtime, self.s.now):>10}", style="dim")
        t.append(f" {'yes' if r.in_midx else '':<4}", style="cyan")
        t.append(f" {files_text(r):<5} ")
        notes: list[tuple[str, str]] = [(d, "red") for d in r.damage]
        if r.orphan:
            notes.insert(0, ("orphan:", "red"))
        if r.error:
            notes.append((r.error, "red"))
        notes += checksum_notes(ph)
        if ph is not None and ph.findings:
            kinds = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(ph.findings.items()))
            notes.append((f"Health: {kinds}", "red"))
        if r.holds:
            shown = ", ".join(f"{oid[:12]} @{off:,}" for oid, off in r.holds[:4])
            more = f" +{len(r.holds) - 4}" if len(r.holds) > 4 else ""
            notes.append((f"holds {shown}{more}", "yellow"))
        if not r.local and r.orphan is None:
            notes.append(("alternate", "dim"))
        for i, (text, style) in enumerate(notes):
            if i:
                t.append(" " if notes[i - 1][0] == "orphan:" else "; ", style="dim")
            t.append_text(literal(text, style))
        return t

    def find(self, query: str) -> list[int]:
        """``/`` on this list filters it (see the screen's help)."""
        self.s.apply_filter(query)
        if not self.s.view:
            raise SearchRefused(f"no pack matches {query.strip()!r} (by name or by an id it holds); Esc clears")
        return list(range(len(self.s.view)))


class PacksScreen(PackscopeScreen):
    HELP = HELP
    TAB = "packs"
    DEFAULT_CSS = """
    #packs-header { height: 1; padding: 0 1; color: $text-muted; text-style: bold; }
    #packs-list { height: 1fr; padding: 0 1; }
    """

    BINDINGS = [
        Binding("o", "next_sort", "Sort by…", id="packs.sort"),
        Binding("O", "reverse_sort", "Reverse sort", id="packs.reverse"),
        Binding("t", "verify_checksum", "Verify checksum", id="packs.checksum"),
        Binding("escape", "clear_filter_or_back", "Clear filter", id="packs.clear-filter"),
    ]

    # The view's state: each change rebuilds the view (a new order, or a new
    # filter, starts at its top; clearing the filter keeps the cursor's pack).
    sort: var[str] = var("search order", init=False)
    reverse: var[bool] = var(False, init=False)
    filter: var[str] = var("", init=False, always_update=True)  # (the same query again: its ids looked up again)

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[PackRow] = []
        self.view: list[PackRow] = []  # the rows shown: filtered, sorted
        self.holding: dict[str, list[tuple[str, int]]] | None = None  # the id filter's answer
        self.now = time.time()
        self._dirty = False
        self._health_seen = -1  # the health state's version last drawn
        self.name_width = NAME_WIDTH  # the pack column's width (shorter in a narrow terminal)

    def compose_body(self) -> ComposeResult:
        yield Label("", id="packs-summary", markup=False)
        yield Label(HEADER, id="packs-header", markup=False)
        yield VirtualList(width=len(HEADER) + 60, id="packs-list")

    def on_resize(self, event: events.Resize) -> None:
        # (the base class's on_resize runs too: Textual calls each class's handler)
        self.fit_columns()

    def fit_columns(self) -> None:
        """The pack column as wide as the terminal allows (shortened names at 80 columns)."""
        width = name_width_for(self.app.size.width)
        if width != self.name_width:
            self.name_width = width
            self.query_one("#packs-header", Label).update(header(width))
            lst = self.query_one(VirtualList)
            lst.line_width = len(header(width)) + 60
            lst.reset()

    def on_mount(self) -> None:
        super().on_mount()
        self.fit_columns()
        lst = self.query_one(VirtualList)
        lst.set_source(_Source(self))
        lst.focus()

    # --- data -------------------------------------------------------------------

    def refresh_data(self) -> None:
        self.reload_rows()

    def reload_rows(self) -> None:
        """Re-read the pack list from core, keeping what was checked already."""
        old = {r.key: r for r in self.rows}
        self.rows = self.app.core.pack_rows()
        for r in self.rows:
            o = old.get(r.key)
            if o is not None and r.objects is None and o.objects is not None:
                r.objects, r.idx_version, r.error = o.objects, o.idx_version, o.error
                r.max_offset, r.damage, r.checksum = o.max_offset, o.damage, o.checksum
        for r in self.rows:
            r.holds = (self.holding or {}).get(r.key, [])
        self.rebuild_view()
        if any(r.objects is None and r.orphan is None and r.error is None for r in self.rows):
            self.check_packs()

    @work(thread=True, exclusive=True, group="packs-check")
    def check_packs(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        core = self.app.core
        rows = list(self.rows)
        last = time.monotonic()
        for i, r in enumerate(rows):
            if worker.is_cancelled:
                return
            if r.objects is None and r.orphan is None and r.error is None:
                core.check_pack(r)
            if time.monotonic() - last > 0.5:  # show progress on a big directory
                last = time.monotonic()
                self.app.call_from_thread(self._checked_some, f"checking indexes {i + 1:,}/{len(rows):,}")
        self.app.call_from_thread(self._checked_some, "")

    def _checked_some(self, status: str) -> None:
        self.app.set_status(status)
        state = health_state(self.app)
        for r in self.rows:  # the cheap checks' verdicts, for the Overview too
            if r.handle is not None and (r.objects is not None or r.error is not None):
                state.record_cheap(r.handle.files.pack_path, r.damage, r.error)
        self.rebuild_view()

    def rebuild_view(self, keep_cursor: bool = True) -> None:
        try:
            lst = self.query_one(VirtualList)
        except NoMatches:  # not composed yet (an outside change as the screen mounts), or closing
            return
        current = self.selected_row() if keep_cursor else None
        rows = self.rows
        if self.filter:
            rows = [r for r in rows if self._matches(r)]
        view = sorted(rows, key=sort_key(self.sort, health_state(self.app)), reverse=self.reverse)
        self.view = view
        self.now = time.time()
        cursor = 0
        if current is not None:
            cursor = next((i for i, r in enumerate(view) if r.key == current.key), min(lst.cursor, len(view) - 1))
        lst.reset(max(0, cursor))
        self.update_summary()

    def _matches(self, r: PackRow) -> bool:
        if self.holding is not None and r.key in self.holding:
            return True
        return self.filter in r.name.lower()

    def apply_filter(self, query: str) -> None:
        """Keep the packs whose name contains ``query``, and, when it is an
        id or id prefix, every pack whose index holds a matching id."""
        q = query.strip().lower()
        if q.startswith("name:"):
            q, by_id = q[5:], False
        else:
            by_id = len(q) >= 4 and all(c in "0123456789abcdef" for c in q)
        self.holding = None
        if by_id:
            try:
                self.holding = self.app.core.packs_holding(q)
            except PackscopeError as e:
                self.set_reactive(PacksScreen.filter, q)
                raise SearchRefused(e.message) from None
        for r in self.rows:
            r.holds = (self.holding or {}).get(r.key, [])
        self.filter = q  # (rebuilds the view)

    def watch_filter(self, query: str) -> None:
        self.rebuild_view(keep_cursor=not query)

    def watch_sort(self) -> None:
        self.rebuild_view(keep_cursor=False)

    watch_reverse = watch_sort

    def action_clear_filter_or_back(self) -> None:
        if self.filter:
            self.holding = None
            for r in self.rows:
                r.holds = []
            self.query_one(VirtualList).clear_search()
            self.filter = ""
        else:
            self.action_back()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "clear_filter_or_back":
            return bool(self.filter) or len(self.app.screen_stack) > 1
        return super().check_action(action, parameters)

    def update_summary(self) -> None:
        packs = [r for r in self.rows if r.orphan is None]
        counted = [r.objects for r in packs if r.objects is not None]
        in_midx = sum(r.in_midx for r in packs)
        state = health_state(self.app)
        damaged = sum(1 for r in self.rows if is_damaged(r, state))
        t = Text(f"{len(packs):,} packs, {sum(counted):,} objects")
        if len(counted) < len(packs):
            t.append(f" (checking {len(counted):,}/{len(packs):,}…)", style="yellow")
        t.append(f", {in_midx} covered by the multi-pack-index")
        if damaged:
            t.append(f", {damaged} with problems", style="bold red")
        t.append(f" — sorted by {self.sort}{' (reversed)' if self.reverse else ''}", style="cyan")
        if self.filter:
            t.append(f" — filter {self.filter!r}: {len(self.view):,} shown (Esc clears)", style="yellow")
        self.query_one("#packs-summary", Label).update(t)

    # --- sorting ------------------------------------------------------------------

    def set_sort(self, name: str) -> None:
        if name == self.sort:
            self.reverse = not self.reverse
        else:
            self.set_reactive(PacksScreen.reverse, False)
            self.sort = name

    def action_next_sort(self) -> None:
        self.set_reactive(PacksScreen.reverse, False)
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse

    def on_click(self, event: events.Click) -> None:
        widget = getattr(event, "widget", None)
        if widget is None or widget.id != "packs-header":
            return
        x = event.x - 1 + int(self.query_one(VirtualList).scroll_x)  # the label's left padding
        start = 0
        for _title, width, sort in columns(self.name_width):
            if start <= x < start + width + 1:
                if sort is not None:
                    self.set_sort(sort)
                return
            start += width + 1

    # --- checks ---------------------------------------------------------------------

    def action_verify_checksum(self) -> None:
        row = self.selected_row()
        if row is None or row.handle is None:
            self.notify("no pack here to hash", severity="warning", timeout=2)
            return
        row.checksum = None
        self.app.set_status(f"hashing {row.name}…")
        self.verify_checksum(row)

    @work(thread=True, group="packs-checksum")
    def verify_checksum(self, row: PackRow) -> None:
        pack_result = self.app.core.verify_pack_checksum(row)
        idx_result = self.app.core.verify_index_checksum(row)
        self.app.call_from_thread(self._checksum_done, row, pack_result, idx_result)

    def _checksum_done(self, row: PackRow, pack_result: str, idx_result: str) -> None:
        row.checksum = pack_result
        self.app.set_status("")
        for r in self.rows:  # the list may have been reloaded meanwhile
            if r.key == row.key:
                r.checksum = pack_result
        if row.handle is not None:  # the one health state: the Overview shows it too
            health_state(self.app).record_checksums(row.handle.files.pack_path, pack_result, idx_result)
        ok = pack_result == "ok" and idx_result == "ok"
        self.notify(
            f"{row.name}: pack checksum {pack_result}; idx checksum {idx_result}",
            severity="information" if ok else "error",
        )
        self.query_one(VirtualList).refresh_rows()
        self.update_summary()

    # --- opening ----------------------------------------------------------------------

    def selected_row(self) -> PackRow | None:
        lst = self.query_one(VirtualList)
        if not self.view or lst.cursor >= len(self.view):
            return None
        return self.view[lst.cursor]

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        row = self.view[event.row] if event.row < len(self.view) else None
        if row is None:
            return
        if row.handle is None:
            self.notify(f"{row.name}: no {row.orphan}; git ignores this file", severity="warning", timeout=4)
            return
        from packscope.inspector.screens.pack_entries import PackScreen

        at = row.holds[0][1] if row.holds else None
        self.app.push_screen(PackScreen(row.handle, offset=at))

    def current_id(self) -> str | None:
        row = self.selected_row()
        return row.name if row else None

    # --- live ---------------------------------------------------------------------------

    def core_events(self, batch: list) -> None:
        # MRU moves and rescans change the ranks; redraw at most once a tick.
        if any(isinstance(e, (trace.PackDirScanned, trace.MruMoved)) for e in batch):
            self._dirty = True

    def tick(self) -> None:
        if self._dirty and self.is_mounted:
            self._dirty = False
            self.reload_rows()
        version = health_state(self.app).version
        if version != self._health_seen and self.is_mounted:  # t, a Health run: new badges
            self._health_seen = version
            try:
                self.query_one(VirtualList).refresh_rows()
                self.update_summary()
            except NoMatches:  # closing
                pass
