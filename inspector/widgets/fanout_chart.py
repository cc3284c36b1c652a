"""The 256 fanout buckets of an index as a bar chart: four bands of 64
buckets (00–3f, 40–7f, 80–bf, c0–ff), one column each, bars in eighths of
a cell.  A dashed line marks the expected count (objects / 256); a bar's
colour says how far it is from that (z = (actual − expected) / √expected:
green within 2, yellow within 3, red beyond).  The cursor's bucket is drawn
reversed, the bucket of the current lookup in magenta with a ◆ under it."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from packscope.inspector.widgets.byte_cells import ByteCells, CellMessage

BAND = 64  # buckets per band
BANDS = 256 // BAND
ROWS = 3  # cell rows per band (8 levels each)
LABEL = 4  # "3f │"
BLOCKS = " ▁▂▃▄▅▆▇█"


def z_style(z: float) -> str:
    a = abs(z)
    return "green" if a < 2 else "yellow" if a < 3 else "red"


class BucketMessage(CellMessage):
    @property
    def bucket(self) -> int:
        return self.cell


class FanoutChart(ByteCells):
    BINDINGS = [
        Binding("h,left", "move(-1)", "Left", id="fanout.left"),
        Binding("l,right", "move(1)", "Right", id="fanout.right"),
        Binding("k,up", "move(-64)", "Band up", id="fanout.up"),
        Binding("j,down", "move(64)", "Band down", id="fanout.down"),
        Binding("g,home", "jump(0)", "First", id="fanout.first"),
        Binding("G,end", "jump(255)", "Last", id="fanout.last"),
        Binding("enter", "open", "List bucket", id="fanout.open"),
    ]

    class Moved(BucketMessage):
        """The cursor is on another bucket."""

    class Opened(BucketMessage):
        """Enter or a double click on a bucket."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.counts: tuple[int, ...] = (0,) * 256
        self.expected = 0.0
        self.lookup_bucket: int | None = None
        self.rows = ROWS  # cell rows per band (2 on a narrow terminal)

    def set_counts(self, counts, expected: float) -> None:
        self.counts = tuple(counts)
        self.expected = expected
        self.refresh()

    def set_lookup(self, bucket: int | None) -> None:
        if bucket != self.lookup_bucket:
            self.lookup_bucket = bucket
            self.refresh()

    def render(self) -> Text:
        counts = self.counts
        peak = max(max(counts), self.expected, 1)
        rows = self.rows
        levels = rows * 8
        exp_level = self.expected / peak * levels
        t = Text(no_wrap=True, end="")
        for band in range(BANDS):
            first = band * BAND
            for r in range(rows):
                base = (rows - 1 - r) * 8
                on_exp = base <= exp_level < base + 8
                label = f"{first:02x} " if r == rows - 1 else "   "
                t.append(label, style="bold dim")
                t.append("┤" if on_exp else "│", style="dim")
                for b in range(first, first + BAND):
                    c = counts[b]
                    level = c / peak * levels
                    fill = min(8, max(0, round(level - base)))
                    if c and fill == 0 and r == rows - 1 and level > 0:
                        fill = 1  # a non-empty bucket never looks empty
                    z = (c - self.expected) / self.expected**0.5 if self.expected else 0.0
                    style = "bold magenta" if b == self.lookup_bucket else z_style(z)
                    ch = BLOCKS[fill]
                    if on_exp and fill < 8:
                        if fill == 0:
                            ch, style = "╌", "dim" if b != self.lookup_bucket else style
                        style += " on grey23"  # the expected level: a faint band
                    if b == self.cursor:
                        style += " reverse"
                    t.append(ch, style=style)
                t.append("\n")
            # axis: a tick every 16 buckets, the cursor and the lookup marked
            axis = ["·"] * BAND
            for k in range(0, BAND, 16):
                for j, ch in enumerate(f"{first + k:02x}"):
                    axis[k + j] = ch
            t.append("   └", style="dim")
            for k, ch in enumerate(axis):
                b = first + k
                if b == self.lookup_bucket:
                    t.append("◆", style="bold magenta")
                elif b == self.cursor:
                    t.append("▲", style="bold")
                else:
                    t.append(ch, style="dim")
            if band < BANDS - 1:
                t.append("\n")
        return t

    def action_move(self, d: int) -> None:
        self.cursor = (self.cursor + d) % 256

    def cell_at(self, x: int, y: int) -> int | None:
        band = y // (self.rows + 1)
        col = x - LABEL
        return band * BAND + col if 0 <= band < BANDS and 0 <= col < BAND else None

    def get_content_height(self, container, viewport, width) -> int:
        return BANDS * (self.rows + 1)

    def get_content_width(self, container, viewport) -> int:
        return LABEL + BAND
