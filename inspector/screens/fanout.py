"""Screen 5: the fanout table of one index — how evenly ids fall into the
256 buckets a lookup starts from."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Label, Static

from packscope.core.face import MultiPackIndex, PackscopeError
from packscope.inspector import lab_model as lab
from packscope.inspector.plural import count
from packscope.inspector.safe_text import literal
from packscope.inspector.screens.base import PackscopeScreen
from packscope.inspector.widgets.fanout_chart import FanoutChart, z_style
from packscope.inspector.widgets.virtual_list import ListSource, VirtualList

HELP = """
Every .idx (and the multi-pack-index) starts with a fanout table: 256
cumulative counts, one per possible first byte of an id.  A lookup reads
the two entries around its id's first byte and searches only that bucket
of the sorted table — so the buckets' sizes decide how long searches are.

Ids are hashes, so the buckets should be even: about objects/256 each.
The chart draws every bucket's count (four bands of 64 buckets), the
dashed line is the expected count, and a bar's colour is how far it is
from it (z = (actual − expected) / √expected: green within 2, yellow
within 3, red beyond).  χ² sums (actual − expected)² / expected over the
256 buckets; for uniform ids it is about 255 (255 degrees of freedom,
standard deviation about 22.6).

The bucket of the most recent lookup (from any screen: the Lookup lab, a
workload, `:`, made before or after this screen was opened) is magenta,
marked ◆ — on the indexes that hold the id, or on every index when the
lookup found it nowhere (that is the bucket it would be in).  An index
that does not hold a found id shows no mark, and says where it was.

The list at the top chooses the index (multi-pack-index and every pack;
the biggest is chosen first).  Enter on the chart lists a bucket's ids.
"""


NARROW_BELOW = 110  # columns: chart and side panel no longer fit side by side


class _IndexSource(ListSource):
    def __init__(self, choices: list[lab.IndexChoice]) -> None:
        super().__init__()
        self.choices = choices

    def row_count(self) -> int:
        return len(self.choices)

    def row_text(self, row: int) -> Text:
        c = self.choices[row]
        t = Text(f"{c.kind:<5}", style="cyan" if c.kind == "midx" else "")
        t.append_text(literal(c.name if len(c.name) <= 30 else c.name[:29] + "…"))
        if c.error:
            t.append("  " + c.error, style="red")
        else:
            t.append(f"{'?' if c.objects is None else format(c.objects, ','):>9}", style="bold")
        if not c.local:
            t.append(" alt", style="dim")
        return t


class FanoutScreen(PackscopeScreen):
    HELP = HELP
    TAB = "fanout"

    BINDINGS = [
        Binding("tab", "switch_focus", "List/chart", id="fanout.focus"),
        Binding("left_square_bracket", "cycle_index(-1)", "Prev index", id="fanout.prev-index"),
        Binding("right_square_bracket", "cycle_index(1)", "Next index", id="fanout.next-index"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.choices: list[lab.IndexChoice] = []
        self.selected: int | None = None
        self.stats: lab.FanoutStats | None = None
        self.lookup_oid: str | None = None  # the lookup shown (hex), marked or not
        self.lookup_held = False  # the selected index lists it
        self._shown: tuple | None = None  # (LookupFinished, index) the mark was computed for

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="fanout-main"):
            yield FanoutChart(id="fanout-chart")
            with Vertical(id="fanout-side"):
                yield VirtualList(width=46, searchable=True, id="fanout-indexes")
                yield Static("", id="fanout-stats")
                yield Static("", id="fanout-bucket")
                yield Static(
                    Text.assemble(
                        ("█", "green"),
                        " |z|<2 ",
                        ("█", "yellow"),
                        " <3 ",
                        ("█", "red"),
                        " ≥3 ",
                        ("╌", "dim"),
                        " expected ",
                        ("◆", "bold magenta"),
                        " lookup",
                    ),
                    id="fanout-legend",
                )

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#fanout-indexes").border_title = "index"
        self.query_one(FanoutChart).focus()
        self._fit()

    def on_resize(self, event) -> None:
        super().on_resize(event)
        self._fit()

    def _fit(self) -> None:
        """Below 110 columns the side panel (index list, statistics, the
        bucket) goes under the chart, and the chart's bands are two rows
        tall, so 80×24 shows the chart and the bucket under the cursor."""
        narrow = self.app.size.width < NARROW_BELOW
        self.set_class(narrow, "-narrow")
        chart = self.query_one(FanoutChart)
        rows = 2 if narrow else 3
        if chart.rows != rows:
            chart.rows = rows
            chart.refresh(layout=True)

    def refresh_data(self) -> None:
        self.load_indexes()

    @work(thread=True, exclusive=True, group="fanout-load")
    def load_indexes(self) -> None:
        core = self.app.core
        choices = lab.index_choices(core.store, core.lock)
        self.app.call_from_thread(self._indexes_ready, choices)

    def _indexes_ready(self, choices: list[lab.IndexChoice]) -> None:
        old = self.choices[self.selected].name if self.selected is not None and self.choices else None
        self.choices = choices
        names = [c.name for c in choices]
        at = names.index(old) if old in names else lab.biggest(choices)
        lst = self.query_one("#fanout-indexes", VirtualList)
        lst.set_source(_IndexSource(choices), cursor=at)
        self.select(at)

    def select(self, at: int) -> None:
        if not self.choices:
            return
        self.selected = at
        c = self.choices[at]
        core = self.app.core
        try:
            with core.lock:
                fanout = c.index.open().fanout
        except PackscopeError as e:  # a damaged index: say so, keep the screen
            self.stats = None
            t = Text("cannot read ", style="red")
            t.append_text(literal(f"{c.name}: {e.message}", "red"))
            self.query_one("#fanout-stats", Static).update(t)
            return
        self.stats = s = lab.fanout_stats(fanout)
        self.query_one(FanoutChart).set_counts(s.counts, s.expected)
        self.show_stats(c, s)
        self.show_lookup()

    @property
    def chosen(self) -> lab.IndexChoice | None:
        """The index shown (None before the list of indexes is read)."""
        return self.choices[self.selected] if self.choices and self.selected is not None else None

    def show_stats(self, c: lab.IndexChoice, s: lab.FanoutStats) -> None:
        t = literal(c.name, "bold")
        t.append("\n")
        t.append(f"{s.total:,} objects, expected {s.expected:.1f} per bucket\n")
        dof = 255
        zchi = (s.chi_square - dof) / (2 * dof) ** 0.5
        t.append("χ² ")
        t.append(f"{s.chi_square:.1f}", style="bold " + z_style(zchi))
        t.append(f"  (uniform: 255 ± 23; z {zchi:+.1f})\n")
        lo_b = min(range(256), key=lambda b: s.counts[b])
        hi_b = max(range(256), key=lambda b: s.counts[b])
        t.append(f"max deviation {s.max_dev:+.0%} (bucket {s.max_dev_bucket:02x}: {s.counts[s.max_dev_bucket]})\n")
        t.append(f"smallest {lo_b:02x}: {s.counts[lo_b]}, largest {hi_b:02x}: {s.counts[hi_b]}")
        self.query_one("#fanout-stats", Static).update(t)

    def show_bucket(self, b: int) -> None:
        s, c = self.stats, self.chosen
        if s is None or c is None:
            return
        with self.app.core.lock:
            lo, hi = c.index.bucket(b)
        z = s.z(b)
        t = Text(f"bucket {b:02x}", style="bold reverse")
        dev = (s.counts[b] - s.expected) / s.expected if s.expected else 0.0
        t.append(f" {count(s.counts[b], 'id')} ({dev:+.0%}, z ")
        t.append(f"{z:+.2f}", style=z_style(z))
        t.append(f")\npositions [{lo:,}, {hi:,})")
        if isinstance(c.index, MultiPackIndex) and len(c.index.layers) > 1:
            t.append(f" (tip layer of {len(c.index.layers)})", style="dim")
        last = self.app.last_lookup
        if self.lookup_oid and last is not None:
            t.append("\nlast lookup ")
            t.append(self.lookup_oid[:12], style="bold magenta" if self.lookup_held or not last.source else "bold")
            if self.lookup_held:
                t.append(f" → bucket {self.lookup_oid[:2]}")
            elif last.source is None:
                t.append(f" missing: it would be in bucket {self.lookup_oid[:2]}")
            else:
                t.append(" is not in this index (found in ")
                t.append_text(literal(f"{last.source} {last.where})"))
        t.append("  Enter lists them", style="dim")
        self.query_one("#fanout-bucket", Static).update(t)

    # --- events ------------------------------------------------------------------

    def on_virtual_list_moved(self, event: VirtualList.Moved) -> None:
        if event.vlist.id == "fanout-indexes" and self.choices and event.row != self.selected:
            self.select(event.row)

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        if event.vlist.id == "fanout-indexes":
            self.query_one(FanoutChart).focus()

    def on_fanout_chart_moved(self, event: FanoutChart.Moved) -> None:
        self.show_bucket(event.bucket)

    def on_fanout_chart_opened(self, event: FanoutChart.Opened) -> None:
        c = self.chosen
        if self.stats is not None and c is not None:
            self.app.push_screen(BucketScreen(c, event.bucket))

    def tick(self) -> None:
        # The app keeps the latest lookup (its one tracer listener, the
        # event pump): nothing to subscribe here, nothing to pile up.
        if self.stats is not None and (self.app.last_lookup, self.selected) != self._shown:
            self.show_lookup()

    def show_lookup(self) -> None:
        """Mark the latest lookup's bucket on the selected index, if that
        index holds the id, or would (the lookup found it nowhere)."""
        last = self.app.last_lookup
        self._shown = (last, self.selected)
        bucket, held = None, False
        if last is not None and self.choices and self.selected is not None:
            oid = bytes.fromhex(last.oid)
            try:
                held = lab.index_holds(self.choices[self.selected].index, oid, self.app.core.lock)
            except PackscopeError:
                held = False
            if held or last.source is None:
                bucket = oid[0]
        self.lookup_oid = last.oid if last is not None else None
        self.lookup_held = held
        self.query_one(FanoutChart).set_lookup(bucket)
        self.show_bucket(self.query_one(FanoutChart).cursor)

    def action_switch_focus(self) -> None:
        lst = self.query_one("#fanout-indexes", VirtualList)
        (self.query_one(FanoutChart) if lst.has_focus else lst).focus()

    def action_cycle_index(self, d: int) -> None:
        if self.choices and self.selected is not None:
            self.query_one("#fanout-indexes", VirtualList).move_to((self.selected + d) % len(self.choices))

    def current_id(self) -> str | None:
        return self.choices[self.selected].name if self.choices and self.selected is not None else None


class _BucketSource:
    search_hint = "id prefix"

    def __init__(self, choice: lab.IndexChoice, positions: list[int], ids: list[bytes], lock) -> None:
        self.choice = choice
        self.positions = positions
        self.ids = ids
        self.lock = lock

    def row_count(self) -> int:
        return len(self.ids)

    def row_text(self, row: int) -> Text:
        idx = self.choice.index
        pos = self.positions[row]
        t = Text(f"{pos:>9}  ", style="dim")
        t.append(self.ids[row].hex(), style="bold")
        try:
            with self.lock:
                if isinstance(idx, MultiPackIndex):
                    pack, off = idx.entry_at(pos)
                    name = idx.pack_names[pack]
                    t.append(f"  @{off:<10} ")
                    t.append_text(literal(name, "dim"))
                else:
                    t.append(f"  @{idx.offset_at(pos)}")
        except PackscopeError as e:
            t.append("  ")
            t.append_text(literal(e.message, "red"))
        return t

    def find(self, query: str) -> list[int]:
        q = query.lower()
        return [i for i, oid in enumerate(self.ids) if oid.hex().startswith(q)]


class BucketScreen(PackscopeScreen):
    HELP = """
One fanout bucket: every id of the index whose first byte is this one, in
the index's (sorted) order, with its position in the table and where the
object is (offset in the pack; for a multi-pack-index, which pack).
These are the names a lookup's search steps over.  Enter opens an object.
"""
    TAB = "fanout"

    def __init__(self, choice: lab.IndexChoice, bucket: int) -> None:
        super().__init__()
        self.choice = choice
        self.bucket = bucket
        self.source = _BucketSource(choice, [], [], None)  # the bucket's ids, read on mount

    def compose_body(self) -> ComposeResult:
        yield Label("", id="bucket-title", markup=False)
        yield VirtualList(width=120, id="bucket-list")

    def on_mount(self) -> None:
        super().on_mount()
        core = self.app.core
        positions, ids = lab.bucket_ids(self.choice.index, self.bucket, core.lock)
        lst = self.query_one(VirtualList)
        self.source = _BucketSource(self.choice, positions, ids, core.lock)
        lst.set_source(self.source)
        lst.focus()
        t = Text(f"bucket {self.bucket:02x} of ", style="bold")
        t.append_text(literal(self.choice.name, "bold"))
        t.append(
            f"  {count(len(ids), 'id')}" + (f", positions [{positions[0]:,}, {positions[-1] + 1:,})" if ids else "")
        )
        self.query_one("#bucket-title", Label).update(t)

    def on_virtual_list_opened(self, event: VirtualList.Opened) -> None:
        self.app.open_object(self.source.ids[event.row])

    def current_id(self) -> str | None:
        lst = self.query_one(VirtualList)
        return self.source.ids[lst.cursor].hex() if lst.row_count else None
