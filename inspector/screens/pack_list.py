"""Screen 2: every pack, in the order a lookup searches them."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.widgets import DataTable, Label

from packscope.core import trace
from packscope.inspector.safe_text import human_bytes, literal
from packscope.inspector.screens.base import PackscopeScreen

HELP = """
Packs, in the order a lookup searches them.

A lookup asks the multi-pack-index first (if there is one): it covers many
packs with one sorted table.  Then it searches the remaining packs one by
one, most recently used first ("MRU rank" 0 is searched first); a hit moves
its pack to the front, so a run of lookups in one pack stays cheap.  Packs
the multi-pack-index covers have no rank: they are reached through it.

Columns: objects (from the .idx fanout table), size of the .pack file, .idx
version (1 or 2; v2 adds CRC32s and 64-bit offsets), and companion files:
.keep (git repack leaves the pack alone), .promisor (from a partial clone's
promisor remote), .bitmap (reachability bitmaps), .rev (reverse index:
objects in pack order).

Enter opens a pack: its entries in pack order.
"""

COLUMNS = ("rank", "pack", "objects", "size", "idx", "midx", "files", "where")


class PacksScreen(PackscopeScreen):
    HELP = HELP
    TAB = "packs"

    def __init__(self) -> None:
        super().__init__()
        self.rows: list = []
        self._dirty = False

    def compose_body(self):
        yield Label("", id="packs-summary", markup=False)
        table = DataTable(id="packs-table", cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table

    def refresh_data(self) -> None:
        self.rows = self.app.core.pack_rows()
        self.fill_table()
        if any(r.objects is None for r in self.rows):
            self.count_objects()

    def fill_table(self) -> None:
        table = self.query_one(DataTable)
        keep = table.cursor_row
        table.clear()
        for r in self.rows:
            table.add_row(
                "–" if r.rank is None else str(r.rank),
                literal(r.name),
                Text("?" if r.objects is None else f"{r.objects:,}", justify="right"),
                Text(human_bytes(r.size), justify="right"),
                "?" if r.idx_version is None else f"v{r.idx_version}",
                "yes" if r.in_midx else "",
                r.flags,
                Text(r.error, style="red") if r.error else ("local" if r.local else "alternate"),
                key=r.handle.files.base,
            )
        if self.rows:
            table.move_cursor(row=min(max(keep, 0), len(self.rows) - 1))
        counted = [r.objects for r in self.rows if r.objects is not None]
        in_midx = sum(r.in_midx for r in self.rows)
        self.query_one("#packs-summary", Label).update(
            Text(
                f"{len(self.rows)} packs, {sum(counted):,} objects"
                + (" (counting…)" if len(counted) < len(self.rows) else "")
                + f", {in_midx} covered by the multi-pack-index — Enter opens a pack"
            )
        )

    @work(thread=True, exclusive=True, group="packs-count")
    def count_objects(self) -> None:
        core = self.app.core
        rows = self.rows
        for i, r in enumerate(rows):
            if r.objects is None:
                core.count_pack(r)
            if i % 250 == 249:
                self.app.call_from_thread(self.app.set_status, f"reading indexes {i + 1}/{len(rows)}")
        self.app.call_from_thread(self.fill_table)
        self.app.call_from_thread(self.app.set_status, "")

    def selected_row(self):
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row is None or table.cursor_row >= len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        row = self.selected_row()
        if row is not None:
            from packscope.inspector.screens.pack_entries import PackScreen

            self.app.push_screen(PackScreen(row.handle))

    def current_id(self) -> str | None:
        row = self.selected_row()
        return row.name if row else None

    def core_events(self, batch: list) -> None:
        # MRU moves and rescans change the ranks; redraw at most once a batch.
        if any(isinstance(e, (trace.MruMoved, trace.PackDirScanned)) for e in batch):
            self._dirty = True

    def tick(self) -> None:
        if self._dirty:
            self._dirty = False
            old = {r.handle.files.base: r for r in self.rows}
            self.rows = self.app.core.pack_rows()
            for r in self.rows:  # keep counts already read
                o = old.get(r.handle.files.base)
                if o is not None and r.objects is None:
                    r.objects, r.idx_version, r.error = o.objects, o.idx_version, o.error
            self.fill_table()
            if any(r.objects is None for r in self.rows):
                self.count_objects()
