"""One pack's entries, in a virtual list (opened from the Packs screen)."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Label

from packscope.core.face import PackscopeError
from packscope.inspector.pack_entries_model import SYNC_LIMIT, OffsetOrder, PackEntries
from packscope.inspector.safe_text import literal, short_id
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.virtual_list import VirtualList

HELP = """
The entries of one pack.

A .pack file is a header, then one entry per object, then a checksum.  Each
entry is a type and size, then zlib-compressed data.  Entries of type
ofs-delta or ref-delta store only the difference from another object, their
base (named by a backwards distance in this pack, or by id): reading one
means reading its base first, then applying the delta — possibly through a
chain of deltas.

Columns: offset of the entry in the .pack; object id (from the .idx);
type (the object's real type; Δ marks a delta entry); size of the object
once rebuilt; bytes the entry occupies on disk (compressed, and for a delta,
only the delta); depth of its delta chain (0 = stored whole); the base's id.

Rows are drawn only for the visible window, so a pack of a million entries
opens at once.  Pack order (by offset) is built in the background; `o`
switches between pack order and index order (sorted by id).

/ finds an id prefix (a binary search in the .idx) or @OFFSET (the entry
that starts there; an offset outside the entries or inside one is an error,
not a jump).  An entry the end of the data cuts (a truncated pack) is marked
in red, as is every entry past the end; x goes to the first of them.

If another process deletes this pack (git repack -a -d, gc) while it is
open, the title says so and when; the ids and offsets stay listed, Enter
opens the object where it lives now, and f opens its new pack at it.

Enter opens the object.
"""

HEADER = f"{'offset':>11}  {'id':<40}  {'type':<8} {'size':>9} {'on disk':>9} {'depth':>5}  base"


class _Source:
    search_hint = "id prefix, or @offset"

    def __init__(self, entries: PackEntries) -> None:
        self.entries = entries

    def row_count(self) -> int:
        return self.entries.count

    def row_text(self, k: int) -> Text:
        r = self.entries.row(k)
        t = Text(f"{r.offset:>11}  ", style="dim")
        t.append(r.oid.hex().ljust(40), style="bold")
        if r.error:
            t.append("  ")
            t.append_text(literal(r.error, "red"))
            return t
        kind = r.type_name + ("Δ" if r.depth else "")
        t.append(f"  {kind:<8}", style={"commit": "yellow", "tree": "green", "tag": "magenta"}.get(r.type_name, ""))
        t.append(f" {r.size if r.size is not None else '?':>9}")
        t.append(f" {r.disk_size if r.disk_size is not None else '…':>9}", style="dim" if r.disk_size is None else "")
        t.append(f" {r.depth if r.depth is not None else '?':>5}")
        if r.base:
            t.append(f"  {short_id(r.base)}", style="cyan")
        if r.damage:
            t.append("  ")
            t.append_text(literal(r.damage, "bold red"))
        return t

    def find(self, query: str) -> list[int]:
        return self.entries.find(query)


class PackScreen(PackscopeScreen):
    HELP = HELP
    TAB = "packs"

    BINDINGS = [
        Binding("o", "toggle_order", "Pack/index order", id="pack.toggle-order"),
        Binding("f", "follow", "Follow to new pack", id="pack.follow"),
        Binding("x", "first_cut", "Where the data ends", id="pack.first-cut"),
    ]

    def __init__(self, handle, offset: int | None = None) -> None:
        super().__init__()
        self.handle = handle
        self.entries: PackEntries | None = None
        self.error: str | None = None
        self.progress = 0.0
        self.start_offset = offset  # put the cursor on this entry once the order is known
        self.removed: str | None = None  # "removed by a repack at HH:MM", once noticed

    def compose_body(self) -> ComposeResult:
        yield Label("", id="pack-title", markup=False)
        yield Label(HEADER, id="pack-header", markup=False)
        yield VirtualList(width=len(HEADER) + 14, id="pack-list")

    def on_mount(self) -> None:
        super().on_mount()
        core = self.app.core
        try:
            self.entries = PackEntries(self.handle, core.lock, core.store.fmt.rawsz)
        except PackscopeError as e:
            self.error = e.message
            self.update_title()
            return
        if self.entries.count <= SYNC_LIMIT:
            self.entries.set_order(OffsetOrder.build(self.entries.index, core.lock))
        lst = self.query_one(VirtualList)
        lst.set_source(_Source(self.entries))
        lst.focus()
        self.update_title()
        if self.entries.order is None:
            self.build_order()
        else:
            self._go_to_start_offset()
        self.check_removed()

    def _go_to_start_offset(self) -> None:
        if self.start_offset is not None and self.entries is not None and self.entries.order is not None:
            row = self.entries.row_of_offset(self.start_offset)
            self.start_offset = None
            if row is not None:
                self.query_one(VirtualList).move_to(row)

    def on_unmount(self) -> None:
        if self.entries is not None:
            self.entries.close()

    # --- the pack deleted under the view (a concurrent repack) -------------------------

    def check_removed(self) -> None:
        """Has the .pack gone since the view opened?  (core_access records
        when a rescan first missed it.)"""
        if self.removed is not None or self.entries is None:
            return
        when = self.app.core.removed_at(self.handle)
        if when is None:
            return
        self.removed = f"pack removed by a repack at {when}"
        self.entries.mark_removed(self.removed + " — Enter: the object where it lives now; f: follow it")
        self.query_one(VirtualList).refresh_rows()
        self.update_title()
        self.refresh_bindings()

    def core_events(self, batch: list) -> None:
        from packscope.core.face import PackDirScanned

        if any(isinstance(e, PackDirScanned) and e.removed for e in batch):
            self.check_removed()

    def outside_changed(self, changes: list) -> None:
        self.check_removed()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.check_removed()

    def check_action(self, action: str, parameters) -> bool | None:
        if action == "follow":  # only once a repack removed this pack
            return self.removed is not None
        return super().check_action(action, parameters)

    def action_follow(self) -> None:
        """Open the pack that holds the object under the cursor now, at its entry."""
        row = self._cursor_row()
        if row is None:
            return
        loc = self.app.core.where_now(row.oid)
        if loc is None:
            self.notify(f"{row.oid.hex()} is not in the object store any more", severity="error", timeout=5)
            return
        if loc.pack is None:
            self.notify(f"{row.oid.hex()[:12]} is now a loose object: {loc.path}", timeout=5)
            self.app.open_object(row.oid)
            return
        if loc.pack is self.handle:
            self.notify("this pack still holds it", timeout=3)
            return
        self.app.push_screen(PackScreen(loc.pack, offset=loc.offset))

    def action_first_cut(self) -> None:
        """To the entry the end of the data cuts, or the first past it (a
        truncated pack): found from the offsets alone, no reading."""
        e = self.entries
        if e is None or e.order is None:
            self.notify("pack order is still being built", timeout=2)
            return
        k = e.order.rank_of_offset(e.data_end)
        if e.extent_problem(e.order.offsets[k]) is None:
            k += 1
        if k >= len(e.order):
            self.notify(
                "no entry runs past the end of the data; damage inside entries shows in Health (8)",
                timeout=4,
            )
            return
        lst = self.query_one(VirtualList)
        lst.move_to(k if e.in_offset_order else e.row_of_position(e.order.positions[k]))

    def _cursor_row(self):
        if self.entries is None or not self.entries.count:
            return None
        return self.entries.row(self.query_one(VirtualList).cursor)

    @work(thread=True, exclusive=True, group="pack-order")
    def build_order(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        last = [0.0]

        def progress(f: float) -> None:
            if f - last[0] >= 0.05:
                last[0] = f
                self.app.call_from_thread(self._progress, f)

        entries = self.entries  # set on mount, before this starts
        if entries is None:
            return
        order = OffsetOrder.build(entries.index, self.app.core.lock, lambda: worker.is_cancelled, progress)
        if order is not None:
            self.app.call_from_thread(self._order_ready, order)

    def _progress(self, f: float) -> None:
        self.progress = f
        self.update_title()

    def _order_ready(self, order: OffsetOrder) -> None:
        entries = self.entries
        if entries is None:
            return
        lst = self.query_one(VirtualList)
        pos = entries.position_of_row(lst.cursor) if entries.count else 0
        entries.set_order(order)
        lst.reset(entries.row_of_position(pos) if entries.count else 0)
        self.update_title()
        self._go_to_start_offset()

    def update_title(self) -> None:
        t = Text(self.handle.name, style="bold")
        if self.error:
            t.append(f"  cannot open: {self.error}", style="red")
        elif self.entries is not None:
            e = self.entries
            t.append(f"  {e.count:,} entries  ")
            if e.in_offset_order:
                t.append("pack order (by offset)", style="green")
            elif e.order is None:
                t.append(f"index order (by id) — building pack order {self.progress:.0%}", style="yellow")
            else:
                t.append("index order (by id)", style="cyan")
            t.append("   in multi-pack-index" if self.handle.in_midx else "")
            if self.removed:
                t.append(f"   {self.removed}: f follows an object to its new pack", style="bold yellow")
        self.query_one("#pack-title", Label).update(t)

    def action_toggle_order(self) -> None:
        e = self.entries
        if e is None or e.order is None:
            self.notify("pack order is still being built", timeout=2)
            return
        lst = self.query_one(VirtualList)
        pos = e.position_of_row(lst.cursor)
        e.by_offset = not e.by_offset
        lst.reset(e.row_of_position(pos))
        self.update_title()

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if self.entries is None:
            return
        r = self.entries.row(event.row)
        # A removed pack's entry too: the Object screen says it moved, and where.
        self.app.open_object(r.oid, pack=self.handle, offset=r.offset)

    def current_id(self) -> str | None:
        if self.entries is None or not self.entries.count:
            return None
        return self.entries.row(self.query_one(VirtualList).cursor).oid.hex()
